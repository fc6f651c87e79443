"""Heavy work and bursts (issue 43): the same question asked by many at once is computed once, a question past its
CPU budget is "too long or too complex" instead of holding a worker (and the GIL) for seconds, and the bot computes
what every question needs before it connects. The burst itself is measured by ``benchmarks/bot_load.py --mixed``."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from typing import Any

from tests.fake_discord.backend import FakeBackend
from tests.fake_discord.harness import World, make_settings, run
from tests.fake_discord.server import FakeDiscord
from vramfit.bot.answering.cards import AnyCard, Overrides
from vramfit.bot.answering.cpu_budget import cpu_budget, spend
from vramfit.bot.errors import AnswerError
from vramfit.bot.i18n import Lang


def test_a_question_asked_by_many_at_once_is_computed_once() -> None:
    fake = FakeBackend()
    slow_answer = fake.answer

    def answer(text: str, lang: Lang | None, overrides: Overrides) -> AnyCard:
        time.sleep(0.3)  # a cold answer: every asker arrives while it is computed
        return slow_answer(text, lang, overrides)

    backend = dataclasses.replace(fake.backend(), answer=answer)

    async def scenario() -> None:
        async with World.start(backend=backend) as world:
            asked = [await world.slash("llama3 8b 32k 3060", user={"id": str(700 + i), "username": f"u{i}",
                                                                    "discriminator": "0", "avatar": None})
                     for i in range(10)]  # fmt: skip
            for interaction in asked:
                sent = (await world.callback(interaction, timeout=10)).json
                assert sent["data"]["embeds"][0]["title"].startswith("Llama 3 8B"), sent
            assert len(fake.calls) == 1  # ten askers, one computation
            await world.ask("llama3 8b 32k 3060")  # asked again once it was answered: computed again
            assert len(fake.calls) == 2

    run(scenario())


def test_a_loop_stops_once_its_questions_cpu_budget_is_spent() -> None:
    def burn() -> float:
        started = time.thread_time()
        while time.thread_time() - started < 0.02:
            pass
        return time.thread_time() - started

    with cpu_budget(0.05):
        spent = 0.0
        try:
            for _ in spend(range(1000)):
                spent += burn()
        except AnswerError as error:
            assert error.code == "too_complex"
        else:
            raise AssertionError("the budget never ran out")
    assert 0.05 <= spent < 0.2
    with cpu_budget(None):  # no budget (the vram command): every item
        assert sum(1 for _ in spend(range(1000))) == 1000


def test_a_what_fits_question_past_its_cpu_budget_is_answered_too_complex() -> None:
    """A cold "what fits" costs seconds of CPU; the bot gives a question ``answer_cpu_seconds`` of it."""
    from vramfit.bot.answering.service import CalcBackend

    async def scenario() -> None:
        async with World.start(settings=make_settings(answer_cpu_seconds=0.001), backend=CalcBackend().backend()) as w:
            data = await w.ask("what can I run on a 5090 at 48k")
            assert "too long or too complex" in data["content"], data
            card = await w.ask("llama3 8b 32k 3060")  # a question of one model spends no loop: answered
            assert card["embeds"][0]["title"].startswith("Llama 3 8B")

    run(scenario(), timeout=60)


def test_the_bot_warms_up_before_it_connects() -> None:
    seen: dict[str, Any] = {}

    def warm() -> None:
        seen["thread"] = threading.current_thread().name
        seen["connected_at"] = len(FakeDiscord.instances[-1].identifies) if FakeDiscord.instances else None

    backend = dataclasses.replace(FakeBackend().backend(), warm=warm)

    async def scenario() -> None:
        async with World.start(settings=make_settings(warm_up=True), backend=backend) as world:
            assert world.fake.identifies  # connected
            assert seen["thread"].startswith("vramfit-answer")  # in a worker, not on the event loop
            assert seen["connected_at"] == 0  # before the gateway connection: no question waited on it

    run(scenario())


def test_answers_are_computed_in_a_worker_process_within_its_cpu_budget() -> None:
    """With ``answer_processes`` the calculator runs in a worker process (the event loop's GIL stays free): a card,
    an error with its suggestions and a question past its CPU budget all come back as the threads gave them; the card
    is kept in the bot's own cache, so the same question again needs no worker; a worker that dies is replaced."""
    import os
    import signal

    from vramfit.bot.answering.service import CalcBackend

    calc = CalcBackend()

    async def scenario() -> None:
        settings = make_settings(answer_processes=1, answer_cpu_seconds=0.5)
        async with World.start(settings=settings, backend=calc.backend()) as world:
            assert world.bot.processes is not None
            workers = list(world.bot.processes.pool._processes)  # the pool's worker pids
            assert len(workers) == 1 and workers[0] != os.getpid()
            card = await world.ask("llama3 8b 32k 3060")
            assert card["embeds"][0]["title"].startswith("Llama 3 8B")
            assert calc.cached("llama3 8b 32k 3060", "en", Overrides()) is not None  # kept here as well
            unknown = await world.ask("lamma 3 8b 32k 3060")
            assert "I don't know the model" in unknown["content"] or "Did you mean" in unknown["content"], unknown
            spent = await world.ask("what can I run on a 5090 at 48k")  # cold in the worker: seconds of CPU
            assert "too long or too complex" in spent["content"], spent
            os.kill(workers[0], signal.SIGKILL)  # killed for memory, say
            await asyncio.sleep(0.2)
            again = await world.ask("gemma 3 12b 16k 3060")
            assert again["embeds"][0]["title"].startswith("Gemma 3 12B"), again
            assert world.bot.processes is not None and list(world.bot.processes.pool._processes) != workers

    run(scenario(), timeout=120)


def test_what_a_failed_read_held_is_let_go_with_its_error() -> None:
    """Issue 43: the bot kept hundreds of MB after remote reads that failed: the error's traceback held the reading
    frames, and with them what they had parsed, until a full garbage collection. The frames are cleared as the
    error leaves its worker thread."""
    import weakref

    class Parsed:  # what a read holds: a header's tensors, say
        pass

    held: list[weakref.ref[Parsed]] = []

    def read() -> None:
        parsed = Parsed()
        held.append(weakref.ref(parsed))
        raise AnswerError("remote_too_large", "more than 16,384 tensors")

    async def scenario() -> None:
        async with World.start() as world:
            for remote in (False, True):
                try:
                    await world.bot.off_loop(read, remote=remote)
                except AnswerError as error:
                    assert error.code == "remote_too_large"
                    assert held[-1]() is None  # gone while the error itself is still here
                else:
                    raise AssertionError("the read did not fail")

    run(scenario())
