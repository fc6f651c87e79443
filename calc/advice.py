"""Questions beyond "does it fit": which models fit a GPU, and how two models compare.

``models_that_fit`` ranks the catalog for one GPU: the largest models first, each at the most faithful weight
format that fits whole with the margin at the asked context (models trained for less than that context are left
out). ``compare`` puts two requests side by side and names
the architectural reason their KV caches differ (head size, layers, KV heads, sliding window, MLA), because
people compare models by parameter count and miss exactly that.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from vramfit.calc.architecture import Architecture
from vramfit.calc.engines import estimate, fit_gpu, fits_with_margin, models
from vramfit.calc.fit import Verdict
from vramfit.calc.kv import kv_bytes_per_token
from vramfit.calc.model_limits import beyond_trained_context
from vramfit.calc.presets import ModelPreset
from vramfit.calc.request import Engine, GpuChoice, Request
from vramfit.calc.results import Estimate, Fit
from vramfit.calc.solve import VLLM_QUANT_LADDER

# The K-quant line, most faithful first; sizes fall monotonically along it (see tests/calc/test_properties.py), so the
# best format that fits is found by bisection. Below Q3_K_M quality drops too far to recommend. vLLM: its own
# checkpoints (BF16, FP8, INT4).
WHAT_FITS_LADDER = ("F16", "Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q3_K_M")


class ModelFit(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    model: str
    name: str
    family: str
    params: int
    quant: str
    fit: Fit


def models_that_fit(
    template: Request,
    catalog_models: Iterable[ModelPreset],
    choice: GpuChoice,
    *,
    per_family: int = 2,
    limit: int = 10,
) -> list[ModelFit]:
    """Catalog models that fit ``choice`` whole at the template's context, users and KV type, largest first."""
    ranked: list[ModelFit] = []
    ladder = VLLM_QUANT_LADDER if template.engine == Engine.VLLM else WHAT_FITS_LADDER
    for preset in catalog_models:
        if not models(template.engine, preset.architecture):
            continue  # the engine's profile refuses this architecture: it is left out, not guessed
        if beyond_trained_context(preset.architecture, template.context):
            continue  # trained for less than the asked context: it would fit, but not serve it
        request = template.model_copy(update={"model": preset.ref()})
        quant = best_on_ladder(request, choice, ladder)
        if quant is None:
            continue
        candidate = request.model_copy(update={"quant": quant})
        fit = fit_gpu(candidate, choice, with_max_context=False)
        ranked.append(
            ModelFit(
                model=preset.id,
                name=preset.name,
                family=preset.family,
                params=estimate(candidate).params,
                quant=quant,
                fit=fit,
            )
        )
    ranked.sort(key=lambda m: (-m.params, ladder.index(m.quant), m.model))
    chosen: list[ModelFit] = []
    families: dict[str, int] = {}
    for item in ranked:
        if families.get(item.family, 0) >= per_family:
            continue
        families[item.family] = families.get(item.family, 0) + 1
        chosen.append(item)
        if len(chosen) >= limit:
            break
    return chosen


def best_on_ladder(request: Request, choice: GpuChoice, ladder: tuple[str, ...]) -> str | None:
    """The first format on a size-ordered ladder that fits, by bisection (fewest quant mixes computed)."""
    low, high = 0, len(ladder)  # answer in [low, high); high means none fits
    if not fits_with_margin(request.model_copy(update={"quant": ladder[-1]}), choice):
        return None
    high = len(ladder) - 1
    while low < high:
        mid = (low + high) // 2
        if fits_with_margin(request.model_copy(update={"quant": ladder[mid]}), choice):
            high = mid
        else:
            low = mid + 1
    return ladder[low]


class KvFactor(StrEnum):
    """Why one model's KV cache per token differs from another's."""

    HEAD_DIM = "head_dim"
    LAYERS = "layers"
    KV_HEADS = "kv_heads"
    SLIDING_WINDOW = "sliding_window"
    MLA = "mla"


class KvReason(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    factor: KvFactor
    a: int
    b: int


class Comparison(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    a: Estimate
    b: Estimate
    fit_a: Fit | None
    fit_b: Fit | None
    kv_per_token_a: int
    kv_per_token_b: int
    reasons: tuple[KvReason, ...]


def kv_reasons(a: Architecture, b: Architecture) -> tuple[KvReason, ...]:
    """The architectural differences behind a KV-per-token gap, largest ratio first."""
    reasons: list[tuple[float, KvReason]] = []

    def add(factor: KvFactor, va: int, vb: int) -> None:
        if va != vb and min(va, vb) > 0:
            reasons.append((max(va, vb) / min(va, vb), KvReason(factor=factor, a=va, b=vb)))

    if a.is_mla != b.is_mla:
        reasons.append((100.0, KvReason(factor=KvFactor.MLA, a=int(a.is_mla), b=int(b.is_mla))))
    add(KvFactor.HEAD_DIM, a.head_dim_k, b.head_dim_k)
    add(KvFactor.KV_HEADS, a.typical_kv_heads, b.typical_kv_heads)
    add(KvFactor.LAYERS, a.kv_layers, b.kv_layers)
    if bool(a.sliding_window) != bool(b.sliding_window):
        reasons.append((1.5, KvReason(factor=KvFactor.SLIDING_WINDOW, a=a.sliding_window, b=b.sliding_window)))
    reasons.sort(key=lambda item: -item[0])
    return tuple(reason for _, reason in reasons)


def compare(a: Request, b: Request) -> Comparison:
    """Two requests side by side (each on the first named GPU, if any)."""
    fit_a = fit_gpu(a, a.gpus[0], with_max_context=False) if a.gpus else None
    fit_b = fit_gpu(b, b.gpus[0], with_max_context=False) if b.gpus else None
    return Comparison(
        a=estimate(a),
        b=estimate(b),
        fit_a=fit_a,
        fit_b=fit_b,
        kv_per_token_a=kv_bytes_per_token(a.model.architecture, a.kv_cache),
        kv_per_token_b=kv_bytes_per_token(b.model.architecture, b.kv_cache),
        reasons=kv_reasons(a.model.architecture, b.model.architecture),
    )


def fits_whole(fit: Fit) -> bool:
    return fit.verdict in (Verdict.FITS, Verdict.TIGHT)
