"""Discord's embed limits, and a builder that never exceeds them.

https://discord.com/developers/docs/resources/message#embed-object-embed-limits: title 256, description 4096,
25 fields, field name 256, field value 1024, footer text 2048, author name 256, and 6000 characters in all the
embeds of one message. Fields are added with a priority; when the total is over, the lowest-priority fields go first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import discord

from vramfit.bot.render.text import width

TITLE = 256
DESCRIPTION = 4096
FIELDS = 25
FIELD_NAME = 256
FIELD_VALUE = 1024
FOOTER = 2048
AUTHOR = 256
TOTAL = 6000

ELLIPSIS = "…"

PHONE_COLUMNS = 40  # what a phone shows of an embed line in Discord's app, in columns of a Latin letter


def columns(text: str) -> int:
    """The width of ``text`` as a phone draws it: Hangul two columns (:func:`bot.render.text.width`), the ``**`` and
    backticks of Markdown none."""
    return width(text.replace("**", "").replace("`", ""))


def clamp(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, ending in an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS


def clamp_lines(lines: list[str], limit: int) -> str:
    """Join ``lines`` with newlines, dropping whole lines from the end (then ``…``) to stay within ``limit``."""
    out: list[str] = []
    size = 0
    for i, line in enumerate(lines):
        extra = len(line) + (1 if out else 0)
        rest_marker = 2 if i < len(lines) - 1 else 0  # room for "\n…" when more lines would follow
        if size + extra + rest_marker > limit:
            if out:
                out.append(ELLIPSIS)
                return "\n".join(out)
            return clamp(line, limit)
        out.append(line)
        size += extra
    return "\n".join(out)


@dataclass
class _Field:
    name: str
    value: str
    inline: bool
    priority: int
    order: int


@dataclass
class EmbedBuilder:
    """Collects an embed's parts and assembles one within every limit."""

    title: str = ""
    description: str = ""
    footer: str = ""
    colour: int | None = None
    _fields: list[_Field] = field(default_factory=list)

    def add_field(self, name: str, value: str, *, inline: bool = False, priority: int = 50) -> None:
        """Add a field; higher ``priority`` survives longer when the embed is over the total limit."""
        self._fields.append(
            _Field(
                clamp(name, FIELD_NAME) or "\u200b",
                clamp(value, FIELD_VALUE) or "\u200b",
                inline,
                priority,
                len(self._fields),
            )
        )

    def build(self) -> discord.Embed:
        title = clamp(self.title, TITLE)
        description = clamp(self.description, DESCRIPTION)
        footer = clamp(self.footer, FOOTER)
        fields = sorted(self._fields, key=lambda f: (-f.priority, f.order))[:FIELDS]
        fixed = len(title) + len(description) + len(footer)
        if fixed > TOTAL:  # only possible with absurd inputs: shrink the description first
            description = clamp(description, max(1, TOTAL - len(title) - len(footer)))
            fixed = len(title) + len(description) + len(footer)
        size = fixed + sum(len(f.name) + len(f.value) for f in fields)
        while fields and size > TOTAL:
            dropped = fields.pop()  # lowest priority, latest added
            size -= len(dropped.name) + len(dropped.value)
        embed = discord.Embed(title=title or None, description=description or None, colour=self.colour)
        for f in sorted(fields, key=lambda f: f.order):
            embed.add_field(name=f.name, value=f.value, inline=f.inline)
        if footer:
            embed.set_footer(text=footer)
        return embed


def within_limits(embed: discord.Embed) -> list[str]:
    """The limits ``embed`` breaks (empty when it is valid)."""
    problems: list[str] = []
    if len(embed.title or "") > TITLE:
        problems.append("title")
    if len(embed.description or "") > DESCRIPTION:
        problems.append("description")
    if len(embed.fields) > FIELDS:
        problems.append("fields")
    for i, f in enumerate(embed.fields):
        if not f.name or len(f.name) > FIELD_NAME:
            problems.append(f"field {i} name")
        if not f.value or len(f.value) > FIELD_VALUE:
            problems.append(f"field {i} value")
    if len(embed.footer.text or "") > FOOTER:
        problems.append("footer")
    if len(embed.author.name or "") > AUTHOR:
        problems.append("author")
    if len(embed) > TOTAL:
        problems.append("total")
    return problems
