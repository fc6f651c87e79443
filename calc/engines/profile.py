"""What an engine profile provides: the functions :mod:`calc.engines` dispatches to, one set per engine."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from vramfit.calc.architecture import Architecture
from vramfit.calc.request import GpuChoice, Request
from vramfit.calc.results import Estimate, Fit


@dataclass(frozen=True, slots=True)
class EngineProfile:
    """One engine's memory behaviour. Engines never call each other; shared pieces live outside ``calc.engines``."""

    estimate: Callable[[Request, int | None, str | None], Estimate]  # (request, gpu count, backend)
    total_bytes: Callable[[Request, int, str], int]  # estimate(...).total_bytes, for the solvers' many probes
    fit: Callable[[Request, GpuChoice, bool], Fit]  # (request, choice, with its largest context)
    runs_on_gpu: Callable[[Request, GpuChoice], bool]  # every layer on the GPU (tight allowed)
    fits_with_margin: Callable[[Request, GpuChoice], bool]  # whole, with the tight margin left
    models: Callable[[Architecture], bool] = lambda arch: True  # False: the profile refuses this architecture
