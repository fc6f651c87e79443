"""LLM_ARCH_COMMAND_R (Command R, R+) and LLM_ARCH_COHERE2 (Command R7B, Command A): parallel attention and FFN
under one norm per layer; the converter never writes output.weight. Cohere 2 slides three layers of four.

Mirrors llama.cpp 0c1e57098: src/models/command-r.cpp, cohere2.cpp; conversion/command_r.py. Measured on copies with
4 layers (LLAMACPP.md).
"""

from __future__ import annotations

from vramfit.calc.architecture import Architecture
from vramfit.calc.families.family import Family
from vramfit.calc.tensor_specs import TensorList, attention, dense_ffn


def cohere_layers(b: TensorList, arch: Architecture, *, qk_norm_from_64_layers: bool) -> None:
    """command-r (parallel attention+FFN, one norm per layer; q/k layer norms from 64 layers up) and cohere2."""
    bias = arch.attention_bias
    for il in range(arch.n_layers):
        b.blk(il, "attn_norm.weight", arch.hidden_size)
        if qk_norm_from_64_layers and arch.n_layers >= 64:
            # llama.cpp creates per-head q/k norms when n_layer >= 64 (Command R+ use_qk_norm); 2-D but "_norm".
            b.blk(il, "attn_q_norm.weight", arch.head_dim_k, arch.n_heads[il])
            b.blk(il, "attn_k_norm.weight", arch.head_dim_k, arch.n_kv_heads[il])
        attention(b, arch, il, q_bias=bias, kv_bias=bias, o_bias=bias)
        dense_ffn(b, arch, il, arch.ffn_size[il])


class CommandR(Family, arch="command-r", model_types=("cohere",), always_tied=True):
    """Mirrors src/models/command-r.cpp, conversion/command_r.py CommandR2Model (0c1e57098)."""

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        cohere_layers(tensors, arch, qk_norm_from_64_layers=True)


class Cohere2(Family, arch="cohere2", model_types=("cohere2",), always_tied=True, swa_pattern=4):
    """Mirrors src/models/cohere2.cpp, conversion/command_r.py Cohere2Model (0c1e57098)."""

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        cohere_layers(tensors, arch, qk_norm_from_64_layers=False)
