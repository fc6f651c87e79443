"""Servers end to end: /vram-settings, answers that follow the settings, auto-answer channels and forum threads,
duplicate events, restarts, and two bot processes (two shards each) sharing one database.

Everything goes through the fake Discord (tests/fake_discord) into the real discord.py client; the numbers come
from tests/fake_discord/backend.py. Data-safety tests here: :func:`test_duplicate_events_are_answered_once`,
:func:`test_settings_and_answers_survive_a_restart`, :func:`test_two_processes_share_settings_and_answer_once`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from tests import pg
from tests.fake_discord import EPHEMERAL, FakeDiscord, Recorded
from tests.fake_discord import payloads as p
from tests.fake_discord.backend import FakeBackend
from tests.fake_discord.bot_process import start_bot_process
from tests.fake_discord.harness import CHANNEL_ID, GUILD_ID, OTHER_BOT_ID, THREAD_ID, World, make_settings, run, run_bot
from tests.fake_discord.sent import JSON, embed_of
from vramfit.bot.answering.followups import asks_memory_question, followup_slots, from_json, merge, to_json
from vramfit.bot.bot import GLOBAL, VramBot
from vramfit.bot.settings import Settings

FORUM_ID = GUILD_ID + 10
QA_CHANNEL_ID = GUILD_ID + 11
MANAGE_GUILD = 1 << 5
ADMIN_PERMISSIONS = p.MEMBER_PERMISSIONS | MANAGE_GUILD


@contextlib.asynccontextmanager
async def server_world(settings: Settings, *, shard_count: int = 2) -> AsyncIterator[World]:
    """A World whose guild also has a forum and a second text channel."""
    channel = p.text_channel(CHANNEL_ID, GUILD_ID)
    forum = p.forum_channel(FORUM_ID, GUILD_ID)
    qa = p.text_channel(QA_CHANNEL_ID, GUILD_ID, name="will-it-run")
    owner = p.user(800_000_000_000_000_001, "owner")
    thread = p.thread(THREAD_ID, GUILD_ID, CHANNEL_ID, int(owner["id"]))
    guild = p.guild(GUILD_ID, channels=[channel, forum, qa], threads=[thread], owner_id=int(owner["id"]))
    fake_backend = FakeBackend()
    async with FakeDiscord(shard_count=shard_count, guilds=[guild]) as fake:
        with fake.patch_client():
            vram_bot = VramBot(settings, fake_backend.backend(), guild_ready_timeout=0.05)
            async with run_bot(vram_bot):
                yield World(fake=fake, bot=vram_bot, backend=fake_backend, channel=channel, thread=thread)


async def settings_command(
    world: World,
    path: list[str],
    options: list[JSON] | None = None,
    *,
    locale: str = "en-US",
    resolved: JSON | None = None,
    shard_id: int | None = None,
    fake: FakeDiscord | None = None,
) -> Recorded:
    """Run ``/vram-settings <path...>`` as a member with Manage Server; return the bot's callback."""
    fake = fake or world.fake
    inner = [p.subcommand(path[-1], options)]
    opts = [p.subcommand(path[0], inner, group=True)] if len(path) == 2 else inner
    payload = p.slash_command(
        app_id=fake.app_id, command_id=p.snowflake(), name="vram-settings", options=opts, user_data=world.user,
        locale=locale, guild_id=GUILD_ID, channel=world.channel, permissions=ADMIN_PERMISSIONS, resolved=resolved,
    )  # fmt: skip
    await fake.interaction(payload, shard_id=shard_id)
    return await fake.wait_request("POST", rf"/interactions/{payload['id']}/{payload['token']}/callback")


def channel_option(channel: JSON) -> tuple[list[JSON], JSON]:
    return [p.command_option("channel", channel["id"], 7)], {"channels": {channel["id"]: p.resolved_channel(channel)}}


async def enable_autoanswer(world: World, channel_id: int, fake: FakeDiscord | None = None) -> Recorded:
    channel = (fake or world.fake).channel(channel_id)
    assert channel is not None
    options, resolved = channel_option(channel)
    return await settings_command(world, ["channels", "add"], options, resolved=resolved, fake=fake)


async def post(
    world: World,
    content: str,
    *,
    channel_id: int,
    author: JSON | None = None,
    mention_bot: bool = False,
    message_id: int | None = None,
    webhook: bool = False,
    fake: FakeDiscord | None = None,
    shard_id: int | None = None,
) -> JSON:
    """A MESSAGE_CREATE with full content (as with the message-content intent)."""
    fake = fake or world.fake
    author = author or world.user
    message = p.message(
        message_id=message_id or p.snowflake(), channel_id=channel_id, author=author, guild_id=GUILD_ID,
        content=(f"<@{fake.bot_user['id']}> " if mention_bot else "") + content, member_data=p.member(author),
        mentions=[fake.bot_user] if mention_bot else [], webhook_id=p.snowflake() if webhook else None,
    )  # fmt: skip
    await fake.dispatch("MESSAGE_CREATE", message, shard_id=shard_id)
    return message


async def forum_post(world: World, title: str, content: str) -> JSON:
    """A new forum post: THREAD_CREATE, then its starter message (whose id is the thread's)."""
    thread_id = p.snowflake()
    thread = {**p.thread(thread_id, GUILD_ID, FORUM_ID, int(world.user["id"]), name=title), "newly_created": True}
    world.fake.guilds[0]["threads"].append(thread)
    await world.fake.dispatch("THREAD_CREATE", thread)
    await post(world, content, channel_id=thread_id, message_id=thread_id)
    return thread


