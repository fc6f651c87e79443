"""The ``vram`` command's JSON contract (docs/cli-json.md): shapes, numbers,
errors (exit 2, localized), ``--config``, flags over text, and one key per intent.

Expected numbers are worked out here from config numbers and GPU sizes written in the test.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.groundtruth import MIB, REPO_ROOT, eval_rows, llamacpp_rows
from vramfit.bot.cli import EXIT_ERROR, run
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.llama_quant import metadata_bytes

GIB = 1 << 30
ROOT = REPO_ROOT

# Llama 3 8B's config.json: 32 layers, 8 KV heads, head size 4096 / 32 = 128.
LLAMA3_KV_PER_TOKEN = 2 * 32 * 8 * 128 * 2  # bytes in f16: 128 KiB
GEMMA2_9B_KV_PER_TOKEN = 2 * 42 * 8 * 256 * 2  # 42 layers, 8 KV heads, head size 256: 336 KiB

REQUEST_KEYS = {"model", "quant", "context", "users", "kv_cache", "engine", "flash_attn", "gpus", "intent", "assumed"}
MODEL_KEYS = {"id", "name", "params", "layers", "kv_heads", "head_dim"}
ESTIMATE_KEYS = {
    "file_bytes", "weights_bytes", "host_bytes", "kv_cache_bytes", "kv_cache_naive_bytes", "compute_bytes",
    "runtime_bytes", "total_bytes",
}  # fmt: skip
FIT_KEYS = {"gpu", "count", "memory_bytes", "verdict", "gpu_layers", "layers", "headroom_bytes"}


def vram(*argv: str, status: int = 0) -> dict[str, Any]:
    out = io.StringIO()
    assert run(list(argv), out) == status, out.getvalue()
    data: dict[str, Any] = json.loads(out.getvalue())
    return data


def check_answer_shape(data: dict[str, Any]) -> None:
    assert set(data["request"]) >= REQUEST_KEYS
    assert set(data["request"]["model"]) >= MODEL_KEYS
    assert set(data["estimate"]) >= ESTIMATE_KEYS
    for key in ESTIMATE_KEYS:
        assert isinstance(data["estimate"][key], int) and data["estimate"][key] >= 0, key
    e = data["estimate"]
    assert e["total_bytes"] == e["weights_bytes"] + e["kv_cache_bytes"] + e["compute_bytes"] + e["runtime_bytes"]
    for fit in data["fits"]:
        assert set(fit) >= FIT_KEYS
        assert fit["verdict"] in ("fits", "tight", "partial", "no")


# -- the contract's own example ---------------------------------------------------------------------------------------


def test_json_shape_of_a_plain_question() -> None:
    data = vram("--json", "llama3-8b 32k")
    assert set(data) == {"lang", "request", "estimate", "fits", "warnings"}
    assert data["warnings"] == ["beyond_trained_context"]  # Llama 3 8B was trained for 8,192 tokens
    assert set(vram("--json", "llama3-8b 8k")) == {"lang", "request", "estimate", "fits"}
    check_answer_shape(data)
    assert data["lang"] == "en"
    r = data["request"]
    assert r["model"]["id"] == "llama-3-8b" and r["model"]["name"] == "Llama 3 8B"
    assert (r["model"]["layers"], r["model"]["kv_heads"], r["model"]["head_dim"]) == (32, 8, 128)
    assert 8.0e9 < r["model"]["params"] < 8.1e9
    settings = (r["quant"], r["context"], r["users"], r["kv_cache"], r["engine"])
    assert settings == ("Q4_K_M", 32768, 1, "f16", "llama.cpp")
    assert r["flash_attn"] is True and r["gpus"] == [] and r["intent"] == "fit"
    assert r["assumed"] == ["quant", "users", "kv_cache", "engine"]
    e = data["estimate"]
    assert e["kv_cache_bytes"] == e["kv_cache_naive_bytes"] == LLAMA3_KV_PER_TOKEN * 32768 == 4 * GIB
    # No GPU named: the preset GPUs that fit, smallest first; every one of them holds the total.
    assert data["fits"], "some preset GPU holds Llama 3 8B at 32K"
    sizes = [f["usable_bytes"] * f["count"] for f in data["fits"]]
    assert all(f["verdict"] in ("fits", "tight") for f in data["fits"])
    assert all(size >= e["total_bytes"] for size in sizes)


def test_named_gpu_verdict_and_headroom() -> None:
    data = vram("--json", "llama3-8b 32k 3060")
    (fit,) = data["fits"]
    assert fit["gpu"] == "rtx-3060-12gb" and fit["memory_bytes"] == 12 * GIB and fit["count"] == 1
    assert fit["headroom_bytes"] == 12 * GIB - data["estimate"]["total_bytes"]
    assert fit["verdict"] == "fits" and fit["gpu_layers"] == fit["layers"] == 33


def test_korean_question_answers_in_korean() -> None:
    data = vram("--json", "라마3 8B 32k 3060에서 돌아가?")
    assert data["lang"] == "ko" and data["request"]["context"] == 32768
    out = io.StringIO()
    assert run(["라마3 8B 32k 3060에서 돌아가?"], out) == 0
    assert "가중치" in out.getvalue() and "KV 캐시" in out.getvalue()


# -- flags ------------------------------------------------------------------------------------------------------------


def test_flags_override_text() -> None:
    data = vram("--json", "llama3-8b 32k 3060", "--context", "8k", "--gpu", "rtx-4090", "--kv-cache", "q8_0")
    r = data["request"]
    assert r["context"] == 8192 and r["kv_cache"] == "q8_0"
    assert [g["id"] for g in r["gpus"]] == ["rtx-4090"]
    assert "context" not in r["assumed"] and "kv_cache" not in r["assumed"] and "gpu_variant" not in r["assumed"]
    # q8_0: 34 bytes per 32 values.
    assert data["estimate"]["kv_cache_bytes"] == 2 * 32 * (8 * 128 * 34 // 32) * 8192
    flags_only = vram("--json", "--model", "llama-3-8b", "--context", "32768", "--gpu", "rtx-3060-12gb")
    assert flags_only["estimate"] == vram("--json", "llama3-8b 32k 3060")["estimate"]
    two = vram("--json", "--model", "llama-3-8b", "--gpu", "2x rtx-3090")
    assert two["request"]["gpus"][0]["count"] == 2 and two["fits"][0]["count"] == 2


def test_flash_attention_flag_is_echoed() -> None:
    off = vram("--json", "--model", "llama-3-8b", "--flash-attn", "off", "--gpu", "rtx-3060-12gb")
    on = vram("--json", "--model", "llama-3-8b", "--flash-attn", "on", "--gpu", "rtx-3060-12gb")
    assert off["request"]["flash_attn"] is False and on["request"]["flash_attn"] is True
    assert off["estimate"]["compute_bytes"] >= on["estimate"]["compute_bytes"]


def test_config_json_written_here(tmp_path: Path) -> None:
    config = {
        "_name_or_path": "someone/tiny-llama-ish",
        "model_type": "llama",
        "hidden_size": 2048,
        "intermediate_size": 5632,
        "num_hidden_layers": 22,
        "num_attention_heads": 32,
        "num_key_value_heads": 4,
        "vocab_size": 32000,
        "max_position_embeddings": 2048,
        "tie_word_embeddings": False,
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    data = vram("--json", "--config", str(path), "--context", "4096", "--gpu", "rtx-3060-12gb")
    m = data["request"]["model"]
    assert (m["layers"], m["kv_heads"], m["head_dim"]) == (22, 4, 64)
    assert data["estimate"]["kv_cache_bytes"] == 2 * 22 * 4 * 64 * 2 * 4096  # 88 MiB
    # About 1.1B parameters: embeddings, 22 × (attention + MLP), output head.
    per_layer = 2048 * 2048 * 2 + 2048 * 256 * 2 + 3 * 2048 * 5632 + 2 * 2048
    expected = 2 * 32000 * 2048 + 22 * per_layer + 2048
    assert abs(m["params"] - expected) / expected < 0.01
    assert data["fits"][0]["verdict"] == "fits"
    # The text names a model too: the file wins.
    assert vram("--json", "llama3-8b 8k", "--config", str(path))["request"]["model"]["layers"] == 22


# -- errors -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "code", "words"),
    [
        (["lamma-9000 32k"], "unknown_model", "Which model? Name one"),
        (["라마9000 32k 3060"], "unknown_model", "라마에 해당하는 모델이 여러 개예요."),
        (["llama3 8b on an rtx 9999"], "unknown_gpu", "I don't know the GPU rtx 9999."),
        (["라마3 8b rtx 9999에서"], "unknown_gpu", "찾을 수 없는 GPU: rtx 9999"),
        (["what can I run"], "unknown_gpu", "Which GPU? Add one to the question"),
        (["llama3 8b", "--quant", "Q9_Z"], "unknown_quant", "Unknown quantization: Q9_Z."),
        (["라마3 8b", "--quant", "Q9_Z"], "unknown_quant", "알 수 없는 양자화 형식: Q9_Z"),
        (["llama3 8b", "--context", "abc"], "bad_number", "That number is out of range or unreadable: abc."),
        (["라마3 8b", "--users", "0"], "bad_number", "사용자 수 값은 1–4,096 사이여야 해요 (입력: 0)."),
        (
            ["llama3 8b", "--context", "99999999"],
            "bad_number",
            "The context must be between 1 and 10,485,760; you wrote 99999999.",
        ),
        (["llama3 8b 99999999999 tokens"], "bad_number", "That number is out of range or unreadable: 99999999999."),
        (["--config", "/nonexistent/config.json"], "bad_file", "That file could not be read: cannot read"),
        (["라마3 8b", "--config", "/nonexistent/config.json"], "bad_file", "파일을 읽을 수 없어요. (cannot read"),
    ],
)
def test_errors_exit_2_with_a_code_and_a_localized_message(argv: list[str], code: str, words: str) -> None:
    data = vram("--json", *argv, status=EXIT_ERROR)
    assert set(data) == {"error"}
    assert data["error"]["code"] == code
    assert data["error"]["message"].startswith(words)
    assert isinstance(data["error"]["suggestions"], list)
    out = io.StringIO()
    assert run(argv, out) == EXIT_ERROR  # and in the terminal: a sentence, no traceback
    assert words in out.getvalue() and "Traceback" not in out.getvalue()


def test_unreadable_config_and_suggestions(tmp_path: Path) -> None:
    bad = tmp_path / "config.json"
    bad.write_text("{not json", encoding="utf-8")
    assert vram("--json", "--config", str(bad), status=EXIT_ERROR)["error"]["code"] == "bad_file"
    typo = vram("--json", "llama3 8b on an rtx 4909", status=EXIT_ERROR)["error"]
    assert typo["code"] == "unknown_gpu" and typo["suggestions"]


def test_the_installed_entry_point_exits_2() -> None:
    """The real process: exit status and stdout, as scripts see them."""
    done = subprocess.run(
        [sys.executable, "-m", "vramfit.bot.cli", "--json", "lamma-9000 32k"], capture_output=True, text=True, cwd=ROOT,
        check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"]["code"] == "unknown_model"


# -- intents ----------------------------------------------------------------------------------------------------------


def test_what_fits_json() -> None:
    data = vram("--json", "what can I run on a 3060 at 32k")
    assert set(data) == {"lang", "request", "what_fits"}
    r = data["request"]
    assert r["intent"] == "what_fits" and r["model"] is None and r["context"] == 32768
    assert r["gpus"] == [{"id": "rtx-3060-12gb", "name": "GeForce RTX 3060 12GB", "count": 1, "memory_bytes": 12 * GIB}]
    items = data["what_fits"]
    assert 1 <= len(items) <= 10
    for item in items:
        assert set(item) == {"model", "name", "family", "params", "quant", "verdict", "total_bytes", "headroom_bytes"}
        assert item["headroom_bytes"] == 12 * GIB - item["total_bytes"]
        assert item["headroom_bytes"] >= 512 * 1024 * 1024  # fits with the margin: max(512 MiB, 5 % of 12 GiB)
        assert item["verdict"] == "fits"
    assert [i["params"] for i in items] == sorted((i["params"] for i in items), reverse=True)
    families = [i["family"] for i in items]
    assert all(families.count(f) <= 2 for f in families)
    # vLLM runs its own checkpoints: the list uses its formats, and vLLM's 90% of the card.
    vllm = vram("--json", "what can I run on an h100 with vllm")
    assert vllm["request"]["engine"] == "vllm"
    assert {i["quant"] for i in vllm["what_fits"]} <= {"BF16", "FP8", "INT4"}
    assert all(i["headroom_bytes"] == 80 * GIB * 9 // 10 - i["total_bytes"] for i in vllm["what_fits"])


def test_compare_json() -> None:
    data = vram("--json", "llama3 8b vs gemma2 9b at 8k")
    assert data["request"]["intent"] == "compare" and data["request"]["model"]["id"] == "llama-3-8b"
    check_answer_shape(data)
    c = data["compare"]
    assert set(c) == {"request", "estimate", "fits", "kv_bytes_per_token", "reasons"}
    assert data["fits"] == c["fits"] == []  # no GPU named
    assert c["request"]["model"]["id"] == "gemma-2-9b" and c["request"]["context"] == 8192
    assert c["kv_bytes_per_token"] == [LLAMA3_KV_PER_TOKEN, GEMMA2_9B_KV_PER_TOKEN]
    reasons = {r["factor"]: (r["a"], r["b"]) for r in c["reasons"]}
    assert reasons == {"head_dim": (128, 256), "layers": (32, 42), "sliding_window": (0, 4096)}
    assert c["reasons"][0]["factor"] == "head_dim"  # the largest ratio first
    # Gemma 2: 21 of 42 layers slide over 4096 tokens (+ a 512 micro-batch), the other 21 hold all 8192.
    per_layer = 2 * 8 * 256 * 2
    assert c["estimate"]["kv_cache_bytes"] == 21 * per_layer * 8192 + 21 * per_layer * (4096 + 512)
    assert data["estimate"]["kv_cache_bytes"] == LLAMA3_KV_PER_TOKEN * 8192


def test_compare_json_on_a_gpu() -> None:
    data = vram("--json", "gemma 2 27b vs qwen2.5 32b on a 4090")
    for side in (data, data["compare"]):
        (fit,) = side["fits"]
        assert fit["gpu"] == "rtx-4090" and fit["headroom_bytes"] == 24 * GIB - side["estimate"]["total_bytes"]


def test_solver_json() -> None:
    data = vram("--json", "how much context can llama 3.1 8b take on a 3060?")
    check_answer_shape(data)
    s = data["solution"]
    assert s["kind"] == "max_context" and s["gpu"] == "rtx-3060-12gb" and s["count"] == 1
    value = s["value"]
    assert data["request"]["context"] == value and value % 256 == 0
    assert data["request"]["intent"] == "max_context" and "context" not in data["request"]["assumed"]
    e = data["estimate"]
    assert e["kv_cache_bytes"] == LLAMA3_KV_PER_TOKEN * value
    assert e["total_bytes"] <= 12 * GIB < e["total_bytes"] + LLAMA3_KV_PER_TOKEN * 256
    users = vram("--json", "3090에서 qwen2.5 14b 동시 사용자 몇 명까지?")
    assert users["lang"] == "ko" and users["solution"]["kind"] == "max_users"
    assert users["request"]["users"] == users["solution"]["value"] >= 1
    quant = vram("--json", "which quant for gemma 2 27b on a 4090 at 16k?")
    assert quant["solution"]["kind"] == "best_quant" and quant["request"]["quant"] == quant["solution"]["value"]
    assert quant["fits"][0]["verdict"] == "fits"


def test_engines_json() -> None:
    data = vram("--json", "llama 3.1 8b on a 4090, llama.cpp vs vllm")
    check_answer_shape(data)
    assert data["request"]["engine"] == "llama.cpp"
    llama, vllm = data["engines"]
    for each in (llama, vllm):
        check_answer_shape(each)
    assert (llama["request"]["engine"], vllm["request"]["engine"]) == ("llama.cpp", "vllm")
    assert llama["estimate"] == data["estimate"]
    assert vllm["estimate"]["kv_cache_bytes"] == LLAMA3_KV_PER_TOKEN * 8192
    assert vllm["fits"][0]["usable_bytes"] == 24 * GIB * 9 // 10  # vLLM's 90% of the card
    # An engine flag picks one engine: no side by side.
    assert "engines" not in vram("--json", "llama 3.1 8b on a 4090, llama.cpp vs vllm", "--engine", "vllm")


def test_terminal_text_for_each_intent() -> None:
    for question, words in (
        ("what can I run on a 3060 at 32k", "Models that fit"),
        ("라마3 8B랑 젬마2 9B 비교", "토큰당 KV 캐시"),
        ("how much context can llama 3.1 8b take on a 3060?", "Largest context"),
        ("which quant for gemma 2 27b on a 4090 at 16k?", "Best quant that fits"),
        ("llama 3.1 8b on a 4090, llama.cpp vs vllm", "vLLM reserves 90%"),
    ):
        out = io.StringIO()
        assert run([question], out) == 0
        assert words in out.getvalue(), question


# The command names one cache type for K and V (quantized V needs flash attention: off, V stays f16), so a load with
# different K and V types and flash attention on (Gemma 4 E4B's q8_0 K / f16 V) is checked in tests/calc/test_kv.py.
CLI_ROWS = [r for r in llamacpp_rows() if r["type_v"] == r["type_k"] or not r["flash_attn"]]


@pytest.mark.parametrize("row", CLI_ROWS, ids=lambda r: f"{r['arch_model']}-{r['quant']}-c{r['n_ctx']}")
def test_cli_from_config_matches_llamacpp(row: dict[str, Any], tmp_path: Path) -> None:
    """`vram --json --config` alone against every real llama.cpp file and KV buffer of the ground truth."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps(row["config"]), encoding="utf-8")
    users = int(row["n_seq"])
    argv = [
        "--config", str(config), "--quant", row["quant"], "--context", str(row["n_ctx"] // users),
        "--users", str(users), "--kv-cache", row["type_k"], "--flash-attn", "on" if row["flash_attn"] else "off",
        "--ubatch", str(row["n_ubatch"]), "--kv-unified", "on" if row["kv_unified"] else "off",
    ] + (["--swa-full"] if row["swa_full"] else [])  # fmt: skip
    if row["type_v"] != row["type_k"]:
        assert row["type_v"] == "f16" and not row["flash_attn"]  # quantized V needs flash attention: V stays f16
    estimate = vram("--json", *argv)["estimate"]
    # The measured files carry a synthetic tokenizer (no merges): their tensor data is compared byte for byte, and
    # the header is calc's estimate for a real file (checked against published files in tests/calc/test_quant.py).
    data = row["file_bytes"] - row["gguf_tensor_facts"]["data_offset_bytes"]
    assert estimate["file_bytes"] == data + metadata_bytes(from_hf_config(row["config"]))
    assert abs(estimate["file_bytes"] - row["file_bytes"]) <= max(row["file_bytes"] // 50, 16 << 20)
    assert abs(estimate["kv_cache_bytes"] - row["kv_buffer_mib"] * (1 << 20)) <= 0.01 * (1 << 20) * 2
    state_mib = row.get("recurrent_buffer_mib") or 0.0
    dsv4_state = row.get("dsv4_state_buffers_mib") or {}
    if dsv4_state:  # DeepSeek V4's compressor state, logged as three buffers rounded apart
        assert abs(estimate["recurrent_state_bytes"] / (1 << 20) - sum(dsv4_state.values())) <= 0.005 * len(dsv4_state)
    else:
        assert round(estimate["recurrent_state_bytes"] / (1 << 20), 2) == state_mib


@pytest.mark.parametrize(
    ("argv", "env", "expected"),
    [
        (["--lang", "ko", "llama3 8b"], "en_US.UTF-8", "ko"),
        (["--lang=en", "라마3 8b"], "ko_KR.UTF-8", "en"),
        (["라마3 8b"], "C.UTF-8", "ko"),
        (["llama3 8b"], "ko_KR.UTF-8", "en"),  # answers follow the question, not the terminal
        ([], "ko_KR.UTF-8", "en"),
    ],
)
def test_language_before_parsing(argv: list[str], env: str, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from vramfit.bot.cli import argv_lang

    monkeypatch.setenv("LANG", env)
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    assert argv_lang(argv) == expected
    assert argv_lang([], locale=True) == ("ko" if env.startswith("ko") else "en")  # help text and the prompt


def test_help_in_korean() -> None:
    from vramfit.bot.cli import build_arg_parser

    assert "이 LLM이 내 GPU에서 돌아갈까?" in build_arg_parser("ko").format_help()
    assert "Will this LLM run on my GPU?" in build_arg_parser("en").format_help()


@pytest.mark.parametrize(
    ("lang", "warning", "footnote"),
    [
        ("en", "⚠️ Llama 3 8B was trained for 8,192 tokens", "memory alone would allow 57,856 tokens"),
        ("ko", "⚠️ Llama 3 8B 모델은 토큰 8,192개까지 학습됐어요", "메모리만 보면 토큰 57,856개까지 들어가요"),
    ],
)
def test_the_trained_context_is_said_and_caps_the_largest_context(lang: str, warning: str, footnote: str) -> None:
    # config.json of Meta-Llama-3-8B-Instruct: max_position_embeddings 8192. On a 3060 12GB memory alone would hold
    # 57,856 tokens (the README's own example), so the column shows the model's limit with a footnote.
    out = io.StringIO()
    assert run(["--lang", lang, "llama3-8b 32k 3060"], out) == 0
    text = out.getvalue()
    assert warning in text and footnote in text
    row = next(line for line in text.splitlines() if "RTX 3060 12GB" in line)
    assert "8,192*" in row and "57,856" not in row


def test_what_fits_leaves_out_models_trained_for_less_than_the_context() -> None:
    listed = {m["model"] for m in vram("--json", "what can I run on a 4060 ti 16gb at 32k")["what_fits"]}
    short = {"llama-3-8b", "gemma-2-9b", "solar-10.7b"}  # trained for 8K, 8K and 4K
    assert listed and not listed & short


@pytest.mark.parametrize(
    ("question", "words"),
    [("llama3 8b 8k 5090ti", ["5090ti"]), ("llama 3.1 8b q9 8k 3060", ["q9"])],
)  # fmt: skip
def test_what_was_not_understood_is_said(question: str, words: list[str]) -> None:
    assert vram("--json", question)["request"]["unparsed"] == words
    for lang, label in (("en", "⚠️ Not understood: "), ("ko", "⚠️ 이해하지 못한 부분: ")):
        out = io.StringIO()
        assert run(["--lang", lang, question], out) == 0
        assert out.getvalue().splitlines()[0] == label + ", ".join(f"`{w}`" for w in words)


def test_understood_questions_report_nothing_unparsed() -> None:
    for row in eval_rows():  # the 30 natural questions of tests/data/eval, each fully understood
        out = io.StringIO()
        run(["--json", row["q"]], out)
        data = json.loads(out.getvalue())
        assert "unparsed" not in data.get("request", {}), row["q"]


def test_the_card_says_what_was_not_understood() -> None:
    from vramfit.bot.answering.service import CalcBackend
    from vramfit.bot.render.embed import render_card

    card = CalcBackend().answer("라마3 8b 8k 5090ti", None, {})
    assert render_card(card, "ko").description.startswith("⚠️ 이해하지 못한 부분: `5090ti`")


@pytest.mark.parametrize(
    ("argv", "context", "assumed"),
    [
        (["phi-3 mini on a 4060"], 4096, True),  # trained for 4,096 tokens (its config.json's max_position_embeddings)
        (["--model", "phi-3-mini", "--gpu", "rtx-4060"], 4096, True),
        (["olmo 2 7b on a 3060"], 4096, True),
        (["llama 3.1 8b on a 3060"], 8192, True),  # trained for 131,072: the usual 8k
        (["phi-3 mini 8k on a 4060"], 8192, False),  # asked for: kept, and warned about
    ],
)
def test_an_unstated_context_never_passes_the_models_trained_limit(
    argv: list[str], context: int, assumed: bool
) -> None:
    data = vram("--json", *argv)
    assert data["request"]["context"] == context
    assert ("context" in data["request"]["assumed"]) is assumed
    assert ("beyond_trained_context" in data.get("warnings", [])) is (not assumed and context > 4096)


@pytest.mark.parametrize(
    ("place", "named", "suggested"),
    [
        # a downloaded repo's config.json is named by its folder; a file with a name of its own by that name (the
        # folder of a file of configs suggested gpt-oss for a Gemma 3n config: "configs" is closest to nothing here);
        # an architecture vramfit does not model (rwkv7) under a model's name gets that model as its suggestion
        ("gemma-3n-E4B-it/config.json", "gemma-3n-E4B-it", "gemma-3n-e4b"),
        ("configs/google--gemma-3n-E4B-it.json", "google--gemma-3n-E4B-it", "gemma-3n-e4b"),
    ],
)
def test_a_config_is_named_by_its_file_or_its_folder(place: str, named: str, suggested: str, tmp_path: Path) -> None:
    path = tmp_path / place
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"model_type": "rwkv7", "num_hidden_layers": 2}), encoding="utf-8")
    out = io.StringIO()
    assert run(["--json", "--config", str(path)], out) == EXIT_ERROR
    error = json.loads(out.getvalue())["error"]
    assert error["code"] == "unsupported_architecture"
    assert error["suggestions"][0] == suggested
    ok = tmp_path / place.replace("gemma-3n-E4B-it", "Llama-3.2-1B")
    ok.parent.mkdir(parents=True, exist_ok=True)
    llama = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
             "vocab_size": 256, "intermediate_size": 128}  # fmt: skip
    ok.write_text(json.dumps(llama), encoding="utf-8")
    out = io.StringIO()
    assert run(["--json", "--config", str(ok)], out) == 0
    assert json.loads(out.getvalue())["request"]["model"]["name"] == named.replace("gemma-3n-E4B-it", "Llama-3.2-1B")


