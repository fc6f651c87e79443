"""LLM_ARCH_OLMO2 (OLMo 2 7B, 13B, 32B): no pre-norms, q/k norms over the whole projection, post norms.

Mirrors llama.cpp 0c1e57098 src/models/olmo2.cpp and conversion/olmo.py Olmo2Model; measured (LLAMACPP.md).
"""

from __future__ import annotations

from typing import ClassVar

from vramfit.calc.architecture import Architecture
from vramfit.calc.families.family import Family
from vramfit.calc.tensor_specs import TensorList, post_norm_layers


class Olmo2(Family):
    arch: ClassVar[str] = "olmo2"
    model_types: ClassVar[tuple[str, ...]] = ("olmo2",)
    mirrors: ClassVar[str] = "src/models/olmo2.cpp, conversion/olmo.py Olmo2Model (0c1e57098)"
    qk_norm: ClassVar[bool] = True

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        post_norm_layers(tensors, arch, whole_qk_norm=True)