def last_call(world: World) -> tuple[str, str | None, dict[str, Any]]:
    """What the bot last asked the backend: ``(text, lang, overrides)``."""
    text, lang, overrides = world.backend.calls[-1]
    return text, lang, dict(overrides)


def replies(fake: FakeDiscord, channel_id: int, since: int = 0) -> list[Recorded]:
    return fake.find("POST", rf"/channels/{channel_id}/messages", since=since)


async def settle(fake: FakeDiscord) -> None:
    """Let handlers of events already sent finish (they await the database in worker threads)."""
    await asyncio.sleep(0.25)


def auto_settings(tmp_path: Path | None = None, **extra: Any) -> Settings:
    """Settings with the message-content intent; the store in ``tmp_path`` (else in memory) unless ``extra`` says."""
    extra.setdefault("database_path", str(tmp_path / "vramfit.db") if tmp_path is not None else ":memory:")
    return make_settings(message_content=True, **extra)


# -- /vram-settings --------------------------------------------------------------------------------------------------


def test_settings_command_payload_is_localized_and_for_managers_only() -> None:
    async def scenario() -> None:
        async with server_world(make_settings()) as world:
            await world.bot.sync_commands(GLOBAL)
            put = world.fake.find("PUT", rf"/applications/{world.fake.app_id}/commands")[-1]
            command = next(c for c in put.json if c["name"] == "vram-settings")
            assert command["name_localizations"] == {"ko": "vram-설정"}
            assert int(command["default_member_permissions"]) == MANAGE_GUILD
            assert command["contexts"] == [0] and command["integration_types"] == [0]
            subs = {o["name"]: o for o in command["options"]}
            assert set(subs) == {"show", "language", "engine", "mentions", "in-use", "gpus", "channels"}
            assert subs["in-use"]["name_localizations"] == {"ko": "사용중"}
            assert subs["gpus"]["type"] == 2
            assert {o["name"] for o in subs["gpus"]["options"]} == {"add", "remove", "clear"}
            add = next(o for o in subs["channels"]["options"] if o["name"] == "add")
            assert add["options"][0]["type"] == 7 and sorted(add["options"][0]["channel_types"]) == [0, 5, 15, 16]
            gpu = next(o for o in subs["gpus"]["options"] if o["name"] == "add")["options"][0]
            assert gpu["autocomplete"] is True
            for item in (command, *subs.values()):
                assert item["description_localizations"]["ko"]
            assert subs["language"]["name_localizations"] == {"ko": "언어"}

    run(scenario())


def test_settings_set_and_show_in_english_and_korean() -> None:
    async def scenario() -> None:
        async with server_world(make_settings()) as world:
            sent = await settings_command(world, ["language"], [p.command_option("value", "ko")])
            body = sent.json["data"]
            assert body["flags"] & EPHEMERAL and body["allowed_mentions"] == {"parse": []}
            assert body["content"] == (
                "Saved.\n\n**vramfit settings for this server**\nAnswer language: 한국어\n"
                "GPUs shown first: none (cards suggest GPUs that fit)\nDefault engine: llama.cpp\n"
                "Answers to mentions: Public reply\nGPU memory already in use: none\nAuto-answer channels: none"
            )
            sent = await settings_command(world, ["gpus", "add"], [p.command_option("gpu", "3060")], locale="ko")
            assert sent.json["data"]["content"].startswith("목록에 추가했어요: GeForce RTX 3060 12GB\n")
            await settings_command(world, ["gpus", "add"], [p.command_option("gpu", "rtx-4090")])
            sent = await settings_command(world, ["gpus", "add"], [p.command_option("gpu", "rtx 9999")], locale="ko")
            assert sent.json["data"]["content"].startswith("알 수 없는 GPU: **rtx 9999**")
            await settings_command(world, ["engine"], [p.command_option("value", "vllm")])
            await settings_command(world, ["mentions"], [p.command_option("value", "private")])
            options, resolved = channel_option(world.fake.channel(FORUM_ID) or {})
            await settings_command(world, ["channels", "add"], options, resolved=resolved)

            sent = await settings_command(world, ["show"], locale="ko")
            assert sent.json["data"]["content"] == (
                "**이 서버의 vramfit 설정**\n답변 언어: 한국어\n"
                "먼저 보여 줄 GPU: GeForce RTX 3060 12GB, GeForce RTX 4090\n기본 엔진: vLLM\n"
                "멘션 답변: 질문한 사람에게만 (DM)\n"
                "이미 쓰이는 GPU 메모리: 없음\n"
                f"자동 답변 채널: <#{FORUM_ID}>\n"
                "⚠️ 자동 답변이 꺼져 있어요. 이 봇은 메시지 콘텐츠 인텐트 없이 실행 중이라 자신을 멘션한 메시지만 "
                "볼 수 있어요. 멘션과 /vram은 그대로 쓸 수 있어요."
            )
            sent = await settings_command(world, ["show"], locale="en-US")
            assert "Default engine: vLLM" in sent.json["data"]["content"]
            assert "Auto-answer is off" in sent.json["data"]["content"]

            # The settings apply: /vram from an English-speaking user, no GPU named → Korean card, the shortlist.
            card = await world.ask("llama3 8b 32k", locale="en-US")
            embed = embed_of(card)
            assert embed["title"] == "Llama 3 8B · Q4_K_M · 컨텍스트 32K · vLLM"
            assert embed["description"].startswith("✅ **GeForce RTX 3060 12GB**에서 돌아가요")
            _text, lang, overrides = world.backend.calls[-1]
            assert lang == "ko" and overrides == {"engine": "vllm", "gpus": (("rtx-3060-12gb", 1), ("rtx-4090", 1))}
            # A question that names its GPU and engine keeps them.
            interaction = await world.slash("llama3 8b 4090 llama.cpp", locale="en-US")
            await world.callback(interaction)
            assert world.backend.calls[-1][2] == {}

            sent = await settings_command(world, ["gpus", "remove"], [p.command_option("gpu", "rtx-4090")])
            assert sent.json["data"]["content"].startswith("Removed GeForce RTX 4090.")
            sent = await settings_command(world, ["gpus", "clear"])
            assert "GPUs shown first: none" in sent.json["data"]["content"]

    run(scenario())


