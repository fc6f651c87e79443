"""The bot's one error type: a question that cannot be answered as asked, with the JSON contract's stable code.

It lives apart from the cards so that every layer of the bot (the sources, the answering layer, the renderers, the
Discord app) can raise or catch it without importing the answering layer.
"""

from __future__ import annotations

from collections.abc import Sequence

from vramfit.calc.errors import VramfitError


class AnswerError(VramfitError):
    """The question cannot be answered as asked (unknown model, bad number...): the user's to fix.

    One error type runs through the project: this is :class:`vramfit.calc.errors.VramfitError` with its code given
    where it is raised (the calculator's errors carry theirs as a class attribute), so the subject, the reason and
    the suggestions travel the same way from the parser, the calculator and the bot to every renderer."""

    def __init__(
        self,
        code: str,
        message: str = "",
        *,
        subject: str = "",
        suggestions: Sequence[str] = (),
        reason: str = "",
    ) -> None:
        super().__init__(message or code, list(suggestions), subject=subject, reason=reason)
        self.code = code
