"""LLM_ARCH_LLAMA: Llama 2/3/3.1/3.2/3.3, Mistral, Mixtral, Solar, HyperCLOVA X, Ministral 3 / Devstral Small 2.

Mirrors llama.cpp 0c1e57098: src/models/llama.cpp, conversion/llama.py LlamaModel, conversion/mistral3.py
Ministral3Model. Mistral is converted as LLM_ARCH_LLAMA and llama.cpp ignores its sliding window; Mixtral is llama with
ffn_*_exps tensors whose width config.json gives as intermediate_size. Ministral 3 (LLM_ARCH_MISTRAL3) has llama's
tensors, YaRN and an attention temperature, none of which changes memory.
"""

from __future__ import annotations

from typing import ClassVar

from vramfit.calc.architecture import Architecture
from vramfit.calc.families.family import Family


class Llama(Family, arch="llama"):
    """Mirrors src/models/llama.cpp, conversion/llama.py LlamaModel (0c1e57098)."""

    model_types: ClassVar[tuple[str, ...]] = (
        "llama",
        "mistral",
        "mixtral",
        "solar",
        "hyperclovax",
        "mistral3",
        "ministral3",
    )

    def expert_width_from_intermediate_size(self, model_type: str) -> bool:
        return model_type == "mixtral"  # Mixtral's intermediate_size is each expert's width; it has no dense layers

    def is_70b(self, arch: Architecture) -> bool:
        """An 80-layer Llama with GQA (llama-model.cpp load_hparams: LLM_TYPE_70B)."""
        return arch.n_layers == 80 and arch.n_heads[0] != arch.n_kv_heads[0]
