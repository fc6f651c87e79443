"""One question's CPU budget, in the thread that answers it.

The bot answers in worker threads, and a thread that computes holds the GIL the event loop needs: a question that
costs seconds of CPU ("what fits" over every preset, cold) slows every other interaction. :func:`cpu_budget` gives
the question the thread is answering a budget of that thread's own CPU time (``time.thread_time``: other threads'
work does not count); :func:`spend` hands out the items of a long loop (the presets "what fits" tries) and stops it
with :class:`AnswerError` ``too_complex`` once the budget is spent. Outside a budget (the ``vram`` command) nothing
is limited.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from vramfit.bot.errors import AnswerError

T = TypeVar("T")
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("vramfit_cpu_deadline", default=None)


@contextmanager
def cpu_budget(seconds: float | None) -> Iterator[None]:
    """The question answered inside may use ``seconds`` of this thread's CPU (None: no limit)."""
    token = _DEADLINE.set(None if seconds is None else time.thread_time() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def spend(items: Iterable[T]) -> Iterator[T]:
    """``items``, one at a time, until the question's CPU budget is spent: then ``too_complex``."""
    deadline = _DEADLINE.get()
    for item in items:
        if deadline is not None and time.thread_time() > deadline:
            raise AnswerError("too_complex", "the question's CPU budget is spent", subject="")
        yield item
