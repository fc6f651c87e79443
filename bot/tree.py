"""The command tree: one place where app-command errors become a short, localized, ephemeral reply (the reply
helpers themselves are in :mod:`bot.ui.replies`).

Users see a sentence in their language (never a traceback); the log gets the traceback with the command, its
options, the user, guild and channel. Cooldowns answer "try again in N s".
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord import app_commands

from vramfit.bot.i18n import Tr, _, lang_for_locale
from vramfit.bot.storage import StorageError
from vramfit.bot.ui.replies import interaction_context, retry_text, send_ephemeral

if TYPE_CHECKING:  # annotations only: the bot (bot.bot) loads this module, so it cannot import the bot back
    from vramfit.bot.bot import VramBot  # annotations only: bot.bot imports this module

log = logging.getLogger(__name__)


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
        if isinstance(original, StorageError):
            log.warning("Settings store unavailable for %s: %s", context["command"], original)
            text = tr(
                _(
                    "The settings database is unavailable right now ({reason}). Answers still work, without this "
                    "server's settings."
                ),
                reason=str(original)[:200],
            )
            await send_ephemeral(interaction, text)
            return
        if isinstance(original, discord.NotFound | discord.Forbidden):
            log.warning("Discord refused a reply (%s): %s", original, context)
            return
        log.error("Error in %s: %s", context["command"], context, exc_info=original)
        await send_ephemeral(
            interaction, tr(_("Something went wrong on my side. It has been logged; please try again."))
        )
