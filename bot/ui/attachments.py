"""A config.json attached to a question (a mention, a message in an auto-answer channel, ``/vram config:``).

The file is read with discord.py's own :meth:`discord.Attachment.read` (Discord's CDN, never a URL from the text),
only when Discord says it is at most :data:`bot.answering.configs.MAX_ATTACHMENT_BYTES`; its bytes are then read as
``vram --config`` reads a file (:func:`bot.answering.configs.attached_config_model`), off the event loop.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar

import discord

from vramfit.bot.answering.configs import MAX_ATTACHMENT_BYTES, attached_config_model, too_large
from vramfit.bot.answering.service import to_answer_error
from vramfit.bot.errors import AnswerError
from vramfit.calc.errors import VramfitError
from vramfit.calc.request import ModelRef

log = logging.getLogger(__name__)
T = TypeVar("T")


class OffLoop(Protocol):
    """What reading an attachment needs of the bot: its ``off_loop`` (``VramBot.off_loop``), which runs CPU work in
    the answering threads within the answer's time limit. Asked for alone, so this layer names no bot class."""

    def __call__(self, fn: Callable[..., T], /, *args: Any) -> Awaitable[T]: ...


def config_attachment(attachments: Sequence[discord.Attachment]) -> discord.Attachment | None:
    """The first attachment that is a JSON file (by its name or its content type), or None."""
    for attachment in attachments:
        kind = (attachment.content_type or "").split(";")[0].strip().lower()
        if attachment.filename.lower().endswith(".json") or kind == "application/json":
            return attachment
    return None


async def attached_model(off_loop: OffLoop, attachment: discord.Attachment) -> ModelRef:
    """The model of an attached config.json; :class:`AnswerError` (``attachment_too_large``, ``bad_file``,
    ``bad_config``, ``unsupported_architecture``) when it is not one vramfit can model."""
    try:
        if attachment.size > MAX_ATTACHMENT_BYTES:
            raise too_large(attachment.filename)
        try:
            data = await attachment.read()
        except discord.HTTPException as exc:
            log.warning("Could not download attachment %s", attachment.id, exc_info=True)
            raise AnswerError("bad_file", f"{attachment.filename}: Discord did not serve the file ({exc})") from exc
        return await off_loop(attached_config_model, data, attachment.filename)
    except AnswerError:
        raise
    except VramfitError as exc:
        raise to_answer_error(exc) from exc
