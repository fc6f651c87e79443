"""LLM_ARCH_EXAONE (EXAONE 3.5) and LLM_ARCH_EXAONE4 (EXAONE 4.0).

Mirrors llama.cpp 0c1e57098: src/models/exaone.cpp (llama's tensors), src/models/exaone4.cpp (no pre-norms, q/k norms,
post-attention and post-ffw norms; sliding window only in the 64-layer 32B form), conversion/exaone.py.
"""

from __future__ import annotations

from vramfit.calc.architecture import Architecture
from vramfit.calc.config_fields import ConfigFields
from vramfit.calc.families.family import Family
from vramfit.calc.tensor_specs import TensorList, post_norm_layers


class Exaone(Family, arch="exaone", model_types=("exaone",)):
    """Mirrors src/models/exaone.cpp, conversion/exaone.py ExaoneModel (0c1e57098)."""


class Exaone4(Family, arch="exaone4", model_types=("exaone4",), swa_pattern=4):
    """Mirrors src/models/exaone4.cpp, conversion/exaone.py Exaone4Model (0c1e57098)."""

    def swa_layers(self, fields: ConfigFields, n_layers: int) -> tuple[bool, ...]:
        """EXAONE 4.0 slides only in its 64-layer 32B form: llama_model_exaone4::load_arch_hparams sets swa_type and
        loads the layer pattern inside ``if (n_layer() == 64)``; any other layer count keeps full-size caches in every
        layer whatever config.json and the GGUF say (measured on a 4-layer copy)."""
        return super().swa_layers(fields, n_layers) if n_layers == 64 else ()

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        post_norm_layers(tensors, arch)
