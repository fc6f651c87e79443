"""The default card for twenty typical questions, in Korean and English, as a phone would show it.

    python -m vramfit.bot.render.gallery            # both languages
    python -m vramfit.bot.render.gallery ko         # one

For reading the copy side by side (maintainers, translators); the cards are the bot's own, rendered by
:func:`bot.render.embed.render_card` from the real calculator, and printed as text: title, description, each field's
name and value, footer.
"""

from __future__ import annotations

import sys

import discord

from vramfit.bot.answering.service import CalcBackend
from vramfit.bot.errors import AnswerError
from vramfit.bot.i18n import Lang
from vramfit.bot.render.embed import render_card, render_error

QUESTIONS: tuple[tuple[str, str], ...] = (
    ("llama3 8b 32k on a 3060", "라마3 8B 32k 3060에서 돌아가?"),
    ("qwen3.5 9b 32k on a 3060", "큐웬3.5 9b 32k 3060"),
    ("gemma 4 31b on a 4090", "젬마4 31b 4090에서 돼?"),
    ("llama 3.3 70b on a 4090", "라마3.3 70b 4090"),
    ("llama 3.3 70b on a 4090 with 64GB RAM", "라마3.3 70b 4090 램 64기가"),
    ("gpt-oss-120b on a 5090 with 64GB RAM", "gpt-oss 120b 5090 램 64기가"),
    ("qwen3 235b a22b on a 5090 with 128GB RAM", "큐웬3 235b 5090 램 128기가"),
    ("qwen3 30b a3b 64k on a 4060 ti 16gb", "큐웬3 30b a3b 64k 4060 ti 16gb"),
    ("mistral small 24b q8_0 on 2x 3090", "미스트랄 스몰 24b q8_0 3090 두 장"),
    ("deepseek r1 on 8x h100", "딥시크 r1 h100 8장"),
    ("phi-4 16k on an rtx 4070 laptop", "파이4 16k 4070 노트북"),
    ("llama 3.1 8b 128k q8_0 cache on a 4090", "라마3.1 8b 128k kv 캐시 q8 4090"),
    ("qwen2.5 14b for 8 users at 8k on a 3090", "큐웬2.5 14b 사용자 8명 8k 3090"),
    ("how much context can llama 3.1 8b take on a 3060?", "라마3.1 8b 3060 컨텍스트 얼마나?"),
    ("which quant for gemma 2 27b on a 4090 at 16k?", "젬마2 27b 4090 16k 양자화 뭐로?"),
    ("how many 3090s do i need for deepseek v3", "딥시크 v3 돌리려면 3090 몇 장 필요해?"),
    ("llama 3.1 70b on a mac studio m2 ultra 192gb", "라마3.1 70b 맥스튜디오 m2 울트라 192gb"),
    ("llama 3.3 70b on a ryzen ai max+ 395 128gb", "라마3.3 70b 라이젠 ai max+ 395 128gb"),
    ("llama3 8b 8k on a 5090ti", "라마3 8b 8k 5090ti"),
    ("qwen3 32b fp8 on an h100 with vllm", "큐웬3 32b fp8 h100 vllm"),
)


def card_text(embed: discord.Embed) -> list[str]:
    """An embed as the lines a phone shows."""
    lines = [f"# {embed.title or ''}", *(embed.description or "").splitlines()]
    for field in embed.fields:
        lines += [f"[{field.name}]", *(f"  {line}" for line in (field.value or "").splitlines())]
    return [*lines, f"-- {embed.footer.text or ''}"]


def gallery(langs: tuple[Lang, ...] = ("en", "ko")) -> str:
    backend = CalcBackend()
    out: list[str] = []
    for lang in langs:
        for pair in QUESTIONS:
            question = pair[0] if lang == "en" else pair[1]
            try:
                lines = card_text(render_card(backend.answer(question, lang, {}), lang))
            except AnswerError as error:
                lines = [render_error(error, lang)]
            out += [f"> {question}   ({len(lines)} lines)", *lines, ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    langs: tuple[Lang, ...] = tuple(a for a in args if a in ("en", "ko")) or ("en", "ko")  # type: ignore[misc]
    sys.stdout.write(gallery(langs) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
