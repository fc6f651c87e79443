"""Timing helpers the benchmark scripts share: percentiles of samples, and a function timed over many calls."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def percentiles(samples: list[float]) -> tuple[float, float]:
    """(p50, p99) of ``samples``."""
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def timed(
    fn: Callable[[], object], runs: int, *, before: Callable[[], None] | None = None, warm: bool = False
) -> tuple[float, float]:
    """p50 and p99 milliseconds of ``runs`` calls; ``before`` runs untimed before each (to clear caches), ``warm``
    makes one untimed call first (the caches a running bot or a second CLI call would have)."""
    if warm:
        fn()
    samples = []
    for _ in range(runs):
        if before is not None:
            before()
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return percentiles(samples)
