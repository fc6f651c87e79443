"""llama-server's output limit (tests/data/groundtruth/llamacpp_outputs.jsonl, tools/llamacpp_truth/
measure_outputs.py): llama.cpp 0c1e57098 reserves the compute buffer for at most ``n_outputs_max`` outputs of a
micro-batch; the library default keeps every token's logits, llama-server one a slot. vramfit sizes the library
default's buffer (calc/compute.py), which these rows check for 54 models; benchmarks/server_compute.py prints how far
that is above llama-server's."""

from __future__ import annotations

from typing import Any

import pytest

from tests.groundtruth import MIB, llamacpp_rows, output_limit_rows
from vramfit.calc.compute import compute_buffers, feed_forward_stage_bytes
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.kv import kv_cache
from vramfit.calc.request import KvType

ROWS = output_limit_rows()
CONFIGS = {row["arch_model"]: row["config"] for row in llamacpp_rows()}
MODELS = sorted({row["arch_model"] for row in ROWS})


def _row(model: str, n_ctx: int, n_outputs_max: int, n_seq: int) -> dict[str, Any]:
    (row,) = [r for r in ROWS if (r["arch_model"], r["n_ctx"], r["flash_attn"], r["n_outputs_max"], r["n_seq"])
              == (model, n_ctx, True, n_outputs_max, n_seq)]  # fmt: skip
    return row


def test_every_row_is_a_logged_load_of_the_mirrored_revision() -> None:
    assert len(MODELS) == 54 and len(ROWS) == 54 * 6
    for row in ROWS:
        assert row["llama_cpp_commit"] == "0c1e57098" and row["backend"].startswith("CPU")
        logged_max = row["n_outputs_max"] or 2048  # 0: n_batch
        assert f"llama_context: n_outputs_max         = {logged_max}" in row["log_excerpt"]
        if row["context_ok"]:
            logged = [line for line in row["log_excerpt"] if "compute buffer size" in line]
            assert logged and f"{row['compute_buffer_mib']:.2f} MiB" in logged[0]


@pytest.mark.parametrize("model", MODELS)
def test_the_estimate_is_the_library_defaults_buffer(model: str) -> None:
    """At 4,096 tokens with flash attention and every token's logits, vramfit's compute buffer is within 16 % of
    what llama.cpp reserved, for every measured architecture (the stages it leaves out: benchmarks/server_compute.py
    and calc/compute.py)."""
    measured = _row(model, 4096, 0, 1)["compute_buffer_mib"] * MIB
    arch = from_hf_config(CONFIGS[model])
    cache = kv_cache(arch, 4096, 1, KvType.F16, flash_attn=True)
    estimate = compute_buffers(arch, cache.full_cells, flash_attn=True).gpu_bytes
    assert 0.84 * measured <= estimate <= 1.16 * measured, (model, estimate / MIB, measured / MIB)


@pytest.mark.parametrize("model", MODELS)
def test_llama_servers_limit_takes_only_logits_away(model: str) -> None:
    """llama-server's four slots (four outputs a micro-batch) reserve at most what the library default does at the
    same context; at 32,768 tokens the server's buffer grows by the f16 mask's 2 · 512 · 28,672 bytes or more
    (28 MiB)."""
    default, server = _row(model, 4096, 0, 1), _row(model, 4096, 4, 4)
    assert server["compute_buffer_mib"] <= default["compute_buffer_mib"]
    longer = _row(model, 32768, 4, 4)
    if longer["context_ok"]:  # Gemma 4 31B's 32K cache did not fit the measuring machine
        assert longer["compute_buffer_mib"] - server["compute_buffer_mib"] >= 2 * 512 * 28672 / MIB - 0.01


DENSE = ["Qwen2.5-0.5B", "Llama-3.2-1B", "Qwen3-0.6B", "Qwen3-8B", "SmolLM3-3B", "OLMo-2-7B", "OLMo-2-32B-8L",
         "EXAONE-3.5-7.8B", "EXAONE-4.0-32B-4L", "Command-R-35B-4L"]  # fmt: skip


@pytest.mark.parametrize("model", DENSE)
@pytest.mark.parametrize("n_ctx", [4096, 32768])
def test_a_dense_models_feed_forward_stage(model: str, n_ctx: int) -> None:
    """With one output a micro-batch the logits no longer set the buffer of a dense model without sliding windows:
    its feed-forward stage does, 4 · 512 · (3 · n_ff + 4 · hidden) bytes beside the f16 mask (2 · 512 · n_ctx), to
    the 0.01 MiB llama.cpp logs (Qwen3 8B: 4 · 512 · (3 · 12,288 + 4 · 4,096) B = 104 MiB, 108.01 logged at 4,096
    tokens and 136.01 at 32,768)."""
    arch = from_hf_config(CONFIGS[model])
    measured = _row(model, n_ctx, 1, 1)["compute_buffer_mib"] * MIB
    by_hand = 4 * 512 * (3 * max(arch.ffn_size) + 4 * arch.hidden_size) + 2 * 512 * n_ctx
    assert feed_forward_stage_bytes(arch, n_ctx, 512, True) == by_hand
    assert abs(by_hand - measured) <= 0.02 * MIB, (by_hand / MIB, measured / MIB)
