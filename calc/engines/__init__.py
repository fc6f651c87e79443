"""The engine profiles behind one door: every estimate, fit and solver probe goes through these functions, which pick
the profile of ``request.engine`` (:mod:`calc.engines.llama_cpp`, :mod:`calc.engines.vllm`). A new engine is one
module with an :class:`~calc.engines.profile.EngineProfile` and one line in :data:`PROFILES`."""

from __future__ import annotations

from vramfit.calc.architecture import Architecture
from vramfit.calc.engines import llama_cpp, vllm
from vramfit.calc.engines.profile import EngineProfile
from vramfit.calc.request import Engine, GpuChoice, Request
from vramfit.calc.results import Estimate, Fit

PROFILES: dict[Engine, EngineProfile] = {Engine.LLAMA_CPP: llama_cpp.PROFILE, Engine.VLLM: vllm.PROFILE}


def profile(engine: Engine) -> EngineProfile:
    return PROFILES[engine]


def estimate(request: Request, gpu_count: int | None = None, backend: str | None = None) -> Estimate:
    """Memory by component for ``gpu_count`` devices (default: the first named GPU's count, else 1)."""
    return PROFILES[request.engine].estimate(request, gpu_count, backend)


def total_bytes(request: Request, gpu_count: int, backend: str) -> int:
    """``estimate(...).total_bytes`` without building the whole estimate (the solvers call this many times)."""
    return PROFILES[request.engine].total_bytes(request, gpu_count, backend)


def fit_gpu(request: Request, choice: GpuChoice, *, with_max_context: bool = True) -> Fit:
    """Verdict, layers on the GPU and headroom for one GPU choice."""
    return PROFILES[request.engine].fit(request, choice, with_max_context)


def runs_on_gpu(request: Request, choice: GpuChoice) -> bool:
    """True when every layer fits (verdict fits or tight; vLLM: the KV pool holds one full-length sequence per
    user)."""
    return PROFILES[request.engine].runs_on_gpu(request, choice)


def models(engine: Engine, arch: Architecture) -> bool:
    """Whether the engine's profile models ``arch`` (one that does not answers with an error, never a number)."""
    return PROFILES[engine].models(arch)


def fits_with_margin(request: Request, choice: GpuChoice) -> bool:
    """True when the request fits ``choice`` whole with the tight margin left (vLLM: the KV pool holds it)."""
    return PROFILES[request.engine].fits_with_margin(request, choice)
