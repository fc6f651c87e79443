"""The files people download: uploaders' own mixes (unsloth's ``UD-Q4_K_XL``, bartowski's ``Q6_K_L``) and
mradermacher's ``i1-`` quants. From the Hub the asked file's own header answers, exactly; without a file the answer
is sized as the nearest standard quant and says so, in English and Korean."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.bot.cli_json import run_json
from tests.calc.test_gguf import TINY_LLAMA, write_gguf
from tests.fake_hub import FakeHub, Repo, use_hub
from vramfit.bot.cli import run
from vramfit.bot.parser import parse
from vramfit.calc.file_types import FileType, parse_file_type, uploader_mix

REPO = "tiny-org/Tiny-Llama-GGUF"
UD_FILE = "Tiny-Llama-UD-Q4_K_XL.gguf"


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    files = {}
    for name, ftype in ((UD_FILE, FileType.Q8_0), ("Tiny-Llama-Q4_K_M.gguf", FileType.Q4_K_M)):
        path = tmp_path / name  # the UD file written as Q8_0: its header, not its name, gives the size
        write_gguf(path, TINY_LLAMA, ftype)
        files[name] = path.read_bytes()
    with FakeHub({REPO: Repo(files=files)}) as server:
        use_hub(monkeypatch, server.url, tmp_path / "cache")
        yield server


@pytest.mark.parametrize(
    "argv",
    [
        [f"{REPO} UD-Q4_K_XL 8k 3060"],
        [f"hf.co/{REPO}:UD-Q4_K_XL 8k 3060"],
        [f"https://huggingface.co/{REPO}/blob/main/{UD_FILE} 8k 3060"],
        ["--hf", REPO, "--quant", "UD-Q4_K_XL", "--context", "8k"],
    ],
)
def test_an_unsloth_dynamic_quant_is_read_from_its_own_file(hub: FakeHub, argv: list[str]) -> None:
    """Before: unknown_quant before the repo was even read."""
    data = run_json(*argv)
    request = data["request"]
    assert request["model"]["source"].endswith(UD_FILE)
    assert "quant_mix" not in request  # the file's header: exact, nothing approximated
    q8 = run_json(f"hf.co/{REPO}:UD-Q4_K_XL 8k 3060")["estimate"]["weights_bytes"]
    assert data["estimate"]["weights_bytes"] == q8


@pytest.mark.parametrize(
    ("question", "lang", "mix", "sized_as", "words"),
    [
        ("qwen3.5 9b UD-Q4_K_XL 3060", "en", "UD-Q4_K_XL", "Q4_K_M", "UD-Q4_K_XL is sized as Q4_K_M"),
        ("큐웬3.5 9b UD-Q2_K_XL 3060에서 돼?", "ko", "UD-Q2_K_XL", "Q2_K", "UD-Q2_K_XL 양자화는 가장 가까운"),
        ("qwen3.5 9b Q6_K_L 3060", "en", "Q6_K_L", "Q6_K", "Q6_K_L is sized as Q6_K"),
        ("qwen3.5 9b ud-iq2_xxs 3060", "en", "UD-IQ2_XXS", "IQ2_XXS", "UD-IQ2_XXS is sized as IQ2_XXS"),
    ],
)
def test_a_mix_without_its_file_is_sized_as_the_nearest_standard_quant_and_says_so(
    question: str, lang: str, mix: str, sized_as: str, words: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VRAMFIT_OFFLINE", "1")
    data = run_json(question)
    assert data["request"]["quant"] == sized_as
    assert data["request"]["quant_mix"] == {"written": mix, "sized_as": sized_as}
    out = io.StringIO()
    assert run([question], out) == 0
    assert words in out.getvalue()


@pytest.mark.parametrize(
    ("written", "standard", "mix"),
    [
        ("UD-Q4_K_XL", FileType.Q4_K_M, "UD-Q4_K_XL"),
        ("Q4_K_XL", FileType.Q4_K_M, "Q4_K_XL"),
        ("ud_q3_k_xl", FileType.Q3_K_M, "UD_Q3_K_XL"),
        ("Q8_K_XL", FileType.Q8_0, "Q8_K_XL"),
        ("Q5_K_L", FileType.Q5_K_M, "Q5_K_L"),
        ("UD-IQ1_S", FileType.IQ1_S, "UD-IQ1_S"),
        ("i1-Q4_K_M", FileType.Q4_K_M, ""),  # an imatrix quant is the standard type itself
        ("IQ4_NL", FileType.IQ4_NL, ""),
        ("MXFP4", FileType.MXFP4_MOE, ""),
    ],
)
def test_quant_names_people_download(written: str, standard: FileType, mix: str) -> None:
    assert parse_file_type(written) == standard
    found = uploader_mix(written)
    assert (found[1] if found else "") == mix
    parsed = parse(f"llama 3.1 8b {written} 3060")
    assert parsed.quant == standard.value and parsed.unparsed == ()


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("qwen3.5 9b UD-Q4_K_XL 3060", "`UD-Q4_K_XL` is sized as Q4_K_M"),
        ("큐웬3.5 9b UD-Q4_K_XL 3060에서 돼?", "`UD-Q4_K_XL` 양자화는 가장 가까운 표준 양자화인 Q4_K_M 기준으로"),
    ],
)
def test_the_card_says_a_mix_was_sized_as_its_nearest_standard_quant(
    question: str, words: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vramfit.bot.answering.cards import Card
    from vramfit.bot.answering.service import CalcBackend
    from vramfit.bot.render.embed import render_card

    monkeypatch.setenv("VRAMFIT_OFFLINE", "1")
    card = CalcBackend().answer(question, None, {})
    assert isinstance(card, Card) and card.quant_mix == "UD-Q4_K_XL"
    lang = "ko" if "큐웬" in question else "en"
    assert words in (render_card(card, lang).description or "")
