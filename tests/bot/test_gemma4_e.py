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


# Gemma 4 E2B, rebuilt from transformers' conversion script (tests/data/configs/gemma-4-E2B.json): 35 layers of
# (4 sliding + 1 full) × 7, one KV head, the last 20 layers reading an earlier layer's cache and, with
# use_double_wide_mlp, an MLP twice as wide (conversion/gemma.py Gemma4Model writes feed_forward_length per layer).
E2B: dict[str, Any] = json.loads((DATA / "configs" / "gemma-4-E2B.json").read_text(encoding="utf-8"))["text_config"]
E2B_ROWS = [row for row in llamacpp_rows() if row["arch_model"] == "Gemma-4-E2B"]


@pytest.mark.parametrize(
    ("question", "lang", "context", "mib"),
    [
        ("gemma 4 e2b 32k on a 3060", "en", 32768, 204),  # llama.cpp: 204.00 MiB
        ("젬마4 e2b 4k 3060에서 돌아가?", "ko", 4096, 36),  # 36.00 MiB
    ],
)
def test_e2b_caches_its_first_fifteen_layers(question: str, lang: str, context: int, mib: int) -> None:
    """The 15 owning layers: 3 full of one head of 512 (the whole context) and 12 sliding of one head of 256 (the
    512-token window and a micro-batch, 1,024 cells), K and V in f16."""
    owners = E2B["num_hidden_layers"] - E2B["num_kv_shared_layers"]
    kinds = E2B["layer_types"][:owners]
    assert (kinds.count("full_attention"), kinds.count("sliding_attention")) == (3, 12)
    by_hand = 3 * context * 2 * 1 * 512 * 2 + 12 * min(context, 1024) * 2 * 1 * 256 * 2
    answer = ask(question, lang)
    assert answer["request"]["model"]["id"] == "gemma-4-e2b"
    assert answer["estimate"]["kv_cache_bytes"] == by_hand == mib * MIB
    measured = {row["kv_buffer_mib"] for row in E2B_ROWS if row["n_ctx"] == context and row["n_seq"] == 1
                and row["type_k"] == "f16" and row["flash_attn"] and not row["swa_full"]}  # fmt: skip
    assert measured == {mib}


def test_e2b_shared_layers_have_a_double_wide_mlp() -> None:
    """Layers 15–34 carry ffn_gate/up/down of 2 × 6,144: by hand, 4,647,450,147 parameters (llama.cpp printed as
    many), of which the per-layer table (262,144 × 35 × 256) and token_embd (262,144 × 1,536) stay on the host."""
    arch = from_hf_config(E2B)
    assert arch.ffn_size == (6144,) * 15 + (12288,) * 20 and arch.kv_shared_layers == 20
    e, v, pl = 1536, 262144, 256
    full, swa = 512, 256  # the global and sliding layers' head sizes: one KV head, 8 query heads
    attn = sum(e * 8 * hd + 2 * e * hd + 8 * hd * e + 2 * hd for hd in [swa if k == "sliding_attention" else full
                                                                         for k in E2B["layer_types"]])  # fmt: skip
    mlp = sum(3 * e * ff for ff in arch.ffn_size)
    norms = 35 * (4 * e + 1)  # input, post-attention, pre- and post-feed-forward norms, layer_output_scale
    ple = 35 * (e * pl + pl * e + e)  # per_layer inp_gate, proj, post_norm
    globals_ = v * e + v * 35 * pl + e * 35 * pl + pl + e  # token_embd, per_layer_token_embd, model_proj, norms
    rope = 512 // 2
    assert attn + mlp + norms + ple + globals_ + rope == 4_647_450_147
    assert {row["model_n_params_api"] for row in E2B_ROWS} == {4_647_450_147}
    weights = weight_bytes(arch, FileType.Q4_K_M)
    q4 = next(row for row in E2B_ROWS if row["quant"] == "Q4_K_M")
    assert weights.tensor_bytes == q4["model_size_api_bytes"]