def test_a_servers_desktop_share_comes_off_every_card_unless_the_question_says_its_own() -> None:
    """/vram-settings in-use: the GPU memory members' desktops hold, taken off each card's GPU (the card says so); a
    question with its own figure keeps it; a value that is no size is refused, privately, and nothing is saved."""

    async def scenario() -> None:
        async with server_world(make_settings()) as world:
            sent = await settings_command(world, ["in-use"], [p.command_option("value", "banana")])
            assert sent.json["data"]["content"].startswith("That isn't a memory size: **banana**")
            assert sent.json["data"]["flags"] & EPHEMERAL
            sent = await settings_command(world, ["in-use"], [p.command_option("value", "1.5GB")], locale="ko")
            assert "이미 쓰이는 GPU 메모리: 1.5GiB. 질문에 따로 적지 않으면 모든 카드의 GPU에서 빼요" in (
                sent.json["data"]["content"]
            )
            await world.ask("llama3 8b 32k 3060", locale="en-US")
            assert world.backend.calls[-1][2] == {"reserved_mib": 1536}  # the answering service takes it off
            await world.ask("llama3 8b 32k 3060 2gb already used", locale="en-US")
            assert world.backend.calls[-1][2] == {}  # the question's own figure: the parser reads it
            sent = await settings_command(world, ["in-use"], [p.command_option("value", "0")])
            assert "GPU memory already in use: none" in sent.json["data"]["content"]

    run(scenario())


def test_gpu_autocomplete_uses_the_presets() -> None:
    async def scenario() -> None:
        async with server_world(make_settings()) as world:
            focused = p.command_option("gpu", "4060 ti", focused=True)
            options = [p.subcommand("gpus", [p.subcommand("add", [focused])], group=True)]
            payload = p.autocomplete(
                app_id=world.fake.app_id, command_id=p.snowflake(), name="vram-settings", options=options,
                user_data=world.user, guild_id=GUILD_ID, channel=world.channel, permissions=ADMIN_PERMISSIONS,
            )  # fmt: skip
            await world.fake.interaction(payload)
            sent = await world.callback(payload)
            values = [c["value"] for c in sent.json["data"]["choices"]]
            assert values and all(v.startswith("rtx-4060-ti") for v in values)

    run(scenario())


def test_private_mention_answers_come_by_direct_message() -> None:
    async def scenario() -> None:
        async with server_world(make_settings()) as world:
            fake = world.fake
            await settings_command(world, ["mentions"], [p.command_option("value", "private")])
            since = fake.last_seq
            question = await world.say("라마3 8b 3060 될까?")
            opened = await fake.wait_request("POST", "/users/@me/channels", since=since)
            assert int(opened.json["recipient_id"]) == USER
            dm = await fake.wait_request("POST", rf"/channels/{fake.dm_channels[USER]}/messages", since=since)
            assert dm.json["content"].startswith("질문: https://discord.com/channels/")
            assert dm.json["content"].endswith(f"/{CHANNEL_ID}/{question['id']}")
            assert embed_of(dm.json)["title"] == "Llama 3 8B · Q4_K_M · 컨텍스트 8K"
            assert not any(c["custom_id"].startswith("vf:pin") for row in dm.json["components"]
                           for c in row["components"])  # fmt: skip
            assert replies(fake, CHANNEL_ID, since) == []  # nothing public

            fake.closed_dms.add(USER)
            since = fake.last_seq
            await world.say("llama3 8b 3060")
            note = await fake.wait_request("POST", rf"/channels/{CHANNEL_ID}/messages", since=since)
            assert note.json["content"] == (
                "This server sends answers privately, but I can't send you a direct message."
            )
            assert "embeds" not in note.json or not note.json["embeds"]

    run(scenario())


USER = int(p.user(600_000_000_000_000_001)["id"])


