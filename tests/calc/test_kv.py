"""KV cache bytes against the figures people quote and against llama.cpp's own KV buffers."""

from __future__ import annotations

from typing import Any

import pytest

from tests.groundtruth import GIB, MIB, llamacpp_rows
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.kv import kv_cache, naive_kv_bytes
from vramfit.calc.recurrent import recurrent_state
from vramfit.calc.request import KvType

# config.json numbers, written by hand from the models' Hugging Face configs.
QWEN25_05B = {
    "model_type": "qwen2",
    "hidden_size": 896,
    "intermediate_size": 4864,
    "num_hidden_layers": 24,
    "num_attention_heads": 14,
    "num_key_value_heads": 2,
    "vocab_size": 151936,
    "tie_word_embeddings": True,
    "max_position_embeddings": 32768,
}
QWEN25_3B = {
    "model_type": "qwen2",
    "hidden_size": 2048,
    "intermediate_size": 11008,
    "num_hidden_layers": 36,
    "num_attention_heads": 16,
    "num_key_value_heads": 2,
    "vocab_size": 151936,
    "tie_word_embeddings": True,
    "max_position_embeddings": 32768,
}
LLAMA3_8B = {
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "tie_word_embeddings": False,
    "max_position_embeddings": 131072,
}
GEMMA2_9B = {
    "model_type": "gemma2",
    "hidden_size": 3584,
    "intermediate_size": 14336,
    "num_hidden_layers": 42,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 256,
    "vocab_size": 256000,
    "sliding_window": 4096,
    "max_position_embeddings": 8192,
}


@pytest.mark.parametrize(
    ("config", "context", "users", "expected"),
    [
        (QWEN25_05B, 4096, 1, 50_331_648),  # "50 MB" for Qwen2.5-0.5B at 4k
        (QWEN25_3B, 4096, 1, 150_994_944),
        (QWEN25_3B, 4096, 8, 1_207_959_552),
        (LLAMA3_8B, 8192, 1, 1 * GIB),
        (LLAMA3_8B, 32768, 1, 4 * GIB),
        (LLAMA3_8B, 131072, 1, 16 * GIB),
    ],
)
def test_quoted_figures(config: dict[str, object], context: int, users: int, expected: int) -> None:
    arch = from_hf_config(config)
    assert kv_cache(arch, context, users).total_bytes == expected
    assert naive_kv_bytes(arch, context, users) == expected  # no window, no MLA: both formulas agree


def test_gemma2_sliding_window_vs_naive() -> None:
    arch = from_hf_config(GEMMA2_9B)
    assert naive_kv_bytes(arch, 8192) == 2_818_572_288
    # 21 global layers hold 8192 cells; 21 sliding layers hold pad256(4096 + 512) = 4608 cells.
    per_cell = 8 * 256 * 2 * 2  # K and V, 8 KV heads × 256, f16
    assert kv_cache(arch, 8192).total_bytes == 21 * per_cell * 8192 + 21 * per_cell * 4608 == 2_202_009_600


@pytest.mark.parametrize(
    ("kv_type", "per_value"),
    [(KvType.F16, 2.0), (KvType.Q8_0, 34 / 32), (KvType.Q4_0, 18 / 32), (KvType.F32, 4.0), (KvType.FP8, 1.0)],
)
def test_kv_types_carry_block_scales(kv_type: KvType, per_value: float) -> None:
    arch = from_hf_config(LLAMA3_8B)
    values = 2 * 32 * 8 * 128 * 8192
    assert kv_cache(arch, 8192, type_k=kv_type, flash_attn=True).total_bytes == int(values * per_value)


def test_quantized_v_needs_flash_attention() -> None:
    arch = from_hf_config(LLAMA3_8B)
    cache = kv_cache(arch, 8192, type_k=KvType.Q8_0, flash_attn=False)
    assert cache.type_v == KvType.F16
    assert cache.v_bytes == GIB // 2


def _row_id(row: dict[str, object]) -> str:
    return "{arch_model}-{quant}-c{n_ctx}-{type_k}/{type_v}-fa{flash_attn}-s{n_seq}-u{kv_unified}-ub{n_ubatch}".format(
        **row
    ) + ("-swafull" if row["swa_full"] else "")


@pytest.mark.parametrize("row", llamacpp_rows(), ids=_row_id)
def test_kv_equals_llamacpp_buffer(row: dict[str, object]) -> None:
    arch = from_hf_config(row["config"])  # type: ignore[arg-type]
    users = int(row["n_seq"])  # type: ignore[call-overload]
    cache = kv_cache(
        arch,
        int(row["n_ctx"]) // users,  # type: ignore[call-overload]
        users,
        KvType(str(row["type_k"])),
        KvType(str(row["type_v"])),
        flash_attn=bool(row["flash_attn"]),
        n_ubatch=int(row["n_ubatch"]),  # type: ignore[call-overload]
        unified=bool(row["kv_unified"]),
        swa_full=bool(row["swa_full"]),
    )
    # llama.cpp logs each cache (full-attention, then sliding-window; DeepSeek V3.2: the latent, then the indexer's
    # keys) in MiB with two decimals.
    main = cache.total_bytes - cache.swa_bytes - cache.indexer_bytes
    buffers = [main] + [b for b in (cache.swa_bytes, cache.indexer_bytes) if b]
    if cache.buffers:  # DeepSeek V4: the window, CSA, HCA and indexer caches of llama_kv_cache_dsv4
        buffers = list(cache.buffers)
    assert [round(b / MIB, 2) for b in buffers] == row["kv_buffers_mib"]


DSV4_ROWS = [row for row in llamacpp_rows() if row["llama_arch"] == "deepseek4"]


