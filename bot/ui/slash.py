"""Answering a slash command with a card: the choices its options offer, the length a question may have, where such
a command may be used (:func:`card_command`), and :func:`answer_interaction`, which every command that answers with a
card (``/vram``, ``/vram-fit``, ``/vram-compare``) calls; :mod:`bot.ui.options` has what their options share."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import discord
from discord import app_commands
from discord.app_commands import locale_str as _

from vramfit.bot.answering.cards import AnyCard, Overrides
from vramfit.bot.errors import AnswerError
from vramfit.bot.i18n import Lang, lang_for_locale
from vramfit.bot.render.embed import render_card, render_error
from vramfit.bot.storage.defaults import guild_defaults
from vramfit.bot.ui.attachments import attached_model
from vramfit.bot.ui.buttons import card_view
from vramfit.bot.ui.deliveries import RESPONSE_WINDOW_SECONDS, first_response, post_late
from vramfit.bot.ui.replies import repo_links, send_ephemeral, within_window

if TYPE_CHECKING:  # annotations only: bot.bot is a layer above bot.ui (tests/import_layers.py)
    from vramfit.bot.bot import VramBot  # annotations only: bot.bot is a layer above bot.ui (tests/import_layers.py)

log = logging.getLogger(__name__)

NO_MENTIONS = discord.AllowedMentions.none()
MAX_QUERY = 300
MAX_UNREAD_SHOWN = 60


def split_question(text: str) -> tuple[str, tuple[str, ...]]:
    """A message's question cut to :data:`MAX_QUERY` characters at a word's end, and what was cut off, shortened, as
    the card's "not understood" words (a GPU named at the end of a long message is said, not dropped)."""
    if len(text) <= MAX_QUERY:
        return text, ()
    cut = text.rfind(" ", MAX_QUERY - 40, MAX_QUERY + 1)
    cut = cut if cut > 0 else MAX_QUERY
    rest = " ".join(text[cut:].split())
    if len(rest) > MAX_UNREAD_SHOWN:  # its start and its end, where a GPU or a context is usually named
        half = (MAX_UNREAD_SHOWN - 3) // 2
        rest = f"{rest[:half].rstrip()} … {rest[-half:].lstrip()}"
    return text[:cut], (rest,) if rest else ()


_Function = TypeVar("_Function", bound=Callable[..., Any])

KV_CHOICES = [
    app_commands.Choice(name=_("f16 (default)"), value="f16"),
    app_commands.Choice(name="bf16", value="bf16"),
    app_commands.Choice(name="q8_0", value="q8_0"),
    app_commands.Choice(name="fp8 (vLLM)", value="fp8"),
    app_commands.Choice(name="q5_1", value="q5_1"),
    app_commands.Choice(name="q5_0", value="q5_0"),
    app_commands.Choice(name="q4_1", value="q4_1"),
    app_commands.Choice(name="q4_0", value="q4_0"),
    app_commands.Choice(name="iq4_nl", value="iq4_nl"),
    app_commands.Choice(name="f32", value="f32"),
]
ENGINE_CHOICES = [
    app_commands.Choice(name=_("llama.cpp (default)"), value="llama.cpp"),
    app_commands.Choice(name="vLLM", value="vllm"),
]
QUANT_CHOICES = [
    app_commands.Choice(name=_("Q4_K_M (default)"), value="Q4_K_M"),
    *(
        app_commands.Choice(name=q, value=q)
        for q in (
            "Q5_K_M", "Q6_K", "Q8_0", "F16", "BF16", "Q4_0", "Q4_K_S", "Q5_0", "Q5_K_S", "Q3_K_M", "Q3_K_L",
            "Q3_K_S", "Q2_K", "IQ4_XS", "IQ4_NL", "IQ3_XXS", "IQ2_XS", "FP8", "INT4", "F32",
        )
    ),
]  # fmt: skip


async def _within_cooldown(interaction: discord.Interaction[VramBot]) -> bool:
    """The bot's per-user cooldown of this command, raised as discord.py's own ``CommandOnCooldown`` (the tree's
    error handler says "try again in N s")."""
    retry = interaction.client.slash_retry(interaction)
    if retry is not None:
        settings = interaction.client.settings
        raise app_commands.CommandOnCooldown(
            app_commands.Cooldown(settings.cooldown_rate, settings.cooldown_seconds), retry
        )
    return True


def card_command(command: _Function) -> _Function:
    """Where a command that answers with a card may be used, and how often: installed by a server or by a user; in
    servers, direct messages and group chats; under the bot's per-user slash-command cooldown."""
    command = app_commands.check(_within_cooldown)(command)
    command = app_commands.allowed_contexts(guilds=True, dms=True, private_channels=True)(command)
    return app_commands.allowed_installs(guilds=True, users=True)(command)


async def answer_interaction(
    bot: VramBot,
    interaction: discord.Interaction[VramBot],
    text: str,
    overrides: Overrides,
    *,
    config: discord.Attachment | None = None,
) -> None:
    """Answer a slash command with the card for ``text`` and ``overrides``, the server's /vram-settings applied
    (its language, its engine, and its GPU shortlist when the question names no GPU); errors go only to the asker.
    ``config``: an attached config.json, the model to answer for (:mod:`bot.ui.attachments`).

    The settings, the parse and the calculation run off the event loop; when they are not done within
    ``defer_after_seconds`` the interaction is deferred, so the answer never misses Discord's window."""

    async def work() -> tuple[Lang, AnyCard | AnswerError]:
        defaults = await guild_defaults(bot, interaction.guild_id)
        lang = defaults.lang or lang_for_locale(interaction.locale)
        try:
            asked = overrides
            if config is not None:
                asked = Overrides(**overrides, model_ref=await attached_model(bot.off_loop, config))
            return lang, await bot.answer(text, lang, asked, defaults)
        except AnswerError as error:
            return lang, error

    started = time.monotonic()
    lang, card = await within_window(interaction, work(), defer_after=bot.settings.defer_after_seconds)
    if isinstance(card, AnswerError):
        await send_ephemeral(interaction, render_error(card, lang), repo_links(card))  # an unknown model: its repos
        return
    embed, view = render_card(card, lang), card_view(card, lang, pin=interaction.guild_id is not None)
    if interaction.response.is_done():  # deferred: the placeholder becomes the card (follow-ups have 15 minutes)
        await interaction.edit_original_response(embed=embed, view=view, allowed_mentions=NO_MENTIONS)
        return
    window_left = RESPONSE_WINDOW_SECONDS - (time.monotonic() - started)
    send = interaction.response.send_message(embed=embed, view=view, allowed_mentions=NO_MENTIONS)
    if not await first_response(bot.callbacks, interaction, send, window_left):
        await post_late(interaction, lang, embed=embed, view=view)
