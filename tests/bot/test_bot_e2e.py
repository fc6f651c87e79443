"""End to end: the real discord.py client in VramBot against the fake Discord on 127.0.0.1.

Every assertion is on the JSON the bot sent. The numbers come from ``tests/fake_discord/backend.py`` (Llama 3 8B
at 32K: 4.5 GiB weights + 4.0 GiB KV + 1.0 GiB overhead = 9.5 GiB; an RTX 3060 has 12 GiB).
"""

from __future__ import annotations

import asyncio
import logging

import pytest

from tests.fake_discord import EPHEMERAL
from tests.fake_discord import payloads as p
from tests.fake_discord.harness import CHANNEL_ID, GUILD_ID, OTHER_BOT_ID, THREAD_ID, World, make_settings, run
from tests.fake_discord.sent import NO_PINGS, button, custom_ids, embed_of, fields
from vramfit.bot.bot import GLOBAL

# -- login, READY, sync ----------------------------------------------------------------------------------------------


def test_login_ready_shards_and_no_sync_by_default() -> None:
    async def scenario() -> None:
        async with World.start() as world:
            fake = world.fake
            assert [(r.method, r.path) for r in fake.requests] == [
                ("GET", "/users/@me"),
                ("GET", "/oauth2/applications/@me"),
                ("GET", "/gateway/bot"),
            ]
            assert world.bot.is_ready()
            assert sorted(tuple(i["shard"]) for i in fake.identifies) == [(0, 2), (1, 2)]
            intents = fake.identifies[0]["intents"]
            assert intents & (1 << 0)  # guilds
            assert not intents & (1 << 1)  # members: privileged, not used
            assert not intents & (1 << 15)  # message content: privileged, not needed for mentions
            assert fake.identifies[0]["token"] == "fake-token"
            assert fake.heartbeats >= 2
            assert world.bot.get_guild(GUILD_ID) is not None
            assert world.bot.get_guild(GUILD_ID).shard_id == 1  # type: ignore[union-attr]
            assert fake.global_commands == []  # no sync unless asked

    run(scenario())


def test_sync_on_request_carries_korean_localizations() -> None:
    async def scenario() -> None:
        async with World.start(sync_to=GLOBAL) as world:
            put = world.fake.find("PUT", rf"/applications/{world.fake.app_id}/commands")
            assert len(put) == 1
            commands = {c["name"]: c for c in put[0].json}
            assert {"vram", "vram-fit", "vram-compare", "vram-log"} <= set(commands)
            command = commands["vram"]
            assert command["description_localizations"]["ko"] == "이 LLM이 내 GPU에서 돌아갈까요? 편하게 물어보세요."
            assert command["integration_types"] == [0, 1]  # guild and user installs
            assert sorted(command["contexts"]) == [0, 1, 2]  # guilds, bot DMs, private channels
            options = {o["name"]: o for o in command["options"]}
            assert list(options) == [
                "query", "model", "gpu", "quant", "kv_cache", "context", "users", "gpu_count", "engine", "config",
            ]  # fmt: skip
            assert options["query"]["name_localizations"] == {"ko": "질문"}
            assert options["config"]["type"] == 11 and options["config"]["name_localizations"] == {"ko": "설정파일"}
            assert options["context"]["name_localizations"] == {"ko": "컨텍스트"}
            assert options["kv_cache"]["name_localizations"] == {"ko": "kv캐시"}
            assert options["model"]["autocomplete"] is True and options["gpu"]["autocomplete"] is True
            assert options["context"]["type"] == 4 and options["context"]["min_value"] == 1
            quant_default = options["quant"]["choices"][0]
            assert quant_default["value"] == "Q4_K_M"
            assert quant_default["name_localizations"] == {"ko": "Q4_K_M (기본값)"}
            for option in command["options"]:
                assert option["description_localizations"]["ko"]

    run(scenario())