def test_private_mentions_hold_in_auto_answer_channels_too() -> None:
    """A mention in an auto-answer channel still follows /vram-settings mentions; unasked questions stay public."""

    async def scenario() -> None:
        async with server_world(auto_settings()) as world:
            fake = world.fake
            await enable_autoanswer(world, QA_CHANNEL_ID)
            await settings_command(world, ["mentions"], [p.command_option("value", "private")])
            since = fake.last_seq
            await post(world, "llama3 8b 3060 될까?", channel_id=QA_CHANNEL_ID, mention_bot=True)
            await fake.wait_request("POST", "/users/@me/channels", since=since)
            dm = await fake.wait_request("POST", rf"/channels/{fake.dm_channels[USER]}/messages", since=since)
            assert embed_of(dm.json)["title"] == "Llama 3 8B · Q4_K_M · 컨텍스트 8K"
            await settle(fake)
            assert replies(fake, QA_CHANNEL_ID, since) == []  # the mention's answer is private
            since = fake.last_seq
            await post(world, "llama3 8b 32k 4090에서 돌아가?", channel_id=QA_CHANNEL_ID)
            public = await fake.wait_request("POST", rf"/channels/{QA_CHANNEL_ID}/messages", since=since)
            assert embed_of(public.json)["title"].startswith("Llama 3 8B")

    run(scenario())


# -- auto-answer -----------------------------------------------------------------------------------------------------


def test_forum_post_is_answered_once_then_follow_ups() -> None:
    async def scenario() -> None:
        async with server_world(auto_settings()) as world:
            fake = world.fake
            assert fake.identifies[0]["intents"] & (1 << 15)  # message content: asked for, as configured
            await enable_autoanswer(world, FORUM_ID)

            thread = await forum_post(world, "라마3 8b 3060에서 돌아갈까요?", "32k 컨텍스트로 쓰고 싶어요")
            thread_id = int(thread["id"])
            first = await fake.wait_request("POST", rf"/channels/{thread_id}/messages")
            assert int(first.json["message_reference"]["message_id"]) == thread_id  # a reply to the post
            assert first.json["allowed_mentions"] == {"parse": [], "replied_user": False}
            assert embed_of(first.json)["title"] == "Llama 3 8B · Q4_K_M · 컨텍스트 32K"
            question = "라마3 8b 3060에서 돌아갈까요?\n32k 컨텍스트로 쓰고 싶어요"
            assert last_call(world) == (question, None, {})

            since = fake.last_seq
            follow = await post(world, "q8이면?", channel_id=thread_id)
            sent = await fake.wait_request("POST", rf"/channels/{thread_id}/messages", since=since)
            assert str(sent.json["message_reference"]["message_id"]) == follow["id"]
            embed = embed_of(sent.json)
            assert embed["title"] == "Llama 3 8B · Q8_0 · 컨텍스트 32K"
            assert last_call(world) == (question, "ko", {"quant": "Q8_0"})

            since = fake.last_seq
            await post(world, "what about a 4090?", channel_id=thread_id)
            sent = await fake.wait_request("POST", rf"/channels/{thread_id}/messages", since=since)
            assert embed_of(sent.json)["title"] == "Llama 3 8B · Q8_0 · 32K context"  # the change is kept
            assert embed_of(sent.json)["description"].startswith("✅ Runs on **GeForce RTX 4090**")
            assert last_call(world) == (question, "en", {"quant": "Q8_0", "gpus": (("rtx-4090", 1),)})

            since = fake.last_seq
            await post(world, "thanks, that helps a lot!", channel_id=thread_id)  # says nothing about memory
            await post(world, "q8이면?", channel_id=thread_id)  # changes nothing the thread has not asked
            await post(world, "llama3 8b", channel_id=thread_id, author=p.user(OTHER_BOT_ID, "bot", bot=True))
            await settle(fake)
            assert replies(fake, thread_id, since) == []
            assert len(replies(fake, thread_id)) == 3

            # Another post that is not a memory question gets no answer.
            other = await forum_post(world, "Show your setups!", "Post a picture of your rig")
            await settle(fake)
            assert replies(fake, int(other["id"])) == []

    run(scenario())


def test_forum_post_whose_thread_the_cache_has_not_seen() -> None:
    """The starter message arrives before THREAD_CREATE: the bot looks the thread up (GET /channels/{id})."""

    async def scenario() -> None:
        async with server_world(auto_settings()) as world:
            fake = world.fake
            await enable_autoanswer(world, FORUM_ID)
            thread_id = p.snowflake()
            fake.guilds[0]["threads"].append(p.thread(thread_id, GUILD_ID, FORUM_ID, USER, name="gemma2 9b on a 4090?"))
            await post(world, "at 128k", channel_id=thread_id, message_id=thread_id)
            sent = await fake.wait_request("POST", rf"/channels/{thread_id}/messages")
            assert fake.find("GET", rf"/channels/{thread_id}")
            assert embed_of(sent.json)["title"] == "Gemma 2 9B · Q4_K_M · 128K context"

    run(scenario())


