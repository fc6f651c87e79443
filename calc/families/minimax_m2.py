"""LLM_ARCH_MINIMAX_M2 (MiniMax M2, M2.1, M2.5, M2.7): q/k RMS norms over the whole projection, sigmoid-routed experts
with the routing bias in every block, no shared expert, no dense layer.

Mirrors llama.cpp 0c1e57098: src/models/minimax-m2.cpp, conversion/minimax.py MiniMaxM2Model; measured: MiniMax M2.7
(LLAMACPP.md).
"""

from __future__ import annotations

from typing import Any

from vramfit.calc.architecture import Architecture
from vramfit.calc.config_fields import ConfigFields, require_experts
from vramfit.calc.families.family import Family
from vramfit.calc.limits import MAX_EXPERTS, MAX_FFN
from vramfit.calc.tensor_specs import TensorList, attention, moe_ffn


def minimax_m2_mtp(fields: ConfigFields) -> dict[str, Any]:
    """MiniMax M2's experts, which every block of it is made of (llama.cpp 0c1e57098).

    src/models/minimax-m2.cpp creates ffn_gate_inp {n_embd, n_expert} and the merged experts {n_embd, n_ff,
    n_expert} in every layer with no dense alternative, so a config without experts (num_local_experts or
    num_experts_per_tok 0) or without their width (intermediate_size, which MiniMaxM2Model writes as both
    feed_forward_length and expert_feed_forward_length) is not a model llama.cpp can load. The MTP modules a
    config announces (use_mtp, num_mtp_modules) are not exported: MiniMaxM2Model has no MTP export and
    MODEL_TENSORS[MINIMAXM2] no NextN tensors, so block_count stays num_hidden_layers and nothing MTP is in the file.
    """
    require_experts(
        fields,
        "minimax_m2",
        (
            (("num_local_experts", "num_experts"), MAX_EXPERTS),
            (("num_experts_per_tok",), MAX_EXPERTS),
            (("intermediate_size",), MAX_FFN),
        ),
    )
    return {}


def minimax_m2_layers(b: TensorList, arch: Architecture) -> None:
    """LLM_ARCH_MINIMAX_M2 (MiniMax M2 to M2.7; conversion/minimax.py MiniMaxM2Model, src/models/minimax-m2.cpp):
    unbiased q/k/v/output, q/k RMS norms over the whole projection rather than per head (attn_q_norm of n_head ×
    head_dim, attn_k_norm of n_embd_k_gqa), ffn_norm, then sigmoid-routed experts with the exp_probs_b routing
    bias in every block and no shared expert. Partial rotary (rotary_dim) changes no shape; no MTP tensors."""
    n_embd = arch.hidden_size
    for il in range(arch.n_layers):
        b.blk(il, "attn_norm.weight", n_embd)
        attention(b, arch, il)
        b.blk(il, "attn_q_norm.weight", arch.n_heads[il] * arch.head_dim_k)
        b.blk(il, "attn_k_norm.weight", arch.n_kv_heads[il] * arch.head_dim_k)
        b.blk(il, "ffn_norm.weight", n_embd)
        moe_ffn(b, arch, il)
        b.blk(il, "exp_probs_b.bias", arch.n_experts)


class MinimaxM2(Family, arch="minimax-m2", model_types=("minimax_m2",), qk_norm=True):
    """Mirrors src/models/minimax-m2.cpp, conversion/minimax.py MiniMaxM2Model (0c1e57098). q/k norms: required: q_norm
    of n_head × head_dim and k_norm of n_kv × head_dim. The loader shapes its experts with n_ff (feed_forward_length),
    which MiniMaxM2Model sets to intermediate_size."""

    expert_width_is_intermediate_size = True

    def mtp(self, fields: ConfigFields) -> dict[str, Any]:
        return minimax_m2_mtp(fields)

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        minimax_m2_layers(tensors, arch)
