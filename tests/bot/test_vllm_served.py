"""vLLM sized as served: a preset on vLLM defaults to its own release (BF16, or the FP8 / MXFP4 it ships in), and
the printed `vllm serve` command is read back to check it runs what the numbers were computed for."""

from __future__ import annotations

import io
import json
import shlex
from typing import Any

import pytest

from vramfit.bot.cli import run

GIB = 1 << 30


def _answer(question: str) -> tuple[dict[str, Any], str]:
    data_out, text_out = io.StringIO(), io.StringIO()
    assert run(["--json", question], data_out) == 0, data_out.getvalue()
    assert run([question], text_out) == 0
    return json.loads(data_out.getvalue()), text_out.getvalue()


def _vllm_serve(text: str) -> list[str]:
    line = next(line.strip() for line in text.splitlines() if line.strip().startswith("vllm serve "))
    return shlex.split(line)


def _flag(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


@pytest.mark.parametrize(
    ("question", "quant", "model", "weights_gib"),
    [
        # 8,030,261,248 parameters × 2 bytes (BF16) = 14.96 GiB; before: Q4_K_M, 4.6 GiB, with the BF16 repo's command
        ("llama 3.1 8b for 10 users at 8k on a 4090 with vllm", "BF16", "meta-llama/Llama-3.1-8B-Instruct", 14.96),
        ("gpt-oss-20b on a 4090 with vllm", "MXFP4_MOE", "openai/gpt-oss-20b", 13.46),  # before: 10.8 GiB
        ("deepseek v3 on 8x h200 with vllm", "FP8", None, None),  # its release is FP8, never BF16's 1,250 GiB
    ],
)
def test_a_preset_on_vllm_is_its_release_and_the_command_serves_it(
    question: str, quant: str, model: str | None, weights_gib: float | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VRAMFIT_OFFLINE", "1")
    data, text = _answer(question)
    request = data["request"]
    assert request["engine"] == "vllm" and request["quant"] == quant
    if weights_gib is not None:
        assert abs(data["estimate"]["weights_bytes"] / GIB - weights_gib) < 0.1
    argv = _vllm_serve(text)
    if model is not None:
        assert argv[2] == model
    assert _flag(argv, "--max-model-len") == str(request["context"])
    assert _flag(argv, "--max-num-seqs") == (str(request["users"]) if request["users"] > 1 else None)
    count = request["gpus"][0]["count"]
    assert _flag(argv, "--tensor-parallel-size") == (str(count) if count > 1 else None)
    assert "--quantization" not in argv  # the release's own format: nothing to quantize on load


def test_a_gguf_quant_on_vllm_serves_that_file() -> None:
    data, text = _answer("llama 3.1 8b q4_k_m on a 4090 with vllm")
    assert data["request"]["quant"] == "Q4_K_M"
    argv = _vllm_serve(text)
    assert argv[2] == "llama-3.1-8b-Q4_K_M.gguf" and _flag(argv, "--tokenizer") == "meta-llama/Llama-3.1-8B-Instruct"


LLAMA_QUESTIONS = [
    "llama3 8b 32k 3060",
    "qwen2.5 14b for 8 users at 8k on a 3090",
    "llama 3.1 8b 128k q8_0 cache on a 4090",
    "gpt-oss-120b on a 5090 with 64GB RAM",
    "llama 3.3 70b on a 4090 with 128GB RAM",
    "qwen3 30b a3b 64k 4060 ti 16gb 64gb ram",
    "gemma 3 27b 16k on 2x 3090",
]


@pytest.mark.parametrize("question", LLAMA_QUESTIONS)
def test_the_llama_server_and_ollama_lines_run_what_was_computed(question: str) -> None:
    """Every printed llama-server command read back: the file of the request's quant, -c for every user's context,
    -ngl / --n-cpu-moe as the first GPU's placement, flash attention and the KV type as sized, -np for the users;
    the Ollama line with the same context, flash attention and parallelism."""
    data, text = _answer(question)
    request, fit = data["request"], data["fits"][0]
    line = next(line.strip() for line in text.splitlines() if line.strip().startswith("llama-server "))
    argv = shlex.split(line)
    assert _flag(argv, "-m") == f"{request['model']['id']}-{request['quant']}.gguf"
    assert _flag(argv, "-c") == str(request["context"] * request["users"])
    plan = fit["expert_offload"]
    if fit["verdict"] in ("fits", "tight"):
        assert _flag(argv, "-ngl") == "99" and "--n-cpu-moe" not in argv
    elif plan is not None:
        assert _flag(argv, "-ngl") == "99" and _flag(argv, "--n-cpu-moe") == str(plan["n_cpu_moe"])
    else:
        assert _flag(argv, "-ngl") == str(fit["gpu_layers"])
    assert _flag(argv, "-fa") == ("on" if request["flash_attn"] else "off")
    assert _flag(argv, "-ctk") == (None if request["kv_cache"] == "f16" else request["kv_cache"])
    assert _flag(argv, "-np") == str(request["users"])  # named: with none, llama-server b11434 opens 4 slots
    ollama = next((line.strip() for line in text.splitlines() if "ollama serve" in line), None)
    if ollama is not None:
        env = dict(word.split("=", 1) for word in shlex.split(ollama.split("ollama serve")[0].split(":", 1)[-1]))
        assert env["OLLAMA_CONTEXT_LENGTH"] == str(request["context"])
        assert ("OLLAMA_FLASH_ATTENTION" in env) == bool(request["flash_attn"])
        assert env.get("OLLAMA_NUM_PARALLEL") == (str(request["users"]) if request["users"] > 1 else None)


@pytest.mark.parametrize(
    ("question", "quant", "served"),
    [
        # Each repo is the one presets/models.toml records, found on its Hub page (vllm_repos_source): before, every
        # one of these printed the BF16 release's repo, which loads 2-4x the memory the answer was sized for.
        ("llama 3.1 8b awq on a 4090 with vllm", "INT4", "hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4"),
        ("llama 3.1 8b gptq on a 4090 with vllm", "INT4", "hugging-quants/Meta-Llama-3.1-8B-Instruct-GPTQ-INT4"),
        ("qwen2.5 7b 4bit for 4 users on a 3090 vllm", "INT4", "Qwen/Qwen2.5-7B-Instruct-AWQ"),  # 4-bit: AWQ first
        ("qwen2.5 14b int8 on 2x 3090 with vllm", "INT8", "Qwen/Qwen2.5-14B-Instruct-GPTQ-Int8"),
        ("qwen3 8b nf4 on a 4090 with vllm", "INT4", "unsloth/Qwen3-8B-bnb-4bit"),
        ("qwen3 32b fp8 on an h100 with vllm", "FP8", "Qwen/Qwen3-32B-FP8"),  # was the BF16 repo + --quantization fp8
        ("phi-4 w4a16 on a 4090 with vllm", "INT4", "RedHatAI/phi-4-quantized.w4a16"),
        ("qwen3 8b nvfp4 on a 5090 with vllm", "NVFP4", "RedHatAI/Qwen3-8B-NVFP4"),
        ("llama 3.3 70b nvfp4 on 2x 5090 with vllm", "NVFP4", "nvidia/Llama-3.3-70B-Instruct-FP4"),
        # None recorded: the command says what goes there instead of naming the BF16 repo
        ("gemma 3 27b awq on 2x 4090 with vllm", "INT4", "<AWQ repo of google/gemma-3-27b-it>"),
    ],
)
def test_a_quantized_checkpoint_asked_by_name_is_served_from_a_repo_of_that_kind(
    question: str, quant: str, served: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VRAMFIT_OFFLINE", "1")
    data, text = _answer(question)
    request = data["request"]
    assert request["engine"] == "vllm" and request["quant"] == quant
    argv = _vllm_serve(text)
    assert argv[2] == served
    assert "--quantization" not in argv  # the repo's config.json names its format; vLLM reads it there
    assert _flag(argv, "--max-model-len") == str(request["context"])
    assert _flag(argv, "--max-num-seqs") == (str(request["users"]) if request["users"] > 1 else None)
    count = request["gpus"][0]["count"]
    assert _flag(argv, "--tensor-parallel-size") == (str(count) if count > 1 else None)


def test_fp8_with_no_recorded_repo_is_quantized_on_load() -> None:
    _, text = _answer("mistral 7b fp8 on a 4090 with vllm")  # no FP8 repo recorded: vLLM quantizes the BF16 weights
    argv = _vllm_serve(text)
    assert argv[2] == "mistralai/Mistral-7B-Instruct-v0.3" and _flag(argv, "--quantization") == "fp8"


@pytest.mark.parametrize(
    ("question", "files_gb", "within"),
    [
        # The safetensors shards of each served repo, summed from its Hub file listing (vllm_repos_source): the
        # answer's weights against what `vllm serve` of that repo downloads. Embeddings and norms stay 16-bit in all.
        ("llama 3.1 8b awq on a 4090 with vllm", 5.73, 0.01),  # hugging-quants AWQ-INT4: 4.68 + 1.05 GB
        ("llama 3.1 8b fp8 on a 4090 with vllm", 9.08, 0.01),  # neuralmagic FP8
        ("qwen2.5 32b awq on a 4090 with vllm", 19.33, 0.01),  # Qwen AWQ
        ("qwen2.5 coder 7b awq on a 4090 with vllm", 5.57, 0.01),  # Qwen AWQ
        ("qwen2.5 32b int8 on 2x 4090 with vllm", 35.04, 0.025),  # Qwen GPTQ-Int8: its g128 scales, zeros, g_idx
    ],
)
def test_the_weights_are_the_served_repos_files(question: str, files_gb: float, within: float) -> None:
    data, _ = _answer(question)
    assert abs(data["estimate"]["weights_bytes"] / 1e9 / files_gb - 1) < within


def test_nvfp4_is_four_and_a_half_bits_a_weight_with_its_scales() -> None:
    """A 4096 × 4096 projection in NVFP4: 8,388,608 bytes of E2M1 pairs, 1,048,576 FP8 scales (one per 16 inputs)
    and two FP32 scalars; the embeddings and the head stay BF16 (as in INT4)."""
    from vramfit.calc.checkpoints import _vllm_tensor_bytes
    from vramfit.calc.file_types import FileType
    from vramfit.calc.tensor_specs import TensorSpec

    spec = TensorSpec(name="blk.0.attn_q.weight", shape=(4096, 4096), layer=0)
    assert _vllm_tensor_bytes(spec, FileType.NVFP4, None) == 4096 * 4096 // 2 + 4096 * 4096 // 16 + 8  # type: ignore[arg-type]
    embd = TensorSpec(name="token_embd.weight", shape=(4096, 1000))
    assert _vllm_tensor_bytes(embd, FileType.NVFP4, None) == 2 * 4096 * 1000  # type: ignore[arg-type]


def test_a_tight_vllm_card_says_how_many_users_its_cache_holds() -> None:
    """Before: "⚠️ Fits on GeForce RTX 4090, but only 0.0 GiB is left" above "= 29.8 GiB of 21.6 GiB": vLLM starts
    (its pool holds one 8K sequence) but not the ten users at once. The pool is the JSON's own figure."""
    from vramfit.bot.answering.service import CalcBackend
    from vramfit.bot.render.embed import render_card

    question = "llama 3.1 8b for 10 users at 8k on a 4090 with vllm"
    data, _ = _answer(question)
    pool = data["estimate"]["vllm_kv_pool_tokens"]
    assert data["fits"][0]["verdict"] == "tight" and 8192 <= pool < 10 * 8192
    card = CalcBackend().answer(question, None, {})
    first = (render_card(card, card.lang).description or "").splitlines()[0]  # type: ignore[arg-type]
    assert first == (
        f"⚠️ vLLM starts on **GeForce RTX 4090**, but its KV cache holds {pool:,} tokens: {pool // 8192} of the 10 "
        "users at 8K at once."
    )
