"""A diagnosed log as a Discord card (:func:`bot.render.log_report.render_log_report` in a code block): apart from the
terminal's renderer, which must import without discord.py (``vram`` works without the bot extra)."""

from __future__ import annotations

import discord

from vramfit.bot.answering.log_doctor import Diagnosis
from vramfit.bot.i18n import Lang, Tr, _
from vramfit.bot.render.embed import COLOUR, NEUTRAL_COLOUR
from vramfit.bot.render.limits import DESCRIPTION, TITLE, EmbedBuilder, clamp
from vramfit.bot.render.log_report import render_log_report

FENCE = "`" * 3


def render_log_card(d: Diagnosis, lang: Lang) -> discord.Embed:
    """The diagnosis as a card: the report in a code block (its table needs a fixed-width font), red when something
    ran out of memory. Names from the log are inside the code block, where Discord draws no Markdown and pings no
    one; a fence that would end the block early is broken up."""
    tr = Tr(lang)
    title, _newline, body = render_log_report(d, lang).partition("\n")
    body = body.strip("\n").replace(FENCE, "`\u200b``")
    failed = bool(d.failed_what) or any(f.what == "vllm_kv" for f in d.reading.failures)
    builder = EmbedBuilder(
        title=clamp(title.rstrip(":"), TITLE),
        description=f"{FENCE}\n{clamp(body, DESCRIPTION - 10)}\n{FENCE}" if body else "",
        footer=tr(_("estimate · the log's own figures beside vramfit's")),
        colour=COLOUR["no"] if failed else NEUTRAL_COLOUR,
    )
    return builder.build()
