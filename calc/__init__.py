"""vramfit's calculator: how much GPU memory an LLM needs, the way llama.cpp and vLLM allocate it.

    from vramfit.calc import Request, answer, load_catalog
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
    "Architecture": "vramfit.calc.architecture",
    "from_hf_config": "vramfit.calc.hf_config",
    "BadFileError": "vramfit.calc.errors",
    "BadNumberError": "vramfit.calc.errors",
    "UnknownGpuError": "vramfit.calc.errors",
    "UnknownModelError": "vramfit.calc.errors",
    "UnknownQuantError": "vramfit.calc.errors",
    "VramfitError": "vramfit.calc.errors",
    "answer": "vramfit.calc.estimate",
    "estimate": "vramfit.calc.estimate",
    "fit_gpu": "vramfit.calc.estimate",
    "Verdict": "vramfit.calc.fit",
    "Gpu": "vramfit.calc.gpu",
    "generic_gpu": "vramfit.calc.gpu",
    "Catalog": "vramfit.calc.presets",
    "ModelPreset": "vramfit.calc.presets",
    "load_catalog": "vramfit.calc.presets",
    "Engine": "vramfit.calc.request",
    "GpuChoice": "vramfit.calc.request",
    "KvType": "vramfit.calc.request",
    "ModelRef": "vramfit.calc.request",
    "Request": "vramfit.calc.request",
    "Answer": "vramfit.calc.results",
    "Estimate": "vramfit.calc.results",
    "Fit": "vramfit.calc.results",
    "best_quant": "vramfit.calc.solve",
    "max_context": "vramfit.calc.solve",
    "max_users": "vramfit.calc.solve",
    "smallest_gpus": "vramfit.calc.solve",
}

if TYPE_CHECKING:  # for type checkers: at run time the names above load on first use (__getattr__)
    from vramfit.calc.architecture import Architecture
    from vramfit.calc.errors import (
        BadFileError,
        BadNumberError,
        UnknownGpuError,
        UnknownModelError,
        UnknownQuantError,
        VramfitError,
    )
    from vramfit.calc.estimate import answer, estimate, fit_gpu
    from vramfit.calc.fit import Verdict
    from vramfit.calc.gpu import Gpu, generic_gpu
    from vramfit.calc.hf_config import from_hf_config
    from vramfit.calc.presets import Catalog, ModelPreset, load_catalog
    from vramfit.calc.request import Engine, GpuChoice, KvType, ModelRef, Request
    from vramfit.calc.results import Answer, Estimate, Fit
    from vramfit.calc.solve import best_quant, max_context, max_users, smallest_gpus


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
