"""A config.json attached to a question, through the fake Discord: the bot downloads the attachment from the fake's
CDN with discord.py's ``Attachment.read``, and answers for that model with the numbers ``vram --json --config``
gives for the same file and question; a file too large, one that is not JSON and an architecture vramfit does not
model get their sentences in English and Korean."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path
from typing import Any

import pytest

from tests.fake_discord.harness import CHANNEL_ID, GUILD_ID, World, make_settings, run
from tests.fake_discord.sent import embed_of
from vramfit.bot.answering.cards import Backend, Card, Overrides
from vramfit.bot.answering.configs import MAX_ATTACHMENT_BYTES
from vramfit.bot.answering.service import CalcBackend
from vramfit.bot.cli import run as vram
from vramfit.bot.render.embed import render_card

CONFIG = Path(__file__).resolve().parents[1] / "data" / "configs" / "Qwen3.5-9B.json"
QUESTIONS = {"en": "will this run at 32k on a 3060?", "ko": "이거 32k로 3060에서 돌아가?"}
SOURCE_LINE = {"en": "📄 Read from the attached **config.json**", "ko": "📄 첨부한 **config.json** 파일에서 읽었어요"}


def spy_backend() -> tuple[Backend, list[tuple[str, Overrides, Card]]]:
    """The real backend, recording every card it answers with."""
    inner = CalcBackend().backend()
    cards: list[tuple[str, Overrides, Card]] = []

    def answer(text: str, lang: Any, overrides: Overrides) -> Any:
        card = inner.answer(text, lang, overrides)
        assert isinstance(card, Card)
        cards.append((text, overrides, card))
        return card

    return dataclasses.replace(inner, answer=answer), cards


def cli_json(*argv: str) -> dict[str, Any]:
    out = io.StringIO()
    assert vram(["--json", *argv], out) == 0, out.getvalue()
    data: dict[str, Any] = json.loads(out.getvalue())
    return data


def same_numbers(card: Card, cli: dict[str, Any]) -> None:
    """Every byte count of the card is the terminal's, and so is each GPU's verdict and headroom."""
    estimate = dataclasses.asdict(card.estimate)
    shared = set(estimate) & set(cli["estimate"])
    assert {"weights_bytes", "kv_cache_bytes", "total_bytes", "file_bytes"} <= shared
    assert {k: estimate[k] for k in shared} == {k: cli["estimate"][k] for k in shared}
    fits = [(f.gpu_id, f.verdict, f.headroom_bytes, f.max_context) for f in card.fits]
    assert fits == [(f["gpu"], f["verdict"], f["headroom_bytes"], f["max_context"]) for f in cli["fits"]]
    assert card.assumptions.context == cli["request"]["context"] == 32768
    assert card.model.params == cli["request"]["model"]["params"]


async def reply_to(world: World, since: int) -> dict[str, Any]:
    sent = await world.fake.wait_request("POST", rf"/channels/{CHANNEL_ID}/messages", since=since, timeout=15)
    body: dict[str, Any] = sent.json
    return body


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_mention_with_a_config_json_is_answered_for_that_model(lang: str) -> None:
    data = CONFIG.read_bytes()
    cli = cli_json("--config", str(CONFIG), QUESTIONS[lang])
    backend, cards = spy_backend()

    async def scenario() -> None:
        async with World.start(backend=backend) as world:
            attachment = world.fake.attach("config.json", data, content_type="application/json")
            since = world.fake.last_seq
            await world.say(QUESTIONS[lang], attachments=[attachment])
            body = await reply_to(world, since)
            assert world.fake.downloads == [attachment["url"].split(world.fake.host, 1)[1]]
            text, overrides, card = cards[-1]
            assert "model_ref" in overrides and text == QUESTIONS[lang]
            same_numbers(card, cli)
            assert card.lang == lang and not card.stateful  # buttons cannot recompute a model read from a file
            embed = embed_of(body)
            assert embed == render_card(card, lang).to_dict()  # the card sent is the one computed
            assert SOURCE_LINE[lang] in embed["description"]

    run(scenario())


def test_slash_vram_takes_a_config_attachment() -> None:
    data = CONFIG.read_bytes()
    cli = cli_json("--config", str(CONFIG), "32k 3060")
    backend, cards = spy_backend()

    async def scenario() -> None:
        async with World.start(backend=backend) as world:
            attachment = world.fake.attach("config.json", data)
            interaction = await world.slash("32k 3060", attachments={"config": attachment})
            body = (await world.callback(interaction, timeout=15)).json["data"]
            same_numbers(cards[-1][2], cli)
            assert "config.json" in embed_of(body)["description"]
            # A file that is no config: said privately, to the asker only.
            broken = world.fake.attach("config.json", b"{ not json")
            interaction = await world.slash("32k 3060", attachments={"config": broken}, locale="ko")
            body = (await world.callback(interaction, timeout=15)).json["data"]
            assert body["flags"] & (1 << 6)
            assert body["content"].startswith("파일을 읽을 수 없어요")

    run(scenario())


UNKNOWN = {"model_type": "no-such-arch", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
           "vocab_size": 100}  # fmt: skip
ERRORS = [
    # (what is attached, what the payload says its size is, English words, Korean words, downloaded)
    (b"{}", MAX_ATTACHMENT_BYTES + 1, "The attached file is larger than **1 MiB**", "**1 MiB**보다 커서", False),
    (b" " * MAX_ATTACHMENT_BYTES + b"{}", 100, "larger than **1 MiB**", "**1 MiB**보다 커서", True),  # a size that lies
    (b"model_type: llama\n", None, "That file could not be read: config.json: not valid JSON", "파일을 읽을 수 없어요",
     True),
    (json.dumps(UNKNOWN).encode(), None, "vramfit can't model the **no-such-arch** architecture",
     "**no-such-arch** 아키텍처", True),
]  # fmt: skip


@pytest.mark.parametrize(("data", "size", "english", "korean", "downloaded"), ERRORS)
def test_attachments_that_are_not_a_config_are_told_why(
    data: bytes, size: int | None, english: str, korean: str, downloaded: bool
) -> None:
    async def scenario() -> None:
        async with World.start(backend=CalcBackend().backend()) as world:
            for question, words in (("does this fit a 3060?", english), ("3060에서 돌아가?", korean)):
                attachment = world.fake.attach("config.json", data, size=size)
                since = world.fake.last_seq
                await world.say(question, attachments=[attachment])
                content = (await reply_to(world, since))["content"]
                assert words in content, content
            assert bool(world.fake.downloads) is downloaded  # Discord's size too large: never downloaded

    run(scenario())


def test_other_attachments_are_ignored_and_the_text_answered() -> None:
    backend, cards = spy_backend()

    async def scenario() -> None:
        async with World.start(backend=backend) as world:
            picture = world.fake.attach("screenshot.png", b"\x89PNG", content_type="image/png")
            since = world.fake.last_seq
            await world.say("llama 3.1 8b 32k 3060", attachments=[picture])
            await reply_to(world, since)
            assert world.fake.downloads == [] and "model_ref" not in cards[-1][1]
            assert cards[-1][2].model.id == "llama-3.1-8b"

    run(scenario())


def test_an_auto_answer_channel_answers_a_config_json_without_a_mention(tmp_path: Path) -> None:
    data = CONFIG.read_bytes()
    cli = cli_json("--config", str(CONFIG), "32k 3060")
    backend, cards = spy_backend()

    async def scenario() -> None:
        settings = make_settings(message_content=True, database_path=str(tmp_path / "vramfit.db"))
        async with World.start(backend=backend, settings=settings) as world:
            assert world.bot.store is not None
            await world.bot.store.add_channel(GUILD_ID, CHANNEL_ID)
            attachment = world.fake.attach("config.json", data)
            since = world.fake.last_seq
            await world.say("32k 3060", attachments=[attachment], mention_bot=False)
            body = await reply_to(world, since)
            same_numbers(cards[-1][2], cli)
            assert "config.json" in embed_of(body)["description"]

    run(scenario())
