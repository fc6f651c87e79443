"""Estimates against published llama.cpp CUDA logs with every layer on the GPU (tests/data/groundtruth/measured.jsonl).

Bars from the calculator issue: GPU weights within 3 %, KV cache within 0.5 %, compute buffer within 15 %.
Architectures come from tests/data/groundtruth/architectures.json (sourced config/GGUF numbers) or are written here
from the model's config.json.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.groundtruth import DATA, MIB, architectures, llamacpp_rows, measured_rows
from vramfit.calc.architecture import Architecture
from vramfit.calc.compute import compute_buffers, flash_attn_reserved_bytes
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
    (hidden size; the GGUF's 262,144 tokens): flash attention's f16 copy of a global layer (256 MiB) leaves the
    attention stage under it."""
    row = _rows()["lcpp-14097-gemma3-27b-iq3m-4070tis-c32768-np2-iswa-q8kv"]
    assert row["compute_mib"] == 522.5 and "q8_0" in str(row["kv_type"]) and row["flash_attn"]
    arch = arch_from_groundtruth("gemma-3-27b-it")
    expected = 4 * 512 * (5376 + 262144)
    assert expected == 522.5 * MIB
    for type_k in (KvType.F16, KvType.Q8_0, KvType.Q4_0):
        cache = kv_cache(arch, 16384, 2, type_k, type_k, flash_attn=True, n_ubatch=512)
        copy = cache.f16_copy_layer_bytes  # CUDA's f16 copy of a global layer: 32,768 × 2,048 × 2 B each for K and V
        assert copy == (0 if type_k == KvType.F16 else 2 * 32768 * 2048 * 2)
        buffers = compute_buffers(arch, cache.full_cells, n_ubatch=512, flash_attn=True, flash_attn_copy_bytes=copy)
        assert buffers.gpu_bytes == expected and buffers.flash_attn_copy_bytes == 0  # the output stage stays the larger


def _config_arch(name: str) -> Architecture:
    return from_hf_config(json.loads((DATA / "configs" / f"{name}.json").read_text(encoding="utf-8")))


