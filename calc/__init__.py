"""vramfit's calculator: how much GPU memory an LLM needs, the way llama.cpp and vLLM allocate it.

    from calc import Request, answer, load_catalog
    catalog = load_catalog()
    request = Request(model=catalog.model("llama3-8b").ref(), context=32768)
    print(answer(request, tuple(catalog.gpus.values())).estimate.total_bytes)

Pure and deterministic: standard library and pydantic only, bytes as integers.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

# Where each public name lives. They load on first use (PEP 562), so ``import calc.errors`` or a CLI call that needs
# three modules does not import the whole calculator.
_HOMES: dict[str, str] = {
    "Architecture": "calc.architecture",
    "from_hf_config": "calc.architecture",
    "BadFileError": "calc.errors",
    "BadNumberError": "calc.errors",
    "UnknownGpuError": "calc.errors",
    "UnknownModelError": "calc.errors",
    "UnknownQuantError": "calc.errors",
    "VramfitError": "calc.errors",
    "answer": "calc.estimate",
    "estimate": "calc.estimate",
    "fit_gpu": "calc.estimate",
    "Verdict": "calc.fit",
    "Gpu": "calc.gpu",
    "generic_gpu": "calc.gpu",
    "Catalog": "calc.presets",
    "ModelPreset": "calc.presets",
    "load_catalog": "calc.presets",
    "Engine": "calc.request",
    "GpuChoice": "calc.request",
    "KvType": "calc.request",
    "ModelRef": "calc.request",
    "Request": "calc.request",
    "Answer": "calc.results",
    "Estimate": "calc.results",
    "Fit": "calc.results",
    "best_quant": "calc.solve",
    "max_context": "calc.solve",
    "max_users": "calc.solve",
    "smallest_gpus": "calc.solve",
}

if TYPE_CHECKING:
    from calc.architecture import Architecture, from_hf_config
    from calc.errors import (
        BadFileError,
        BadNumberError,
        UnknownGpuError,
        UnknownModelError,
        UnknownQuantError,
        VramfitError,
    )
    from calc.estimate import answer, estimate, fit_gpu
    from calc.fit import Verdict
    from calc.gpu import Gpu, generic_gpu
    from calc.presets import Catalog, ModelPreset, load_catalog
    from calc.request import Engine, GpuChoice, KvType, ModelRef, Request
    from calc.results import Answer, Estimate, Fit
    from calc.solve import best_quant, max_context, max_users, smallest_gpus


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'calc' has no attribute {name!r}")
    return getattr(import_module(home), name)


__all__ = [
    "Answer",
    "Architecture",
    "BadFileError",
    "BadNumberError",
    "Catalog",
    "Engine",
    "Estimate",
    "Fit",
    "Gpu",
    "GpuChoice",
    "KvType",
    "ModelPreset",
    "ModelRef",
    "Request",
    "UnknownGpuError",
    "UnknownModelError",
    "UnknownQuantError",
    "Verdict",
    "VramfitError",
    "answer",
    "best_quant",
    "estimate",
    "fit_gpu",
    "from_hf_config",
    "generic_gpu",
    "load_catalog",
    "max_context",
    "max_users",
    "smallest_gpus",
]
