"""A model the calculator cannot model is an error, never a number from another architecture's layout."""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path
from typing import Any

import pytest

from tests.bot.test_hostile_files import LLAMA, _gguf, _kv, _s
from vramfit.bot.cli import EXIT_ERROR, run
from vramfit.calc.architecture import Architecture
from vramfit.calc.errors import BadFileError, UnsupportedArchitectureError
from vramfit.calc.families import SUPPORTED_ARCHS
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.tensors import gguf_tensors

# Llama 4 Scout's config.json numbers (meta-llama/Llama-4-Scout-17B-16E-Instruct): MoE with a shared expert and chunked
# attention, which a dense Llama layout would size as a 5 B model. Llama 4 is modelled now (tests/bot/test_llama4.py);
# the same numbers under a model_type the calculator does not know stand for the next such release.
LLAMA4_SCOUT = {
    "_name_or_path": "meta-llama/Llama-4-Scout-17B-16E-Instruct", "model_type": "llama4",
    "text_config": {"model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192,
                    "intermediate_size_mlp": 16384, "num_hidden_layers": 48, "num_attention_heads": 40,
                    "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 202048, "num_local_experts": 16,
                    "num_experts_per_tok": 1, "attention_chunk_size": 8192, "max_position_embeddings": 10485760},
}  # fmt: skip
NEXT_LLAMA = {
    **LLAMA4_SCOUT,
    "model_type": "llama5",
    "text_config": {**LLAMA4_SCOUT["text_config"], "model_type": "llama5_text"},  # type: ignore[dict-item]
}

UNSUPPORTED = [
    ("jamba", {**LLAMA, "model_type": "jamba"}),  # Mamba + attention + experts, not modelled
    ("mamba2", {**LLAMA, "model_type": "mamba2"}),
    ("llama5_text", NEXT_LLAMA),
    ("whatever", {**LLAMA, "model_type": "whatever"}),
]


@pytest.mark.parametrize(("name", "config"), UNSUPPORTED, ids=[u[0] for u in UNSUPPORTED])
def test_an_unknown_model_type_is_refused_by_name(name: str, config: dict[str, Any]) -> None:
    with pytest.raises(UnsupportedArchitectureError) as caught:
        from_hf_config(config)
    assert caught.value.code == "unsupported_architecture"
    assert caught.value.details["subject"] == name
    assert "llama" in str(caught.value.details["supported"])


def test_a_config_without_model_type_is_refused() -> None:
    with pytest.raises(BadFileError, match="model_type"):
        from_hf_config({k: v for k, v in LLAMA.items() if k != "model_type"})


@pytest.mark.parametrize(("heads", "kv_heads"), [(8, 3), (8, 16), (40, 6)])
def test_heads_that_cannot_share_kv_heads_evenly_are_refused(heads: int, kv_heads: int) -> None:
    with pytest.raises(BadFileError, match="KV heads") as caught:
        from_hf_config({**LLAMA, "num_attention_heads": heads, "num_key_value_heads": kv_heads})
    assert caught.value.details["field"] == "num_key_value_heads"


def test_an_architecture_built_by_hand_gets_no_borrowed_layout() -> None:
    arch = from_hf_config(LLAMA).model_copy(update={"arch": "rwkv7"})
    assert isinstance(arch, Architecture)
    with pytest.raises(UnsupportedArchitectureError):
        gguf_tensors(arch)


