"""From a parsed question to the calculator's answer for its intent (pure: no Discord, no printing).

fit → the estimate and the fit on each GPU; what_fits → the catalog models that fit the named GPU; compare → two
models side by side; max_context / max_users / best_quant → the solver's number and the answer at that number.
"llama.cpp vs vllm" in a question answers with both engines.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from vramfit.bot.answering.cpu_budget import spend
from vramfit.bot.parser import ParsedQuery
from vramfit.calc.advice import Comparison, ModelFit, compare, models_that_fit
from vramfit.calc.errors import UnknownGpuError
from vramfit.calc.estimate import answer
from vramfit.calc.fit import Verdict
from vramfit.calc.presets import Catalog, load_catalog
from vramfit.calc.request import Engine, GpuChoice, ModelRef, Request
from vramfit.calc.results import Answer, Fit
from vramfit.calc.solve import best_file, best_quant, max_context, max_users, min_gpus

SolveKind = Literal["max_context", "max_users", "best_quant", "min_gpus"]
EXAMPLE_MODEL = "llama-3.1-8b"  # stands in for "any model" in a what-fits template; replaced per model


class FitResult(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    intent: Literal["fit"] = "fit"
    answer: Answer
    engines: tuple[Answer, ...] = ()  # llama.cpp and vLLM side by side, when both were asked for


class WhatFitsResult(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    intent: Literal["what_fits"] = "what_fits"
    gpu: GpuChoice
    template: Request
    models: tuple[ModelFit, ...]


class CompareResult(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    intent: Literal["compare"] = "compare"
    a: Request
    b: Request
    comparison: Comparison


class SolveResult(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    intent: SolveKind
    gpu: GpuChoice
    value: int | str | None  # None: not even the smallest setting fits
    answer: Answer  # the card at that number (or at the asked settings when nothing fits)


IntentResult = FitResult | WhatFitsResult | CompareResult | SolveResult

# The request field each solver fills in: no longer an assumption once solved.
SOLVED_FIELD: dict[str, str] = {
    "max_context": "context", "max_users": "users", "best_quant": "quant", "min_gpus": "gpus",
}  # fmt: skip


def still_assumed(result: IntentResult, assumed: tuple[str, ...]) -> tuple[str, ...]:
    """The parser's assumptions minus the field the intent's solver answered."""
    solved = SOLVED_FIELD.get(result.intent)
    # The assumed RAM size matters only where something stays on the CPU, or where the command cuts llama-server's
    # caches to it: said there, and nowhere else.
    ram_matters = any(
        (fit.verdict in (Verdict.PARTIAL, Verdict.NO) and fit.ram_bytes)
        or (fit.server_caches is not None and not fit.server_caches.is_default)
        for fit in _fits(result)
    )
    # The assumed RAM speed matters only where the decode estimate reads weights from system RAM (calc.ram_speed).
    speed_matters = any(fit.ram_speed is not None for fit in _fits(result))
    kept = tuple(
        a for a in assumed if a != solved and (a != "ram" or ram_matters) and (a != "ram_speed" or speed_matters)
    )
    # A prefill estimate that moved weights over a host link the GPU's preset does not state (calc.pcie).
    pcie = ("pcie",) if any(fit.pcie_assumed for fit in _fits(result)) and "pcie" not in kept else ()
    return kept + pcie


def _fits(result: IntentResult) -> tuple[Fit, ...]:
    if isinstance(result, (FitResult, SolveResult)):
        return result.answer.fits
    return ()


def _first_gpu(parsed: ParsedQuery, request: Request | None, lang: str) -> GpuChoice:
    if request is not None and request.gpus:
        return request.gpus[0]
    if parsed.gpus:
        return parsed.gpus[0]
    raise UnknownGpuError(
        "this question needs a GPU",
        suggestions=["rtx-3060-12gb", "rtx-4090", "apple-m2-16gb"],
        reason="gpu_needed",
        lang=lang,
    )


def _best_of_files(
    request: Request, choice: GpuChoice, files: Iterable[tuple[str, ModelRef]]
) -> tuple[str | None, Request]:
    """The best quant among GGUF files (quant label, model read from its header), most faithful first: the first
    whose own numbers fit, and the request at that file; when none fits, None and the request at the last file
    looked at (the smallest)."""
    seen: list[tuple[str, ModelRef]] = []

    def tracked() -> Iterable[tuple[str, ModelRef]]:
        for candidate in files:
            seen.append(candidate)
            yield candidate

    found = best_file(request, choice, tracked())
    quant, model = found or (seen[-1] if seen else (request.quant, request.model))
    return (quant if found else None), request.model_copy(update={"model": model, "quant": quant})


def resolve(
    parsed: ParsedQuery,
    catalog: Catalog | None = None,
    quant_files: Iterable[tuple[str, ModelRef]] | None = None,
    **overrides: Any,
) -> IntentResult:
    """Answer ``parsed`` for its intent; ``overrides`` are Request fields given as flags or slash options.
    ``quant_files``: for best_quant on a Hub GGUF repo, the repo's own files (quant label, model read from its
    header), most faithful first: the answer is the first that fits, never a quant the repo does not have. A model
    read from one GGUF file and no such list: that file is the only quant there is."""
    catalog = catalog or load_catalog()
    gpus = tuple(catalog.gpus.values())
    if parsed.intent == "what_fits" and not (overrides.get("model") or parsed.model):
        template = parsed.to_request(catalog=catalog, model=EXAMPLE_MODEL, **overrides)
        choice = _first_gpu(parsed, template, parsed.lang)
        pool = [catalog.models[i] for i in parsed.model_candidates] or list(catalog.models.values())
        ranked = models_that_fit(template, spend(pool), choice)  # within the question's CPU budget
        return WhatFitsResult(gpu=choice, template=template, models=tuple(ranked))
    request = parsed.to_request(catalog=catalog, **overrides)
    if parsed.intent == "compare" and parsed.compare_model:
        other = parsed.compare_request(catalog=catalog, **overrides)
        return CompareResult(a=request, b=other, comparison=compare(request, other))
    if parsed.intent in ("max_context", "max_users", "best_quant", "min_gpus"):
        choice = _first_gpu(parsed, request, parsed.lang)
        if not request.gpus:
            request = request.model_copy(update={"gpus": (choice,)})
        value: int | str | None
        if parsed.intent == "max_context":
            value = max_context(request, choice)
            at = request.model_copy(update={"context": value}) if value else request
        elif parsed.intent == "max_users":
            value = max_users(request, choice)
            at = request.model_copy(update={"users": value}) if value else request
        elif parsed.intent == "best_quant" and (quant_files is not None or request.model.gguf is not None):
            value, at = _best_of_files(request, choice, quant_files or ((request.quant, request.model),))
        elif parsed.intent == "best_quant":
            value = best_quant(request, choice)
            at = request.model_copy(update={"quant": value}) if value else request
        else:
            value = min_gpus(request, choice)
            if value:
                choice = GpuChoice(gpu=choice.gpu, count=value)
            at = request.model_copy(update={"gpus": (choice,)})
        return SolveResult(intent=parsed.intent, gpu=choice, value=value, answer=answer(at, gpus))
    main = answer(request, gpus)
    if parsed.compare_engines and "engine" not in overrides:
        other_engine = Engine.VLLM if request.engine == Engine.LLAMA_CPP else Engine.LLAMA_CPP
        second = answer(request.model_copy(update={"engine": other_engine}), gpus)
        return FitResult(answer=main, engines=(main, second))
    return FitResult(answer=main)
