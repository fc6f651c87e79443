"""Gemma 4 E4B (gemma4 with per-layer embeddings and KV-sharing layers): the first 24 of 42 layers own the cache (20
sliding of head size 256 with a 512-token window, 4 full of 512), the last 18 read theirs; the per-layer embedding
table stays in system RAM like token_embd. Worked out here from the committed config and checked against llama.cpp's
loads (src/models/gemma4.cpp at 0c1e57098)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.bot.cli_json import answer as ask
from tests.groundtruth import DATA, MIB, llamacpp_rows
from vramfit.calc.file_types import FileType
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.weights import weight_bytes

TEXT: dict[str, Any] = json.loads((DATA / "configs" / "gemma-4-E4B-it.json").read_text(encoding="utf-8"))["text_config"]
ROWS = [row for row in llamacpp_rows() if row["arch_model"] == "Gemma-4-E4B"]


def _kv_by_hand(context: int) -> int:
    """f16, one user, flash attention on: the 4 owning full layers cache K and V of 2 heads × 512 per token; the 20
    owning sliding layers 2 × 256 for the window plus a micro-batch, pad256(min(context, 512 + 512)) cells."""
    owners = TEXT["num_hidden_layers"] - TEXT["num_kv_shared_layers"]
    kinds = TEXT["layer_types"][:owners]
    kv = TEXT["num_key_value_heads"]
    full = kinds.count("full_attention") * context * 2 * kv * TEXT["global_head_dim"] * 2
    window = -(-min(context, TEXT["sliding_window"] + 512) // 256) * 256
    sliding = kinds.count("sliding_attention") * window * 2 * kv * TEXT["head_dim"] * 2
    return full + sliding


@pytest.mark.parametrize(
    ("question", "lang", "context", "mib"),
    [
        ("gemma 4 e4b 32k on a 3060", "en", 32768, 552),  # llama.cpp: 552.00 MiB
        ("젬마4 e4b 128k 4090에서 돌아가?", "ko", 131072, 2088),  # 2088.00 MiB
    ],
)
def test_the_cache_is_the_owning_layers(question: str, lang: str, context: int, mib: int) -> None:
    answer = ask(question, lang)
    assert answer["request"]["model"]["id"] == "gemma-4-e4b"
    assert answer["estimate"]["kv_cache_bytes"] == _kv_by_hand(context) == mib * MIB


def test_the_per_layer_table_stays_in_system_ram() -> None:
    arch = from_hf_config(TEXT)
    assert (arch.kv_shared_layers, arch.per_layer_input_size, arch.v_is_k) == (18, 256, False)
    weights = weight_bytes(arch, FileType.Q4_K_M)
    q4 = next(row for row in ROWS if row["quant"] == "Q4_K_M")
    assert weights.tensor_bytes == q4["model_size_api_bytes"] and q4["model_n_params_api"] == 7_518_069_290
    # token_embd and per_layer_token_embd (Q6_K: 262,144 rows of 2,560 and of 256 × 42) stay on the host
    table = 262144 * 256 * 42 // 256 * 210
    embd = 262144 * 2560 // 256 * 210
    assert weights.host_bytes == table + embd == 2312110080 + 550502400