def test_channel_questions_need_the_channel_enabled_and_ignore_bots() -> None:
    async def scenario() -> None:
        async with server_world(auto_settings()) as world:
            fake = world.fake
            await post(world, "llama3 8b 32k 3060 될까?", channel_id=QA_CHANNEL_ID)  # not enabled yet
            await settle(fake)
            assert replies(fake, QA_CHANNEL_ID) == []

            await enable_autoanswer(world, QA_CHANNEL_ID)
            await post(world, "llama3 8b 32k 3060 will it run?", channel_id=QA_CHANNEL_ID, author=fake.bot_user)
            other_bot = p.user(OTHER_BOT_ID, "b", bot=True)
            await post(world, "llama3 8b 32k 3060", channel_id=QA_CHANNEL_ID, author=other_bot)
            await post(world, "llama3 8b 32k 3060", channel_id=QA_CHANNEL_ID, webhook=True)
            await post(world, "good morning everyone", channel_id=QA_CHANNEL_ID)
            await post(world, "anyone tried the new drivers?", channel_id=QA_CHANNEL_ID)
            await post(world, "llama3 8b 32k 3060 될까?", channel_id=CHANNEL_ID)  # another channel: not enabled
            asked = await post(world, "can llama3 8b run on a 3060 with 32k?", channel_id=QA_CHANNEL_ID)
            sent = await fake.wait_request("POST", rf"/channels/{QA_CHANNEL_ID}/messages")
            await settle(fake)
            assert len(replies(fake, QA_CHANNEL_ID)) == 1 and replies(fake, CHANNEL_ID) == []
            assert str(sent.json["message_reference"]["message_id"]) == asked["id"]
            assert embed_of(sent.json)["title"] == "Llama 3 8B · Q4_K_M · 32K context"

            # A GPU with a "run" word but no model: the reply asks for the model (the fake backend's wording).
            await post(world, "can a 3060 run it?", channel_id=QA_CHANNEL_ID)
            await fake.wait_until(lambda: len(replies(fake, QA_CHANNEL_ID)) == 2)
            assert replies(fake, QA_CHANNEL_ID)[-1].json["content"].startswith("I don't know the model")

            # A mention in an auto-answer channel is answered once (here, not also by the mention handler).
            since = fake.last_seq
            await post(world, "llama3 8b", channel_id=QA_CHANNEL_ID, mention_bot=True)
            await fake.wait_request("POST", rf"/channels/{QA_CHANNEL_ID}/messages", since=since)
            await settle(fake)
            assert len(replies(fake, QA_CHANNEL_ID, since)) == 1

    run(scenario())


def test_without_the_intent_nothing_is_answered_unasked() -> None:
    async def scenario() -> None:
        async with server_world(make_settings()) as world:
            fake = world.fake
            assert not fake.identifies[0]["intents"] & (1 << 15)
            sent = await enable_autoanswer(world, QA_CHANNEL_ID)
            assert "Auto-answer is off" in sent.json["data"]["content"]
            await post(world, "llama3 8b 32k 3060 will it run?", channel_id=QA_CHANNEL_ID)
            await settle(fake)
            assert replies(fake, QA_CHANNEL_ID) == []
            await post(world, "llama3 8b 32k 3060", channel_id=QA_CHANNEL_ID, mention_bot=True)  # mentions still work
            sent = await fake.wait_request("POST", rf"/channels/{QA_CHANNEL_ID}/messages")
            assert embed_of(sent.json)["title"] == "Llama 3 8B · Q4_K_M · 32K context"

    run(scenario())


# -- data safety -----------------------------------------------------------------------------------------------------


