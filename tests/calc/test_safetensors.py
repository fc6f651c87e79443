"""calc.safetensors: a checkpoint's tensors added up under its config.json's quantization, and the weights vLLM holds
of it (calc.checkpoints.measured_checkpoint_weights)."""

from __future__ import annotations

from typing import Any

import pytest

from vramfit.calc.checkpoints import measured_checkpoint_weights
from vramfit.calc.errors import BadFileError, UnknownQuantError
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.safetensors import SafetensorsTensor, checkpoint_from_safetensors

SIZE = {"BF16": 2, "F32": 4, "U8": 1, "I32": 4, "F8_E4M3": 1, "F16": 2}


def _t(name: str, dtype: str, *shape: int) -> SafetensorsTensor:
    n = 1
    for d in shape:
        n *= d
    return SafetensorsTensor(name=name, dtype=dtype, shape=shape, nbytes=n * SIZE[dtype])


def _compressed(num_bits: int, kind: str) -> dict[str, Any]:
    group = {"weights": {"num_bits": num_bits, "type": kind}, "targets": ["Linear"]}
    return {"quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"group_0": group}}}


@pytest.mark.parametrize(
    ("config", "file_type"),
    [
        ({}, "BF16"),
        ({"torch_dtype": "float16"}, "F16"),
        ({"quantization_config": {"quant_method": "fp8"}}, "FP8"),
        ({"quantization_config": {"quant_method": "gptq", "bits": 4}}, "INT4"),
        ({"quantization_config": {"quant_method": "gptq", "bits": 8}}, "INT8"),
        ({"quantization_config": {"quant_method": "mxfp4"}}, "MXFP4_MOE"),
        (_compressed(8, "float"), "FP8"),
        (_compressed(8, "int"), "INT8"),
        (_compressed(4, "int"), "INT4"),
    ],
)
def test_the_format_is_the_quantization_config_s(config: dict[str, Any], file_type: str) -> None:
    checkpoint = checkpoint_from_safetensors([_t("model.norm.weight", "BF16", 8)], config)
    assert checkpoint.file_type == file_type


@pytest.mark.parametrize(
    "config",
    [
        {"quantization_config": {"quant_method": "gptq", "bits": 3}},
        {"quantization_config": {"quant_method": "bitsandbytes"}},
        _compressed(4, "float"),  # NVFP4: not modelled
    ],
)
def test_formats_vramfit_does_not_model_are_errors(config: dict[str, Any]) -> None:
    with pytest.raises(UnknownQuantError):
        checkpoint_from_safetensors([_t("model.norm.weight", "BF16", 8)], config)


def test_a_header_whose_bytes_disagree_with_its_shape_is_refused() -> None:
    bad = SafetensorsTensor(name="x.weight", dtype="BF16", shape=(4, 4), nbytes=31)
    with pytest.raises(BadFileError, match="31 bytes"):
        checkpoint_from_safetensors([bad], {})
    with pytest.raises(BadFileError, match="dtype"):
        checkpoint_from_safetensors([SafetensorsTensor(name="x", dtype="Q9", shape=(1,), nbytes=1)], {})


GPT_OSS = {
    "model_type": "gpt_oss", "hidden_size": 64, "intermediate_size": 2880, "num_hidden_layers": 1,
    "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 16, "vocab_size": 128, "num_local_experts": 2,
    "num_experts_per_tok": 1, "max_position_embeddings": 1024, "sliding_window": 128,
    "layer_types": ["sliding_attention"], "quantization_config": {"quant_method": "mxfp4"},
}  # fmt: skip


def test_mxfp4_blocks_hold_two_weights_a_byte_and_vllm_pads_the_expert_width() -> None:
    tensors = [
        _t("model.layers.0.mlp.experts.gate_up_proj_blocks", "U8", 2, 5760, 2, 16),
        _t("model.layers.0.mlp.experts.gate_up_proj_scales", "U8", 2, 5760, 2),
        _t("model.layers.0.mlp.experts.down_proj_blocks", "U8", 2, 64, 90, 16),
        _t("model.layers.0.mlp.experts.down_proj_scales", "U8", 2, 64, 90),
        _t("model.embed_tokens.weight", "BF16", 128, 64),
    ]
    checkpoint = checkpoint_from_safetensors(tensors, GPT_OSS)
    blocks = 2 * 5760 * 2 * 16 + 2 * 64 * 90 * 16
    assert checkpoint.params == 2 * blocks + 128 * 64  # two 4-bit weights per byte; the scales are no weights
    assert checkpoint.mxfp4_expert_bytes == sum(t.nbytes for t in tensors[:4])
    weights = measured_checkpoint_weights(from_hf_config(GPT_OSS), checkpoint)
    padding = checkpoint.mxfp4_expert_bytes * (3072 - 2880) // 2880  # 2880 → 3072, as _vllm_mxfp4_bytes
    rotary = 1024 * 16 * 2
    assert weights.tensor_bytes == checkpoint.tensor_bytes + padding + rotary
    assert weights.file_bytes == checkpoint.tensor_bytes


def test_a_layer_past_num_hidden_layers_is_in_the_file_but_not_loaded() -> None:
    config = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 1,
              "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 32,
              "max_position_embeddings": 64}  # fmt: skip
    tensors = [_t(f"model.layers.{il}.mlp.up_proj.weight", "BF16", 128, 64) for il in (0, 1)]
    checkpoint = checkpoint_from_safetensors(tensors, config)
    weights = measured_checkpoint_weights(from_hf_config(config), checkpoint)
    assert weights.file_bytes == 2 * 128 * 64 * 2
    assert weights.tensor_bytes == 128 * 64 * 2 + 64 * 16 * 2  # one layer and the rotary cache
    assert weights.layer_bytes == (128 * 64 * 2,)
