"""LLM_ARCH_QWEN35, QWEN35MOE, QWEN3NEXT (Qwen3.5 and 3.6, Qwen3-Next): three Gated DeltaNet layers to one gated
attention layer, a dense FFN or routed experts with a gated shared expert, then the converter's MTP blocks.

Mirrors llama.cpp 0c1e57098: src/models/qwen35.cpp, qwen35moe.cpp, qwen3next.cpp; conversion/qwen.py
Qwen3_5TextModel / Qwen3_5MoeTextModel / Qwen3NextModel. The recurrent layers hold a state per sequence
(calc/recurrent.py): ssm_d_state = linear_key_head_dim, ssm_n_group = linear_num_key_heads, ssm_dt_rank =
linear_num_value_heads, ssm_d_inner = value head size × value heads; a layer is full attention every
``full_attention_interval``-th layer. Measured: Qwen3.5 0.8B, 4B, 35B-A3B, Qwen3-Next 80B-A3B (LLAMACPP.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from vramfit.calc.architecture import Architecture
from vramfit.calc.config_fields import ConfigFields, layer_kinds, ssm_state
from vramfit.calc.families.family import Family, GgufMeta
from vramfit.calc.ggml import GgmlType
from vramfit.calc.limits import MAX_LAYERS
from vramfit.calc.tensor_specs import TensorList, dense_ffn, ffn, moe_ffn

# The config.json keys the converters turn into ssm_d_conv, ssm_d_state, ssm_n_group, ssm_dt_rank and the value head
# size whose product with ssm_dt_rank is ssm_d_inner (Qwen3NextModel.set_gguf_parameters).
GATED_DELTANET_KEYS = (
    "linear_conv_kernel_dim",
    "linear_key_head_dim",
    "linear_num_key_heads",
    "linear_num_value_heads",
    "linear_value_head_dim",
)


def qwen35_layers(b: TensorList, arch: Architecture, *, fused_beta_alpha: bool) -> None:
    """LLM_ARCH_QWEN35 / QWEN35MOE / QWEN3NEXT (Qwen3.5 and 3.6, Qwen3-Next; convert_hf_to_gguf.py Qwen3_5TextModel /
    Qwen3_5MoeTextModel / Qwen3NextModel, src/models/qwen35.cpp, qwen35moe.cpp, qwen3next.cpp): three Gated DeltaNet
    layers (fused qkv, z gate, conv1d, alpha/beta, A, dt bias) to one gated-attention layer (q carries the output
    gate, so attn_q is 2 × heads × head_dim wide), a dense FFN or routed experts with a gated shared expert, then the
    converter's multi-token-prediction blocks."""
    n_embd = arch.hidden_size
    key_dim = arch.ssm_groups * arch.ssm_state_size
    value_dim, n_v = arch.ssm_inner_size, arch.ssm_heads
    conv_dim = 2 * key_dim + value_dim
    head = arch.head_dim_k

    def attention(il: int, heads: int, kv_heads: int) -> None:
        b.blk(il, "attn_q.weight", n_embd, 2 * head * heads)
        b.blk(il, "attn_k.weight", n_embd, head * kv_heads)
        b.blk(il, "attn_v.weight", n_embd, head * kv_heads)
        b.blk(il, "attn_output.weight", head * heads, n_embd)
        b.blk(il, "attn_q_norm.weight", head)
        b.blk(il, "attn_k_norm.weight", head)

    for il in range(arch.n_layers):
        b.blk(il, "attn_norm.weight", n_embd)
        b.blk(il, "post_attention_norm.weight", n_embd)
        if arch.layer_is_recurrent(il):
            b.blk(il, "attn_qkv.weight", n_embd, conv_dim)
            b.blk(il, "attn_gate.weight", n_embd, value_dim)
            b.blk(il, "ssm_conv1d.weight", arch.ssm_conv_kernel, conv_dim, source=GgmlType.F32)
            b.blk(il, "ssm_dt.bias", n_v)
            b.blk(il, "ssm_a", n_v)
            if fused_beta_alpha:  # Qwen3NextModel keeps beta and alpha in one projection
                b.blk(il, "ssm_ba.weight", n_embd, 2 * n_v)
            else:
                b.blk(il, "ssm_beta.weight", n_embd, n_v)
                b.blk(il, "ssm_alpha.weight", n_embd, n_v)
            b.blk(il, "ssm_norm.weight", value_dim // n_v)
            b.blk(il, "ssm_out.weight", value_dim, n_embd)
        else:
            attention(il, arch.n_heads[il], arch.n_kv_heads[il])
        ffn(b, arch, il, shared_gate=True)
    heads, kv_heads = max(arch.n_heads), max(arch.n_kv_heads)
    for il in range(arch.n_layers, arch.n_layers + arch.nextn_layers):  # a full-attention block + the nextn tensors
        b.blk(il, "attn_norm.weight", n_embd)
        b.blk(il, "post_attention_norm.weight", n_embd)
        attention(il, heads, kv_heads)
        if arch.is_moe:
            moe_ffn(b, arch, il, shared_gate=True)
        else:
            dense_ffn(b, arch, il, max(arch.ffn_size))
        b.blk(il, "nextn.eh_proj.weight", 2 * n_embd, n_embd)
        b.blk(il, "nextn.enorm.weight", n_embd)
        b.blk(il, "nextn.hnorm.weight", n_embd)
        b.blk(il, "nextn.shared_head_norm.weight", n_embd)


class Qwen35(Family, arch="qwen35", qk_norm=True, experts_modelled=False, gqa_from_widest_layer=True, mtp_graph=True,
             rs_rollback=True, query_tensors=3, recurrent_mixer="gated_delta_net"):  # fmt: skip
    """Mirrors src/models/qwen35.cpp, conversion/qwen.py Qwen3_5TextModel (0c1e57098). No experts: the dense
    architecture; Qwen3.5 with experts is qwen35moe."""

    model_types: ClassVar[tuple[str, ...]] = ("qwen3_5", "qwen3_5_text")
    # Qwen3-Next's config.json does not say; its checkpoints carry one MTP block, which the converter exports.
    default_mtp_blocks: ClassVar[int] = 0
    is_moe_arch: ClassVar[bool] = False  # the header carries expert_shared_feed_forward_length

    def recurrent(self, fields: ConfigFields, n_layers: int) -> dict[str, Any]:
        kinds = layer_kinds(fields.config, n_layers, ("linear_attention",))
        if kinds is None:
            interval = fields.number("full_attention_interval", default=4, low=1, high=MAX_LAYERS)
            kinds = tuple((il + 1) % interval != 0 for il in range(n_layers))
        return {
            "recurrent_layers": kinds,
            **ssm_state(fields, GATED_DELTANET_KEYS, nextn_default=self.default_mtp_blocks),
        }

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        qwen35_layers(tensors, arch, fused_beta_alpha=False)

    def gguf_keys(self, meta: GgufMeta, config: Mapping[str, Any], names: set[str]) -> dict[str, Any]:
        """The converter counts its MTP blocks in block_count (nextn_predict_layers says how many) and writes the
        recurrent layers (attention.recurrent_layers) and the ssm.* sizes."""
        out: dict[str, Any] = {}
        nextn = meta("nextn_predict_layers", 0)
        blocks = config.get("num_hidden_layers")
        value_heads = meta("ssm.time_step_rank")
        inner = meta("ssm.inner_size")
        if isinstance(blocks, int) and isinstance(nextn, int):
            out["num_hidden_layers"] = blocks - nextn
            out["mtp_num_hidden_layers"] = nextn
        recurrent = meta("attention.recurrent_layers")
        if isinstance(recurrent, list) and isinstance(blocks, int) and isinstance(nextn, int):
            out["layer_types"] = ["linear_attention" if r else "full_attention" for r in recurrent[: blocks - nextn]]
        else:
            out["full_attention_interval"] = meta("full_attention_interval", 4)
        out.update(
            linear_conv_kernel_dim=meta("ssm.conv_kernel"),
            linear_key_head_dim=meta("ssm.state_size"),
            linear_num_key_heads=meta("ssm.group_count"),
            linear_num_value_heads=value_heads,
            linear_value_head_dim=inner // value_heads
            if isinstance(inner, int) and isinstance(value_heads, int) and value_heads
            else None,
        )
        if self.is_moe_arch:
            out["shared_expert_intermediate_size"] = meta("expert_shared_feed_forward_length", 0)
        return {k: v for k, v in out.items() if v is not None}


class Qwen35Moe(Qwen35, arch="qwen35moe", experts_modelled=True, is_moe_arch=True):
    """Mirrors src/models/qwen35moe.cpp, conversion/qwen.py Qwen3_5MoeTextModel (0c1e57098)."""

    model_types = ("qwen3_5_moe", "qwen3_5_moe_text")


class Qwen3Next(Qwen35, arch="qwen3next", experts_modelled=True, is_moe_arch=True, default_mtp_blocks=1,
                rs_rollback=False):  # fmt: skip
    """Mirrors src/models/qwen3next.cpp, conversion/qwen.py Qwen3NextModel (0c1e57098)."""

    model_types = ("qwen3_next",)

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        qwen35_layers(tensors, arch, fused_beta_alpha=True)
