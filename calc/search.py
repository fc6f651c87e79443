"""Bisection over a monotone predicate, and the largest context a request can take with a given test.

Memory never decreases with context, users or bits (property-tested in tests/calc/test_properties.py), so every numeric
solver bisects: the engine profiles use this for a fit's largest context, :mod:`calc.solve` for the solvers.
"""

from __future__ import annotations

from collections.abc import Callable

from vramfit.calc.request import MAX_CONTEXT, GpuChoice, Request

CONTEXT_STEP = 256  # llama.cpp pads contexts to 256 cells, and --fit rounds down to 256 too


def largest(ok: Callable[[int], bool], low: int, high: int, step: int = 1) -> int | None:
    """Largest multiple of ``step`` in [low, high] with ok() true, assuming ok is monotone (true, then false)."""
    lo, hi = low // step, high // step
    if lo < 1 or not ok(lo * step):
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ok(mid * step):
            lo = mid
        else:
            hi = mid - 1
    return lo * step


def largest_context(
    request: Request, choice: GpuChoice, runs: Callable[[Request, GpuChoice], bool], limit: int | None = None
) -> int | None:
    """Largest context per user (a multiple of 256) for which ``runs`` holds on ``choice``, up to the model's
    training context (with no cap when the question already asks for more)."""
    trained = request.model.architecture.context_limit
    # Within the training context the model's own limit caps the answer; a question already past it (RoPE scaling)
    # gets the memory limit alone.
    ceiling = min(limit or (trained if request.context <= trained else MAX_CONTEXT), MAX_CONTEXT)
    ceiling = max(ceiling, CONTEXT_STEP)

    def fits_at(context: int) -> bool:
        return runs(request.model_copy(update={"context": context}), choice)

    return largest(fits_at, CONTEXT_STEP, ceiling, CONTEXT_STEP)
