"""vramfit's calculator: how much GPU memory an LLM needs, the way llama.cpp and vLLM allocate it.

    >>> from vramfit.calc import Request, answer, load_catalog
    >>> catalog = load_catalog()
    >>> request = Request(model=catalog.model("llama3-8b").ref(), context=32768)
    >>> answer(request, tuple(catalog.gpus.values())).estimate.total_bytes > 0
    True

Pure and deterministic: standard library and pydantic only, bytes as integers.
"""

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
