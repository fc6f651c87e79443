"""Estimates against published llama.cpp CUDA logs with every layer on the GPU (tests/data/groundtruth/measured.jsonl).

Bars from the calculator issue: GPU weights within 3 %, KV cache within 0.5 %, compute buffer within 15 %.
Architectures come from tests/data/groundtruth/architectures.json (sourced config/GGUF numbers) or are written here
from the model's config.json.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.groundtruth import MIB, architectures, measured_rows
from vramfit.calc.architecture import Architecture
from vramfit.calc.compute import compute_buffers
from vramfit.calc.file_types import parse_file_type
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.kv import kv_cache
from vramfit.calc.request import KvType
from vramfit.calc.weights import weight_bytes

# meta-llama/Llama-2-13b-hf config.json (LLaVA 1.5 13B's language model).
LLAMA2_13B = {
    "model_type": "llama",
    "hidden_size": 5120,
    "intermediate_size": 13824,
    "num_hidden_layers": 40,
    "num_attention_heads": 40,
    "num_key_value_heads": 40,
    "vocab_size": 32000,
    "max_position_embeddings": 4096,
    "tie_word_embeddings": False,
}
TIED = {"gemma2", "gemma3"}


def arch_from_groundtruth(key: str, **extra: Any) -> Architecture:
    entry = architectures()[key]
    config = {k: v for k, v in entry.items() if k not in ("quote", "source", "source_kind", "hf_id", "notes")}
    config["llama_arch"] = {"qwen2vl": "qwen2"}.get(entry["gguf_arch"], entry["gguf_arch"])
    config["vocab_size"] = entry.get("vocab_size_gguf") or entry.get("vocab_size")
    config["v_head_dim"] = entry.get("head_dim_v", entry.get("head_dim"))
    config["tie_word_embeddings"] = config["llama_arch"] in TIED
    config.update(extra)
    return from_hf_config(config)


# id → (architecture, weight format, users, GPUs)
CASES: dict[str, tuple[Architecture, str, int, int]] = {
    "lcpp-12729-llama33-70b-q8_0-a800mig-c15360": (arch_from_groundtruth("Llama-3.1-70B-Instruct"), "Q8_0", 1, 1),
    "lcpp-14097-gemma3-27b-iq3m-4070tis-c32768-np2-iswa-q8kv": (arch_from_groundtruth("gemma-3-27b-it"), "IQ3_M", 2, 1),
    "lcpp-14663-qwen25vl-32b-bf16-h100-c4096": (arch_from_groundtruth("Qwen2.5-VL-32B-Instruct"), "BF16", 1, 1),
    "lcpp-5592-llava-13b-f16-a100-c40960-np10": (from_hf_config(LLAMA2_13B), "F16", 10, 1),
    "lcpp-11200-qwen25-coder-32b-q8_0-2x3090ti-c32768-kvq8": (
        arch_from_groundtruth("QwQ-32B (Qwen2.5-32B architecture)"),
        "Q8_0",
        1,
        2,
    ),
    "lcpp-8117-llama3-70b-q4km-2xtitanrtx-c8192": (arch_from_groundtruth("Llama-3.1-70B-Instruct"), "Q4_K_M", 1, 2),
    "lcpp-8490-gemma2-9b-q4km-2xa6000-c2048": (arch_from_groundtruth("gemma-2-9b-it"), "Q4_K_M", 1, 2),
    "lcpp-9013-gemma2-2b-q4km-3060ti-c8192-np4": (arch_from_groundtruth("gemma-2-2b-it"), "Q4_K_M", 4, 1),
    "lcpp-ikpr344-glm-z1-32b-iq4xs-3090ti-c32768-fa": (
        arch_from_groundtruth("GLM-4-32B-0414 (GLM-Z1-32B)"),
        "IQ4_XS",
        1,
        1,
    ),
    "lcpp-py-developer0hye-llama3-8b-ko-q4km-rtx3070-c512": (
        arch_from_groundtruth("Llama-3.1-8B-Instruct"),
        "Q4_K_M",
        1,
        1,
    ),
}
# CUDA runs with every layer on the GPU that these tests leave out, and why.
EXCLUDED = {
    "lcpp-14430-gemma3n-e4b-q4km-c8192": "Gemma 3n (per-layer embeddings, KV sharing) is not modelled",
    "lcpp-14752-nemotron-super-49b-q6k-2x5090-c4096": "Nemotron 'deci' layers with a third-party dynamic quant mix",
}


def _rows() -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in measured_rows()}


def test_every_cuda_full_offload_row_is_covered() -> None:
    cuda_full = {
        r["id"]
        for r in measured_rows()
        if str(r["engine"]).startswith("llama.cpp")
        and r.get("offload") == "all"
        and "NVIDIA" in str(r.get("gpu"))
        and "Vulkan" not in str(r.get("gpu"))
    }
    assert cuda_full == set(CASES) | set(EXCLUDED)


def _kv_types(row: dict[str, Any]) -> tuple[KvType, KvType]:
    kv = str(row["kv_type"])
    if kv.startswith("K="):
        k, v = (part.split("=")[1] for part in kv.split(","))
        return KvType(k), KvType(v)
    return KvType(kv), KvType(kv)


def _within(estimate: float, measured: float, share: float) -> bool:
    return abs(estimate - measured) <= share * measured


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_kv_and_compute(case_id: str) -> None:
    row = _rows()[case_id]
    arch, _, users, gpus = CASES[case_id]
    type_k, type_v = _kv_types(row)
    flash = bool(row["flash_attn"])
    ubatch = int(row.get("n_ubatch") or 512)
    cache = kv_cache(arch, int(row["n_ctx"]) // users, users, type_k, type_v, flash_attn=flash, n_ubatch=ubatch)
    assert _within(cache.total_bytes, row["kv_mib"] * MIB, 0.005), (cache.total_bytes / MIB, row["kv_mib"])
    compute = compute_buffers(arch, cache.full_cells, n_ubatch=ubatch, flash_attn=flash, gpu_count=gpus)
    assert _within(compute.gpu_bytes, row["compute_mib"] * MIB, 0.15), (compute.gpu_bytes / MIB, row["compute_mib"])


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_gpu_and_host_weights(case_id: str) -> None:
    row = _rows()[case_id]
    arch, quant, _, _ = CASES[case_id]
    weights = weight_bytes(arch, parse_file_type(quant))
    assert _within(weights.gpu_bytes, row["weights_gpu_mib"] * MIB, 0.03), (weights.gpu_bytes / MIB, row)
    assert _within(weights.host_bytes, row["weights_cpu_mib"] * MIB, 0.03), (weights.host_bytes / MIB, row)


def test_llama3_8b_compute_buffer_at_8k() -> None:
    """The figure from the developers' guide: Llama 3 8B at 8192, flash attention off, 560 MiB on CUDA."""
    arch = arch_from_groundtruth("Llama-3.1-8B-Instruct")
    assert round(compute_buffers(arch, 8192, flash_attn=False).gpu_bytes / MIB, 2) == 560.00


def test_a_quantized_kv_cache_leaves_the_compute_buffer_as_f16s() -> None:
    """Gemma 3 27B, q8_0 K and V with flash attention, 32,768 cells for two sequences, one RTX 4070 Ti Super: llama.cpp
    logs a 522.5 MiB CUDA compute buffer (lcpp-14097), the output stage of f16's, 4 · 512 · (5,376 + 262,144) bytes
    (hidden size; the GGUF's 262,144 tokens)."""
    row = _rows()["lcpp-14097-gemma3-27b-iq3m-4070tis-c32768-np2-iswa-q8kv"]
    assert row["compute_mib"] == 522.5 and "q8_0" in str(row["kv_type"]) and row["flash_attn"]
    arch = arch_from_groundtruth("gemma-3-27b-it")
    expected = 4 * 512 * (5376 + 262144)
    assert expected == 522.5 * MIB
    for type_k in (KvType.F16, KvType.Q8_0, KvType.Q4_0):
        cache = kv_cache(arch, 16384, 2, type_k, type_k, flash_attn=True, n_ubatch=512)
        assert compute_buffers(arch, cache.full_cells, n_ubatch=512, flash_attn=True).gpu_bytes == expected
