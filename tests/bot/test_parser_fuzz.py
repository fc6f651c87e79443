"""Random and adversarial text never crashes the parser: a ParsedQuery or a documented VramfitError, nothing else."""

from __future__ import annotations

import time

from hypothesis import example, given, settings
from hypothesis import strategies as st

from vramfit.bot.parser import ParsedQuery, parse
from vramfit.calc.errors import VramfitError
from vramfit.calc.presets import load_catalog

CATALOG = load_catalog()

# Pieces people (and trolls) put in messages: names, numbers, units, Korean counters, Discord and markdown syntax.
WORDS = [
    "llama",
    "라마",
    "3.1",
    "8b",
    "70b",
    "qwen",
    "큐웬",
    "2.5",
    "gemma-2-9b-it",
    "젬마3",
    "mixtral",
    "8x7b",
    "deepseek",
    "딥씨크",
    "r1",
    "distill",
    "phi",
    "파이",
    "엑사원",
    "솔라",
    "command",
    "커맨드",
    "gpt-oss",
    "3060",
    "4090",
    "rtx",
    "4060",
    "ti",
    "super",
    "슈퍼",
    "h100",
    "a100",
    "80gb",
    "m2",
    "m3",
    "max",
    "맥스",
    "ultra",
    "맥북",
    "macbook",
    "air",
    "7900",
    "xtx",
    "arc",
    "b580",
    "t4",
    "l40s",
    "노트북",
    "laptop",
    "q4_k_m",
    "q8_0",
    "iq4_xs",
    "q4",
    "q9_k_x",
    "4bit",
    "4비트",
    "fp16",
    "fp8",
    "int4",
    "awq",
    "bf16",
    "kv",
    "kv캐시",
    "cache",
    "vllm",
    "llama.cpp",
    "ollama",
    "fa",
    "off",
    "flash",
    "attention",
    "32k",
    "128K",
    "1M",
    "8천",
    "3만",
    "2천",
    "12만8천",
    "삼만이천",
    "4096토큰",
    "tokens",
    "ctx",
    "컨텍스트",
    "users",
    "동시",
    "사용자",
    "명",
    "열",
    "두",
    "장",
    "개",
    "한",
    "two",
    "dual",
    "2x",
    "x2",
    "×",
    "*",
    "16gb",
    "12기가",
    "24 GB",
    "ram",
    "card",
    "그래픽카드",
    "enough",
    "vs",
    "비교",
    "랑",
    "or",
    "what",
    "can",
    "i",
    "run",
    "몇",
    "최대",
    "어떤",
    "양자화",
    "뭐",
    "돌릴",
    "수",
    "있어",
    "?",
    "!",
    "lol",
    "<@123>",
    "<@!456>",
    "<#789>",
    "<@&1>",
    "@everyone",
    "@here",
    "<:pog:123>",
    "**",
    "`",
    "```",
    "||",
    ">",
    "# ",
    "_",
    "~~",
    "https://huggingface.co/Qwen/Qwen2.5-7B-Instruct",
    "http://x.y",
    "/vram",
    "!vram",
    "0",
    "-1",
    "999999999999999999999",
    "1e400",
    "0k",
    "99999999k",
    "0gb",
    "99999gb",
    "0x",
    "65x",
    "9999명",
    "\x00",
    "\u200b",
    "\ufeff",
    "🎮",
    "🦙",
    "👍🏽",
    "ㅋㅋㅋ",
    "ㅎㅇ",
    "ﾃｽﾄ",
    "１６ＧＢ",
    "\n",
    "\t",
    "  ",
]
SEPARATORS = [" ", "", "-", ",", "/", ".", "\n"]

messages = st.one_of(
    st.text(max_size=200),
    st.text(alphabet=st.characters(min_codepoint=0xAC00, max_codepoint=0xD7A3), max_size=50),
    st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPARATORS)), max_size=25).map(
        lambda parts: "".join(w + s for w, s in parts)
    ),
    st.integers(min_value=-(10**30), max_value=10**30).map(lambda n: f"llama 3.1 8b {n}k {n} users {n}x 3090"),
    st.integers(min_value=0, max_value=10**6).map(lambda n: f"라마3.1 8b 4090 {n}장 사용자 {n}명 {n}만 토큰"),
)


def _check(text: str) -> None:
    try:
        result = parse(text, CATALOG)
    except VramfitError as exc:
        assert exc.code in ("unknown_model", "unknown_gpu", "unknown_quant", "bad_number"), exc.code
        assert len(exc.suggestions) <= 5
        return
    assert isinstance(result, ParsedQuery)
    if result.model is not None:
        try:
            result.to_request()
        except VramfitError as exc:
            assert exc.code == "bad_number"


@settings(database=None)  # examples per run: the profile's (tests/conftest.py; `make fuzz` runs the deep one)
@given(messages)
@example("")
@example(" ")
@example("llama 3.1 8b " * 1000)  # 13 kB
@example("라마3.1 8b 4090 " * 700)
@example("9" * 10_000)
@example("k" * 10_000)
@example("<@123> " * 500 + "@everyone")
@example("```\nllama 3.1 8b on 3060\n```")
@example("**llama 3.1 8b** on ||3060||")
@example("1" * 30 + "k context llama 3 8b")
@example("llama 3 8b " + "9" * 40 + "gb")
@example("llama 3 8b " + "9" * 40 + " users")
@example("llama 3 8b " + "9" * 40 + "x 3090")
@example("llama 3 8b 3090 " + "9" * 40 + "장")
@example("라마3 8b 구억구천만 토큰")
@example("llama 3 8b 1e400k")
def test_parse_never_crashes(text: str) -> None:
    _check(text)


def test_long_text_is_fast() -> None:
    text = ("라마3.1 8b 32k 컨텍스트로 3060에서 돌아가? lol 🦙 " * 300)[:10_000]
    start = time.perf_counter()
    _check(text)
    assert time.perf_counter() - start < 2.0
