"""The architecture families the calculator models, one module each, and the registry that names them.

:func:`family_of` answers for a llama.cpp architecture name (``general.architecture``, Architecture.arch) and
:func:`family_for_model_type` for a config.json ``model_type``; a name no family answers to is
``unsupported_architecture`` from here alone. Adding a family is one new module (a :class:`Family` subclass), one line
in :data:`FAMILIES`, its preset rows, its measured rows and its tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vramfit.calc.errors import UnsupportedArchitectureError
from vramfit.calc.families.cohere import Cohere2, CommandR
from vramfit.calc.families.deepseek2 import Deepseek2
from vramfit.calc.families.deepseek4 import Deepseek4
from vramfit.calc.families.deepseek32 import Deepseek32
from vramfit.calc.families.exaone import Exaone, Exaone4
from vramfit.calc.families.falcon_h1 import FalconH1
from vramfit.calc.families.family import Family
from vramfit.calc.families.gemma import Gemma, Gemma2, Gemma3
from vramfit.calc.families.gemma3n import Gemma3n
from vramfit.calc.families.gemma4 import Gemma4
from vramfit.calc.families.glm4 import Glm4
from vramfit.calc.families.glm4moe import Glm4Moe
from vramfit.calc.families.glm_dsa import GlmDsa
from vramfit.calc.families.gpt_oss import GptOss
from vramfit.calc.families.granite import Granite
from vramfit.calc.families.granitehybrid import GraniteHybrid
from vramfit.calc.families.lfm2 import Lfm2
from vramfit.calc.families.lfm2moe import Lfm2Moe
from vramfit.calc.families.llama import Llama
from vramfit.calc.families.llama4 import Llama4
from vramfit.calc.families.minimax_m2 import MinimaxM2
from vramfit.calc.families.nemotron_h import NEMOTRON_H_MOE, NemotronH
from vramfit.calc.families.olmo2 import Olmo2
from vramfit.calc.families.phi3 import Phi3
from vramfit.calc.families.phimoe import PhiMoe
from vramfit.calc.families.qwen import Qwen2, Qwen2Moe, Qwen3, Qwen3Moe
from vramfit.calc.families.qwen35 import Qwen3Next, Qwen35, Qwen35Moe
from vramfit.calc.families.smollm3 import Smollm3
from vramfit.calc.families.starcoder2 import Starcoder2

FAMILIES: tuple[Family, ...] = (
    Llama(),
    Granite(),
    Smollm3(),
    Exaone(),
    Exaone4(),
    Llama4(),
    Qwen2(),
    Qwen2Moe(),
    Qwen3(),
    Qwen3Moe(),
    Qwen35(),
    Qwen35Moe(),
    Qwen3Next(),
    Gemma(),
    Gemma2(),
    Gemma3(),
    Gemma3n(),
    Gemma4(),
    Phi3(),
    PhiMoe(),
    Starcoder2(),
    Deepseek2(),
    Deepseek32(),
    GlmDsa(),
    Deepseek4(),
    GptOss(),
    CommandR(),
    Cohere2(),
    Olmo2(),
    Glm4(),
    Glm4Moe(),
    MinimaxM2(),
    GraniteHybrid(),
    NemotronH(),
    NEMOTRON_H_MOE,
    Lfm2(),
    Lfm2Moe(),
    FalconH1(),
)

BY_ARCH: dict[str, Family] = {family.arch: family for family in FAMILIES}
BY_MODEL_TYPE: dict[str, Family] = {model_type: family for family in FAMILIES for model_type in family.model_types}

# The llama.cpp architectures whose tensors, caches and buffers the calculator models.
SUPPORTED_ARCHS: frozenset[str] = frozenset(BY_ARCH)


def supported_names(field: str) -> str:
    """What the calculator does model, as an error lists it: model_types for a config.json, else llama.cpp names."""
    return ", ".join(sorted(BY_MODEL_TYPE) if field == "model_type" else sorted(SUPPORTED_ARCHS))


def unsupported(name: str, *, field: str) -> UnsupportedArchitectureError:
    """The error for an architecture the calculator does not model, naming it and what it does model."""
    return UnsupportedArchitectureError(
        f"vramfit does not model the architecture {name!r} yet",
        subject=name[:80],
        field=field,
        supported=supported_names(field),
    )


def family_of(arch: str) -> Family:
    """The family of a llama.cpp architecture name (an Architecture's ``arch``, a GGUF's general.architecture)."""
    family = BY_ARCH.get(arch)
    if family is None:
        raise unsupported(arch, field="general.architecture")
    return family


def family_for_model_type(model_type: str, config: Mapping[str, Any]) -> Family:
    """The family a config.json of ``model_type`` converts to."""
    family = BY_MODEL_TYPE.get(model_type)
    if family is None:
        raise unsupported(model_type, field="model_type")
    return family.resolve(config)