@pytest.mark.parametrize("row", DSV4_ROWS, ids=[_row_id(r) for r in DSV4_ROWS])
def test_dsv4_compressor_state_equals_llamacpp_buffers(row: dict[str, Any]) -> None:
    # llama_dsv4_comp_state logs the csa, hca and lid state buffers apart, in MiB with two decimals.
    state = recurrent_state(from_hf_config(row["config"]), int(row["n_seq"]))
    logged = row["dsv4_state_buffers_mib"]
    assert list(logged) == ["csa", "hca", "lid"]
    assert [round(b / MIB, 2) for b in state.compressor_bytes] == list(logged.values())


def test_dsv4_caches_by_hand() -> None:
    # The 4-layer copy of DeepSeek V4 Flash (compress_ratios 0, 0, 4, 128) at 32,768 tokens, f16, one sequence:
    # window pad(128 + 512, 256) = 768 cells x 4 layers x 512 x 2 B; CSA 32768 / 4 = 8192 cells x 512 x 2 B (one
    # layer); HCA pad(32768 / 128, 256) = 256 cells x 512 x 2 B; indexer 8192 cells x 128 x 2 B.
    (row,) = [r for r in DSV4_ROWS if r["n_ctx"] == 32768 and r["n_seq"] == 1 and not r["swa_full"] and
              r["type_k"] == "f16" and not r["flash_attn"]]  # fmt: skip
    cache = kv_cache(from_hf_config(row["config"]), 32768, flash_attn=False)
    assert cache.buffers == (768 * 4 * 1024, 8192 * 1024, 256 * 1024, 8192 * 256)
    assert cache.v_bytes == 0
    # Compressor state, f32: CSA 2 x (2 x 512) x 8, HCA 2 x 512 x 128, indexer 2 x (2 x 128) x 8 values per layer.
    state = recurrent_state(from_hf_config(row["config"]))
    assert state.compressor_bytes == (2 * 1024 * 8 * 4, 2 * 512 * 128 * 4, 2 * 256 * 8 * 4)
    # Four sequences sharing n_ctx 4096 with a unified KV cache: llama_kv_cache_dsv4 still keeps one stream per
    # sequence, each n_ctx_seq = 4096 cells long (4 x 1024 CSA cells, not 4 x 256).
    assert kv_cache(from_hf_config(row["config"]), 1024, 4, unified=True).buffers == (
        4 * 768 * 4 * 1024, 4 * 1024 * 1024, 4 * 256 * 1024, 4 * 1024 * 256
    )  # fmt: skip


RECURRENT_ROWS = [row for row in llamacpp_rows() if row.get("recurrent_caches")]


@pytest.mark.parametrize("row", RECURRENT_ROWS, ids=[_row_id(r) for r in RECURRENT_ROWS])
def test_recurrent_state_equals_llamacpp_buffer(row: dict[str, Any]) -> None:
    arch = from_hf_config(row["config"])
    state = recurrent_state(arch, int(row["n_seq"]))
    (logged,) = row["recurrent_caches"]  # llama_memory_recurrent logs R and S in MiB with two decimals
    assert (round(state.r_bytes / MIB, 2), round(state.s_bytes / MIB, 2)) == (logged["r_mib"], logged["s_mib"])
    assert round(state.total_bytes / MIB, 2) == row["recurrent_buffer_mib"]
    assert state.cells == logged["cells"] == max(1, int(row["n_seq"]))


def test_recurrent_state_does_not_grow_with_context() -> None:
    rows = [r for r in RECURRENT_ROWS if r["arch_model"] == "Qwen3.5-0.8B-Base" and r["n_seq"] == 1]
    assert {r["n_ctx"] for r in rows} == {4096, 32768} and len({r["recurrent_buffer_mib"] for r in rows}) == 1
    # Qwen3.5-0.8B by hand: 18 Gated DeltaNet layers; conv state 3 × (2 × 16 × 128 + 16 × 128) values, delta-rule
    # state 128 × (16 × 128) values, 4 bytes each.
    arch = from_hf_config(rows[0]["config"])
    assert recurrent_state(arch).total_bytes == 18 * 4 * (3 * 6144 + 128 * 2048) == 20_201_472


@pytest.mark.parametrize(
    "extra",
    [
        {"model_type": "mistral", "sliding_window": 4096},  # Mistral 7B v0.1's config names a window
        {"model_type": "qwen2", "sliding_window": 4096, "use_sliding_window": True,
         "layer_types": ["sliding_attention"] * 32},
        {"model_type": "phi3", "sliding_window": 2047},  # llama.cpp: "Phi SWA is currently disabled"
    ],
)  # fmt: skip
def test_windows_llamacpp_ignores_cost_full_context(extra: dict[str, object]) -> None:
    arch = from_hf_config({**LLAMA3_8B, **extra})
    assert kv_cache(arch, 32768).total_bytes == naive_kv_bytes(arch, 32768) == 4 * GIB


def test_context_padding_per_stream() -> None:
    # llama_context: n_ctx = pad(4 × 1088, 256) = 4352; one stream per sequence gets pad(4352 / 4, 256) = 1280 cells.
    arch = from_hf_config(LLAMA3_8B)
    per_cell = 32 * 8 * 128 * 2 * 2  # 32 layers, K and V, f16
    assert kv_cache(arch, 1088, 4, unified=True).total_bytes == 4352 * per_cell
    assert kv_cache(arch, 1088, 4, unified=False).total_bytes == 4 * 1280 * per_cell
    assert kv_cache(arch, 1000, 1).total_bytes == 1024 * per_cell
