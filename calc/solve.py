"""Solvers: the largest context, the most users, the best quant and the smallest GPUs for a request.

Memory never decreases with context, users or bits (property-tested), so the numeric solvers bisect
(:mod:`calc.search`); every probe goes through the engine dispatch (:mod:`calc.engines`).
"""

from __future__ import annotations

from collections.abc import Iterable

from vramfit.calc.engines import fit_gpu, fits_with_margin, runs_on_gpu
from vramfit.calc.gpu import Gpu
from vramfit.calc.request import MAX_GPU_COUNT, MAX_USERS, Engine, GpuChoice, ModelRef, Request
from vramfit.calc.results import Fit
from vramfit.calc.search import largest, largest_context

# Weight formats from most to least faithful, as people step down when a model does not fit.
QUANT_LADDER: tuple[str, ...] = (
    "F16", "Q8_0", "Q6_K", "Q5_K_M", "Q5_K_S", "Q4_K_M", "Q4_K_S", "IQ4_XS", "Q3_K_L", "Q3_K_M", "Q3_K_S", "Q2_K",
)  # fmt: skip
VLLM_QUANT_LADDER: tuple[str, ...] = ("BF16", "FP8", "INT4")
GPU_COUNTS = (1, 2, 4, 8)


def max_context(request: Request, choice: GpuChoice, limit: int | None = None) -> int | None:
    """Largest context per user (a multiple of 256) with every layer on the GPU (tight allowed), up to the model's
    training context (with no cap when the question already asks for more)."""
    return largest_context(request, choice, runs_on_gpu, limit)


def max_users(request: Request, choice: GpuChoice, limit: int = MAX_USERS) -> int | None:
    """Most users at the request's context with every layer on the GPU (tight allowed)."""
    return largest(lambda u: runs_on_gpu(request.model_copy(update={"users": u}), choice), 1, limit)


def best_quant(request: Request, choice: GpuChoice, ladder: Iterable[str] | None = None) -> str | None:
    """The most faithful weight format that fits with the margin at the request's context and users."""
    steps = ladder or (VLLM_QUANT_LADDER if request.engine == Engine.VLLM else QUANT_LADDER)
    for quant in steps:
        if fits_with_margin(request.model_copy(update={"quant": quant}), choice):
            return quant
    return None


def best_file(
    request: Request, choice: GpuChoice, candidates: Iterable[tuple[str, ModelRef]]
) -> tuple[str, ModelRef] | None:
    """The first of ``candidates`` (quant label, model read from that quant's GGUF file), most faithful first, whose
    own numbers fit with the margin at the request's context and users; None when none does. The candidates are
    taken one at a time, so a lazy iterable reads no file past the one that fits."""
    for quant, model in candidates:
        if fits_with_margin(request.model_copy(update={"model": model, "quant": quant}), choice):
            return quant, model
    return None


def min_gpus(request: Request, choice: GpuChoice, limit: int = MAX_GPU_COUNT) -> int | None:
    """The fewest of ``choice.gpu`` that hold the request whole with the margin, or None (a unified-memory machine
    counts once: Macs and Strix Halo boxes do not pool their memory)."""
    top = 1 if choice.gpu.is_unified else limit
    # A scan rather than a bisection: each added GPU also adds pipeline copies to every compute buffer.
    return next((n for n in range(1, top + 1) if fits_with_margin(request, GpuChoice(gpu=choice.gpu, count=n))), None)


def smallest_gpus(request: Request, gpus: Iterable[Gpu], limit: int = 10, per_segment: int = 2) -> list[Fit]:
    """The smallest catalog GPUs that fit the request whole, segment by segment (consumer, laptop, workstation,
    datacenter, Apple): in each, the fewest devices that fit any card of the segment, then the least memory, at most
    ``per_segment`` per segment. Sorted by device count, then memory; Apple machines count once (no multi-Mac)."""
    by_segment: dict[str, list[Gpu]] = {}
    for gpu in sorted((g for g in gpus if g.family != "generic"), key=lambda g: (g.usable_bytes, g.id)):
        by_segment.setdefault(gpu.segment, []).append(gpu)
    found: list[Fit] = []
    for segment, candidates in by_segment.items():
        # Unified memory does not add up across machines: a Mac or a Strix Halo box counts once.
        counts = (1,) if segment in ("apple", "unified") else GPU_COUNTS
        for count in counts:
            fitting = [g for g in candidates if fits_with_margin(request, GpuChoice(gpu=g, count=count))]
            if fitting:
                found += [
                    fit_gpu(request, GpuChoice(gpu=g, count=count), with_max_context=False)
                    for g in fitting[:per_segment]
                ]
                break
    found.sort(key=lambda f: (f.count, f.usable_bytes, f.gpu))
    return found[:limit]
