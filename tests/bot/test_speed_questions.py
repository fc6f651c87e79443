"""Speed questions ("how fast?", "몇 토큰 나와?") are answered with the speed first; "몇 토큰까지?" stays the largest
context. Each phrasing here was misread before (as the largest context, or as a plain fit with the speed buried)."""

from __future__ import annotations

import io
import json

import pytest

from vramfit.bot.cli import run
from vramfit.bot.parser import parse

SPEED = [
    "qwen3 8b 3060 몇 토큰 나옴?",
    "qwen3 8b 3060 몇 토큰 나와?",
    "qwen3 8b 3060에서 속도 얼마나 나와?",
    "qwen3 8b 3060 속도?",
    "qwen3 8b 3060 얼마나 빨라?",
    "qwen3 8b 3060 초당 몇 토큰?",
    "qwen3 8b 3060 tok/s?",
    "how fast is qwen3 8b on a 3060",
    "qwen3 8b on a 3060, tokens per second?",
    "qwen3 8b 3060 speed",
    # "how many tokens" asked per second is a speed, not the largest context
    "how many tokens per second does qwen3 8b get on a 3060",
    "how many tokens do i get per second with qwen3 8b on a 3060",
    "qwen3 8b 3060 초당 몇 토큰 뽑혀요?",
]
NOT_SPEED = [
    ("qwen3 8b 3060 몇 토큰까지 돼?", "max_context"),
    ("how many tokens can qwen3 8b take on a 3060", "max_context"),
    ("how many tokens fit for qwen3 8b on a 3060", "max_context"),
    ("qwen3 8b 32k 3060", "fit"),
    ("qwen3 8b 3060 돌아가?", "fit"),
]


@pytest.mark.parametrize("question", SPEED)
def test_speed_questions_are_heard(question: str) -> None:
    parsed = parse(question)
    assert parsed.intent == "fit" and parsed.asks_speed, parsed
    assert parsed.model == "qwen3-8b" and parsed.gpus[0].gpu.id == "rtx-3060-12gb"


@pytest.mark.parametrize(("question", "intent"), NOT_SPEED)
def test_other_questions_are_not_speed_questions(question: str, intent: str) -> None:
    parsed = parse(question)
    assert parsed.intent == intent and not parsed.asks_speed


@pytest.mark.parametrize(("question", "lang"), [(SPEED[0], "ko"), (SPEED[7], "en")])
def test_the_terminal_and_the_card_lead_with_the_speed(question: str, lang: str) -> None:
    from vramfit.bot.answering.cards import Card
    from vramfit.bot.answering.service import CalcBackend
    from vramfit.bot.render.embed import render_card

    out = io.StringIO()
    assert run([question], out) == 0
    first = out.getvalue().splitlines()[0]
    assert first.startswith("⚡ GeForce RTX 3060 12GB:") and "tok/s" in first
    data = json.loads(_json(question))
    assert data["request"]["asks_speed"] is True
    card = CalcBackend().answer(question, None, {})
    assert isinstance(card, Card) and card.speed_first
    description = render_card(card, lang).description or ""
    assert description.startswith("⚡ ") and "tok/s" in description.splitlines()[0]


def _json(question: str) -> str:
    out = io.StringIO()
    assert run(["--json", question], out) == 0
    return out.getvalue()
