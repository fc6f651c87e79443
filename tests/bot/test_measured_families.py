"""The families measured with llama.cpp on 2026-12-01, asked through the CLI in English and Korean: the KV cache is
worked out here from the committed config.json by llama.cpp's rules, not taken from the calculator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.bot.test_new_architectures import PRESET_CONFIGS, _answer, _config
from tests.groundtruth import GIB

CONTEXT = 32768
F16 = 2  # bytes per cached value (the default KV type)
UBATCH = 512  # llama.cpp's default n_ubatch


def _full_attention(c: dict[str, Any], context: int) -> int:
    """Every layer caches K and V of num_key_value_heads × head_dim for each token (llama_kv_cache)."""
    head = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    return c["num_hidden_layers"] * context * 2 * c["num_key_value_heads"] * head * F16


def _mla(c: dict[str, Any], context: int) -> int:
    """DeepSeek MLA: one latent of kv_lora_rank plus the rope part of the key per token and layer, and no V."""
    return c["num_hidden_layers"] * context * (c["kv_lora_rank"] + c["qk_rope_head_dim"]) * F16


def _sliding_and_full(c: dict[str, Any], context: int) -> int:
    """llama_kv_cache_iswa: full layers hold the context; sliding layers GGML_PAD(min(n_ctx, n_swa + n_ubatch), 256)
    cells (one sequence, unified)."""
    per_token = 2 * c["num_key_value_heads"] * c["head_dim"] * F16
    kinds = c["layer_types"][: c["num_hidden_layers"]]
    window_cells = -(-min(context, c["sliding_window"] + UBATCH) // 256) * 256
    full = kinds.count("full_attention") * context * per_token
    return full + kinds.count("sliding_attention") * window_cells * per_token


KvRule = Callable[[dict[str, Any], int], int]

QUESTIONS: list[tuple[str, str, str, KvRule, float]] = [
    # 36 layers x 32,768 x 2 x 4 KV heads x 128 x 2 B; the NoPE layers cache like the others
    ("smollm3 32k on a 3060", "en", "smollm3-3b", _full_attention, 2.25),
    ("스몰lm3 32k 3060에서 돌아가?", "ko", "smollm3-3b", _full_attention, 2.25),
]


@pytest.mark.parametrize(("question", "lang", "preset_id", "rule", "gib"), QUESTIONS)
def test_the_kv_cache_of_a_measured_family_follows_llama_cpp(
    question: str, lang: str, preset_id: str, rule: KvRule, gib: float
) -> None:
    answer = _answer(question, lang)
    assert answer["request"]["model"]["id"] == preset_id
    assert answer["request"]["context"] == CONTEXT
    kv = rule(_config(PRESET_CONFIGS[preset_id]), CONTEXT)
    assert answer["estimate"]["kv_cache_bytes"] == kv == round(gib * GIB)

