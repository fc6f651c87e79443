"""The answer to a request: the estimate and the fit on each named GPU, or on the smallest catalog GPUs that fit.

Every number comes from the engine profile of the request (:mod:`calc.engines`); this module only puts them
together. ``estimate`` and ``fit_gpu`` are the engine dispatch's, named here too as the package's entry points.
"""

from __future__ import annotations

from vramfit.calc.engines import estimate, fit_gpu
from vramfit.calc.gpu import Gpu
from vramfit.calc.request import Request
from vramfit.calc.results import Answer
from vramfit.calc.solve import smallest_gpus

__all__ = ["answer", "estimate", "fit_gpu"]


def answer(request: Request, catalog_gpus: tuple[Gpu, ...] = (), suggestions: int = 10) -> Answer:
    """The estimate and the fit on each named GPU, or on the smallest catalog GPUs that fit."""
    est = estimate(request)
    if request.gpus:
        fits = tuple(fit_gpu(request, choice) for choice in request.gpus)
    else:
        fits = tuple(smallest_gpus(request, catalog_gpus, limit=suggestions))
    return Answer(request=request, estimate=est, fits=fits)
