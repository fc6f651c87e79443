"""LLM_ARCH_LFM2 (LFM2 350M to 2.6B): gated short-convolution layers and GQA layers with q/k norms.

Mirrors llama.cpp 0c1e57098: src/models/lfm2.cpp, conversion/lfm2.py LFM2Model. The convolution layers hold a state
per sequence (calc/recurrent.py) of n_embd × (L_cache − 1) values; LFM2 normalises after the last layer with
token_embd_norm and has no output_norm. LFM2 with experts (LFM2-8B-A1B) is another architecture. Measured: LFM2-700M
(LLAMACPP.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vramfit.calc.architecture import Architecture
from vramfit.calc.config_fields import ConfigFields, layer_kinds
from vramfit.calc.errors import BadConfigError
from vramfit.calc.families.family import Family, GgufMeta
from vramfit.calc.ggml import GgmlType
from vramfit.calc.limits import MAX_FFN, MAX_LAYERS
from vramfit.calc.tensor_specs import TensorList, attention, dense_ffn, layer_is_moe, moe_ffn


def lfm2_ffn(fields: ConfigFields) -> int:
    """LFM2's feed-forward width as LFM2Model writes it: block_ff_dim, shrunk to 2/3 (times the multiplier) and
    rounded up to block_multiple_of when block_auto_adjust_ff_dim is set."""
    width = fields.number("block_ff_dim", "intermediate_size", low=1, high=MAX_FFN)
    if fields.config.get("block_auto_adjust_ff_dim"):
        width = int(2 * width / 3)
        multiplier = fields.config.get("block_ffn_dim_multiplier")
        if isinstance(multiplier, int | float) and not isinstance(multiplier, bool):
            width = int(multiplier * width)
        multiple = fields.number("block_multiple_of", default=256, low=1, high=MAX_FFN)
        width = multiple * -(-width // multiple)
    return width


def lfm2_layers(b: TensorList, arch: Architecture) -> None:
    """LLM_ARCH_LFM2 (convert_hf_to_gguf.py LFM2Model, src/models/lfm2.cpp) and LLM_ARCH_LFM2MOE
    (src/models/lfm2moe.cpp): gated short-convolution layers (in_proj 3 × n_embd, depthwise conv of conv_L_cache taps,
    out_proj) and GQA layers with q/k norms; in LFM2-MoE's expert layers the experts with their routing bias
    (exp_probs_b, which lfm2moe.cpp requires) instead of the dense FFN."""
    n_embd = arch.hidden_size
    for il in range(arch.n_layers):
        b.blk(il, "ffn_norm.weight", n_embd)
        if layer_is_moe(arch, il):
            moe_ffn(b, arch, il)
            b.blk(il, "exp_probs_b.bias", arch.n_experts)
        else:
            dense_ffn(b, arch, il, arch.ffn_size[il])
        b.blk(il, "attn_norm.weight", n_embd)
        if arch.layer_is_recurrent(il):
            b.blk(il, "shortconv.conv.weight", arch.ssm_conv_kernel, n_embd, source=GgmlType.F32)
            b.blk(il, "shortconv.in_proj.weight", n_embd, 3 * n_embd)
            b.blk(il, "shortconv.out_proj.weight", n_embd, n_embd)
        else:
            attention(b, arch, il, qk_norm=True)


class Lfm2(Family, arch="lfm2", model_types=("lfm2",), tied_by_default=True, always_tied=True, qk_norm=True,
           recurrent_mixer="short_conv"):  # fmt: skip
    """Mirrors src/models/lfm2.cpp, conversion/lfm2.py LFM2Model (0c1e57098)."""

    final_norm = "token_embd_norm.weight"
    experts_modelled = False

    def recurrent(self, fields: ConfigFields, n_layers: int) -> dict[str, Any]:
        kinds = layer_kinds(fields.config, n_layers, ("conv",))
        if kinds is None:
            attention_layers = set(fields.int_list("full_attn_idxs", MAX_LAYERS))
            if not attention_layers:
                raise BadConfigError("config.json lacks layer_types", field="layer_types")
            kinds = tuple(il not in attention_layers for il in range(n_layers))
        return {"recurrent_layers": kinds, "ssm_conv_kernel": fields.number("conv_L_cache", low=2, high=64)}

    def ffn(
        self, fields: ConfigFields, n_layers: int, dense_ffn: tuple[int, ...], moe_layers: tuple[bool, ...]
    ) -> tuple[tuple[int, ...], tuple[bool, ...]]:
        return (lfm2_ffn(fields),) * n_layers, moe_layers

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        lfm2_layers(tensors, arch)

    def gguf_keys(self, meta: GgufMeta, config: Mapping[str, Any], names: set[str]) -> dict[str, Any]:
        out: dict[str, Any] = {"conv_L_cache": meta("shortconv.l_cache")}
        kv = config.get("num_key_value_heads")
        if isinstance(kv, list):
            out["layer_types"] = ["full_attention" if h else "conv" for h in kv]
        return {k: v for k, v in out.items() if v is not None}

    def conv_state_values(self, arch: Architecture) -> int:
        return arch.hidden_size * (arch.ssm_conv_kernel - 1)  # LFM2: n_embd × (L_cache − 1)
