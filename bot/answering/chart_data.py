"""What the "📈" chart draws: an answer's memory at every context up to past where it stops fitting.

"It loads, then dies at 20k tokens" is a line crossing a line: the weights, the KV cache and the rest stacked against
the context, each asked GPU's usable memory level, the context where the total crosses it (the calculator's own
largest context, :func:`calc.solve.max_context`, as the card's "Max context" says) and the model's trained limit.
Pure data from the calculator; :mod:`bot.render.chart` draws it.
"""

from __future__ import annotations

from dataclasses import dataclass

from vramfit.calc import Answer, estimate
from vramfit.calc.request import MAX_CONTEXT
from vramfit.calc.solve import max_context

POINTS = 64  # contexts sampled along the axis: smooth enough for a 1,000-pixel line, cheap (an estimate is ~1 ms)
MIN_TOKENS = 256


@dataclass(frozen=True)
class GpuLevel:
    """One asked GPU (or several of one model): its name, the memory a model may use, and the largest context that
    fits with every layer on it (None: not even the smallest)."""

    name: str
    usable_bytes: int
    crossing: int | None


@dataclass(frozen=True)
class ChartSeries:
    model: str
    quant: str
    asked_context: int
    trained_context: int  # the model's limit with its RoPE scaling; 0 when unknown
    contexts: tuple[int, ...]
    weights: tuple[int, ...]  # bytes at each context: the weights on the GPU,
    kv: tuple[int, ...]  # the KV cache (and any recurrent state),
    other: tuple[int, ...]  # compute buffers and the runtime
    gpus: tuple[GpuLevel, ...]

    @property
    def x_max(self) -> int:
        return self.contexts[-1]


def axis_end(asked: int, trained: int, crossings: list[int]) -> int:
    """The context the axis ends at: past the asked context, the trained limit and every crossing, by a quarter, in
    whole thousands of tokens (a 4K minimum)."""
    end = max(asked, trained, *crossings, 4096) * 5 // 4
    return -(-end // 1024) * 1024


def _gpu_name(name: str, count: int) -> str:
    return name if count == 1 else f"{count}× {name}"


def chart_series(answer: Answer) -> ChartSeries:
    """The chart of ``answer``: its request at contexts from 256 tokens to :func:`axis_end`, each a calculator
    estimate, and the GPUs it was asked about (none: no level drawn)."""
    request = answer.request
    arch = request.model.architecture
    trained = arch.context_limit
    # Where the total crosses each GPU's level: memory's own limit, past the model's trained context too (the card's
    # "Max context" stops at the trained limit; the picture shows where memory runs out).
    fits = answer.fits if request.gpus else ()
    gpus = tuple(
        GpuLevel(_gpu_name(f.name, f.count), f.usable_bytes, max_context(request, choice, limit=MAX_CONTEXT))
        for f, choice in zip(fits, request.gpus, strict=False)
    )
    near = 8 * max(request.context, trained, 4096)  # a crossing far past both is left off the axis
    end = axis_end(request.context, trained, [g.crossing for g in gpus if g.crossing and g.crossing <= near])
    step = max(1, (end - MIN_TOKENS) // (POINTS - 1))
    contexts = tuple(sorted({*range(MIN_TOKENS, end, step), end}))
    estimates = [estimate(request.model_copy(update={"context": c})) for c in contexts]
    return ChartSeries(
        model=request.model.name,
        quant=request.quant,
        asked_context=request.context,
        trained_context=trained,
        contexts=contexts,
        weights=tuple(e.weights_bytes for e in estimates),
        kv=tuple(e.kv_cache_bytes + e.recurrent_state_bytes for e in estimates),
        other=tuple(e.compute_bytes + e.runtime_bytes for e in estimates),
        gpus=gpus,
    )
