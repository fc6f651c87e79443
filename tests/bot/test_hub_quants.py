"""Every quant of a Hub GGUF repo for "which quant fits", split files read part by part, and the vision projector
beside the model: the real huggingface_hub client against the fake Hub (tests/fake_hub), small real GGUF files."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from gguf import GGUFWriter

from tests.bot.cli_json import run_json
from tests.calc.test_gguf import TINY_LLAMA, write_gguf
from tests.fake_hub import FakeHub, MemoryCache, Repo, use_hub
from vramfit.bot.cli import run
from vramfit.bot.i18n import format_small_size
from vramfit.calc.estimate import answer
from vramfit.calc.file_types import FileType
from vramfit.calc.fit import tight_margin
from vramfit.calc.gguf import architecture_from_gguf, read_gguf
from vramfit.calc.gpu import generic_gpu
from vramfit.calc.request import ModelRef, Request

REPO = "tiny-org/Tiny-Quants-GGUF"  # Q8_0 in two parts, Q6_K, Q4_K_M, Q2_K, two projectors
LACKING = "tiny-org/Tiny-NoQ6-GGUF"  # Q8_0 in two parts and Q2_K: neither Q6_K nor Q4_K_M, no projector
CONFIG = {**TINY_LLAMA, "vocab_size": 32768}
QUANTS = ("Q8_0", "Q6_K", "Q4_K_M", "Q2_K")
GPU_GB = 2  # "a 2 GB GPU": a generic card of 2 GiB


def _write_mmproj(path: Path, elements: int) -> None:
    """A small real projector GGUF: llama.cpp's clip architecture, one F16 tensor of zeros."""
    writer = GGUFWriter(str(path), arch="clip")
    writer.add_tensor("v.patch_embd.weight", np.zeros((elements // 1024, 1024), dtype=np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    folder = tmp_path_factory.mktemp("quants")
    write_gguf(folder / "Tiny-Q8_0.gguf", CONFIG, FileType.Q8_0, split_max_tensors=20)
    out = {"Q8_0": sorted(folder.glob("Tiny-Q8_0-000*-of-*.gguf"))}
    assert len(out["Q8_0"]) == 2  # a split file: the test reads both parts
    for quant in QUANTS[1:]:
        path = folder / f"Tiny-{quant}.gguf"
        write_gguf(path, CONFIG, FileType[quant])
        out[quant] = [path]
    _write_mmproj(folder / "mmproj-Tiny-F16.gguf", 1536 * 1024)
    _write_mmproj(folder / "mmproj-Tiny-Q8_0.gguf", 512 * 1024)  # not chosen: F16 first
    out["mmproj"] = [folder / "mmproj-Tiny-F16.gguf", folder / "mmproj-Tiny-Q8_0.gguf"]
    return out


def _bytes(paths: list[Path]) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in paths}


@pytest.fixture
def hub(files: dict[str, list[Path]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeHub]:
    every = {k: _bytes(v) for k, v in files.items()}
    repos = {
        REPO: Repo(files={name: data for part in every.values() for name, data in part.items()} | {"README.md": b"x"}),
        LACKING: Repo(files=every["Q8_0"] | every["Q2_K"]),
    }
    with FakeHub(repos) as server:
        use_hub(monkeypatch, server.url, tmp_path / "cache", deadline_seconds="3")
        yield server


def _local_total(paths: list[Path], quant: str, context: int) -> int:
    """The total of a quant's file(s) read locally, its KV checked against the formula worked out by hand."""
    header = read_gguf(paths[0])  # every part of a split file
    assert header.file_bytes == sum(p.stat().st_size for p in paths)  # every part counted
    model = ModelRef(id=quant, name=quant, architecture=architecture_from_gguf(header), gguf=header)
    est = answer(Request(model=model, quant=quant, context=context), ()).estimate
    layers, kv_heads, head_dim = 3, 2, 512 // 8  # TINY_LLAMA
    assert est.kv_cache_bytes == 2 * layers * kv_heads * head_dim * context * 2  # K and V, f16
    assert est.weights_bytes + est.host_bytes <= header.file_bytes  # the tensors, less the headers
    return est.total_bytes


def _fits(total: int) -> bool:
    usable = generic_gpu(GPU_GB).usable_bytes
    return usable - total >= tight_margin(usable)


@pytest.fixture(scope="module")
def context(files: dict[str, list[Path]]) -> int:
    """The largest context at which Q6_K fits the 2 GB card (found by bisection on the local files): there Q8_0
    does not, so the answer is Q6_K on the full repo and Q2_K on the repo that has only Q8_0 and Q2_K."""
    low, high = 4, 4096  # in cells of 256 tokens, as llama.cpp sizes its KV cache
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if _fits(_local_total(files["Q6_K"], "Q6_K", mid * 256)) else (low, mid)
    low *= 256
    totals = {q: _local_total(files[q], q, low) for q in QUANTS}
    assert [_fits(totals[q]) for q in QUANTS] == [False, True, True, True], totals
    return low


def _storage_gets(hub: FakeHub) -> set[str]:
    return {r.path.rsplit("/", 1)[-1] for r in hub.log if r.path.startswith("/storage/") and r.method == "GET"}


def test_which_quant_fits_answers_with_the_largest_file_that_fits(
    hub: FakeHub, files: dict[str, list[Path]], context: int
) -> None:
    data = run_json(f"which quant of {REPO} fits a {GPU_GB} GB GPU", "--context", str(context))
    assert data["solution"]["kind"] == "best_quant" and data["solution"]["value"] == "Q6_K"
    assert data["request"]["quant"] == "Q6_K"
    assert data["request"]["model"]["source"].endswith("/Tiny-Q6_K.gguf")  # the card names that file
    assert data["fits"][0]["total_bytes"] == _local_total(files["Q6_K"], "Q6_K", context)
    assert data["fits"][0]["verdict"] == "fits"
    # Q8_0 was read (both parts) and did not fit; nothing smaller than the answer was read.
    assert _storage_gets(hub) == {"Tiny-Q8_0-00001-of-00002.gguf", "Tiny-Q8_0-00002-of-00002.gguf", "Tiny-Q6_K.gguf"}


def test_a_repo_lacking_the_quant_that_fits_answers_with_the_next_it_has(
    hub: FakeHub, files: dict[str, list[Path]], context: int
) -> None:
    data = run_json(f"which quant of {LACKING} fits a {GPU_GB} GB GPU", "--context", str(context))
    assert data["solution"]["value"] == "Q2_K"  # Q6_K or Q4_K_M would fit, but the repo has neither
    assert data["request"]["model"]["source"].endswith("/Tiny-Q2_K.gguf")
    assert data["fits"][0]["total_bytes"] == _local_total(files["Q2_K"], "Q2_K", context)
    assert "mmproj" not in data["request"]["model"] and "mmproj_bytes" not in data["estimate"]


def test_when_no_quant_fits_the_answer_is_the_smallest_file(hub: FakeHub, files: dict[str, list[Path]]) -> None:
    data = run_json(f"which quant of {REPO} fits a 1 GB GPU", "--context", str(1 << 20))
    assert data["solution"]["value"] is None
    assert data["request"]["quant"] == "Q2_K" and data["request"]["model"]["source"].endswith("/Tiny-Q2_K.gguf")


def test_files_too_large_for_the_gpu_are_not_read(hub: FakeHub) -> None:
    from vramfit.bot.sources.huggingface import quant_candidates, repo_listing
    from vramfit.bot.sources.references import HubReference

    reference = HubReference(REPO)
    listing = repo_listing(reference)
    read = [quant for quant, _ in quant_candidates(reference, listing, usable_bytes=1)]
    assert read == ["Q2_K"]  # every file is over twice 1 byte: only the smallest, for the answer
    assert _storage_gets(hub) == {"Tiny-Q2_K.gguf"}
    assert [q for q, _ in quant_candidates(reference, listing)] == list(QUANTS)  # largest file first


def test_the_second_question_is_answered_from_the_cache(hub: FakeHub, context: int) -> None:
    first = run_json(f"which quant of {REPO} fits a {GPU_GB} GB GPU", "--context", str(context))
    requests = len(hub.log)
    again = run_json(f"which quant of {REPO} fits a {GPU_GB} GB GPU", "--context", str(context))
    assert len(hub.log) == requests and again == first
    # The plain question about the chosen quant shares its cached header.
    assert run_json(f"{REPO} Q6_K 8k 3060")["request"]["model"]["source"].endswith("/Tiny-Q6_K.gguf")
    assert len(hub.log) == requests


def test_the_vision_projector_is_its_own_line_and_field(hub: FakeHub, files: dict[str, list[Path]]) -> None:
    size = files["mmproj"][0].stat().st_size
    data = run_json(f"{REPO} Q4_K_M 8k 3060")
    assert data["request"]["model"]["mmproj"] == "mmproj-Tiny-F16.gguf"  # F16 before Q8_0
    assert data["estimate"]["mmproj_bytes"] == size
    local = run_json("--gguf", str(files["Q4_K_M"][0]), "--context", "8192", "--gpu", "3060")
    assert data["estimate"]["total_bytes"] == local["estimate"]["total_bytes"]  # the verdict is the text model's
    said = {"en": "Vision projector mmproj-Tiny-F16.gguf: +", "ko": "비전 프로젝터 mmproj-Tiny-F16.gguf"}
    for lang, words in said.items():
        out = io.StringIO()
        assert run([f"{REPO} Q4_K_M 8k 3060", "--lang", lang], out) == 0
        text = out.getvalue()
        assert words in text and format_small_size(size, lang) in text, text
        assert "--no-mmproj" in text  # -hf would load the projector too: the command runs what was answered


@pytest.mark.parametrize(
    ("lang", "words"),
    [
        ("en", "without its compute buffer, which was not measured for this projector"),
        ("ko", "측정된 적이 없어 빠져 있어요"),
    ],
)
def test_a_repos_projector_with_images_counts_its_file_and_says_its_buffer_is_unknown(
    hub: FakeHub, files: dict[str, list[Path]], lang: str, words: str
) -> None:
    """With images, a repo's mmproj file is in the total; no measurement stands for its warmup buffer (only presets'
    projectors were measured), so the answer says so rather than guessing one."""
    size = files["mmproj"][0].stat().st_size
    plain = run_json(f"{REPO} Q4_K_M 8k 3060")
    data = run_json(f"{REPO} Q4_K_M 8k 3060 with images")
    assert data["estimate"]["vision_bytes"] == size and data["estimate"]["vision_compute_bytes"] == 0
    assert data["estimate"]["total_bytes"] - plain["estimate"]["total_bytes"] == size
    out = io.StringIO()
    assert run([f"{REPO} Q4_K_M 8k 3060 with images", "--lang", lang], out) == 0
    assert words in out.getvalue()


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_bot_answers_which_quant_and_shows_the_projector(
    hub: FakeHub, files: dict[str, list[Path]], context: int, lang: str
) -> None:
    from vramfit.bot.answering.service import CalcBackend
    from vramfit.bot.render.embed import render_card

    question = (
        f"which quant of {REPO} fits a {GPU_GB} GB GPU"
        if lang == "en"
        else f"{REPO} 어떤 양자화가 {GPU_GB}GB GPU에 맞아?"
    )
    card = CalcBackend().answer(question, None, {"context": context})
    assert card.solution is not None and card.solution.value == "Q6_K"  # type: ignore[union-attr]
    assert card.model.source_file == "Tiny-Q6_K.gguf"  # type: ignore[union-attr]
    size = files["mmproj"][0].stat().st_size
    assert card.model.mmproj_bytes == size  # type: ignore[union-attr]
    description = render_card(card, lang).description or ""  # type: ignore[arg-type]
    assert "Q6\\_K" in description and "mmproj-Tiny-F16.gguf" in description
    assert format_small_size(size, lang) in description
    assert ("with --mmproj, not in the total" in description) == (lang == "en")
    assert ("--mmproj 쓰면" in description) == (lang == "ko")
    requests = len(hub.log)
    again = CalcBackend().answer(question, None, {"context": context})  # a new backend: only the file cache shared
    assert again.solution == card.solution and len(hub.log) == requests  # type: ignore[union-attr]


def test_the_bots_store_keeps_the_listing_and_every_header(hub: FakeHub, context: int) -> None:
    from vramfit.bot.answering.service import CalcBackend

    store = MemoryCache()
    question = f"which quant of {REPO} fits a {GPU_GB} GB GPU"
    backend = CalcBackend()
    backend.use_remote_cache(store)
    first = backend.answer(question, None, {"context": context})
    requests = len(hub.log)
    other = CalcBackend()
    other.use_remote_cache(store)
    assert other.answer(question, None, {"context": context}) == first and len(hub.log) == requests
    assert any(key.endswith("|listing") for key in store.reads)


def test_choose_mmproj_prefers_f16_then_bf16() -> None:
    from vramfit.bot.sources.huggingface import choose_mmproj, quant_files

    assert choose_mmproj(["mmproj-x-Q8_0.gguf", "mmproj-x-BF16.gguf", "x-F16.gguf"]) == "mmproj-x-BF16.gguf"
    assert choose_mmproj(["mmproj-x-Q8_0.gguf", "mmproj-x-F16.gguf", "mmproj-x-BF16.gguf"]) == "mmproj-x-F16.gguf"
    assert choose_mmproj(["mmproj-x-Q8_0.gguf"]) == "mmproj-x-Q8_0.gguf" and choose_mmproj(["x-F16.gguf"]) == ""
    listing = {"m-Q4_K_M-00001-of-00002.gguf": 5, "m-Q4_K_M-00002-of-00002.gguf": 5, "m-Q8_0.gguf": 9,
               "m-Q2_K-00001-of-00002.gguf": 1, "mmproj-m-F16.gguf": 100}  # fmt: skip
    groups = quant_files(listing)  # the Q2_K split lacks a part: left out
    assert [(g.quant, g.size, len(g.files)) for g in groups] == [("Q4_K_M", 10, 2), ("Q8_0", 9, 1)]