@pytest.mark.parametrize(
    ("gpu", "lang", "added", "said"),
    [
        # CUDA, llama-server b11434's graph (calc.server_graph): five hidden states 5 · 4 · 512 · 2,560 B = 25 MiB and
        # the 256 MiB f16 mask below every stage; the attention stage, three query-sized tensors of the gated query
        # (3 · 4 · 512 · 16 · 256 B = 24 MiB) plus 1 GiB of f16 K and V of one layer (2 × 262,144 × 4 × 256 × 2 B),
        # 1,329 MiB in all (unsloth measured 1.30 GiB on CUDA, unsloth PR #6718), over the f16 cache's feed-forward
        # stage, 25 + 256 + 3 · 4 · 512 · 9,216 B (54 MiB) = 335 MiB
        ("4090", "en", (1329 - 335) * MIB, "(+994 MiB for flash attention's f16 copy of one layer's K and V)"),
        ("4090", "ko", (1329 - 335) * MIB, "(플래시 어텐션이 레이어 하나의 K·V를 f16으로 복사하느라 +994MiB)"),
        # Metal: the same copy, and its workgroups' partial results, 4 · 32 · 16 heads · 32 · (256 + 2) B = 16.125 MiB
        ("m4 max 128gb", "en", (1345 * MIB + MIB // 8) - 335 * MIB, "(+1,010 MiB for flash attention's f16 copy"),
        ("arc a770", "en", 0, None),  # Vulkan's flash attention reserves nothing beside its output
    ],
)
def test_flash_attention_reserves_an_f16_copy_of_a_layer_on_cuda_and_metal(
    gpu: str, lang: str, added: int, said: str | None
) -> None:
    question = f"qwen3.5 4b 256k on a {gpu} with q8_0 kv cache"
    data = vram("--lang", lang, question, "--json")
    assert data["request"]["kv_cache"] == "q8_0"
    assert data["estimate"]["flash_attn_copy_bytes"] == added
    out = io.StringIO()
    assert run(["--lang", lang, question], out) == 0
    if said:
        assert said in out.getvalue()
    else:
        assert "flash attention's f16 copy" not in out.getvalue()


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("en", "--fit cuts the context from 131,072 to"),
        ("ko", "--fit이 1GiB를 남기려고 컨텍스트를 131,072에서"),
    ],
)
def test_the_plain_command_says_what_fit_makes_of_it(lang: str, said: str) -> None:
    """Llama 3.1 8B on a 3060: the card's command pins -c and -ngl; run plainly, llama-server b11434's --fit cuts the
    trained 131,072 tokens to keep 1 GiB free (calc/fit_params.py), and the terminal and JSON say to what."""
    out = io.StringIO()
    assert run(["--lang", lang, "llama 3.1 8b on a 3060"], out) == 0
    assert said in out.getvalue()
    data = vram("--json", "llama 3.1 8b on a 3060")
    fitted = data["fits"][0]["fit_default"]
    assert fitted["command"] == "llama-server -m MODEL" and fitted["trained_context"] == 131072
    assert 4096 < fitted["context"] < 131072 and fitted["changed"] and fitted["fits"]
    assert f"{fitted['context']:,}" in run_text("llama 3.1 8b on a 3060")
    assert vram("--json", "qwen3 8b on a 4090")["fits"][0]["fit_default"]["changed"] is False


def run_text(question: str) -> str:
    out = io.StringIO()
    run([question], out)
    return out.getvalue()