def test_duplicate_events_are_answered_once(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with server_world(auto_settings(tmp_path)) as world:
            fake = world.fake
            await enable_autoanswer(world, QA_CHANNEL_ID)
            message_id = p.snowflake()
            for _ in range(3):  # Discord may deliver an event again (a resume replays, a reconnect repeats)
                await post(world, "llama3 8b 3060 될까?", channel_id=QA_CHANNEL_ID, message_id=message_id)
            mention_id = p.snowflake()
            for _ in range(2):
                await post(world, "llama3 8b", channel_id=CHANNEL_ID, message_id=mention_id, mention_bot=True)
            thread = await forum_post(world, "llama3 8b on a 3060?", "")
            await enable_autoanswer(world, FORUM_ID)
            await post(world, "llama3 8b on a 3060?", channel_id=int(thread["id"]), message_id=int(thread["id"]))
            await post(world, "llama3 8b on a 3060?", channel_id=int(thread["id"]), message_id=int(thread["id"]))
            await fake.wait_until(lambda: replies(fake, int(thread["id"])))
            await settle(fake)
            assert len(replies(fake, QA_CHANNEL_ID)) == 1
            assert len(replies(fake, CHANNEL_ID)) == 1
            assert len(replies(fake, int(thread["id"]))) == 1

    run(scenario())


def test_settings_and_answers_survive_a_restart(tmp_path: Path) -> None:
    settings = auto_settings(tmp_path)
    message_id = p.snowflake()

    async def first() -> None:
        async with server_world(settings) as world:
            await settings_command(world, ["language"], [p.command_option("value", "en")])
            await enable_autoanswer(world, QA_CHANNEL_ID)
            await post(world, "라마3 8b 3060 될까?", channel_id=QA_CHANNEL_ID, message_id=message_id)
            sent = await world.fake.wait_request("POST", rf"/channels/{QA_CHANNEL_ID}/messages")
            assert embed_of(sent.json)["title"] == "Llama 3 8B · Q4_K_M · 8K context"  # English, as set

    async def second() -> None:
        async with server_world(settings) as world:  # a new process: new bot, new fake, the same database file
            fake = world.fake
            sent = await settings_command(world, ["show"])
            assert "Answer language: English" in sent.json["data"]["content"]
            assert f"Auto-answer channels: <#{QA_CHANNEL_ID}>" in sent.json["data"]["content"]
            await post(world, "라마3 8b 3060 될까?", channel_id=QA_CHANNEL_ID, message_id=message_id)  # replayed
            await post(world, "라마3 8b 4090 될까?", channel_id=QA_CHANNEL_ID)
            sent = await fake.wait_request("POST", rf"/channels/{QA_CHANNEL_ID}/messages")
            await settle(fake)
            assert len(replies(fake, QA_CHANNEL_ID)) == 1  # only the new question
            assert embed_of(sent.json)["title"] == "Llama 3 8B · Q4_K_M · 8K context"

    run(first())
    run(second())


# -- two processes ---------------------------------------------------------------------------------------------------

GUILD_A = 166_893_000_001 << 22  # (id >> 22) % 4 == 1: shard 1 of 4, process A
GUILD_B = (166_893_000_002 << 22) + 3  # shard 2 of 4, process B


@pytest.mark.parametrize("database", ["postgres", "sqlite"])
def test_two_processes_share_settings_and_answer_once(database: str, tmp_path: Path) -> None:
    """Two bots (independent clients, shards 0-1 and 2-3 of 4) on one fake Discord and one database."""
    if database == "postgres":
        db: dict[str, Any] = {"database_url": pg.fresh_url()}
    else:
        db = {"database_path": str(tmp_path / "shared.db")}
    assert (GUILD_A >> 22) % 4 == 1 and (GUILD_B >> 22) % 4 == 2

    async def scenario() -> None:
        qa_a = p.text_channel(GUILD_A + 1, GUILD_A, name="will-it-run")
        qa_b = p.text_channel(GUILD_B + 1, GUILD_B, name="will-it-run")
        guilds = [p.guild(GUILD_A, channels=[qa_a]), p.guild(GUILD_B, channels=[qa_b])]
        async with FakeDiscord(shard_count=4, guilds=guilds) as fake:
            with fake.patch_client():
                bots = [
                    VramBot(auto_settings(shard_count=4, shard_ids=ids, settings_cache_seconds=0, **db),
                            FakeBackend().backend(), guild_ready_timeout=0.05)
                    for ids in ((0, 1), (2, 3))
                ]  # fmt: skip
                async with run_bot(bots[0]), run_bot(bots[1]):
                    a, b = bots
                    assert sorted(tuple(i["shard"]) for i in fake.identifies) == [(0, 4), (1, 4), (2, 4), (3, 4)]
                    assert a.shard_ids == [0, 1] and b.shard_ids == [2, 3]
                    assert [g.id for g in a.guilds] == [GUILD_A] and [g.id for g in b.guilds] == [GUILD_B]

                    world = World(fake=fake, bot=a, backend=FakeBackend(), channel=qa_a, thread=qa_a)
                    author = p.user(600_000_000_000_000_003, "asker")
                    await settings_shared_and_one_answer(fake, world, author, timeout=5.0, settle_seconds=0.25)

    run(scenario(), timeout=60)


@pytest.mark.parametrize("database", ["postgres", "sqlite"])
def test_two_os_processes_with_two_shards_each(database: str, tmp_path: Path) -> None:
    """Two real bot processes (shards 0-1 and 2-3 of 4) on one fake Discord and one settings database: a setting
    written through one process is used by the other, and a message both receive is answered once."""
    db: dict[str, Any] = (
        {"database_url": pg.fresh_url(), "database_path": ":memory:"}
        if database == "postgres"
        else {"database_url": None, "database_path": str(tmp_path / "shared.db")}
    )
    settings = {
        "discord_token": None, "owner_ids": frozenset(), "cooldown_rate": 100, "cooldown_seconds": 60.0,
        "log_level": "WARNING", "settings_cache_seconds": 0.0, "message_content": True, "shard_count": 4, **db,
    }  # fmt: skip
    user = p.user(600_000_000_000_000_004, "asker")

    async def scenario() -> None:
        qa_a = p.text_channel(GUILD_A + 1, GUILD_A, name="will-it-run")
        qa_b = p.text_channel(GUILD_B + 1, GUILD_B, name="will-it-run")
        guilds = [p.guild(GUILD_A, channels=[qa_a]), p.guild(GUILD_B, channels=[qa_b])]
        async with FakeDiscord(shard_count=4, guilds=guilds) as fake:
            urls = {"api": fake.api_base, "gateway": fake.gateway_url}
            processes = [start_bot_process(urls, {**settings, "shard_ids": ids}) for ids in ((0, 1), (2, 3))]
            try:
                for process in processes:
                    await process.ready(timeout=60)
                assert sorted(tuple(i["shard"]) for i in fake.identifies) == [(0, 4), (1, 4), (2, 4), (3, 4)]
                asker = cast(World, SimpleNamespace(user=user, channel=qa_a))  # the helper reads these two
                # 1 s: the other process's handler has finished by then
                await settings_shared_and_one_answer(fake, asker, user, timeout=30, settle_seconds=1.0)
            finally:
                for process in processes:
                    process.stop()

    run(scenario(), timeout=120)


async def settings_shared_and_one_answer(
    fake: FakeDiscord, asker: World, author: JSON, *, timeout: float, settle_seconds: float
) -> None:
    """Two processes on one database (shards 0-1 and 2-3 of 4): the language and an auto-answer channel written
    through process A, which runs GUILD_A's shard (1), are used by process B when one of the guild's events reaches
    it (shard 2, after a reshard, say); and a MESSAGE_CREATE by ``author`` delivered to both (shards 1 and 3) is
    answered once. ``asker`` (its user and channel) runs the commands; ``timeout``: how long an answer may take;
    ``settle_seconds``: how long the other process's handler is given to finish before the replies are counted."""
    channel = asker.channel
    await settings_command_for(fake, asker, GUILD_A, ["language"], [p.command_option("value", "ko")])
    await settings_command_for(fake, asker, GUILD_A, ["channels", "add"], *channel_option(channel))
    payload = p.slash_command(
        app_id=fake.app_id, command_id=p.snowflake(), name="vram",
        options=[p.command_option("query", "llama3 8b 3060")], user_data=asker.user,
        locale="en-US", guild_id=GUILD_A, channel=channel,
    )  # fmt: skip
    await fake.interaction(payload, shard_id=2)
    sent = await fake.wait_request("POST", rf"/interactions/{payload['id']}/.*/callback", timeout=timeout)
    assert embed_of(sent.json["data"])["title"] == "Llama 3 8B · Q4_K_M · 컨텍스트 8K"
    message = p.message(
        message_id=p.snowflake(), channel_id=GUILD_A + 1, author=author, guild_id=GUILD_A,
        content="llama3 8b 32k 3060 될까?", member_data=p.member(author),
    )  # fmt: skip
    await fake.dispatch("MESSAGE_CREATE", message, shard_id=1)
    await fake.dispatch("MESSAGE_CREATE", message, shard_id=3)
    await fake.wait_until(lambda: replies(fake, GUILD_A + 1), timeout=timeout)
    await asyncio.sleep(settle_seconds)
    assert len(replies(fake, GUILD_A + 1)) == 1


async def settings_command_for(
    fake: FakeDiscord, world: World, guild_id: int, path: list[str], options: list[JSON], resolved: JSON | None = None
) -> Recorded:
    inner = [p.subcommand(path[-1], options)]
    opts = [p.subcommand(path[0], inner, group=True)] if len(path) == 2 else inner
    payload = p.slash_command(
        app_id=fake.app_id, command_id=p.snowflake(), name="vram-settings", options=opts, user_data=world.user,
        guild_id=guild_id, channel=world.channel, permissions=ADMIN_PERMISSIONS, resolved=resolved,
    )  # fmt: skip
    await fake.interaction(payload)
    sent = await fake.wait_request("POST", rf"/interactions/{payload['id']}/{payload['token']}/callback")
    assert sent.json["data"]["flags"] & EPHEMERAL
    return sent


# -- the pure helpers ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("라마3 8b 3060에서 돌아가?", True),
        ("llama3 8b 32k", True),
        ("can a 3060 run it?", True),
        ("3060 12gb 돌릴 수 있을까요", True),
        ("good morning everyone", False),
        ("my 3060 arrived today", False),
        ("I love llamas", False),
        ("", False),
    ],
)
def test_asks_memory_question(text: str, asks: bool) -> None:
    assert asks_memory_question(text) is asks


