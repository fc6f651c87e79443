"""LLM_ARCH_GLM4 (GLM-4-0414): biased q/k/v, sandwich norms, fused gate+up.

Mirrors llama.cpp 0c1e57098 src/models/glm4.cpp and conversion/glm.py Glm4Model; measured (LLAMACPP.md).
"""

from __future__ import annotations

from vramfit.calc.architecture import Architecture
from vramfit.calc.families.family import Family
from vramfit.calc.tensor_specs import TensorList, attention


def glm4_layers(b: TensorList, arch: Architecture) -> None:
    """LLM_ARCH_GLM4 (GLM-4-0414): biased q/k/v, sandwich norms, fused gate+up as ffn_up {n_embd, 2·n_ff}."""
    n_embd = arch.hidden_size
    for il in range(arch.n_layers):
        b.blk(il, "attn_norm.weight", n_embd)
        attention(b, arch, il, q_bias=arch.attention_bias, kv_bias=arch.attention_bias)
        b.blk(il, "post_attention_norm.weight", n_embd)
        b.blk(il, "ffn_norm.weight", n_embd)
        b.blk(il, "ffn_up.weight", n_embd, 2 * arch.ffn_size[il])
        b.blk(il, "ffn_down.weight", arch.ffn_size[il], n_embd)
        b.blk(il, "post_ffw_norm.weight", n_embd)


class Glm4(Family, arch="glm4", model_types=("glm4",)):
    """Mirrors src/models/glm4.cpp, conversion/glm.py Glm4Model (0c1e57098)."""

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        glm4_layers(tensors, arch)
