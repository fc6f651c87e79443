"""Korean names and descriptions for the app commands, from the same gettext catalog as the replies."""

from __future__ import annotations

import logging

import discord
from discord import app_commands

from vramfit.bot.i18n import translations

log = logging.getLogger(__name__)


class VramTranslator(app_commands.Translator):
    """Translate command and option names, descriptions and choice names into Korean from the ``ko`` catalog.

    Returns ``None`` (Discord shows the default, English) for other locales and for strings the catalog lacks.
    """

    async def load(self) -> None:
        translations("ko")  # fail at startup, not at the first sync
        log.debug("Korean catalog loaded for the command translator")

    async def translate(
        self,
        string: app_commands.locale_str,
        locale: discord.Locale,
        context: app_commands.TranslationContextTypes,
    ) -> str | None:
        if locale is not discord.Locale.korean:
            return None
        text = translations("ko").gettext(string.message)
        if not text or text == string.message:
            return None
        return text
