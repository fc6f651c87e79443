"""Granite 4.0 H Tiny and Small (granitemoehybrid with experts; llama.cpp's granitehybrid): 36 Mamba2 layers and 4
NoPE attention layers, every layer with 64 (72) routed experts beside a shared one. KV cache, recurrent state and
parameters worked out here from the committed configs; the tensors listed by hand from llama.cpp's loader
(src/models/granite-hybrid.cpp at 0c1e57098) are the ones llama.cpp loaded from the measured Tiny."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from tests.bot.cli_json import answer as ask
from tests.groundtruth import DATA, MIB, llamacpp_rows
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.tensors import gguf_tensors

# Every measured row is also checked with the others: KV and recurrent state (tests/calc/test_kv.py), the files
# (tests/calc/test_quant.py).
ROWS = [row for row in llamacpp_rows() if row["arch_model"] == "granite-4.0-h-tiny"]


def _config(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / "configs" / f"{name}.json").read_text(encoding="utf-8"))
    return data


def _by_hand(c: dict[str, Any], context: int) -> tuple[int, int]:
    """f16 KV of the attention layers (K and V of kv_heads × hidden / heads), and the Mamba2 layers' f32 state for one
    sequence: (d_conv − 1) × (d_inner + 2 × groups × d_state) + d_state × d_inner, d_inner = expand × hidden."""
    attention = c["layer_types"].count("attention")
    head = c["hidden_size"] // c["num_attention_heads"]
    kv = attention * context * 2 * c["num_key_value_heads"] * head * 2
    inner, state, groups = c["mamba_expand"] * c["hidden_size"], c["mamba_d_state"], c["mamba_n_groups"]
    per_layer = (c["mamba_d_conv"] - 1) * (inner + 2 * groups * state) + state * inner
    return kv, (c["num_hidden_layers"] - attention) * per_layer * 4


# question → (language, preset, context)
QUESTIONS = {
    "granite 4.0 h tiny 32k on a 3060": ("en", "granite-4.0-h-tiny", 32768),
    "그래니트 4 타이니 32k 3060에서 돌아가?": ("ko", "granite-4.0-h-tiny", 32768),
    "granite 4.0 h small 32k on a 4090": ("en", "granite-4.0-h-small", 32768),
    "그래니트 4 스몰 8k 4090": ("ko", "granite-4.0-h-small", 8192),
}


@pytest.mark.parametrize("question", QUESTIONS)
def test_kv_in_four_layers_state_in_the_rest(question: str) -> None:
    lang, name, context = QUESTIONS[question]
    answer = ask(question, lang)
    assert answer["request"]["model"]["id"] == name
    kv, state = _by_hand(_config(name), context)
    assert (answer["estimate"]["kv_cache_bytes"], answer["estimate"]["recurrent_state_bytes"]) == (kv, state)


def test_the_hand_count_is_llama_cpps() -> None:
    # llama.cpp's log lines for the Tiny: 32.00 MiB of KV at 4,096 tokens, 55.37 MiB of state per sequence.
    kv, state = _by_hand(_config("granite-4.0-h-tiny"), 4096)
    assert (kv, round(state / MIB, 2)) == (32 * MIB, 55.37)


def _tensors_by_hand(c: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """llama_model_granite_hybrid::load_arch_tensors with experts, ggml order (row length first)."""
    e, v, ff, sh = c["hidden_size"], c["vocab_size"], c["intermediate_size"], c["shared_intermediate_size"]
    ne = c["num_local_experts"]
    inner, state, groups, heads = c["mamba_expand"] * e, c["mamba_d_state"], c["mamba_n_groups"], c["mamba_n_heads"]
    conv, kv = inner + 2 * groups * state, c["num_key_value_heads"] * e // c["num_attention_heads"]
    out: dict[str, tuple[int, ...]] = {"token_embd.weight": (e, v), "output_norm.weight": (e,)}  # tied
    for il, kind in enumerate(c["layer_types"]):
        out |= {
            f"blk.{il}.attn_norm.weight": (e,), f"blk.{il}.ffn_norm.weight": (e,),
            f"blk.{il}.ffn_gate_inp.weight": (e, ne), f"blk.{il}.ffn_gate_exps.weight": (e, ff, ne),
            f"blk.{il}.ffn_up_exps.weight": (e, ff, ne), f"blk.{il}.ffn_down_exps.weight": (ff, e, ne),
            f"blk.{il}.ffn_gate_shexp.weight": (e, sh), f"blk.{il}.ffn_up_shexp.weight": (e, sh),
            f"blk.{il}.ffn_down_shexp.weight": (sh, e),
        }  # fmt: skip
        if kind == "mamba":
            out |= {
                f"blk.{il}.ssm_in.weight": (e, 2 * inner + 2 * groups * state + heads),
                f"blk.{il}.ssm_conv1d.weight": (c["mamba_d_conv"], conv), f"blk.{il}.ssm_conv1d.bias": (conv,),
                f"blk.{il}.ssm_dt.bias": (heads,), f"blk.{il}.ssm_a": (1, heads), f"blk.{il}.ssm_d": (1, heads),
                f"blk.{il}.ssm_norm.weight": (inner // groups, groups), f"blk.{il}.ssm_out.weight": (inner, e),
            }  # fmt: skip
        else:
            out |= {
                f"blk.{il}.attn_q.weight": (e, e), f"blk.{il}.attn_k.weight": (e, kv),
                f"blk.{il}.attn_v.weight": (e, kv), f"blk.{il}.attn_output.weight": (e, e),
            }  # fmt: skip
    return out


def test_the_tensors_are_the_loaders_and_llama_cpp_loaded_as_many() -> None:
    c = _config("granite-4.0-h-tiny")
    by_hand = _tensors_by_hand(c)
    assert {s.name: s.shape for s in gguf_tensors(from_hf_config(c))} == by_hand
    assert len(by_hand) == 2 + 40 * 9 + 36 * 8 + 4 * 4 == 666
    assert len(ROWS) == 13
    for row in ROWS:
        assert row["gguf_tensor_facts"]["n_tensors"] == len(by_hand)
        assert row["model_n_params_api"] == sum(int(np.prod(shape)) for shape in by_hand.values()) == 6_939_037_248
