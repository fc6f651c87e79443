"""The command tree: one place where app-command errors become a short, localized, ephemeral reply.

Users see a sentence in their language (never a traceback); the log gets the traceback with the command, its
options, the user, guild and channel. Cooldowns answer "try again in N s".
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

import discord
from discord import app_commands

from bot.i18n import Tr, _, lang_for_locale

if TYPE_CHECKING:
    from bot.bot import VramBot

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
    interaction: discord.Interaction[Any], work: Coroutine[Any, Any, T], *, defer_after: float, thinking: bool = True
) -> T:
    """Await ``work``; if it is not done within ``defer_after`` seconds, defer the interaction first, so a slow
    store, a slow source or a long question never misses Discord's 3-second window (the answer then follows)."""
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.wait_for(asyncio.shield(task), defer_after)
    except TimeoutError:
        pass
    if not interaction.response.is_done():
        try:
            if interaction.type == discord.InteractionType.component:
                await interaction.response.defer()  # an edit of the card follows
            else:
                await interaction.response.defer(thinking=thinking)
        except discord.HTTPException:
            log.warning("Could not defer a slow answer", extra=interaction_context(interaction), exc_info=True)
        else:
            log.info("Deferred a slow answer: %s", interaction_context(interaction))
    return await task


async def send_ephemeral(interaction: discord.Interaction[Any], text: str) -> None:
    """Reply privately, whether or not the interaction was already answered (a public "thinking…" placeholder left
    by a deferral is removed first); never raises."""
    try:
        if interaction.response.type == discord.InteractionResponseType.deferred_channel_message:
            try:
                await interaction.delete_original_response()
            except discord.HTTPException:
                log.debug("Could not remove the deferred placeholder", exc_info=True)
        if interaction.response.is_done():
            await interaction.followup.send(text, ephemeral=True, allowed_mentions=discord.AllowedMentions.none())
        else:
            await interaction.response.send_message(
                text, ephemeral=True, allowed_mentions=discord.AllowedMentions.none()
            )
    except discord.HTTPException:
        log.warning("Could not send an error reply", extra=interaction_context(interaction), exc_info=True)


async def send_private(interaction: discord.Interaction[Any], text: str) -> None:
    """An ephemeral reply, or the private follow-up of an ephemeral deferral."""
    if interaction.response.is_done():
        await interaction.followup.send(text, ephemeral=True, allowed_mentions=discord.AllowedMentions.none())
    else:
        await interaction.response.send_message(text, ephemeral=True, allowed_mentions=discord.AllowedMentions.none())


class VramTree(app_commands.CommandTree["VramBot"]):
    """``CommandTree`` with localized error replies."""

    async def on_error(self, interaction: discord.Interaction[VramBot], error: app_commands.AppCommandError) -> None:
        tr = Tr(lang_for_locale(interaction.locale))
        context = interaction_context(interaction)
        if isinstance(error, app_commands.CommandOnCooldown):
            log.debug("Cooldown for %s: %.1f s", context["user_id"], error.retry_after)
            await send_ephemeral(interaction, retry_text(tr, error.retry_after))
            return
        if isinstance(error, app_commands.BotMissingPermissions):
            log.info("Missing bot permissions %s: %s", error.missing_permissions, context)
            await send_ephemeral(interaction, tr(_("I don't have the permissions I need in this channel.")))
            return
        if isinstance(error, app_commands.NoPrivateMessage):
            await send_ephemeral(interaction, tr(_("This command works only in a server.")))
            return
        if isinstance(error, app_commands.MissingPermissions):
            log.info("Refused %s without %s: %s", context["command"], error.missing_permissions, context)
            await send_ephemeral(interaction, tr(_("You need the Manage Server permission for this.")))
            return
        if isinstance(error, app_commands.CheckFailure):
            log.info("Check failed (%s): %s", type(error).__name__, context)
            await send_ephemeral(interaction, tr(_("You can't use this command here.")))
            return
        if isinstance(error, app_commands.TransformerError):
            log.info("Bad option value %r: %s", error.value, context)
            await send_ephemeral(interaction, tr(_("One of the options has a value I can't read.")))
            return
        original = getattr(error, "original", error)
        from bot.storage import StorageError

        if isinstance(original, StorageError):
            log.warning("Settings store unavailable for %s: %s", context["command"], original)
            text = tr(_("The settings database is unavailable right now ({reason}). Answers still work, without this "
                        "server's settings."), reason=str(original)[:200])
            await send_ephemeral(interaction, text)
            return
        if isinstance(original, discord.NotFound | discord.Forbidden):
            log.warning("Discord refused a reply (%s): %s", original, context)
            return
        log.error("Error in %s: %s", context["command"], context, exc_info=original)
        await send_ephemeral(
            interaction, tr(_("Something went wrong on my side. It has been logged; please try again."))
        )
