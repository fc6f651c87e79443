"""Memory other programs already hold on the GPU (`vram --reserved`, "1.5gb already used", "이미 2기가 사용 중"):
taken off what the model may use, in the verdict, the headroom and the longest context, said in the answer and kept by
the card's buttons; a size that is not one is a clear error."""

from __future__ import annotations

import io

import pytest

from tests.bot.cli_json import run_json
from tests.groundtruth import GIB
from vramfit.bot.answering.cards import Card
from vramfit.bot.answering.service import CalcBackend
from vramfit.bot.cli import EXIT_ERROR, run
from vramfit.bot.render.embed import embed_as_text, render_card
from vramfit.bot.ui.state import CardState

# A Llama 3.1 8B Q4_K_M at 8,192 tokens on a 12 GB RTX 3060 (12 GiB).
ASK = ("--model", "llama-3.1-8b", "--context", "8k", "--gpu", "rtx-3060-12gb")


def test_the_reserved_memory_comes_off_the_usable_memory_and_the_headroom() -> None:
    plain = run_json(*ASK)["fits"][0]
    reserved = run_json(*ASK, "--reserved", "1.5GB")
    fit = reserved["fits"][0]
    assert reserved["request"]["reserved_bytes"] == 3 * GIB // 2
    assert plain["usable_bytes"] == 12 * GIB  # the card's memory
    assert fit["usable_bytes"] == 12 * GIB - 3 * GIB // 2
    assert fit["headroom_bytes"] == plain["headroom_bytes"] - 3 * GIB // 2
    assert fit["max_context"] < plain["max_context"]
    assert run_json(*ASK)["request"]["reserved_bytes"] == 0


def test_enough_reserved_memory_turns_a_fit_into_a_partial_one() -> None:
    plain = run_json(*ASK)["fits"][0]
    # everything the model needs fits with this much to spare; reserving more than that leaves it short
    too_much = plain["headroom_bytes"] + GIB
    fit = run_json(*ASK, "--reserved", f"{too_much / GIB:.3f}")["fits"][0]
    assert plain["verdict"] == "fits" and fit["verdict"] == "partial"


@pytest.mark.parametrize(("size", "gib"), [("1.5GB", 1.5), ("1.5", 1.5), ("800MB", 800 / 1024), ("2GiB", 2.0)])
def test_sizes_read_as_nvidia_smi_counts_them(size: str, gib: float) -> None:
    assert run_json(*ASK, "--reserved", size)["request"]["reserved_bytes"] == int(gib * GIB)


@pytest.mark.parametrize("size", ["abc", "0", "2000GB", "-1GB"])
def test_a_size_that_is_not_one_is_a_clear_error(size: str) -> None:
    error = run_json(*ASK, f"--reserved={size}", status=EXIT_ERROR)["error"]
    assert error["code"] == "bad_number"


@pytest.mark.parametrize(
    ("lang", "line"),
    [
        ("en", "Already in use on the GPU: 1.5 GiB, taken off what the model may use"),
        ("ko", "GPU에서 이미 쓰고 있는 메모리: 1.5GiB. 모델이 쓸 수 있는 양에서 뺐어요"),
    ],
)
def test_the_answer_says_what_it_took_off(lang: str, line: str) -> None:
    out = io.StringIO()
    assert run(["--lang", lang, *ASK, "--reserved", "1.5GB"], out) == 0
    assert line in out.getvalue()


def test_vllm_does_not_start_when_others_leave_less_than_its_share_free() -> None:
    # vLLM wants gpu_memory_utilization (0.9) of the card free at start: 1 GiB used of 24 leaves 23 (> 21.6) free,
    # 3 GiB leaves 21 (< 21.6)
    ask = ("--model", "llama-3.1-8b", "--engine", "vllm", "--quant", "fp8", "--gpu", "rtx-4090", "--context", "8k")
    assert run_json(*ask, "--reserved", "1GB")["fits"][0]["verdict"] == "fits"
    assert run_json(*ask, "--reserved", "3GB")["fits"][0]["verdict"] == "no"


# The words of a question: a size with "already used" (or its Korean, which needs 이미 or a word of occupying)
@pytest.mark.parametrize(
    ("question", "gib", "card_gib"),
    [
        ("llama 8b 32k on a 4060ti 16gb, 1.5gb already used", 1.5, 16),
        ("llama 8b on a 3060, 2gb used by the desktop", 2.0, 12),
        ("llama 8b 3060 800mb in use", 800 / 1024, 12),
        ("라마3 8b 32k 3060에서 돌아가? 1.5기가는 이미 쓰고 있어", 1.5, 12),
        ("이미 2기가 사용 중인데 qwen3 8b 3060 돼?", 2.0, 12),
        ("8기가 쓰고 있어 라마3 8b", 0.0, 8),  # "I use an 8 GB one": the card's size, nothing in use
        # programs said to eat it, with the word "vram" after (or before, in Korean) the size
        ("gemma 3 12b on a 3060, discord and chrome eat about 1.5 gigs of vram", 1.5, 12),
        ("qwen3 8b on a 3060, windows and steam take around 800MB of vram", 800 / 1024, 12),
        ("gemma 3 12b 3060 with 32gb ram, chrome uses 2gb vram", 2.0, 12),
        ("윈도우랑 크롬이 vram 1.5기가 먹어요 3060 젬마3 12b", 1.5, 12),
        ("vram 2기가를 디스코드가 잡아먹어 3060 젬마3 4b", 2.0, 12),
        ("does qwen3 8b use 6gb of vram on a 3060", 0.0, 12),  # the model's use, asked: nothing in use
    ],
)
def test_a_question_says_what_is_in_use(question: str, gib: float, card_gib: int) -> None:
    request = run_json(question)["request"]
    assert request["reserved_bytes"] == int(gib * GIB)
    assert request["gpus"][0]["memory_bytes"] == card_gib * GIB


def test_the_card_says_it_and_its_buttons_keep_it() -> None:
    backend = CalcBackend()
    card = backend.answer("라마3 8b 32k 3060에서 돌아가? 1.5기가는 이미 쓰고 있어", None, {})
    assert isinstance(card, Card) and card.reserved_mib == 1536
    assert "GPU에서 이미 쓰는 1.5GiB 빼고 계산했어요" in embed_as_text(render_card(card, "ko"))
    state = CardState.from_card(card, "ko")
    assert CardState.decode(state.encode() or "") == state and state.reserved_mib == 1536
    again = backend.answer("", "ko", state.with_context(8192).overrides())
    assert isinstance(again, Card) and again.reserved_mib == 1536 and again.assumptions.context == 8192
