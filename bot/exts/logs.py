"""``/vram-log``: a log attached (or pasted) to a command, read and set beside vramfit's estimate (issue 28).

Mentions and auto-answer channels (forum posts included) answer a log the same way: an attached text file or a
fenced code block (:mod:`bot.ui.logs`), in :mod:`bot.exts.vram` and :mod:`bot.exts.autoanswer`.
"""

from __future__ import annotations

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from vramfit.bot.bot import VramBot
from vramfit.bot.errors import AnswerError
from vramfit.bot.i18n import lang_for_locale
from vramfit.bot.render.embed import render_error
from vramfit.bot.render.log_card import render_log_card
from vramfit.bot.storage.defaults import guild_defaults
from vramfit.bot.ui.logs import message_log
from vramfit.bot.ui.replies import send_ephemeral, within_window
from vramfit.bot.ui.slash import NO_MENTIONS, card_command

MAX_PASTE = 4000  # a slash option's text: the start of a log; longer ones are attached as a file


class Logs(commands.Cog):
    """Why did it crash? A pasted log, diagnosed."""

    def __init__(self, bot: VramBot) -> None:
        self.bot = bot

    @app_commands.command(
        name=_("vram-log"),
        description=_("Why did it run out of memory? Attach a llama.cpp, Ollama or vLLM log (or nvidia-smi)."),
    )
    @app_commands.rename(file=_("file"), text=_("text"))
    @app_commands.describe(
        file=_("The log as a file (.log or .txt)"),
        text=_("Or the log pasted here"),
    )
    @card_command
    async def vram_log(
        self,
        interaction: discord.Interaction[VramBot],
        file: discord.Attachment | None = None,
        text: app_commands.Range[str, 0, MAX_PASTE] = "",
    ) -> None:
        defaults = await guild_defaults(self.bot, interaction.guild_id)
        lang = defaults.lang or lang_for_locale(interaction.locale)

        async def work() -> discord.Embed | AnswerError:
            try:
                diagnosis = await message_log(self.bot.off_loop, f"```\n{text}\n```", [file] if file else [])
            except AnswerError as error:
                return error
            if diagnosis is None:
                return AnswerError("not_a_log", "no engine's log lines")
            return render_log_card(diagnosis, lang)

        result = await within_window(interaction, work(), defer_after=self.bot.settings.defer_after_seconds)
        if isinstance(result, AnswerError):
            await send_ephemeral(interaction, render_error(result, lang))
        elif interaction.response.is_done():
            await interaction.edit_original_response(embed=result, allowed_mentions=NO_MENTIONS)
        else:
            await interaction.response.send_message(embed=result, allowed_mentions=NO_MENTIONS)


async def setup(bot: VramBot) -> None:
    """Load the Logs cog."""
    await bot.add_cog(Logs(bot))