def test_the_flash_attention_mask_is_f16_at_the_mirrored_revision() -> None:
    """llama.cpp 0c1e57098 builds the mask in f16 with flash attention (llama-graph.cpp build_attn_inp_kq_mask). On
    the CPU backend Llama 3.2 1B at 131,072 tokens logs 258.5 MiB, its output stage 4 · 512 · (2,048 + 128,256) B =
    254.5 MiB; the attention stage, 4 · 512 · 4 · 2,048 + 2 · 512 · 131,072 B = 144 MiB, stays under it. The f32 mask
    and its f16 copy of older builds would make that stage 400 MiB."""
    (row,) = [r for r in llamacpp_rows() if r["arch_model"] == "Llama-3.2-1B" and r["n_ctx"] == 131072
              and r["flash_attn"] and r["type_k"] == "f16" and r["n_ubatch"] == 512]  # fmt: skip
    assert row["compute_buffer_mib"] == 258.5
    arch = from_hf_config(row["config"])
    buffers = compute_buffers(arch, 131072, flash_attn=True)
    assert buffers.attention_bytes == 4 * 512 * 4 * 2048 + 2 * 512 * 131072 == 144 * MIB
    assert buffers.gpu_bytes == buffers.output_bytes == 4 * 512 * (2048 + 128256)
    assert _within(buffers.gpu_bytes, 258.5 * MIB, 0.02)
    older_rule = 4 * 512 * (4 * 2048 + 3 * 131072 // 2)  # an f32 mask and its f16 copy: 55 % over what was logged
    assert older_rule == 400 * MIB


@pytest.mark.parametrize(
    ("name", "cells", "type_k", "type_v", "copy"),
    [
        # every layer with KV, 4 heads of 256: K and V of one layer at 262,144 cells in f16, 1 GiB
        ("Qwen3.5-4B", 262144, KvType.Q8_0, KvType.Q8_0, 2 * 262144 * 4 * 256 * 2),
        ("Qwen3.5-4B", 262144, KvType.Q4_0, KvType.Q4_0, 2 * 262144 * 4 * 256 * 2),
        ("Qwen3.5-4B", 262144, KvType.Q8_0, KvType.F16, 262144 * 4 * 256 * 2),  # an f16 V is read as it is
        ("Qwen3.5-4B", 262144, KvType.F16, KvType.F16, 0),
        # MLA: V is a view of the latent K (576 values a token), copied once
        ("DeepSeek-V3.1", 32768, KvType.Q8_0, KvType.Q8_0, 32768 * 576 * 2),
    ],
)
def test_cuda_flash_attention_copies_a_quantized_layer_to_f16(
    name: str, cells: int, type_k: KvType, type_v: KvType, copy: int
) -> None:
    """ggml-cuda's flash attention reserves an f16 copy of a K or V view that is not f16 beside its output, sized
    by the whole view (fattn-common.cuh ggml_cuda_flash_attn_ext_get_f16_extra_data, PR #23907; 0c1e57098): one
    layer's K and V at every cell, worked out here from the config."""
    arch = _config_arch(name)
    cache = kv_cache(arch, cells, 1, type_k, type_v, flash_attn=True)
    assert cache.f16_copy_layer_bytes == copy
    assert kv_cache(arch, cells, 1, type_k, KvType.F16, flash_attn=False).f16_copy_layer_bytes == 0  # no FA, no copy


def test_the_f16_copy_is_unsloths_measured_compute_buffer() -> None:
    """unsloth measured Qwen3.5-4B at 262,144 tokens with q8_0 K and V at 1.30 GiB of compute on CUDA (unslothai/
    unsloth PR #6718: "Measured Qwen3.5-4B at 256k: 1.30 GiB compute at q8_0"): the attention stage with the copy,
    4 · 512 · 4 · 2,560 B of activations + 2 · 512 · 262,144 B of f16 mask + 1 GiB of f16 K and V = 1,300 MiB."""
    arch = _config_arch("Qwen3.5-4B")
    cache = kv_cache(arch, 262144, 1, KvType.Q8_0, KvType.Q8_0, flash_attn=True)
    buffers = compute_buffers(arch, cache.full_cells, flash_attn=True, flash_attn_copy_bytes=cache.f16_copy_layer_bytes)
    assert buffers.gpu_bytes == 4 * 512 * 4 * 2560 + 2 * 512 * 262144 + 2**30 == 1300 * MIB
    assert _within(buffers.gpu_bytes, 1.30 * 1024 * MIB, 0.03)
    assert buffers.flash_attn_copy_bytes == buffers.gpu_bytes - buffers.output_bytes  # over the largest f16 stage


MLA_ROWS = [
    r for r in llamacpp_rows()
    if r["arch_model"] == "DeepSeek-V3.1-4L16E" and r["type_k"] == "f16" and r["n_seq"] == 1
]  # fmt: skip


@pytest.mark.parametrize("row", MLA_ROWS, ids=lambda r: f"c{r['n_ctx']}-fa{r['flash_attn']}-ub{r['n_ubatch']}")
def test_an_mla_models_attention_stage_is_its_latent_tensors(row: dict[str, Any]) -> None:
    """DeepSeek V3.1 (128 heads, kv_lora_rank 512, rope 64) on llama.cpp 0c1e57098's CPU backend: with the absorbed
    latent attention (src/models/deepseek2.cpp) the stage holds three latent-wide f32 tensors a head and token
    (Qcur, 512 + 64 wide; q_nope_absorbed and the attention's output, 512 each): 4 · 512 · 128 · (3 · 512 + 64) B =
    400 MiB at a micro-batch of 512, then the mask (f16 with flash attention; f32 beside the f32 KQ of every head
    without). It logs 410.01 MiB at 2,048 tokens and 440.01 at 32,768 with flash attention, 924.01 at 2,048 and
    2,472.01 at 8,192 without; four hidden states in its place made 266.5 MiB and 572 MiB (the output stage, and the
    dense rule), 35–40 % short."""
    arch = from_hf_config(row["config"])
    assert arch.is_mla and arch.max_heads == 128
    ub, n_ctx = int(row["n_ubatch"]), int(row["n_ctx"])
    cache = kv_cache(arch, n_ctx, 1, KvType.F16, flash_attn=bool(row["flash_attn"]), n_ubatch=ub)
    buffers = compute_buffers(arch, cache.full_cells, n_ubatch=ub, flash_attn=bool(row["flash_attn"]))
    latent = 4 * ub * 128 * (3 * 512 + 64)
    mask = 2 * ub * n_ctx if row["flash_attn"] else 4 * ub * (1 + n_ctx * 129)
    assert buffers.attention_bytes == latent + mask
    assert _within(buffers.gpu_bytes, row["compute_buffer_mib"] * MIB, 0.025), (buffers.gpu_bytes / MIB, row)


@pytest.mark.parametrize(
    ("name", "type_kv", "backend", "reserved"),
    [
        # Qwen3.5-4B at 262,144 cells: one layer's K and V in f16 are 2 × 262,144 × 4 × 256 × 2 B = 1 GiB
        ("Qwen3.5-4B", KvType.Q8_0, "cuda", 2**30),
        ("Qwen3.5-4B", KvType.Q8_0, "rocm", 2**30),
        ("Qwen3.5-4B", KvType.F16, "cuda", 0),  # CUDA reads an f16 cache as it is
        # Metal: the copy whatever the type, and 4 · 32 rows · 16 heads · 32 workgroups · (256 + 2) B of partials
        ("Qwen3.5-4B", KvType.F16, "metal", 2**30 + 4 * 32 * 16 * 32 * 258),
        ("Qwen3.5-4B", KvType.Q8_0, "metal", 2**30 + 4 * 32 * 16 * 32 * 258),
        ("Qwen3.5-4B", KvType.Q8_0, "vulkan", 0),
        # MLA: the latent K only (576 a cell), partials of the 512-wide latent V for 128 heads
        ("DeepSeek-V3.1", KvType.F16, "metal", 262144 * 576 * 2 + 4 * 32 * 128 * 32 * 514),
    ],
)
def test_what_each_backends_flash_attention_reserves(name: str, type_kv: KvType, backend: str, reserved: int) -> None:
    """llama.cpp 0c1e57098: ggml-cuda reserves beside the attention's output an f16 copy of a K or V cache that is
    not f16 (fattn-common.cuh); ggml-metal reserves it for every type ("always reserve the temp buffer",
    ggml-metal-ops.cpp extra_kv_f16) and the partial results of its workgroups (extra_tmp); Vulkan nothing."""
    arch = _config_arch(name)
    cache = kv_cache(arch, 262144, 1, type_kv, type_kv, flash_attn=True)
    assert flash_attn_reserved_bytes(arch, cache, backend) == reserved