def test_owner_can_sync_by_mention_and_others_cannot() -> None:
    async def scenario() -> None:
        async with World.start() as world:
            fake = world.fake
            owner = fake.owner
            await world.say("sync", author=owner)
            reply = await fake.wait_request("POST", r"/channels/\d+/messages")
            synced = len(world.bot.tree.get_commands())
            assert f"Synced {synced} commands (global)" in reply.json["content"]
            assert len(fake.find("PUT", r"/applications/\d+/commands")) == 1
            # Someone else saying "sync" gets an answer to a question, not a sync.
            since = fake.last_seq
            await world.say("sync")
            reply = await fake.wait_request("POST", r"/channels/\d+/messages", since=since)
            assert "sync" in reply.json["content"]  # "I don't know the model **sync**."
            assert len(fake.find("PUT", r"/applications/\d+/commands")) == 1

    run(scenario())


# -- /vram ------------------------------------------------------------------------------------------------------------


def test_slash_command_in_korean() -> None:
    async def scenario() -> None:
        async with World.start() as world:
            interaction = await world.slash("라마3 8b 32k 3060에서 돌아가?", locale="ko")
            sent = await world.callback(interaction)
            assert sent.json["type"] == 4
            body = sent.json["data"]
            assert body["allowed_mentions"] == NO_PINGS
            assert not (body.get("flags") or 0) & EPHEMERAL  # the card is public
            embed = embed_of(body)
            assert embed["title"] == "Llama 3 8B · Q4_K_M · 컨텍스트 32K"
            assert embed["description"].splitlines()[:2] == [
                "✅ **GeForce RTX 3060 12GB**에서 돌아가요 (여유 2.5GiB)",
                "가중치 4.5GiB + KV 4.0GiB + 기타 1.0GiB = **9.5GiB** (사용 가능 12.0GiB)",
            ]
            assert "가중치" not in fields(embed)  # the components are behind "show the math"
            footer = embed["footer"]["text"]
            assert "\n" not in footer
            assert footer == "추정치 · Q4_K_M · KV f16 · llama.cpp"  # one short row; the rest under "the math"
            ids = custom_ids(body)
            assert "vf:ctx:131072:llama-3-8b:Q4_K_M:32768:1:f16:l:1:rtx-3060-12gb*1:ko" in ids
            assert "vf:pin:ko" in ids
            assert all(len(cid) <= 100 for cid in ids)
            assert world.backend.calls[-1][:2] == ("라마3 8b 32k 3060에서 돌아가?", "ko")

    run(scenario())


def test_slash_command_in_english_with_options_overriding_text() -> None:
    async def scenario() -> None:
        async with World.start() as world:
            interaction = await world.slash(
                "llama3 8b 4k 3060", locale="en-US", options={"context": 131072, "gpu": "rtx-4090", "users": 1}
            )
            sent = await world.callback(interaction)
            body = sent.json["data"]
            assert body["allowed_mentions"] == NO_PINGS
            embed = embed_of(body)
            assert embed["title"] == "Llama 3 8B · Q4_K_M · 128K context"
            lines = embed["description"].splitlines()
            assert lines[:2] == [
                "✅ Runs on **GeForce RTX 4090** with 2.5 GiB to spare.",
                "Weights 4.5 GiB + KV 16.0 GiB + other 1.0 GiB = **21.5 GiB** of 24.0 GiB",
            ]
            assert lines[2].startswith("Max context ")
            _text, lang, overrides = world.backend.calls[-1]
            assert lang == "en" and overrides == {"gpu": "rtx-4090", "context": 131072, "users": 1}

    run(scenario())


def test_slash_command_errors_are_ephemeral_and_localized() -> None:
    async def scenario() -> None:
        async with World.start() as world:
            body = await world.ask("lamma-9000 on a 3060", locale="ko")
            assert body["flags"] & EPHEMERAL
            assert body["allowed_mentions"] == NO_PINGS
            assert body["content"] == "찾을 수 없는 모델: **lamma-9000**\n혹시 이것인가요? Llama 3 8B (`llama-3-8b`)"
            body = await world.ask("", locale="en-US")
            assert body["flags"] & EPHEMERAL
            assert body["content"].startswith("Which model?")

    run(scenario())


