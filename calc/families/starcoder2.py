"""LLM_ARCH_STARCODER2, approximate: LayerNorms with biases, fully biased attention, a GELU MLP with biases, a
biased output norm.

Follows llama.cpp 0c1e57098 src/models/starcoder2.cpp as recalled; not checked against a file.
"""

from __future__ import annotations

from vramfit.calc.architecture import Architecture
from vramfit.calc.families.family import Family
from vramfit.calc.tensor_specs import TensorList, biased_layernorm_layers


class Starcoder2(Family, arch="starcoder2", model_types=("starcoder2",), final_norm_bias=True):
    """Mirrors src/models/starcoder2.cpp (0c1e57098), approximate."""

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        biased_layernorm_layers(tensors, arch)
