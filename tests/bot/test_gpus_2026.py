"""GPU presets added in 2026 (AMD Instinct MI50, 16 and 32 GB): English and Korean questions reach the row, with its
memory; the MI50's 1,024 GB/s HBM2 gives its decode estimate a ceiling."""

from __future__ import annotations

import pytest

from tests.bot.cli_json import answer

GIB = 1 << 30

# (language, GPU id, memory in GiB as the catalog counts "N GB") for each way of naming the card
CARDS = [("en", "mi50-16gb", 16), ("ko", "mi50-16gb", 16), ("en", "mi50-32gb", 32), ("ko", "mi50-32gb", 32)]
QUESTIONS = ["llama 3.1 8b on an mi50", "라마3 8b mi50에서 돌아가?"]
QUESTIONS += ["llama 3.1 8b on an instinct mi50 32gb", "라마3 8b mi50 32gb에서 돌아가?"]


@pytest.mark.parametrize(("question", "card"), list(zip(QUESTIONS, CARDS, strict=True)))
def test_a_question_reaches_the_card(question: str, card: tuple[str, str, int]) -> None:
    lang, gpu_id, memory_gib = card
    gpus = answer(question, lang)["request"]["gpus"]
    assert [gpu["id"] for gpu in gpus] == [gpu_id]
    assert gpus[0]["memory_bytes"] == memory_gib * GIB


def test_decode_stays_under_what_its_memory_can_read() -> None:
    # Llama 3.1 8B Q4_K_M reads about 4.6 GB a token: 1,024 GB/s caps decode at about 220 tokens/s
    fit = answer("llama 3.1 8b 4k on an mi50")["fits"][0]
    assert fit["verdict"] == "fits"
    assert 0 < fit["decode"]["tokens_per_second"] < 1024e9 / fit["total_bytes"] * 1.5
