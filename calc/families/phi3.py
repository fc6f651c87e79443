"""LLM_ARCH_PHI3 (Phi-3, Phi-3.5-mini, Phi-4, Phi-4-mini): fused attn_qkv and fused gate+up.

Mirrors llama.cpp 0c1e57098: src/models/phi3.cpp, conversion/phi.py Phi3MiniModel (longrope factor tensors, partial
rotary: calc/hf_config.py reads them). Phi-3's sliding window is disabled in llama.cpp ("Phi SWA is currently
disabled"): full-size caches in every layer. Measured: Phi-3.5-mini, Phi-4, Phi-4-mini (LLAMACPP.md).
"""

from __future__ import annotations

from vramfit.calc.architecture import Architecture
from vramfit.calc.families.family import Family
from vramfit.calc.tensor_specs import TensorList


def phi3_layers(b: TensorList, arch: Architecture) -> None:
    """LLM_ARCH_PHI3: fused attn_qkv {n_embd, n_embd + 2·n_embd_gqa} and fused gate+up as ffn_up {n_embd, 2·n_ff}."""
    n_embd = arch.hidden_size
    for il in range(arch.n_layers):
        q_dim = arch.n_heads[il] * arch.head_dim_k
        kv_dim = arch.n_kv_heads[il] * arch.head_dim_k
        b.blk(il, "attn_norm.weight", n_embd)
        b.blk(il, "attn_qkv.weight", n_embd, q_dim + 2 * kv_dim)
        b.blk(il, "attn_output.weight", q_dim, n_embd)
        b.blk(il, "ffn_norm.weight", n_embd)
        b.blk(il, "ffn_up.weight", n_embd, 2 * arch.ffn_size[il])
        b.blk(il, "ffn_down.weight", arch.ffn_size[il], n_embd)


class Phi3(Family, arch="phi3", model_types=("phi3",)):
    """Mirrors src/models/phi3.cpp, conversion/phi.py Phi3MiniModel (0c1e57098)."""

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        phi3_layers(tensors, arch)
