"""The family registry (calc/families/): every architecture answers from one module, and names map as llama.cpp's
converter and loader map them."""

from __future__ import annotations

import pytest

from vramfit.calc.architecture import Architecture
from vramfit.calc.errors import UnsupportedArchitectureError
from vramfit.calc.families import BY_ARCH, BY_MODEL_TYPE, FAMILIES, family_for_model_type, family_of
from vramfit.calc.families.family import Family
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.tensors import gguf_tensors


def test_one_family_per_architecture_and_model_type() -> None:
    assert len(BY_ARCH) == len(FAMILIES)
    assert sum(len(family.model_types) for family in FAMILIES) == len(BY_MODEL_TYPE)


@pytest.mark.parametrize("family", FAMILIES, ids=[family.arch for family in FAMILIES])
def test_each_family_names_what_it_mirrors(family: Family) -> None:
    mirrors = family.mirrors
    assert "src/models/" in mirrors and "0c1e57098" in mirrors, mirrors
    assert type(family).__module__.startswith("vramfit.calc.families.")


# config.json model_type → general.architecture, as llama.cpp's converter registers them (conversion/*.py at 0c1e57098).
CONVERTED = [
    ("mistral", "llama"), ("mixtral", "llama"), ("ministral3", "llama"), ("qwen2_moe", "qwen2moe"),
    ("gemma3_text", "gemma3"), ("kimi_k25", "deepseek2"), ("deepseek_v32", "deepseek32"), ("glm_moe_dsa", "glm-dsa"),
    ("cohere", "command-r"), ("gpt_oss", "gpt-oss"), ("granitemoehybrid", "granitehybrid"), ("qwen3_5_moe_text",
    "qwen35moe"), ("minimax_m2", "minimax-m2"), ("llama4_text", "llama4"), ("deepseek_v4", "deepseek4"),
]  # fmt: skip


@pytest.mark.parametrize(("model_type", "arch"), CONVERTED)
def test_model_types_convert_as_llama_cpp_does(model_type: str, arch: str) -> None:
    assert family_for_model_type(model_type, {}).arch == arch


def test_nemotron_h_with_experts_is_its_moe_architecture() -> None:
    # NemotronHModel.__init__: has_moe_params = "num_experts_per_tok" in llm_config
    assert family_for_model_type("nemotron_h", {"num_experts_per_tok": 6}).arch == "nemotron_h_moe"
    assert family_for_model_type("nemotron_h", {}).arch == "nemotron_h"


# llama_hparams::set_swa_pattern's n_pattern per architecture (src/models/<arch>.cpp load_arch_hparams at 0c1e57098);
# Mistral and Phi-3 name a window that llama.cpp ignores.
SWA = {"gemma2": 2, "gemma3": 6, "gemma3n": 5, "gemma4": 6, "cohere2": 4, "gpt-oss": 2, "exaone4": 4, "llama4": 4}


@pytest.mark.parametrize("family", FAMILIES, ids=[family.arch for family in FAMILIES])
def test_sliding_window_patterns(family: Family) -> None:
    assert family.swa_pattern == SWA.get(family.arch, 0)


@pytest.mark.parametrize("name", ["falcon", "rwkv7", ""])
def test_an_unknown_architecture_is_refused_by_the_registry(name: str) -> None:
    with pytest.raises(UnsupportedArchitectureError) as caught:
        family_of(name)
    assert caught.value.details["field"] == "general.architecture"
    assert "llama" in str(caught.value.details["supported"]).split(", ")


def test_an_unknown_model_type_lists_the_model_types() -> None:
    with pytest.raises(UnsupportedArchitectureError) as caught:
        from_hf_config({"model_type": "falcon_mamba", "num_hidden_layers": 2})
    supported = str(caught.value.details["supported"]).split(", ")
    assert "mixtral" in supported and "kimi_k25" in supported and "nemotron_h_moe" not in supported


def test_a_family_refusing_a_variant_lists_what_is_modelled() -> None:
    config = {"model_type": "lfm2", "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
              "vocab_size": 100, "layer_types": ["conv", "full_attention", "conv", "full_attention"],
              "conv_L_cache": 3, "block_ff_dim": 128, "num_experts": 8, "num_experts_per_tok": 2}  # fmt: skip
    with pytest.raises(UnsupportedArchitectureError) as caught:
        from_hf_config(config)
    assert caught.value.details["subject"] == "lfm2 with experts"
    assert "lfm2" in str(caught.value.details["supported"]).split(", ")


def test_a_hand_built_architecture_of_no_family_has_no_tensors() -> None:
    shape = Architecture(
        arch="falcon", n_layers=1, hidden_size=8, n_heads=(2,), n_kv_heads=(1,), head_dim_k=4, head_dim_v=4,
        ffn_size=(16,), vocab_size=10,
    )  # fmt: skip
    with pytest.raises(UnsupportedArchitectureError):
        gguf_tensors(shape)
