"""Answers computed in worker processes, so no question can take the GIL from the bot's event loop.

A thread that computes holds the interpreter lock the event loop needs: while "what fits" ranks every preset (tens
to hundreds of milliseconds warm, seconds cold) the loop gets the lock back only between slices, and in a burst of a
thousand interactions the deferrals themselves came after Discord's window. :class:`AnswerProcesses` computes
answers in a :class:`~concurrent.futures.ProcessPoolExecutor` instead: each worker builds its backend once (the
factory is a module-level function, passed by reference), computes what every question needs before the bot
connects, and answers one question at a time within a CPU budget of its own, enforced by the kernel
(``setitimer(ITIMER_VIRTUAL)``: the worker's CPU time, whatever the question runs). Cards and errors come back
pickled: both are plain data.

Questions that read a remote model stay in the bot's threads: they wait on the network, and their reads are kept
in the bot's store.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from types import FrameType

from vramfit.bot.answering.cards import AnyCard, Backend, Overrides
from vramfit.bot.errors import AnswerError
from vramfit.bot.i18n import Lang
from vramfit.bot.storage.defaults import GuildDefaults

BackendFactory = Callable[[], Backend]
# A worker yields the CPU to the bot's event loop: when both want a core, the loop that sends every interaction's
# reply (or its deferral) goes first, and an answer computes on what is left
WORKER_NICENESS = 10


class _CpuSpent(Exception):
    """Raised in a worker by SIGVTALRM: the question's CPU budget is spent."""


_backend: Backend | None = None
_cpu_seconds = 0.0


def _on_cpu_spent(signum: int, frame: FrameType | None) -> None:
    raise _CpuSpent


def _start_worker(factory: BackendFactory, cpu_seconds: float, warm: bool) -> None:
    """A worker's start: its backend, built once, warmed up when asked, and the CPU budget's signal."""
    global _backend, _cpu_seconds
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the bot's Ctrl-C stops the bot, which stops its workers
    if hasattr(os, "nice"):
        os.nice(WORKER_NICENESS)
    _backend, _cpu_seconds = factory(), cpu_seconds
    if warm and _backend.warm is not None:
        _backend.warm()
    signal.signal(signal.SIGVTALRM, _on_cpu_spent)


def _ready() -> bool:
    return _backend is not None


def answer_in_worker(text: str, lang: Lang | None, overrides: Overrides, defaults: GuildDefaults | None) -> AnyCard:
    """One question answered in a worker, within its CPU budget; an AnswerError is raised (and pickled) as is."""
    assert _backend is not None, "the worker was started without its backend"
    if defaults is not None:
        overrides = defaults.apply(text, overrides)
    signal.setitimer(signal.ITIMER_VIRTUAL, _cpu_seconds)
    try:
        return _backend.answer(text, lang, overrides)
    except _CpuSpent:
        raise AnswerError("too_complex", "the question's CPU budget is spent", subject=text[:60]) from None
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)


class AnswerProcesses:
    """``workers`` processes answering questions with the backend ``factory`` builds."""

    def __init__(self, factory: BackendFactory, workers: int, *, cpu_seconds: float, warm: bool) -> None:
        # forkserver: a worker starts from a clean interpreter (never a copy of the bot's threads and sockets), and
        # a new one (after a crash) starts without re-importing everything the way spawn does
        context = multiprocessing.get_context("forkserver")
        self.workers = workers
        self.pool = ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=_start_worker, initargs=(factory, cpu_seconds, warm)
        )

    def started(self) -> list[Future[bool]]:
        """One job a worker, done once the workers have built (and warmed) their backends."""
        return [self.pool.submit(_ready) for _ in range(self.workers)]

    def answer(
        self, text: str, lang: Lang | None, overrides: Overrides, defaults: GuildDefaults | None
    ) -> Future[AnyCard]:
        return self.pool.submit(answer_in_worker, text, lang, overrides, defaults)

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
