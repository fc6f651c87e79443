"""Nemotron-H (llama.cpp nemotron_h / nemotron_h_moe): questions in both languages get the KV cache of the attention
layers alone and a Mamba2 state per user, both worked out here from the config.json's hybrid_override_pattern;
broken configs are errors; a GGUF header gives back the architecture its config gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gguf import GGUFWriter

from tests.bot.cli_json import answer as ask
from tests.bot.cli_json import refused_config
from tests.bot.test_new_architectures import PRESET_CONFIGS, _config
from tests.calc.test_gguf import _write_zero_tensors
from tests.groundtruth import MIB
from vramfit.calc.file_types import FileType
from vramfit.calc.gguf import architecture_from_gguf, read_gguf, weights_from_gguf
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.tensors import count_params, gguf_tensors
from vramfit.calc.weights import weight_bytes

PRESET = "nemotron-3-nano-30b-a3b"
FILE = PRESET_CONFIGS[PRESET]  # NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json, verbatim


def _kv_by_hand(context: int, users: int = 1) -> int:
    """K and V (f16) of num_key_value_heads × head_dim per token, in the '*' layers only: 'M' layers hold a state
    instead and 'E' layers (experts) hold nothing."""
    c = _config(FILE)
    attention = c["hybrid_override_pattern"].count("*")
    return attention * context * users * 2 * c["num_key_value_heads"] * c["head_dim"] * 2


def _state_by_hand(users: int = 1) -> int:
    """Mamba2's conv state ((conv_kernel − 1) × (d_inner + 2 × n_groups × ssm_state_size)) and SSM state
    (ssm_state_size × d_inner), f32, per 'M' layer and user; d_inner = mamba_num_heads × mamba_head_dim."""
    c = _config(FILE)
    inner = c["mamba_num_heads"] * c["mamba_head_dim"]
    conv = (c["conv_kernel"] - 1) * (inner + 2 * c["n_groups"] * c["ssm_state_size"])
    ssm = c["ssm_state_size"] * inner
    return c["hybrid_override_pattern"].count("M") * users * 4 * (conv + ssm)


@pytest.mark.parametrize(
    ("question", "lang", "context", "kv_mib"),
    [
        ("nemotron 3 nano 32k 4090", "en", 32768, 192),  # 6 attention layers × 32,768 × 2 × 2 KV heads × 128 × 2 B
        ("네모트론 3 나노 32k 4090에서 돌아가?", "ko", 32768, 192),
        ("nemotron nano 3 30b 128k on a 5090", "en", 131072, 768),
        ("nemotron-3-nano:30b 4k", "en", 4096, 24),
        ("네모트론 128k 3090 두 장", "ko", 131072, 768),
    ],
)
def test_nemotron_3_nano_caches_kv_in_six_layers_and_mamba_state_in_23(
    question: str, lang: str, context: int, kv_mib: int
) -> None:
    answer = ask(question, lang)
    assert answer["request"]["model"]["id"] == PRESET
    estimate = answer["estimate"]
    assert estimate["kv_cache_bytes"] == _kv_by_hand(context) == kv_mib * MIB
    # 23 × 4 × (3 × (4096 + 2 × 8 × 128) + 128 × 4096) = 49,930,240 B (47.6 MiB), whatever the context.
    assert estimate["recurrent_state_bytes"] == _state_by_hand() == 49_930_240


def test_the_mamba_state_grows_with_users_not_with_context() -> None:
    short, long = ask("nemotron 3 nano 4k"), ask("nemotron 3 nano 128k")
    assert short["estimate"]["kv_cache_bytes"] * 32 == long["estimate"]["kv_cache_bytes"]
    assert short["estimate"]["recurrent_state_bytes"] == long["estimate"]["recurrent_state_bytes"] == _state_by_hand()
    four = ask("nemotron 3 nano 32k for 4 users")
    assert four["estimate"]["recurrent_state_bytes"] == _state_by_hand(4) == 4 * 49_930_240
    assert four["estimate"]["kv_cache_bytes"] == _kv_by_hand(32768, 4)


def test_the_layers_follow_the_pattern_letter_by_letter() -> None:
    c = _config(FILE)
    arch = from_hf_config(c)
    pattern = c["hybrid_override_pattern"]
    assert arch.arch == "nemotron_h_moe"  # num_experts_per_tok is in the config (NemotronHModel.__init__)
    assert [il for il, kind in enumerate(pattern) if kind == "*"] == [il for il, h in enumerate(arch.n_kv_heads) if h]
    assert [kind == "M" for kind in pattern] == list(arch.recurrent_layers)
    assert [kind == "E" for kind in pattern] == list(arch.moe_layers)
    names = {t.name for t in gguf_tensors(arch)}
    # Each block has attn_norm and one mixer: 9 tensors for Mamba2, 5 for attention, 7 for experts; plus 3 outside.
    counts = {kind: pattern.count(kind) for kind in "M*E"}
    assert len(names) == 3 + 9 * counts["M"] + 5 * counts["*"] + 7 * counts["E"] == 401
    assert {"blk.0.ssm_in.weight", "blk.1.ffn_up_exps.weight", "blk.1.ffn_up_shexp.weight", "blk.1.exp_probs_b.bias",
            "blk.5.attn_k.weight"} <= names  # fmt: skip
    assert not any("ffn_gate" in n and "ffn_gate_inp" not in n for n in names)  # relu² experts have no gate
    assert "blk.0.ffn_norm.weight" not in names and "blk.5.ssm_in.weight" not in names
    assert round(count_params(arch) / 1e8) == 316  # "31.6B total parameters" on the model card


def _nano(**changes: Any) -> dict[str, Any]:
    return {**_config(FILE), **changes}


@pytest.mark.parametrize(
    ("config", "field"),
    [
        (_nano(hybrid_override_pattern="MEMEM*E"), "hybrid_override_pattern"),  # 7 letters for 52 layers
        (_nano(num_hidden_layers=51), "hybrid_override_pattern"),
        (_nano(hybrid_override_pattern=_config(FILE)["hybrid_override_pattern"].replace("E", "-", 1)),
         "hybrid_override_pattern"),  # a dense MLP letter in the MoE model: llama.cpp would load it as a Mamba2 block
        (_nano(hybrid_override_pattern=None), "hybrid_override_pattern"),
        (_nano(mamba_num_heads=0), "mamba_num_heads"),
        (_nano(mamba_num_heads=60), "mamba_num_heads"),  # 60 heads cannot form 8 groups
        (_nano(n_routed_experts=0), "n_routed_experts"),
        (_nano(moe_shared_expert_intermediate_size=None), "moe_shared_expert_intermediate_size"),
    ],
)  # fmt: skip
def test_a_broken_nemotron_config_is_a_bad_config(tmp_path: Path, config: dict[str, Any], field: str) -> None:
    error = refused_config(config, tmp_path)
    assert error["code"] == "bad_config"
    assert field in error["message"]


@pytest.mark.parametrize("key", ["moe_latent_size", "num_nextn_predict_layers"])
def test_nemotron_3_super_parts_are_refused_not_guessed(tmp_path: Path, key: str) -> None:
    # Nemotron 3 Super's latent experts (ffn_latent_down/up) and MTP head are not modelled.
    config = _nano(**{key: 1024 if key == "moe_latent_size" else 1})
    assert refused_config(config, tmp_path)["code"] == "unsupported_architecture"


# Tiny Nemotron-H configs in config.json's keys, and the keys NemotronHModel writes for them (conversion/nemotron.py
# at llama.cpp 0c1e57098): per-layer head_count_kv and feed_forward_length, ssm.*, the expert numbers.
MAMBA = {"mamba_num_heads": 8, "mamba_head_dim": 32, "ssm_state_size": 16, "n_groups": 2, "conv_kernel": 4}
TINY = {"model_type": "nemotron_h", "hidden_size": 256, "num_hidden_layers": 5, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 1024, "intermediate_size": 512,
        "tie_word_embeddings": False, **MAMBA}  # fmt: skip
TINY_CONFIGS: dict[str, dict[str, Any]] = {
    "nemotron_h": {**TINY, "hybrid_override_pattern": "M-*-M"},
    "nemotron_h_moe": {**TINY, "hybrid_override_pattern": "ME*EM", "n_routed_experts": 8, "num_experts_per_tok": 2,
                       "moe_intermediate_size": 128, "moe_shared_expert_intermediate_size": 256,
                       "n_shared_experts": 1},
}  # fmt: skip


def _write_nemotron_gguf(path: Path, name: str) -> None:
    c = TINY_CONFIGS[name]
    pattern, moe = str(c["hybrid_override_pattern"]), name == "nemotron_h_moe"
    width = c["moe_intermediate_size"] if moe else c["intermediate_size"]
    writer = GGUFWriter(str(path), arch=name)
    a = f"{name}."
    for key, value in (("block_count", c["num_hidden_layers"]), ("embedding_length", c["hidden_size"]),
                       ("attention.head_count", c["num_attention_heads"]), ("context_length", 1 << 20),
                       ("vocab_size", c["vocab_size"]), ("attention.key_length", c["head_dim"]),
                       ("attention.value_length", c["head_dim"]), ("ssm.conv_kernel", c["conv_kernel"]),
                       ("ssm.state_size", c["ssm_state_size"]), ("ssm.group_count", c["n_groups"]),
                       ("ssm.inner_size", c["mamba_num_heads"] * c["mamba_head_dim"]),
                       ("ssm.time_step_rank", c["mamba_num_heads"])):  # fmt: skip
        writer.add_uint32(a + key, value)
    writer.add_array(a + "attention.head_count_kv", [c["num_key_value_heads"] if k == "*" else 0 for k in pattern])
    writer.add_array(a + "feed_forward_length", [width if k in "E-" else 0 for k in pattern])
    if moe:
        shared = c["moe_shared_expert_intermediate_size"]
        for key, value in (("expert_count", c["n_routed_experts"]), ("expert_used_count", c["num_experts_per_tok"]),
                           ("expert_feed_forward_length", width), ("expert_shared_count", c["n_shared_experts"]),
                           ("expert_shared_feed_forward_length", shared)):  # fmt: skip
            writer.add_uint32(a + key, value)
    writer.add_token_list([f"t{i}" for i in range(1024)])
    _write_zero_tensors(writer, from_hf_config(c), FileType.Q8_0)


@pytest.mark.parametrize("name", sorted(TINY_CONFIGS))
def test_a_nemotron_gguf_header_gives_the_architecture_its_config_gives(tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.gguf"
    _write_nemotron_gguf(path, name)
    header = read_gguf(path)
    from_file, from_config = architecture_from_gguf(header), from_hf_config(TINY_CONFIGS[name])
    assert from_config.arch == name
    memory_fields = ("arch", "n_layers", "n_heads", "n_kv_heads", "head_dim_k", "ffn_size", "vocab_size",
                     "recurrent_layers", "ssm_conv_kernel", "ssm_inner_size", "ssm_state_size", "ssm_groups",
                     "ssm_heads", "tied_embeddings", "n_experts", "n_experts_used", "expert_ffn_size",
                     "shared_expert_ffn_size", "moe_layers", "attention_bias")  # fmt: skip
    assert {f: getattr(from_file, f) for f in memory_fields} == {f: getattr(from_config, f) for f in memory_fields}
    assert from_file.kv_layers == 1 and from_file.recurrent_layer_count == 2
    weights = weights_from_gguf(from_file, header)
    assert weights.tensor_bytes == weight_bytes(from_config, FileType.Q8_0).tensor_bytes
    dense = {t.name for t in gguf_tensors(from_config) if t.name.startswith("blk.1.")}
    expected = (
        {"blk.1.attn_norm.weight", "blk.1.ffn_up.weight", "blk.1.ffn_down.weight"}
        if name == "nemotron_h"  # relu² MLP: up and down, no gate
        else {"blk.1.attn_norm.weight", "blk.1.ffn_gate_inp.weight", "blk.1.exp_probs_b.bias",
              "blk.1.ffn_up_exps.weight", "blk.1.ffn_down_exps.weight", "blk.1.ffn_up_shexp.weight",
              "blk.1.ffn_down_shexp.weight"}
    )  # fmt: skip
    assert dense == expected
