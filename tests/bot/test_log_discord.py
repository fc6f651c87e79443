"""A pasted log through the fake Discord (issue 28): attached to a mention in a thread, in a code block of a mention,
in a forum post of an auto-answer forum, and with ``/vram-log``; each gets the log's card in the asker's language,
an out-of-memory log its cause and the context the calculator says fits, and a log that pings or breaks Markdown
pings no one and stays inside its code block."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bot.test_bot_servers import FORUM_ID, auto_settings, enable_autoanswer, forum_post, server_world
from tests.fake_discord import EPHEMERAL
from tests.fake_discord.harness import THREAD_ID, World, run
from tests.fake_discord.sent import embed_of
from tests.fake_discord.server import Recorded

LOGS = Path("tests/data/logs")
OOM = "ik_llama.cpp-deepseek-r1-q2k-15x3090-oom-compute.log"  # DeepSeek R1 Q2_K on 15 RTX 3090s, 32,768 tokens
TITLE = {"en": "What the {engine} log says", "ko": "{engine} 로그 내용"}
QUESTION = {"en": "why did it crash?", "ko": "왜 죽었을까요?"}


def log_text(name: str) -> str:
    return (LOGS / name).read_text(encoding="utf-8").partition("\n\n")[2]


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_log_attached_in_a_thread_gets_the_cause_and_what_fits(lang: str) -> None:
    async def scenario() -> None:
        async with World.start() as world:
            attached = world.fake.attach("server.log", log_text(OOM).encode(), content_type="text/plain")
            since = world.fake.last_seq
            await world.say(QUESTION[lang], channel_id=THREAD_ID, attachments=[attached])
            sent = await world.fake.wait_request("POST", rf"/channels/{THREAD_ID}/messages", since=since, timeout=15)
            embed = embed_of(sent.json)
            assert embed["title"] == TITLE[lang].format(engine="llama.cpp")
            body = embed["description"]
            assert body.startswith("```") and body.endswith("```")
            failed = {"en": "the compute buffer asked for 8,900.0 MiB on device 0",
                      "ko": "연산 버퍼 할당 8,900.0MiB를 device 0에서 받지 못했어요"}[lang]  # fmt: skip
            assert failed in body
            # What fits, from the calculator: DeepSeek-R1 Q2_K with every layer on 15 RTX 3090s (its MLA stage at 32,768
            # tokens, 8,656 MiB and three pipeline copies of the inputs, 8,890 MiB a GPU: the log asked 8,900.0)
            assert "15× GeForce RTX 3090" in body and "llama-server -c 30976 -ngl 99" in body
            assert sent.json["allowed_mentions"]["parse"] == []

    run(scenario())


# A message holds 2,000 characters: what people paste in one is the memory lines (lcpp-10701 in measured.jsonl)
ROCM_RUN = next(
    json.loads(line)["quote"]
    for line in Path("tests/data/groundtruth/measured.jsonl").read_text().splitlines()
    if line.startswith('{"id": "lcpp-10701-')
)


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_code_block_in_a_mention_gets_the_card(lang: str) -> None:
    assert len(ROCM_RUN) < 2000

    async def scenario() -> None:
        async with World.start() as world:
            since = world.fake.last_seq
            await world.say(f"{QUESTION[lang]}\n```\n{ROCM_RUN}\n```")
            sent = await world.fake.wait_request("POST", r"/channels/\d+/messages", since=since, timeout=15)
            embed = embed_of(sent.json)
            assert embed["title"] == TITLE[lang].format(engine="llama.cpp")
            assert "4,403.5 MiB" in embed["description"] and "+0.0" in embed["description"]  # vramfit agrees

    run(scenario())


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_forum_post_with_a_log_is_answered_without_a_mention(lang: str) -> None:
    async def scenario() -> None:
        async with server_world(auto_settings()) as world:
            await enable_autoanswer(world, FORUM_ID)
            title = {"en": "OOM with DeepSeek R1 on 15x 3090", "ko": "딥시크 R1 3090 15장 메모리 부족"}[lang]
            thread = await forum_post(world, title, f"```\n{log_text(OOM)}\n```")
            sent = await world.fake.wait_request("POST", rf"/channels/{thread['id']}/messages", timeout=15)
            embed = embed_of(sent.json)
            assert embed["title"] == TITLE[lang].format(engine="llama.cpp")  # the language of the post's title
            assert "8,900.0" in embed["description"] and "30976" in embed["description"]

    run(scenario())


def test_slash_vram_log_takes_a_file_and_refuses_what_is_no_log() -> None:
    async def scenario() -> None:
        async with World.start() as world:
            attached = world.fake.attach("crash.txt", log_text(OOM).encode())
            interaction = await world.slash(None, locale="ko", attachments={"file": attached}, command="vram-log")
            body = (await world.callback(interaction, timeout=15)).json["data"]
            assert embed_of(body)["title"] == "llama.cpp 로그 내용"
            not_a_log = world.fake.attach("notes.txt", b"just some notes about my setup\n")
            interaction = await world.slash(None, attachments={"file": not_a_log}, command="vram-log")
            body = (await world.callback(interaction, timeout=15)).json["data"]
            assert body["flags"] & EPHEMERAL and "nothing in it was read" in body["content"]

    run(scenario())


def test_a_log_that_pings_or_breaks_markdown_stays_in_its_block() -> None:
    hostile = ROCM_RUN.replace("Meta Llama 3.1 8B Instruct", "@everyone ```**bold** <@123>")

    async def scenario() -> None:
        async with World.start() as world:
            since = world.fake.last_seq
            await world.say(f"```\n{hostile}\n```")
            sent = await world.fake.wait_request("POST", r"/channels/\d+/messages", since=since, timeout=15)
            body = embed_of(sent.json)["description"]
            assert body.count("```") == 2 and body.startswith("```") and body.endswith("```")
            assert sent.json["allowed_mentions"]["parse"] == []

    run(scenario())


def test_two_hostile_log_files_leave_the_other_questions_answered() -> None:
    """Issue 43: a 600 KB attachment froze the event loop for 108 s, and two 2 MB files took both answer workers
    while every other question was answered "too long or too complex". Now each file is read in linear time: both
    get their answer (no engine's line in them), and a question asked between them gets its card."""
    blob = "\n".join(["load_tensors: " + "QUJD" * 998] * 520).encode()  # 2 MB: the shape of a pasted base64 blob
    osc = b"\x1b]a" * (2 << 20 // 3)

    async def scenario() -> None:
        async with World.start() as world:
            since = world.fake.last_seq
            for name, data in (("a.log", blob), ("b.log", osc)):
                attached = world.fake.attach(name, data, content_type="text/plain")
                await world.say("why did it crash?", attachments=[attached])
            data = await world.ask("llama3 8b 32k 3060")
            assert data.get("embeds"), data  # the card, not "too long or too complex"

            def replies() -> list[Recorded] | None:
                found = world.fake.find("POST", r"/channels/\d+/messages", since=since)
                return found if len(found) >= 2 else None

            # no engine's line in either: each is read through and the words beside it answered as a question
            for reply in await world.fake.wait_until(replies, timeout=20):
                assert "I don't know the model **why**" in reply.json["content"], reply.json

    run(scenario(), timeout=60)