def test_unexpected_error_is_logged_not_shown(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        async with World.start() as world:
            world.backend.fail_with = RuntimeError("boom: secret internals")
            with caplog.at_level(logging.ERROR, logger="vramfit.bot.tree"):
                body = await world.ask("llama3 8b", locale="ko")
            assert body["flags"] & EPHEMERAL
            assert body["content"] == "봇 쪽에서 문제가 생겼어요. 기록해 두었으니 다시 시도해 주세요."
            assert "boom" not in body["content"] and "Traceback" not in body["content"]
            record = next(r for r in caplog.records if r.name == "vramfit.bot.tree")
            assert record.exc_info is not None and "boom" in str(record.exc_info[1])
            assert "'command': 'vram'" in record.getMessage() and str(GUILD_ID) in record.getMessage()

    run(scenario())


def test_slash_command_cooldown_is_per_user_and_localized() -> None:
    async def scenario() -> None:
        async with World.start(settings=make_settings(cooldown_rate=1, cooldown_seconds=30)) as world:
            first = await world.slash("llama3 8b", locale="ko")
            assert (await world.callback(first)).json["type"] == 4
            second = await world.slash("llama3 8b", locale="ko")
            body = (await world.callback(second)).json["data"]
            assert body["flags"] & EPHEMERAL
            assert body["content"] in {f"요청이 조금 빨라요. {n}초 후에 다시 시도해 주세요." for n in (29, 30)}
            other = await world.slash("llama3 8b", locale="en-US", user=p.user(USER_2, "another"))
            assert "embeds" in (await world.callback(other)).json["data"]

    run(scenario())


USER_2 = 600_000_000_000_000_002


def test_autocomplete_suggests_presets() -> None:
    async def scenario() -> None:
        async with World.start() as world:
            sent = await world.autocomplete("vram", "model", "gem")
            assert sent["type"] == 8
            assert sent["data"]["choices"] == [{"name": "Gemma 2 9B", "value": "gemma-2-9b"}]

    run(scenario())


# -- mentions -------------------------------------------------------------------------------------------------------


def test_mention_in_thread_is_answered_as_a_reply() -> None:
    async def scenario() -> None:
        async with World.start() as world:
            fake = world.fake
            question = await world.say("gemma2 8k 3060 될까?", channel_id=THREAD_ID)
            sent = await fake.wait_request("POST", rf"/channels/{THREAD_ID}/messages")
            body = sent.json
            assert str(body["message_reference"]["message_id"]) == question["id"]
            assert body["allowed_mentions"] == {"parse": [], "replied_user": False}
            embed = embed_of(body)
            assert embed["title"] == "Gemma 2 9B · Q4_K_M · 컨텍스트 8K"  # Korean question → Korean card
            assert " + KV 1.3GiB + " in embed["description"].splitlines()[1]
            assert "vf:pin:ko" in custom_ids(body)
            assert world.backend.calls[-1][0] == "gemma2 8k 3060 될까?"

    run(scenario())


def test_ignored_messages() -> None:
    async def scenario() -> None:
        async with World.start() as world:
            fake = world.fake
            await world.say("@everyone llama3 8b", mention_bot=False, mention_everyone=True)
            await world.say("llama3 8b", author=p.user(OTHER_BOT_ID, "otherbot", bot=True))
            await world.say("llama3 8b", author=fake.bot_user)
            await world.say("llama3 8b", mention_bot=False)
            await world.say("llama3 8b")  # this one is for the bot
            await fake.wait_request("POST", r"/channels/\d+/messages")
            await asyncio.sleep(0.05)
            assert len(fake.find("POST", r"/channels/\d+/messages")) == 1
            assert len(world.backend.calls) == 1

    run(scenario())


def test_a_mention_of_the_bots_own_role_counts() -> None:
    """People often pick the bot's managed role from the @ menu instead of the bot; another role does not count."""

    async def scenario() -> None:
        async with World.start() as world:
            fake = world.fake
            bot_role, other_role = p.snowflake(), p.snowflake()
            guild = world.bot.get_guild(GUILD_ID)
            assert guild is not None
            bot_id = int(fake.bot_user["id"])
            for data in (p.role(bot_role, "vramfit", bot_id=bot_id), p.role(other_role, "mods")):
                await fake.dispatch("GUILD_ROLE_CREATE", {"guild_id": str(GUILD_ID), "role": data})
            await fake.wait_until(lambda: guild.get_role(bot_role) and guild.get_role(other_role))
            for role_id in (other_role, bot_role):
                question = p.message(
                    message_id=p.snowflake(), channel_id=world.channel["id"], author=world.user, guild_id=GUILD_ID,
                    content=f"<@&{role_id}> llama3 8b 32k 3060", member_data=p.member(world.user),
                    mention_roles=[role_id],
                )  # fmt: skip
                await fake.dispatch("MESSAGE_CREATE", question)
            sent = await fake.wait_request("POST", r"/channels/\d+/messages")
            await asyncio.sleep(0.05)
            assert len(fake.find("POST", r"/channels/\d+/messages")) == 1
            assert embed_of(sent.json)["title"] == "Llama 3 8B · Q4_K_M · 32K context"
            assert world.backend.calls[-1][0] == "llama3 8b 32k 3060"  # the role mention is not part of the question

    run(scenario())


def test_mention_cooldown_and_help() -> None:
    async def scenario() -> None:
        async with World.start(settings=make_settings(cooldown_rate=1, cooldown_seconds=30)) as world:
            fake = world.fake
            await world.say("")
            help_reply = await fake.wait_request("POST", r"/channels/\d+/messages")
            assert help_reply.json["content"].startswith("Ask me whether a model runs on a GPU")
            since = fake.last_seq
            await world.say("라마3 8b")
            reply = await fake.wait_request("POST", r"/channels/\d+/messages", since=since)
            assert reply.json["content"].startswith("요청이 조금 빨라요.")
            assert reply.json["allowed_mentions"] == {"parse": [], "replied_user": False}

    run(scenario())


def test_direct_messages_need_no_mention() -> None:
    async def scenario() -> None:
        async with World.start() as world:
            fake = world.fake
            dm_id = p.snowflake()
            question = p.message(
                message_id=p.snowflake(), channel_id=dm_id, author=world.user, content="llama3 8b 32k 3060"
            )
            await fake.dispatch("MESSAGE_CREATE", question, shard_id=0)
            sent = await fake.wait_request("POST", rf"/channels/{dm_id}/messages")
            assert embed_of(sent.json)["title"] == "Llama 3 8B · Q4_K_M · 32K context"
            assert "vf:pin:en" not in custom_ids(sent.json)  # nothing to pin for in a DM

            body = await world.ask("llama3 8b", locale="en-US", guild=False)
            assert embed_of(body)["title"] == "Llama 3 8B · Q4_K_M · 8K context"
            assert not any(cid.startswith("vf:pin") for cid in custom_ids(body))

    run(scenario())


def test_guild_create_after_ready() -> None:
    async def scenario() -> None:
        async with World.start() as world:
            new_id = (166_893_000_002 << 22) + 5  # shard 0
            channel = p.text_channel(new_id + 1, new_id, name="ask-here")
            await world.fake.dispatch("GUILD_CREATE", p.guild(new_id, name="new server", channels=[channel]))
            guild = await world.fake.wait_until(lambda: world.bot.get_guild(new_id))
            assert guild.name == "new server" and guild.shard_id == 0
            assert guild.get_channel(new_id + 1) is not None

    run(scenario())


# -- buttons ---------------------------------------------------------------------------------------------------------


def test_buttons_rerender_in_place_switch_language_and_show_math() -> None:
    async def scenario() -> None:
        async with World.start() as world:
            interaction = await world.slash("llama3 8b 32k 3060", locale="en-US")
            card = (await world.callback(interaction)).json["data"]
            message = world.message_for(interaction)

            press = await world.press(message, button(card, "vf:ctx:131072:"))
            sent = await world.callback(press)
            assert sent.json["type"] == 7  # UPDATE_MESSAGE: the card is edited in place
            body = sent.json["data"]
            embed = embed_of(body)
            assert embed["title"] == "Llama 3 8B · Q4_K_M · 128K context"
            assert embed["description"].startswith("🟧 Partly on the CPU: 17 of 33 layers on **GeForce RTX 3060 12GB**")
            assert "= **21.5 GiB** of 12.0 GiB" in embed["description"]
            assert "✅ Use 2 GPUs: 21.5 GiB" in embed["description"]  # what would help, under the numbers
            assert body["allowed_mentions"] == NO_PINGS
            stored = world.fake.messages[int(message["id"])]
            assert embed_of(stored)["title"].endswith("128K context")
            assert next(c for row in stored["components"] for c in row["components"] if c["label"] == "128K")[
                "disabled"
            ]

            press = await world.press(stored, button(body, "vf:lang:ko:"))
            body = (await world.callback(press)).json["data"]
            assert embed_of(body)["title"] == "Llama 3 8B · Q4_K_M · 컨텍스트 128K"
            assert "vf:lang:en:" in " ".join(custom_ids(body))

            press = await world.press(world.fake.messages[int(message["id"])], button(body, "vf:math:"))
            sent = await world.callback(press)
            assert sent.json["type"] == 4 and sent.json["data"]["flags"] & EPHEMERAL
            math = embed_of(sent.json["data"])
            assert math["title"] == "계산 과정: Llama 3 8B"
            assert (
                "2 × 레이어 32 × KV 헤드 8 × 헤드 크기 128 × 토큰 131,072 × 사용자 1 × 바이트 2 (f16) = 16.0GiB"
                in (math["description"])
            )

    run(scenario())


def test_pin_needs_permission_on_member_and_bot() -> None:
    async def scenario() -> None:
        async with World.start() as world:
            fake = world.fake
            interaction = await world.slash("llama3 8b 3060", locale="ko")
            await world.callback(interaction)
            message = world.message_for(interaction)

            press = await world.press(message, "vf:pin:ko", locale="ko", permissions=p.MEMBER_PERMISSIONS)
            body = (await world.callback(press)).json["data"]
            assert body["flags"] & EPHEMERAL
            assert body["content"].startswith("죄송해요. 이 채널에서 메시지 고정 권한이 있는 멤버만")
            assert fake.pins == []

            press = await world.press(
                message, "vf:pin:ko", locale="en-US", permissions=p.MODERATOR_PERMISSIONS,
                app_permissions=p.MEMBER_PERMISSIONS,
            )  # fmt: skip
            body = (await world.callback(press)).json["data"]
            assert body["content"] == "I need the Pin Messages permission in this channel to do that."
            assert fake.pins == []

            manager = p.MEMBER_PERMISSIONS | p.MANAGE_MESSAGES  # no PIN_MESSAGES, but may manage messages
            press = await world.press(message, "vf:pin:ko", locale="en-US", permissions=manager)
            body = (await world.callback(press)).json["data"]
            assert body == {"tts": False, "content": "Pinned.", "flags": EPHEMERAL, "allowed_mentions": NO_PINGS}
            assert fake.pins == [(int(message["channel_id"]), int(message["id"]))]

    run(scenario())


def test_buttons_survive_a_restart() -> None:
    """A card posted by an earlier process: the new bot recomputes it from the custom_id alone."""

    async def scenario() -> None:
        async with World.start() as world:
            cid = "vf:ctx:8192:llama-3-8b:Q4_K_M:32768:1:f16:l:1:rtx-3060-12gb*1:en"
            old = p.message(
                message_id=p.snowflake(), channel_id=int(world.channel["id"]), author=world.fake.bot_user,
                guild_id=GUILD_ID, embeds=[{"title": "old card", "type": "rich"}],
                components=[{"type": 1, "components": [{"type": 2, "style": 2, "label": "8K", "custom_id": cid}]}],
            )  # fmt: skip
            press = await world.press(old, cid)
            body = (await world.callback(press)).json["data"]
            assert embed_of(body)["title"] == "Llama 3 8B · Q4_K_M · 8K context"
            assert "= **6.5 GiB** of 12.0 GiB" in embed_of(body)["description"]

    run(scenario())


# -- gateway resume -------------------------------------------------------------------------------------------------


def test_gateway_close_resume_and_answer_again() -> None:
    async def scenario() -> None:
        async with World.start() as world:
            fake = world.fake
            shard = fake.shard_for(GUILD_ID)
            session = fake.session_for_shard(shard)
            seq_before = session.seq

            await fake.close_gateway(shard, code=4000)
            # Sent while the shard is down: Discord replays it after RESUME.
            interaction = await world.slash("llama3 8b 32k 3060", locale="en-US")
            resumed = await fake.wait_until(lambda: fake.resumes)
            assert resumed[0]["session_id"] == session.session_id
            assert resumed[0]["seq"] == seq_before
            assert resumed[0]["token"] == "fake-token"
            sent = await world.callback(interaction)
            assert embed_of(sent.json["data"])["title"] == "Llama 3 8B · Q4_K_M · 32K context"
            assert len(fake.identifies) == 2  # no new IDENTIFY: the session was resumed

            # And after the resume, new events are answered too.
            interaction = await world.slash("라마3 8b 8k", locale="ko")
            sent = await world.callback(interaction)
            assert embed_of(sent.json["data"])["title"] == "Llama 3 8B · Q4_K_M · 컨텍스트 8K"

    run(scenario())


# -- the real parser and calculator behind the bot ------------------------------------------------------------------


def test_real_calculator_end_to_end() -> None:
    pytest.importorskip("vramfit.bot.parser.parse")
    from vramfit.bot.answering.service import CalcBackend
    from vramfit.calc.estimate import answer
    from vramfit.calc.presets import load_catalog
    from vramfit.calc.request import GpuChoice, Request

    catalog = load_catalog()
    expected = answer(
        Request(model=catalog.model("llama-3-8b").ref(), context=32768,
                gpus=(GpuChoice(gpu=catalog.gpu("rtx-3060-12gb")),)),
        tuple(catalog.gpus.values()),
    )  # fmt: skip
    gib = 1 << 30

    async def scenario() -> None:
        async with World.start(backend=CalcBackend(catalog).backend()) as world:
            interaction = await world.slash("라마3 8B 32k 3060에서 돌아가?", locale="ko")
            body = (await world.callback(interaction)).json["data"]
            embed = embed_of(body)
            assert embed["title"] == "Llama 3 8B · Q4_K_M · 컨텍스트 32K"
            assert f"= **{expected.estimate.total_bytes / gib:.1f}GiB** (사용 가능 12.0GiB)" in embed["description"]
            message = world.message_for(interaction)
            press = await world.press(message, button(body, "vf:lang:en:"))
            body = (await world.callback(press)).json["data"]
            assert embed_of(body)["title"] == "Llama 3 8B · Q4_K_M · 32K context"
            assert f"= **{expected.estimate.total_bytes / gib:.1f} GiB** of 12.0 GiB" in embed_of(body)["description"]

    run(scenario())


def test_a_button_pressed_by_someone_else_answers_them_privately_and_leaves_the_card() -> None:
    """Before: any member's press rewrote the public (pinned) card. Now the asker's press edits it; anyone else gets
    the changed card privately, and the public one stays as it was. For a slash card and for a reply to a mention."""
    other = p.user(700_000_000_000_000_007, "someone-else")

    async def scenario() -> None:
        async with World.start() as world:
            interaction = await world.slash("llama3 8b 32k 3060", locale="en-US")
            card = (await world.callback(interaction)).json["data"]
            message = world.message_for(interaction)

            press = await world.press(message, button(card, "vf:ctx:131072:"), user=other)
            sent = await world.callback(press)
            assert sent.json["type"] == 4 and sent.json["data"]["flags"] & EPHEMERAL  # a private copy
            assert embed_of(sent.json["data"])["title"] == "Llama 3 8B · Q4_K_M · 128K context"
            stored = world.fake.messages[int(message["id"])]
            assert embed_of(stored)["title"] == "Llama 3 8B · Q4_K_M · 32K context"  # the public card: unchanged

            press = await world.press(stored, button(card, "vf:ctx:131072:"))  # the asker
            sent = await world.callback(press)
            assert sent.json["type"] == 7  # edited in place
            assert embed_of(world.fake.messages[int(message["id"])])["title"].endswith("128K context")

            asked = await world.say("llama3 8b 32k 3060")  # a mention: the card replies to the asker's message
            reply = await world.fake.wait_request("POST", rf"/channels/{CHANNEL_ID}/messages")
            stored = next(m for m in world.fake.messages.values()
                          if str((m.get("message_reference") or {}).get("message_id")) == asked["id"])  # fmt: skip
            press = await world.press(stored, button(reply.json, "vf:lang:ko:"), user=other)
            sent = await world.callback(press)
            assert sent.json["type"] == 4 and sent.json["data"]["flags"] & EPHEMERAL
            assert embed_of(world.fake.messages[int(stored["id"])])["title"] == embed_of(reply.json)["title"]

    run(scenario())
