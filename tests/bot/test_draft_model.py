"""A draft model for speculative decoding ("with qwen3 0.6b as draft", "qwen3.5 0.8b를 드래프트로", ``--draft``): its
weights, KV cache and compute buffer join the model's on the GPUs, as llama.cpp 0c1e57098 allocates them
(common/speculative.cpp: one draft context of the main context's whole size, f16 unless -ctkd/-ctvd) and its --fit
counts them (common/fit.cpp add_extra_memory). Expected bytes: llama.cpp's own draft contexts
(tests/data/groundtruth/llamacpp_draft.jsonl, made by tools/llamacpp_truth/measure_draft.py; LLAMACPP.md) and hand
calculation here."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from tests.bot.cli_json import answer as ask
from tests.bot.cli_json import run_json
from tests.groundtruth import MIB
from vramfit.bot.answering.service import CalcBackend
from vramfit.bot.cli import EXIT_ERROR, run
from vramfit.bot.parser import parse
from vramfit.bot.render.embed import embed_as_text, render_card
from vramfit.bot.ui.state import CardState
from vramfit.calc.file_types import FileType
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.weights import weight_bytes

ROWS = [json.loads(line) for line in Path("tests/data/groundtruth/llamacpp_draft.jsonl").read_text().splitlines()]
PRESET = {"Qwen3-0.6B": "qwen3-0.6b", "Qwen3.5-0.8B-Base": "qwen3.5-0.8b"}
TARGET = {"Qwen3-8B": "qwen3 8b", "Qwen3.5-4B": "qwen3.5 4b"}


@pytest.mark.parametrize(
    ("question", "model", "draft", "quant"),
    [
        ("qwen3.5 27b with qwen3.5 0.8b as draft on a 4090", "qwen3.5-27b", "qwen3.5-0.8b", None),
        ("qwen3 32b draft qwen3 0.6b q8_0 32k 4090", "qwen3-32b", "qwen3-0.6b", "Q8_0"),
        ("qwen3.5 27b 4090에서 qwen3.5 0.8b를 드래프트로 써도 돼?", "qwen3.5-27b", "qwen3.5-0.8b", None),
        ("llama 3.3 70b speculative decoding with llama 3.2 1b on 2x 3090", "llama-3.3-70b", "llama-3.2-1b", None),
    ],
)
def test_the_draft_is_read_apart_from_the_model(question: str, model: str, draft: str, quant: str | None) -> None:
    parsed = parse(question)
    assert (parsed.model, parsed.draft, parsed.draft_quant) == (model, draft, quant)
    assert parsed.gpus  # the GPU words are still the question's


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['draft_model']}-{r['n_ctx']}-{r['n_seq']}")
def test_the_draft_cache_is_what_llamacpp_allocated(row: dict[str, Any]) -> None:
    """Each measured draft context: the question's users and context per user are the row's n_seq and n_ctx / n_seq;
    the draft's KV cache and recurrent state are the logged buffers (the state line rounds to 0.01 MiB)."""
    users = row["n_seq"]
    args = [TARGET[row["target_model"]], "--draft", PRESET[row["draft_model"]], "--users", str(users),
            "--context", str(row["n_ctx"] // users), "--flash-attn", "on" if row["flash_attn"] else "off",
            "--kv-unified", "on" if row.get("kv_unified", users == 1) else "off"]  # fmt: skip
    if row.get("draft_type_k"):
        args += ["--draft-kv", row["draft_type_k"]]
    estimate = run_json(*args)["estimate"]
    logged = (row["draft_kv_buffer_mib"] + (row["draft_recurrent_buffer_mib"] or 0)) * MIB
    assert abs(estimate["draft_kv_bytes"] - logged) <= 0.01 * MIB
    arch = from_hf_config(row["draft_config"])
    assert weight_bytes(arch, FileType(row["draft_quant"])).tensor_bytes == row["draft_model_size_api_bytes"]


def test_the_draft_holds_the_models_whole_context_in_f16() -> None:
    """Qwen3-0.6B drafting for Qwen3-8B at 32K: 28 layers × K and V × 8 KV heads × 128 × 2 bytes × 32,768 cells =
    3,584 MiB, whatever cache the main model uses (-ctkd/-ctvd are the draft's own, f16 by default)."""
    by_hand = 28 * 2 * 8 * 128 * 2 * 32768
    plain = ask("qwen3 8b 32k on a 4090")
    quantized = run_json("qwen3 8b 32k on a 4090 with qwen3 0.6b as draft", "--kv-cache", "q8_0")
    assert quantized["estimate"]["draft_kv_bytes"] == by_hand == 3584 * MIB
    with_draft = ask("qwen3 8b 32k on a 4090 with qwen3 0.6b as draft")
    e = with_draft["estimate"]
    assert e["draft_bytes"] == e["draft_weights_bytes"] + e["draft_kv_bytes"] + e["draft_compute_bytes"]
    assert e["total_bytes"] - plain["estimate"]["total_bytes"] == e["draft_bytes"]
    assert plain["fits"][0]["headroom_bytes"] - with_draft["fits"][0]["headroom_bytes"] == e["draft_bytes"]
    assert with_draft["request"]["draft"] == {"id": "qwen3-0.6b", "name": "Qwen3 0.6B", "quant": "Q4_K_M",
                                              "kv_cache": "f16", "draft_max": 3}  # fmt: skip
    q8 = run_json("qwen3 8b 32k on a 4090", "--draft", "qwen3 0.6b", "--draft-kv", "q8_0")
    assert q8["estimate"]["draft_kv_bytes"] == 1904 * MIB  # llama.cpp: 1904.00 MiB (llamacpp_draft.jsonl)


@pytest.mark.parametrize(("lang", "words"), [("en", "Draft model"), ("ko", "드래프트 모델")])
def test_the_card_shows_the_draft_and_the_command_runs_it(lang: str, words: str) -> None:
    out = io.StringIO()
    questions = {
        "en": "qwen3.5 27b with qwen3.5 0.8b as draft on a 4090",
        "ko": "qwen3.5 27b 4090 드래프트 qwen3.5 0.8b",
    }
    question = questions[lang]
    assert run(["--lang", lang, question], out) == 0
    text = out.getvalue()
    assert words in text
    assert "-md qwen3.5-0.8b-Q4_K_M.gguf -ngld 99 --spec-type draft-simple" in text
    assert "ollama run" not in text  # Ollama runs no draft model


@pytest.mark.parametrize(
    "question", ["qwen3 32b with qwen3 0.6b as draft on vllm 4090", "qwen3 32b with qwen3 0.6b as draft ollama"]
)
def test_a_draft_where_it_is_not_modelled_is_refused(question: str) -> None:
    out = io.StringIO()
    assert run(["--json", question], out) == EXIT_ERROR
    assert json.loads(out.getvalue())["error"]["code"] == "unsupported_setting"


def test_an_unknown_draft_is_said_with_suggestions() -> None:
    out = io.StringIO()
    assert run(["--json", "qwen3 32b with qwen3 0.7b as draft"], out) == EXIT_ERROR
    error = json.loads(out.getvalue())["error"]
    assert error["code"] == "unknown_model" and error["suggestions"]


def test_buttons_keep_the_draft() -> None:
    state = CardState(model="qwen3.5-27b", quant="Q4_K_M", context=8192, users=1, kv_cache="f16", engine="llama.cpp",
                      flash_attn=True, gpus=(("rtx-4090", 1),), lang="en", draft="qwen3.5-0.8b",
                      draft_quant="Q8_0")  # fmt: skip
    packed = state.encode()
    assert packed is not None and len(packed) <= 100 and CardState.decode(packed) == state
    assert state.overrides()["draft"] == "qwen3.5-0.8b"


MTP_ROWS = [json.loads(line) for line in Path("tests/data/groundtruth/llamacpp_mtp.jsonl").read_text().splitlines()]
MTP_PRESET = {"Qwen3.5-0.8B-Base": "qwen3.5 0.8b", "GLM-4.7-Flash": "glm-4.7-flash"}


def _buffer_mib(lines: list[str]) -> float:
    return sum(float(line.split("=")[-1].split()[0]) for line in lines if "model buffer size" in line)


@pytest.mark.parametrize("row", MTP_ROWS, ids=lambda r: f"{r['target_model']}-{r['n_ctx']}-{r['n_seq']}")
def test_drafting_with_the_mtp_head_adds_what_llamacpp_allocated(row: dict[str, Any]) -> None:
    """The MTP block (the model buffer with load_mtp less without), the MTP context's one-layer cache, and the
    recurrent-state snapshots of rollback (the main context's state with n_rs_seq 3 less without it: 1 + 3 copies);
    the MTP context's compute buffer is the main context's (logged the same on CPU)."""
    users = row["n_seq"]
    unified = "on" if row.get("kv_unified", users == 1) else "off"
    args = [MTP_PRESET[row["target_model"]], "--mtp", "--quant", row["quant"], "--users", str(users),
            "--context", str(row["n_ctx"] // users), "--kv-unified", unified]  # fmt: skip
    estimate = run_json(*args)["estimate"]
    block = _buffer_mib(row["model_buffers_with_mtp"]) - _buffer_mib(row["model_buffers_without_mtp"])
    state = row["target_recurrent_buffer_mib"] or 0
    snapshots = state - state / 4  # n_rs_seq 3: four copies where there was one
    logged = (block + row["mtp_kv_buffer_mib"] + snapshots) * MIB
    assert abs(estimate["mtp_bytes"] - estimate["compute_bytes"] - logged) <= 0.02 * MIB
    assert estimate["mtp_bytes"] == estimate["mtp_head_bytes"]


def test_the_mtp_cache_is_one_layer_of_the_whole_context() -> None:
    """Qwen3.5 0.8B's MTP block is one full-attention layer: K and V of 2 heads × 256 × 2 bytes a token, 64 MiB at
    32,768 tokens; llama.cpp logged 64.00 MiB (llamacpp_mtp.jsonl). Without --mtp it is said, not counted."""
    by_hand = 1 * 2 * 2 * 256 * 2 * 32768  # one layer × K and V × 2 heads × 256 × 2 bytes × cells
    assert by_hand == 64 * MIB
    plain = run_json("qwen3.5 0.8b", "--context", "32768")
    assert plain["estimate"]["mtp_bytes"] == 0 and plain["estimate"]["mtp_head_bytes"] > 64 * MIB
    out = io.StringIO()
    assert run(["qwen3.5 27b 32k on a 4090 with mtp"], out) == 0
    assert "--spec-type draft-mtp" in out.getvalue() and "ollama run" not in out.getvalue()
    out = io.StringIO()
    assert run(["--lang", "ko", "llama 3 8b 3060", "--mtp"], out) == 0
    assert "MTP 헤드가 없어서" in out.getvalue()  # a model without one: said, nothing added
    assert run_json("llama 3 8b 3060", "--mtp")["estimate"]["mtp_bytes"] == 0


@pytest.mark.parametrize(
    ("question", "lang", "line"),
    [
        ("qwen3.5 27b with qwen3.5 0.8b as draft on a 4090", "en", "🎯 Draft Qwen3.5 0.8B Q4_K_M: +"),
        ("qwen3.5 27b 4090 드래프트 qwen3.5 0.8b", "ko", "🎯 드래프트 Qwen3.5 0.8B Q4_K_M: GPU +"),
    ],
)
def test_the_discord_card_counts_the_draft(question: str, lang: str, line: str) -> None:
    card = CalcBackend().answer(question, lang, {})  # type: ignore[arg-type]
    assert card.draft == "qwen3.5-0.8b" and card.estimate.draft_bytes > 0  # type: ignore[union-attr]
    assert line in embed_as_text(render_card(card, lang))  # type: ignore[arg-type]
    assert "-md qwen3.5-0.8b-Q4_K_M.gguf" in card.command  # type: ignore[union-attr]