@pytest.mark.parametrize(
    ("text", "slots"),
    [
        ("what about 32k?", {"context": 32768}),
        ("q8이면?", {"quant": "Q8_0"}),
        ("4090이면?", {"gpus": (("rtx-4090", 1),)}),
        ("그럼 2x 3090은?", {"gpus": (("rtx-3090", 2),)}),
        ("kv q8?", {"kv_cache": "q8_0"}),
        ("with vllm?", {"engine": "vllm"}),
        ("4 users?", {"users": 4}),
        ("thanks!", None),
        ("qwen 14b?", None),  # the parser cannot place it: not a follow-up
    ],
)
def test_followup_slots(text: str, slots: dict[str, Any] | None) -> None:
    assert followup_slots(text) == slots


def test_merge_and_json_round_trip() -> None:
    before = from_json({"quant": "Q8_0", "gpus": [["rtx-3060-12gb", 1]]})
    assert before == {"quant": "Q8_0", "gpus": (("rtx-3060-12gb", 1),)}
    merged = merge(before, {"gpus": (("rtx-4090", 2),), "context": 32768})
    assert merged == {"quant": "Q8_0", "gpus": (("rtx-4090", 2),), "context": 32768}
    assert merge({"gpu": "rtx-3060-12gb", "gpu_count": 2}, {"gpus": (("rtx-4090", 1),)}) == {"gpus": (("rtx-4090", 1),)}
    assert from_json(to_json(merged)) == merged


# -- settings and the command line -------------------------------------------------------------------------------------


def test_shard_flags_and_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    import vramfit.bot.process as entry

    for name in ("VRAMFIT_SHARD_COUNT", "VRAMFIT_SHARD_IDS"):
        monkeypatch.delenv(name, raising=False)
    parser = entry.build_arg_parser()
    settings = entry.load_settings(parser.parse_args(["--shard-count", "4", "--shard-ids", "2,3"]))
    assert (settings.shard_count, settings.shard_ids) == (4, (2, 3))
    vram_bot = VramBot(make_settings(shard_count=4, shard_ids=(2, 3)), FakeBackend().backend())
    assert (vram_bot.shard_count, vram_bot.shard_ids) == (4, [2, 3])
    monkeypatch.setenv("VRAMFIT_SHARD_COUNT", "2")
    monkeypatch.setenv("VRAMFIT_SHARD_IDS", "1")
    assert Settings(_env_file=None).shard_ids == (1,)
    for bad in (["--shard-ids", "0,1"], ["--shard-count", "2", "--shard-ids", "0,2"], ["--shard-ids", "x"]):
        monkeypatch.delenv("VRAMFIT_SHARD_COUNT")
        with pytest.raises(SystemExit):
            entry.main(bad)
        monkeypatch.setenv("VRAMFIT_SHARD_COUNT", "2")


