"""LLM_ARCH_PHIMOE (Phi-3.5-MoE), approximate: LayerNorms with biases, fully biased attention, experts in every
layer whose width config.json gives as intermediate_size, and biases on the output norm and head.

Follows llama.cpp 0c1e57098 src/models/phimoe.cpp as recalled; not checked against a file.
"""

from __future__ import annotations

from vramfit.calc.architecture import Architecture
from vramfit.calc.families.family import Family
from vramfit.calc.tensor_specs import TensorList, biased_layernorm_layers


class PhiMoe(Family, arch="phimoe", model_types=("phimoe",), final_norm_bias=True, output_bias=True):
    """Mirrors src/models/phimoe.cpp (0c1e57098), approximate."""

    expert_width_is_intermediate_size = True

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        biased_layernorm_layers(tensors, arch)
