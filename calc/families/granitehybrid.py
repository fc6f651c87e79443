"""LLM_ARCH_GRANITE_HYBRID (Granite 4.0 H dense): Mamba2 layers and NoPE attention layers, each with the shared MLP.

Mirrors llama.cpp 0c1e57098: src/models/granite-hybrid.cpp, conversion/granite.py GraniteHybridModel (Mamba2 with
d_inner = mamba_n_heads × mamba_d_head; Mamba2Model.set_vocab pads the vocabulary to a multiple of 8). The Mamba2
mixer here is Nemotron-H's too (calc/families/nemotron_h.py). Granite 4.0 H Tiny and Small lay their experts out
differently: refused, not modelled yet. Measured: granite-4.0-h-350m (LLAMACPP.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vramfit.calc.architecture import Architecture
from vramfit.calc.config_fields import ConfigFields, layer_kinds, ssm_state
from vramfit.calc.errors import BadConfigError
from vramfit.calc.families.family import Family, GgufMeta
from vramfit.calc.ggml import GgmlType
from vramfit.calc.limits import MAX_FFN
from vramfit.calc.tensor_specs import TensorList, attention, ffn

_SSM_NAMES = ("conv_kernel", "state_size", "group_count", "time_step_rank")
_MAMBA2_KEYS = ("mamba_d_conv", "mamba_d_state", "mamba_n_groups", "mamba_n_heads", "mamba_d_head")


def mamba2_mixer(b: TensorList, arch: Architecture, il: int) -> None:
    """A Mamba2 mixer as GraniteHybridModel / NemotronHModel write it (ssm_in, conv1d with bias, dt bias, A, D,
    grouped norm, ssm_out), shaped as src/models/granite-hybrid.cpp, nemotron-h.cpp and falcon-h1.cpp create it (the
    norm only where the model has it: Falcon-H1's mamba_rms_norm)."""
    n_embd = arch.hidden_size
    inner, groups, state, heads = arch.ssm_inner_size, arch.ssm_groups, arch.ssm_state_size, arch.ssm_heads
    conv_channels = inner + 2 * groups * state
    b.blk(il, "ssm_in.weight", n_embd, 2 * inner + 2 * groups * state + heads)
    b.blk(il, "ssm_conv1d.weight", arch.ssm_conv_kernel, conv_channels, source=GgmlType.F32)
    b.blk(il, "ssm_conv1d.bias", conv_channels)
    b.blk(il, "ssm_dt.bias", heads)
    b.blk(il, "ssm_a", 1, heads)
    b.blk(il, "ssm_d", 1, heads)
    if arch.ssm_group_norm:
        b.blk(il, "ssm_norm.weight", inner // groups, groups)
    b.blk(il, "ssm_out.weight", inner, n_embd)


def granitehybrid_layers(b: TensorList, arch: Architecture) -> None:
    """LLM_ARCH_GRANITE_HYBRID (convert_hf_to_gguf.py GraniteHybridModel): Mamba2 layers (ssm_in, conv1d with bias,
    dt bias, A, D, grouped norm, ssm_out) and NoPE attention layers, each with the shared MLP: ffn_gate/up/down in
    the dense models, or beside the routed experts as ffn_*_shexp (Granite 4.0 H Tiny and Small: gate and up experts
    split, not fused; granite-hybrid.cpp's MoE branch)."""
    n_embd = arch.hidden_size
    for il in range(arch.n_layers):
        b.blk(il, "attn_norm.weight", n_embd)
        if arch.layer_is_recurrent(il):
            mamba2_mixer(b, arch, il)
        else:
            attention(b, arch, il)
        b.blk(il, "ffn_norm.weight", n_embd)
        ffn(b, arch, il)


def mamba2_keys(meta: GgufMeta, keys: tuple[str, str, str, str]) -> dict[str, Any]:
    """A Mamba2 mixer's sizes under the config.json ``keys`` for ssm.conv_kernel, ssm.state_size, ssm.group_count
    and ssm.time_step_rank (the heads), plus ``head_dim``: ssm.inner_size / heads (GraniteHybridModel)."""
    heads = meta("ssm.time_step_rank")
    inner = meta("ssm.inner_size")
    out = {key: meta(f"ssm.{name}") for key, name in zip(keys, _SSM_NAMES, strict=True)}
    out["head_dim"] = inner // heads if isinstance(inner, int) and isinstance(heads, int) and heads else None
    return out


class GraniteHybrid(Family, arch="granitehybrid", vocab_multiple=8, expert_width_is_intermediate_size=True,
                    recurrent_mixer="mamba2"):  # fmt: skip
    """Mirrors src/models/granite-hybrid.cpp, conversion/granite.py GraniteHybridModel (0c1e57098). With experts,
    feed_forward_length is intermediate_size, the routed experts' width, and the shared MLP is one shared expert of
    shared_intermediate_size (expert_shared_feed_forward_length); every layer is MoE."""

    model_types = ("granitemoehybrid",)

    def recurrent(self, fields: ConfigFields, n_layers: int) -> dict[str, Any]:
        kinds = layer_kinds(fields.config, n_layers, ("mamba",))
        if kinds is None:
            raise BadConfigError("config.json lacks layer_types", field="layer_types")
        return {"recurrent_layers": kinds, **ssm_state(fields, _MAMBA2_KEYS, groups_default=1)}

    def ffn(
        self, fields: ConfigFields, n_layers: int, dense_ffn: tuple[int, ...], moe_layers: tuple[bool, ...]
    ) -> tuple[tuple[int, ...], tuple[bool, ...]]:
        """The dense Granite 4.0 H MLP is the "shared" MLP, written as ffn_gate/up/down of shared_intermediate_size;
        with experts there is no dense FFN (the shared MLP is the shared expert: :meth:`layout`)."""
        if moe_layers:
            return dense_ffn, moe_layers
        ffn_keys = ("intermediate_size", "n_inner", "ffn_hidden_size")
        return (fields.number("shared_intermediate_size", *ffn_keys, high=MAX_FFN),) * n_layers, moe_layers

    def layout(self, fields: ConfigFields, shape: dict[str, Any]) -> dict[str, Any]:
        if not shape["n_experts"]:
            return {}
        return {
            "n_shared_experts": 1,
            "shared_expert_ffn_size": fields.number("shared_intermediate_size", high=MAX_FFN),
        }

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        granitehybrid_layers(tensors, arch)

    def gguf_keys(self, meta: GgufMeta, config: Mapping[str, Any], names: set[str]) -> dict[str, Any]:
        out = mamba2_keys(meta, ("mamba_d_conv", "mamba_d_state", "mamba_n_groups", "mamba_n_heads"))
        out["mamba_d_head"] = out.pop("head_dim")
        experts = config.get("num_experts")
        shared = meta("expert_shared_feed_forward_length") if experts else config.get("intermediate_size")
        out["shared_intermediate_size"] = shared
        kv = config.get("num_key_value_heads")
        if isinstance(kv, list):
            out["layer_types"] = ["attention" if h else "mamba" for h in kv]
        return {k: v for k, v in out.items() if v is not None}
