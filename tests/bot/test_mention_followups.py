"""Follow-ups to a mention, in the channel or thread where the bot answered: "what about 32k?", "4090이면?", "q8이면?",
"램 64기가면?" are answered as the question asked there before, with that change; the question is kept in the store,
so a restarted bot (a new process on the same database) still knows it. On SQLite and PostgreSQL, in both languages,
through the real bot on the fake Discord with the real calculator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests import pg
from tests.fake_discord.harness import CHANNEL_ID, THREAD_ID, World, make_settings, run
from tests.fake_discord.sent import embed_of
from vramfit.bot.answering.service import CalcBackend

# (message, what the reply's embed must say): each follow-up changes one thing of the question before it.
ENGLISH = [
    ("llama3 8b 8k on a 3060", ("Llama 3 8B · Q4_K_M · 8K context", "GeForce RTX 3060 12GB")),
    ("what about 32k?", ("Llama 3 8B · Q4_K_M · 32K context", "GeForce RTX 3060 12GB")),
    ("and on a 4090?", ("Llama 3 8B · Q4_K_M · 32K context", "GeForce RTX 4090")),
    # -- the bot restarts here --
    ("q8 instead?", ("Llama 3 8B · Q8_0 · 32K context", "GeForce RTX 4090")),
    ("with 2 users?", ("Llama 3 8B · Q8_0 · 32K context · 2 users", "GeForce RTX 4090")),
    ("128k?", ("Llama 3 8B · Q8_0 · 128K context · 2 users", "GeForce RTX 4090")),
]
KOREAN = [
    ("큐웬3 8b 8k 3060에서 돌아가?", ("Qwen3 8B · Q4_K_M · 컨텍스트 8K", "GeForce RTX 3060 12GB")),
    ("32k면?", ("Qwen3 8B · Q4_K_M · 컨텍스트 32K", "GeForce RTX 3060 12GB")),
    ("4090이면?", ("Qwen3 8B · Q4_K_M · 컨텍스트 32K", "GeForce RTX 4090")),
    # -- the bot restarts here --
    ("q8이면?", ("Qwen3 8B · Q8_0 · 컨텍스트 32K", "GeForce RTX 4090")),
    ("사용자 2명이면?", ("Qwen3 8B · Q8_0 · 컨텍스트 32K · 사용자 2명", "GeForce RTX 4090")),
    ("64k로는?", ("Qwen3 8B · Q8_0 · 컨텍스트 64K · 사용자 2명", "GeForce RTX 4090")),
]


def _database(kind: str, tmp_path: Path) -> dict[str, Any]:
    if kind == "postgres":
        return {"database_url": pg.fresh_url(), "database_path": ":memory:"}
    return {"database_url": None, "database_path": str(tmp_path / "vramfit.db")}


async def _ask(world: World, text: str, channel_id: int, reply_to: int | None = None) -> dict[str, Any]:
    embed, _ = await _ask_for_id(world, text, channel_id, reply_to)
    return embed


async def _ask_for_id(
    world: World, text: str, channel_id: int, reply_to: int | None = None
) -> tuple[dict[str, Any], int]:
    """The embed of the bot's reply to ``text`` and the id of that reply."""
    since = world.fake.last_seq
    await world.say(text, channel_id=channel_id, reply_to=reply_to)
    sent = await world.fake.wait_request("POST", rf"/channels/{channel_id}/messages", since=since, timeout=10)
    embed: dict[str, Any] = embed_of(sent.json)
    message_id = next(int(m) for m, msg in world.fake.messages.items() if msg.get("embeds") == sent.json["embeds"])
    return embed, message_id


@pytest.mark.parametrize("database", ["sqlite", "postgres"])
@pytest.mark.parametrize(("thread", "channel_id"), [(ENGLISH, CHANNEL_ID), (KOREAN, THREAD_ID)], ids=["en", "ko"])
def test_follow_ups_change_the_question_asked_there_across_a_restart(
    database: str, thread: list[tuple[str, tuple[str, str]]], channel_id: int, tmp_path: Path
) -> None:
    settings = make_settings(**_database(database, tmp_path), cooldown_rate=100)

    async def session(messages: list[tuple[str, tuple[str, str]]]) -> None:
        async with World.start(settings=settings, backend=CalcBackend().backend()) as world:
            for text, (title, gpu) in messages:
                embed = await _ask(world, text, channel_id)
                assert embed["title"].startswith(title), (text, embed["title"])
                assert gpu in embed["description"], (text, embed["description"])

    run(session(thread[:3]), timeout=60)
    run(session(thread[3:]), timeout=60)  # a new bot process: the question comes from the database


def test_a_question_of_its_own_is_not_a_follow_up() -> None:
    """A new model, or "what fits", after an answer is its own question, not a change of the last one."""

    async def scenario() -> None:
        async with World.start(settings=make_settings(cooldown_rate=100), backend=CalcBackend().backend()) as world:
            await _ask(world, "llama3 8b 32k on a 3060", CHANNEL_ID)
            embed = await _ask(world, "qwen3 14b on a 4090?", CHANNEL_ID)
            assert embed["title"].startswith("Qwen3 14B · Q4_K_M · 8K context")
            embed = await _ask(world, "what fits a 3060?", CHANNEL_ID)
            assert not embed["title"].startswith("Qwen3 14B")

    run(scenario(), timeout=60)


def test_a_reply_follows_the_answer_it_replies_to() -> None:
    """Two questions in one channel; a reply to the first answer changes the first question, not the last."""

    async def scenario() -> None:
        async with World.start(settings=make_settings(cooldown_rate=100), backend=CalcBackend().backend()) as world:
            _, first = await _ask_for_id(world, "llama3 8b 8k on a 3060", CHANNEL_ID)
            await _ask(world, "qwen3 14b on a 4090", CHANNEL_ID)
            embed = await _ask(world, "what about 32k?", CHANNEL_ID, reply_to=first)
            assert embed["title"].startswith("Llama 3 8B · Q4_K_M · 32K context")
            assert "GeForce RTX 3060 12GB" in embed["description"]
            embed = await _ask(world, "what about 32k?", CHANNEL_ID)  # a mention: the channel's last question
            assert embed["title"].startswith("Llama 3 8B · Q4_K_M · 32K context")  # the reply's was asked last

    run(scenario(), timeout=60)