def test_database_url_is_never_logged() -> None:
    settings = Settings(_env_file=None, database_url="postgresql://vramfit:hunter2@db.internal:5433/bot")
    summary = str(settings.safe_summary())
    assert "hunter2" not in summary and "hunter2" not in repr(settings)
    assert "postgresql://vramfit@db.internal:5433/bot" in summary


def test_settings_command_localizations_are_valid() -> None:
    from tests.bot.test_bot_i18n import DESCRIPTION_MAX, valid_name, walk_options

    async def payload() -> JSON:
        from vramfit.bot.exts.server_settings import ServerSettings
        from vramfit.bot.translator import VramTranslator

        vram_bot = VramBot(make_settings(), FakeBackend().backend())
        translator = VramTranslator()
        await vram_bot.tree.set_translator(translator)
        await vram_bot.add_cog(ServerSettings(vram_bot))
        (command,) = vram_bot.tree.get_commands()
        result: JSON = await command.get_translated_payload(vram_bot.tree, translator)
        return result

    command = asyncio.run(payload())
    items = [command, *walk_options(command["options"])]
    for item in items:
        names = [item["name"], *(item.get("name_localizations") or {}).values()]
        descriptions = [item["description"], *(item.get("description_localizations") or {}).values()]
        assert all(valid_name(n) for n in names), names
        assert all(1 <= len(d) <= DESCRIPTION_MAX for d in descriptions), descriptions
        assert "ko" in (item.get("name_localizations") or {}) or item["name"] in ("gpu",), item["name"]
        assert "ko" in (item.get("description_localizations") or {}), item["name"]
    assert len(items) >= 15


def test_guild_defaults_apply_only_where_the_question_is_silent() -> None:
    from vramfit.bot.storage.defaults import NO_DEFAULTS, GuildDefaults

    defaults = GuildDefaults(lang="ko", engine="vllm", gpus=("rtx-3060-12gb", "rtx-4090"))
    shortlist = (("rtx-3060-12gb", 1), ("rtx-4090", 1))
    assert defaults.apply("llama3 8b 32k", {}) == {"engine": "vllm", "gpus": shortlist}
    assert defaults.apply("llama3 8b on a 3090 with llama.cpp", {}) == {}  # the text names both
    assert defaults.apply("llama3 8b", {"gpu": "rtx-4090"}) == {"gpu": "rtx-4090", "engine": "vllm"}
    assert defaults.apply("llama3 8b", {"gpu_count": 2}) == {
        "engine": "vllm", "gpus": (("rtx-3060-12gb", 2), ("rtx-4090", 2))
    }  # fmt: skip
    assert defaults.apply("lamma-9000 ???", {}) == {"engine": "vllm", "gpus": shortlist}  # unreadable: defaults
    assert NO_DEFAULTS.apply("llama3 8b", {"quant": "Q8_0"}) == {"quant": "Q8_0"}


def test_a_shortlisted_gpu_the_catalog_no_longer_has_is_skipped_and_shown_to_admins() -> None:
    """A GPU id renamed in a release (here planted in the store as it would remain): before, every question without a
    GPU in that server answered "I don't know the GPU rtx-9090-renamed"; now it is skipped, and /vram-settings show
    names it to the admins."""
    from vramfit.bot.answering.service import CalcBackend

    async def scenario() -> None:
        async with World.start(settings=make_settings(), backend=CalcBackend().backend()) as world:
            assert world.bot.store is not None
            await world.bot.store.add_gpu(GUILD_ID, "rtx-9090-renamed")
            await world.bot.store.add_gpu(GUILD_ID, "rtx-3060-12gb")
            card = await world.ask("llama3 8b 32k", locale="en-US")
            embed = embed_of(card)
            assert embed["title"].startswith("Llama 3 8B")
            assert "GeForce RTX 3060 12GB" in embed["description"]
            sent = await settings_command(world, ["show"])
            assert "No longer in vramfit's GPU list, so skipped: `rtx-9090-renamed`" in sent.json["data"]["content"]
            sent = await settings_command(world, ["show"], locale="ko")
            assert "더 이상 없어서 건너뛰어요: `rtx-9090-renamed`" in sent.json["data"]["content"]

    run(scenario())


def test_the_authors_follow_ups_past_the_cooldown_are_told_to_wait_not_ignored() -> None:
    """Before: a forum post's author asking follow-ups quickly past the per-user cooldown got no reply at all."""

    async def scenario() -> None:
        async with server_world(auto_settings(cooldown_rate=2, cooldown_seconds=60.0)) as world:
            fake = world.fake
            await enable_autoanswer(world, FORUM_ID)
            thread = await forum_post(world, "라마3 8b 3060에서 돌아갈까요?", "32k 컨텍스트로 쓰고 싶어요")
            thread_id = int(thread["id"])
            await fake.wait_request("POST", rf"/channels/{thread_id}/messages")
            await post(world, "q8이면?", channel_id=thread_id)  # the second answer: the cooldown's last
            await fake.wait_request("POST", rf"/channels/{thread_id}/messages", since=fake.last_seq - 5)
            since = fake.last_seq
            await post(world, "4090이면?", channel_id=thread_id)  # past the cooldown
            sent = await fake.wait_request("POST", rf"/channels/{thread_id}/messages", since=since)
            assert "Try again in" in sent.json["content"] or "다시 시도해 주세요" in sent.json["content"]

    run(scenario())
