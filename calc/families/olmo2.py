"""LLM_ARCH_OLMO2 (OLMo 2 7B, 13B, 32B): no pre-norms, q/k norms over the whole projection, post norms.

Mirrors llama.cpp 0c1e57098 src/models/olmo2.cpp and conversion/olmo.py Olmo2Model; measured (LLAMACPP.md).
"""

from __future__ import annotations

from vramfit.calc.architecture import Architecture
from vramfit.calc.families.family import Family
from vramfit.calc.tensor_specs import TensorList, post_norm_layers


class Olmo2(Family, arch="olmo2", model_types=("olmo2",), qk_norm=True):
    """Mirrors src/models/olmo2.cpp, conversion/olmo.py Olmo2Model (0c1e57098)."""

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        post_norm_layers(tensors, arch, whole_qk_norm=True)