# What the hybrid architectures need besides a Llama config: which layers are recurrent and their state sizes.
GATED_DELTANET = {
    "full_attention_interval": 4,
    "linear_num_key_heads": 4,
    "linear_num_value_heads": 8,
    "linear_key_head_dim": 32,
    "linear_value_head_dim": 32,
    "linear_conv_kernel_dim": 4,
}
HYBRID_KEYS: dict[str, dict[str, Any]] = {
    "qwen35": GATED_DELTANET,
    "qwen35moe": {
        **GATED_DELTANET,
        "num_experts": 8,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 64,
        "shared_expert_intermediate_size": 64,
    },
    "qwen3next": {
        **GATED_DELTANET,
        "num_experts": 8,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 64,
        "shared_expert_intermediate_size": 64,
    },
    "granitehybrid": {
        "layer_types": ["mamba", "attention"] * 2,
        "mamba_n_heads": 8,
        "mamba_d_head": 16,
        "mamba_d_state": 16,
        "mamba_d_conv": 4,
    },
    "lfm2": {"layer_types": ["conv", "full_attention"] * 2, "conv_L_cache": 3},
    # LFM2-MoE: LFM2's layers, one leading dense block, then experts (the converter reads num_dense_layers).
    "lfm2moe": {
        "layer_types": ["conv", "full_attention"] * 2, "conv_L_cache": 3, "num_dense_layers": 1, "num_experts": 4,
        "num_experts_per_tok": 2, "moe_intermediate_size": 64,
    },
}
# Nemotron-H its pattern of Mamba2 ('M'), attention ('*') and FFN ('-', or 'E' for experts) blocks, and the Mamba2
# sizes as NemotronHModel reads them.
NEMOTRON_H_MAMBA = {"mamba_num_heads": 8, "mamba_head_dim": 32, "ssm_state_size": 16, "n_groups": 2, "conv_kernel": 4}
# Gemma 4 needs its layer kinds as well (sliding layers have their own head size); GLM-4.5 and MiniMax M2 their
# experts (llama.cpp's glm4moe loader asserts n_expert > 0; every minimax-m2 block is a MoE block), Llama 4 too
# ("cannot have zero experts"); DeepSeek V3.2 its MLA and indexer, GLM-5 those and its experts, DeepSeek V4 its
# compress_ratios, hyper-connections, grouped output and experts.
LAYER_KEYS: dict[str, dict[str, Any]] = {
    **HYBRID_KEYS,
    "falcon-h1": {"mamba_d_ssm": 256, "mamba_d_head": 32, "mamba_n_groups": 1},  # Mamba2 beside attention everywhere
    "llama4": {"num_local_experts": 4, "num_experts_per_tok": 1, "intermediate_size_mlp": 256},
    "deepseek32": {"kv_lora_rank": 64, "q_lora_rank": 96, "index_n_heads": 4, "index_head_dim": 32},
    "glm-dsa": {"kv_lora_rank": 64, "q_lora_rank": 96, "index_n_heads": 4, "index_head_dim": 32,
                "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 64},
    "deepseek4": {"head_dim": 64, "q_lora_rank": 96, "index_n_heads": 4, "index_head_dim": 32, "n_routed_experts": 8,
                  "num_experts_per_tok": 2, "moe_intermediate_size": 64, "n_shared_experts": 1, "o_groups": 2,
                  "o_lora_rank": 32, "hc_mult": 4, "num_hash_layers": 1, "sliding_window": 128,
                  "compress_ratios": [0, 4, 128, 4, 0]},
    "glm4moe": {"n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 64, "n_shared_experts": 1},
    "minimax-m2": {"num_local_experts": 8, "num_experts_per_tok": 2},
    "nemotron_h": NEMOTRON_H_MAMBA | {"hybrid_override_pattern": "M*-M"},
    "nemotron_h_moe": NEMOTRON_H_MAMBA
    | {
        "hybrid_override_pattern": "M*EM",
        "n_routed_experts": 8,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 64,
        "moe_shared_expert_intermediate_size": 128,
        "n_shared_experts": 1,
    },
    "gemma4": {
        "layer_types": ["sliding_attention", "full_attention"] * 2,
        "sliding_window": 512,
        "global_head_dim": 128,
        "head_dim": 64,
    },
}


def test_every_supported_architecture_has_a_layout() -> None:
    for name in sorted(SUPPORTED_ARCHS):
        config = {**LLAMA, "num_hidden_layers": 4, "llama_arch": name, **LAYER_KEYS.get(name, {})}
        assert gguf_tensors(from_hf_config(config))  # no error, some tensors


@pytest.mark.parametrize("name", sorted(HYBRID_KEYS))
def test_a_hybrid_config_without_its_layer_kinds_is_refused(name: str) -> None:
    keys = {k: v for k, v in HYBRID_KEYS[name].items() if k not in ("layer_types", "full_attention_interval")}
    config = {**LLAMA, "num_hidden_layers": 4, "llama_arch": name, **keys}
    if name.startswith("qwen3"):  # the interval defaults to 4 (as in Qwen3-Next); one leaving no attention is refused
        config["full_attention_interval"] = 5
    with pytest.raises(BadFileError) as caught:
        from_hf_config(config)
    assert caught.value.details["field"] == "layer_types"


def test_the_cli_answers_an_unknown_llama_config_with_an_error_and_presets(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(NEXT_LLAMA))
    out = io.StringIO()
    assert run(["--json", "--config", str(path)], out) == EXIT_ERROR
    error = json.loads(out.getvalue())["error"]
    assert error["code"] == "unsupported_architecture"
    assert "llama5_text" in error["message"] and "qwen3" in error["message"]  # names it, and what is modelled
    assert error["suggestions"] and all(s.startswith("llama") for s in error["suggestions"])
    out = io.StringIO()
    assert run(["--config", str(path), "--lang", "ko"], out) == EXIT_ERROR
    assert "아직" in out.getvalue() and "Traceback" not in out.getvalue()


def test_a_gguf_of_an_unknown_architecture_is_refused(tmp_path: Path) -> None:
    u32 = 4
    kvs = [_kv("general.architecture", 8, _s("jamba"))] + [
        _kv(f"jamba.{key}", u32, struct.pack("<I", value))
        for key, value in (("block_count", 2), ("embedding_length", 512), ("attention.head_count", 8),
                           ("vocab_size", 2048))
    ]  # fmt: skip
    path = tmp_path / "model.gguf"
    path.write_bytes(_gguf(*kvs))
    out = io.StringIO()
    assert run(["--json", "--gguf", str(path)], out) == EXIT_ERROR
    assert json.loads(out.getvalue())["error"]["code"] == "unsupported_architecture"
