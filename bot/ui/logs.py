"""A log pasted to the bot: an attached text file (``.log``, ``.txt``, text/plain) or a fenced code block in the message
(a mention, a post in an auto-answer channel or forum, ``/vram-log``). The log is only read: downloaded with
discord.py's :meth:`discord.Attachment.read` from Discord's CDN when Discord says it is small enough, never run, never
fetched from a URL in the text; the reading and the diagnosis run off the event loop."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

import discord

from vramfit.bot.answering.log_doctor import Diagnosis, diagnose
from vramfit.bot.errors import AnswerError
from vramfit.bot.logs import MAX_LOG_BYTES, read_log, unread_error
from vramfit.bot.ui.attachments import OffLoop

log = logging.getLogger(__name__)

MAX_LOG_FILE_BYTES = 16 << 20  # an attached file Discord says is larger is not downloaded
_TEXT_FILE = re.compile(r"\.(?:log|txt|out|err)$", re.IGNORECASE)
_CODE_BLOCK = re.compile(r"```[\w+-]*\n?(.*?)```", re.DOTALL)


def log_attachment(attachments: Sequence[discord.Attachment]) -> discord.Attachment | None:
    """The first attachment that is a text file (by its name or its content type), or None."""
    for attachment in attachments:
        kind = (attachment.content_type or "").split(";")[0].strip().lower()
        if _TEXT_FILE.search(attachment.filename) or kind == "text/plain":
            return attachment
    return None


def may_carry_log(text: str, attachments: Sequence[discord.Attachment]) -> bool:
    """Whether a message has something a log could be in: an attached text file or a fenced code block."""
    return log_attachment(attachments) is not None or bool(_CODE_BLOCK.search(text))


def outside_code(text: str) -> str:
    """A message's own words: its fenced code blocks left out (the language of a question is in them, not in a log)."""
    return _CODE_BLOCK.sub(" ", text)


def code_blocks(text: str) -> str:
    """The fenced code blocks of a message, joined ("" when it has none)."""
    return "\n".join(block for block in _CODE_BLOCK.findall(text))


async def message_log(
    off_loop: OffLoop, content: str, attachments: Sequence[discord.Attachment]
) -> Diagnosis | None:
    """The diagnosis of the log a message carries (an attached text file, or its code blocks), or None when it
    carries none an engine wrote; AnswerError ``attachment_too_large`` / ``bad_file`` for a file it cannot read."""
    attachment = log_attachment(attachments)
    text = code_blocks(content)
    if attachment is not None:
        if attachment.size > MAX_LOG_FILE_BYTES:  # a paste is cut at MAX_LOG_BYTES; a file this large is not a log
            raise AnswerError("log_too_large", "a log file past 16 MiB", subject="16 MiB")
        try:
            data = await attachment.read()
        except discord.HTTPException as exc:
            log.warning("Could not download attachment %s", attachment.id, exc_info=True)
            raise AnswerError("bad_file", f"{attachment.filename}: Discord did not serve the file ({exc})") from exc
        text = data[: MAX_LOG_BYTES + 1].decode("utf-8", errors="replace") + "\n" + text
    if not text.strip():
        return None
    diagnosis = await off_loop(_diagnosed, text)
    if diagnosis is None:
        return None
    if isinstance(diagnosis, AnswerError):
        raise diagnosis
    return diagnosis


def _diagnosed(text: str) -> Diagnosis | AnswerError | None:
    """The log read and diagnosed; None when nothing in it is an engine's, AnswerError when the read ran out of time
    before it found an engine's line."""
    reading = read_log(text)
    if not reading.engine:
        return None if reading.unread_from_line is None else unread_error(reading)
    return diagnose(reading)
