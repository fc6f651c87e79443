"""Replying to an interaction: privately, within Discord's window (deferring when an answer is slow), and the
"try again in N s" line. Shared by the extensions, the buttons and the command tree's error handler."""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Coroutine
from typing import Any, TypeVar

import discord

from vramfit.bot.i18n import Tr, _
from vramfit.bot.render.errors import error_repos

log = logging.getLogger(__name__)
T = TypeVar("T")


def retry_text(tr: Tr, seconds: float) -> str:
    """The localized "try again in N s" line."""
    return tr(_("You're asking a little fast. Try again in {seconds} s."), seconds=tr.num(max(1, math.ceil(seconds))))


def interaction_context(interaction: discord.Interaction[Any]) -> dict[str, Any]:
    """What the log needs to find an interaction again (no message content beyond the command's options)."""
    command = interaction.command
    data: dict[str, Any] = dict(interaction.data or {})
    return {
        "command": command.qualified_name if command is not None else data.get("custom_id") or data.get("name"),
        "options": data.get("options"),
        "user_id": interaction.user.id if interaction.user else None,
        "guild_id": interaction.guild_id,
        "channel_id": interaction.channel_id,
        "interaction_id": interaction.id,
        "locale": str(interaction.locale),
    }


async def within_window(
    interaction: discord.Interaction[Any],
    work: Coroutine[Any, Any, T],
    *,
    defer_after: float,
    thinking: bool = True,
    ephemeral: bool = False,
) -> T:
    """Await ``work``; if it is not done within ``defer_after`` seconds, defer the interaction first, so a slow
    store, a slow source or a long question never misses Discord's 3-second window (the answer then follows; with
    ``ephemeral`` privately, as a button's answer to someone other than the card's asker)."""
    task = asyncio.ensure_future(work)
    await asyncio.wait((task,), timeout=defer_after)  # cheaper than wait_for(shield(...)): no wrapper tasks
    if task.done():
        return task.result()
    if not interaction.response.is_done():
        try:
            if interaction.type == discord.InteractionType.component and not ephemeral:
                await interaction.response.defer()  # an edit of the card follows
            elif ephemeral:
                await interaction.response.defer(ephemeral=True, thinking=True)
            else:
                await interaction.response.defer(thinking=thinking)
        except discord.HTTPException:
            log.warning("Could not defer a slow answer", extra=interaction_context(interaction), exc_info=True)
        else:
            log.info("Deferred a slow answer: %s", interaction_context(interaction))
    return await task


def repo_links(error: Exception) -> discord.ui.View | None:
    """Link buttons to the Hub repos an unknown model's error offers (``details["repos"]``), or None."""
    repos = error_repos(error)[:5]
    if not repos:
        return None
    view = discord.ui.View(timeout=None)
    for repo in repos:
        view.add_item(discord.ui.Button(label=repo[:80], url=f"https://huggingface.co/{repo}"))
    return view


async def send_ephemeral(interaction: discord.Interaction[Any], text: str, view: discord.ui.View | None = None) -> None:
    """Reply privately, whether or not the interaction was already answered (a public "thinking…" placeholder left
    by a deferral is removed first), with ``view`` under it when given; never raises."""
    try:
        if interaction.response.type == discord.InteractionResponseType.deferred_channel_message:
            try:
                await interaction.delete_original_response()
            except discord.HTTPException:
                log.debug("Could not remove the deferred placeholder", exc_info=True)
        extra: dict[str, Any] = {"view": view} if view is not None else {}
        if interaction.response.is_done():
            await interaction.followup.send(
                text, ephemeral=True, allowed_mentions=discord.AllowedMentions.none(), **extra
            )
        else:
            await interaction.response.send_message(
                text, ephemeral=True, allowed_mentions=discord.AllowedMentions.none(), **extra
            )
    except discord.HTTPException:
        log.warning("Could not send an error reply", extra=interaction_context(interaction), exc_info=True)


async def send_private(interaction: discord.Interaction[Any], text: str) -> None:
    """An ephemeral reply, or the private follow-up of an ephemeral deferral."""
    if interaction.response.is_done():
        await interaction.followup.send(text, ephemeral=True, allowed_mentions=discord.AllowedMentions.none())
    else:
        await interaction.response.send_message(text, ephemeral=True, allowed_mentions=discord.AllowedMentions.none())
