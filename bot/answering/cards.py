"""What a card needs, whatever renders it (an embed, the terminal, JSON), and the function type that produces it.

The Discord side calls an :data:`Answerer` ``(text, lang, overrides) -> AnyCard``: ``text`` is the free-text
question (may be empty when ``overrides`` names the model), ``lang`` the language the caller already knows
(``None``: the question's own language), and ``overrides`` the structured options that win over the text
(:class:`Overrides`). The answer is the card for the question's intent: a :class:`Card` (does it fit; with a solver's
number in ``solution``, or both engines in ``engines``), a :class:`WhatFitsCard` or a :class:`CompareCard`.
:mod:`bot.answering.service` builds them from the parser and :mod:`bot.answering.resolve`; tests plug in a
deterministic fake. Errors are :class:`bot.errors.AnswerError` with the stable codes of the JSON contract
(``unknown_model``, ``unknown_gpu``, ``unknown_quant``, ``bad_number``, ...), a kind of calc's ``VramfitError``; cards
hold plain numbers.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal, TypedDict, cast

from pydantic import ValidationError

from vramfit.bot.answering.chart_data import ChartSeries
from vramfit.bot.i18n import Lang
from vramfit.bot.sources.cache import RemoteCache
from vramfit.calc.architecture import Architecture
from vramfit.calc.fit_params import FitDefault
from vramfit.calc.ram_speed import RamKind, RamSpeed
from vramfit.calc.request import ModelRef
from vramfit.calc.server_caches import ServerCaches
from vramfit.calc.speed import DecodeSpeed

Verdict = Literal["fits", "tight", "partial", "no"]
TipKind = Literal["context", "kv_cache", "quant", "gpus"]
Intent = Literal["fit", "what_fits", "compare", "max_context", "max_users", "best_quant", "min_gpus"]
SolveKind = Literal["max_context", "max_users", "best_quant", "min_gpus"]
INTENTS: tuple[Intent, ...] = ("fit", "what_fits", "compare", "max_context", "max_users", "best_quant", "min_gpus")


class Overrides(TypedDict, total=False):
    """Structured options; each one wins over what the text says."""

    model: str
    gpu: str
    gpu_count: int
    gpus: tuple[tuple[str, int], ...]  # fully resolved (id, count) pairs, as buttons carry them
    quant: str
    kv_cache: str
    context: int
    users: int
    engine: str
    flash_attn: bool
    intent: Intent  # answer this question instead of the text's own ("what_fits" for /vram-fit, ...)
    compare_model: str  # the second model of a comparison (intent "compare")
    model_prefix: str  # what fits: only preset models whose id starts with this ("qwen")
    engines: bool  # llama.cpp and vLLM side by side
    ram_gb: int  # the system RAM the question named, in whole GB (GiB, as the parser reads "64GB RAM")
    ram_speed: str  # its kind, rate and channels as ram_speed_code writes them ("ddr4-3200x2")
    runner: str  # "ollama": the question named Ollama, whose defaults apply (calc.ollama)
    reserved_mib: int  # GPU memory other programs already hold, in MiB, as the question said it ("1.5gb already used")
    images: bool  # images are sent: the vision projector is loaded and counted
    mtp: bool  # llama.cpp drafts with the model's own MTP head
    draft: str  # a draft model's preset id (speculative decoding), as buttons and --draft carry it
    draft_quant: str  # its file type
    gpu_size_assumed: bool  # the question named a GPU sold in several sizes without one (Card.gpu_variant)
    model_ref: ModelRef  # a model read from a file (an attached config.json): wins over any model the text names


def given_options(overrides: Overrides, **options: object) -> Overrides:
    """``overrides`` with each of ``options`` that was given, in the order given: an option left empty (a slash
    command's, say) is None, and the question's words or the defaults decide it."""
    for key, value in options.items():
        if value is not None:
            overrides[key] = value  # type: ignore[literal-required]
    return overrides


@dataclass(frozen=True, slots=True)
class ModelInfo:
    id: str
    name: str
    params: int = 0  # 0: unknown
    layers: int = 0
    kv_heads: int = 0
    head_dim: int = 0
    sliding_window: int = 0
    trained_context: int = 0  # what the model was trained for (0: unknown)
    scaled_context: int = 0  # what the RoPE scaling its config declares reaches (0: none)
    rope_scaling: str = ""  # that scaling, as "yarn ×4"
    source_url: str = ""  # a model read from a Hub file's header: that file's URL
    source_file: str = ""
    source_revision: str = ""
    # "attachment": read from a config.json attached to the question (source_file names it); "safetensors": read from
    # a repo's config.json and safetensors headers, not a file's header
    source_kind: str = ""
    mmproj: str = ""  # the repo's vision projector (llama-server --mmproj FILE), "" when it has none
    mmproj_bytes: int = 0  # what loading it adds on the GPU
    vision_encoder: bool = False  # its config.json describes a vision encoder that no number counts (ModelRef)
    attention_sinks: bool = False  # learned per-head sinks (gpt-oss): a quantized K cache costs more (labels.py)


def rope_scaling_label(arch: Architecture) -> str:
    """ "yarn ×4" for a RoPE scaling that extends the model's context (calc.model_limits), "" otherwise."""
    if not arch.rope_scaled_context:
        return ""
    return f"{arch.rope_scaling_type} ×{arch.rope_scaling_factor:g}"


# The settings every answer depends on, in one place: a card's footer echoes them, its buttons carry them, and
# :meth:`Card.overrides` reproduces the question from them.
SETTINGS: tuple[str, ...] = ("quant", "context", "users", "kv_cache", "engine", "flash_attn")


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """The settings every answer depends on (:data:`SETTINGS`), as a card and a button carry them."""

    quant: str
    context: int
    users: int
    kv_cache: str
    engine: str
    flash_attn: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Assumptions(Settings):
    """Every setting the numbers depend on (all echoed in the card's footer)."""

    kv_bytes_per_element: float = 2.0


@dataclass(frozen=True, slots=True)
class Estimate:
    file_bytes: int
    weights_bytes: int
    host_bytes: int
    kv_cache_bytes: int
    kv_cache_naive_bytes: int
    compute_bytes: int
    runtime_bytes: int
    total_bytes: int
    kv_pool_tokens: int = 0  # vLLM: tokens the KV pool holds on the named GPU (0: not vLLM, or no GPU named)
    recurrent_state_bytes: int = 0  # hybrid models' recurrent layers: per sequence, not per token
    vision_bytes: int = 0  # images sent: the vision projector's weights and measured warmup compute, in the total
    vision_compute_bytes: int = 0  # the compute part of vision_bytes (0: not measured for this projector)
    draft_bytes: int = 0  # a draft model's weights, KV and compute on the GPUs, in the total
    draft_weights_bytes: int = 0
    draft_kv_bytes: int = 0
    draft_compute_bytes: int = 0
    mtp_bytes: int = 0  # drafting with the model's own MTP head, in the total
    mtp_head_bytes: int = 0  # what that would add (0: no head llama.cpp can use)
    effective_params: int | None = None  # per-layer-embedding models: parameters without the tables kept in RAM

    @property
    def overhead_bytes(self) -> int:
        return self.compute_bytes + self.runtime_bytes


@dataclass(frozen=True, slots=True)
class ExpertPlan:
    """A MoE model on the GPU with the routed experts of its first ``n_cpu_moe`` blocks in system RAM."""

    n_cpu_moe: int
    blocks: int  # blocks with routed experts
    all_experts: bool  # --cpu-moe
    gpu_bytes: int
    host_bytes: int
    ram_fits: bool
    decode: Speed | None = None
    prefill: Speed | None = None  # prompt tokens per second, the experts crossing PCIe per micro-batch (calc.speed)
    moved: int = 0  # expert blocks whose experts are in RAM (n_cpu_moe counts dense leading blocks too)


# Tokens per second of one sequence and its band (decode, or prompt processing): the calculator's own three numbers
# (calc.speed), which a card holds as they are.
Speed = DecodeSpeed


@dataclass(frozen=True, slots=True)
class GpuFit:
    """One GPU (times ``count``) against the estimate."""

    gpu_id: str
    gpu_name: str
    count: int
    memory_bytes: int  # nominal memory of one device
    verdict: Verdict
    gpu_layers: int
    layers: int
    headroom_bytes: int  # negative when it does not fit
    segment: str = "consumer"  # consumer / laptop / workstation / datacenter / apple / generic
    usable_bytes: int = 0  # what the model may use (all of memory_bytes × count, less on Apple); 0: same as nominal
    max_context: int | None = None  # the largest context that fits here, if computed
    host_bytes: int = 0  # system RAM this placement needs
    ram_bytes: int = 0  # the system RAM asked about or assumed; 0: unified memory (no separate RAM)
    ram_usable_bytes: int = 0
    ram_fits: bool = True
    expert_plan: ExpertPlan | None = None  # MoE models that do not fit whole: the --n-cpu-moe plan
    server_caches: ServerCaches | None = None  # llama-server's checkpoints and prompt cache for the command's placement
    fit_default: FitDefault | None = None  # what llama-server's --fit picks for the plain `llama-server -m MODEL`
    decode: Speed | None = None  # decode speed with every layer (or what fits) on the GPU
    prefill: Speed | None = None  # prompt tokens per second (rough; with layers on the CPU, their PCIe copies)
    pcie_assumed: bool = False  # the prefill moved weights over a link the preset does not state (PCIe 4.0 x16)
    ram_speed: RamSpeed | None = None  # the system RAM the decode read weights from (None: it read none there)
    ram_speed_assumed: bool = False  # that speed is calc.ram_speed.ASSUMED_RAM_SPEED: the question named none

    @property
    def total_memory_bytes(self) -> int:
        return self.memory_bytes * self.count

    @property
    def budget_bytes(self) -> int:
        return self.usable_bytes or self.total_memory_bytes


@dataclass(frozen=True, slots=True)
class Tip:
    """A change that helps when the named GPU is short, with the total it leads to."""

    kind: TipKind
    value: str  # "16384", "q8_0", "Q3_K_M", "2"
    total_bytes: int
    verdict: Verdict
    usable_bytes: int = 0  # what the GPU(s) of the tip may hold
    lower_quality: bool = False  # a quant below Q3_K_M: people should know what it costs
    buffer_bytes: int = 0  # a quantized KV cache: what it adds to the compute buffers (CUDA's f16 copy of a layer)


@dataclass(frozen=True, slots=True)
class Solution:
    """A solver's answer: the largest context, the most users or the best quant on one GPU."""

    kind: SolveKind
    value: str | None  # "57344", "10", "Q5_K_M"; None: not even the smallest setting fits
    gpu_name: str
    count: int = 1


@dataclass(frozen=True, slots=True)
class Card:
    """Everything one answer card shows."""

    lang: Lang  # the question's language
    model: ModelInfo
    assumptions: Assumptions
    estimate: Estimate
    fits: tuple[GpuFit, ...]
    named_gpus: bool  # True: ``fits`` are the GPUs the user named; False: preset suggestions
    gpus: tuple[tuple[str, int], ...] = ()  # the named GPUs as (id, count), to recompute
    tips: tuple[Tip, ...] = ()
    notes: tuple[str, ...] = ()  # codes the renderer explains, e.g. "sliding_window"
    stateful: bool = True  # False: the model is not a preset, so buttons cannot recompute the card
    solution: Solution | None = None  # a solver's number; the card shows the answer at that number
    engines: tuple[Card, ...] = ()  # the same question on each engine (llama.cpp, vLLM); this card is the first
    unparsed: tuple[str, ...] = ()  # words of the question no setting took ("5090ti", "q9"); the card says them
    quant_mix: str = ""  # an uploader's mix asked for ("UD-Q4_K_XL") and sized as the card's standard quant
    asks_display_share: bool = False  # a display runs on the card and its share was not said: the card asks for it
    speed_first: bool = False  # the question asked how fast ("몇 토큰 나와?"): the card leads with the speed
    source_unread: str = ""  # a repo or tag whose server could not be read: the card is its preset's answer instead
    command: str = ""  # llama-server command that reproduces the answer on the first named GPU, when it runs there
    ram_assumed: bool = False  # the question named no RAM size and RAM matters here (something stays on the CPU)
    ollama_split: tuple[int, int] | None = None  # asked on Ollama: what `ollama ps` would show, (CPU %, GPU %)
    ram_gb: int = 0  # the system RAM the question named, whole GB (0: none named, or not a whole number)
    ram_speed: str = ""  # its speed as ram_speed_code writes it ("": none named)
    runner: str = ""  # "ollama" when the question named Ollama
    reserved_mib: int = 0  # GPU memory other programs already hold, MiB (0: none said)
    # the question named a GPU sold in several memory sizes without one: the first such GPU's name as answered (its
    # most common size) and the names of its other sizes; the card says so and how to ask for another
    gpu_variant: tuple[str, tuple[str, ...]] | None = None
    images: bool = False  # the question sends images: the vision projector is in the numbers (or said unknown)
    mtp: bool = False  # drafting with the model's own MTP head, counted
    draft: str = ""  # a draft model's preset id (speculative decoding); "" none
    draft_name: str = ""
    draft_quant: str = ""

    @property
    def intent(self) -> Intent:
        return self.solution.kind if self.solution is not None else "fit"

    def overrides(self) -> Overrides:
        """Overrides that reproduce this card without the original text."""
        out = Overrides(model=self.model.id, gpus=self.gpus)
        out.update(settings_of(self.assumptions))
        if self.solution is not None:
            out["intent"] = self.solution.kind
        if self.engines:
            out["engines"] = True
        out.update(machine_overrides(self.ram_gb, self.ram_speed, self.runner, self.reserved_mib, self.images))
        if self.draft:
            out["draft"], out["draft_quant"] = self.draft, self.draft_quant
        if self.mtp:
            out["mtp"] = True
        if self.gpu_variant is not None:
            out["gpu_size_assumed"] = True
        return out


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """One model on a what-fits card: the most faithful quant that fits, its total and what is left."""

    model_id: str
    name: str
    family: str
    params: int
    quant: str
    total_bytes: int
    headroom_bytes: int
    verdict: Verdict


@dataclass(frozen=True, slots=True)
class WhatFitsCard:
    """The preset models that fit one GPU at a context, largest first, a few per family."""

    lang: Lang
    gpu_id: str
    gpu_name: str
    count: int
    memory_bytes: int  # nominal memory of one device
    usable_bytes: int  # what the models may use, all devices together
    assumptions: Assumptions  # context, users, KV cache and engine of every row (quant: the ladder's top)
    models: tuple[ModelChoice, ...]
    model_prefix: str = ""  # only preset models whose id starts with this ("": all)
    stateful: bool = True  # False: the settings cannot be recomputed from a button
    unparsed: tuple[str, ...] = ()  # words of the question no setting took; the card says them

    @property
    def intent(self) -> Intent:
        return "what_fits"

    @property
    def gpus(self) -> tuple[tuple[str, int], ...]:
        return ((self.gpu_id, self.count),)

    def overrides(self) -> Overrides:
        out = Overrides(intent="what_fits")
        out.update(settings_of(self.assumptions))
        del out["quant"]  # what fits: each model's quant is what the card finds
        out["gpus"] = self.gpus
        if self.model_prefix:
            out["model_prefix"] = self.model_prefix
        return out


@dataclass(frozen=True, slots=True)
class KvDifference:
    """One architectural reason two models' KV caches differ (values of model a and model b)."""

    factor: str  # "head_dim", "layers", "kv_heads", "sliding_window", "mla"
    a: int
    b: int


@dataclass(frozen=True, slots=True)
class CompareCard:
    """Two models side by side under the same settings, and why their KV caches differ."""

    lang: Lang
    a: Card
    b: Card
    kv_per_token: tuple[int, int]  # bytes per token of context, full-attention layers, a and b
    reasons: tuple[KvDifference, ...]  # largest ratio first
    unparsed: tuple[str, ...] = ()  # words no setting took, and the models past the two compared; the card says them

    @property
    def intent(self) -> Intent:
        return "compare"

    @property
    def stateful(self) -> bool:
        return self.a.stateful and self.b.stateful

    def overrides(self) -> Overrides:
        out = self.a.overrides()
        out["intent"] = "compare"
        out["compare_model"] = self.b.model.id
        return out


AnyCard = Card | WhatFitsCard | CompareCard
"""What an answer can be: the fit card (with a solver's number or both engines), what fits a GPU, or a comparison."""


def with_unread(card: AnyCard, words: tuple[str, ...]) -> AnyCard:
    """``card`` saying ``words`` as not understood, after what it already says: nothing asked is dropped silently."""
    if not words:
        return card
    return replace(card, unparsed=(*card.unparsed, *words))


Answerer = Callable[[str, Lang | None, Overrides], AnyCard]
"""``(text, lang, overrides) -> AnyCard``; raises :class:`AnswerError` for questions the user must fix."""

Suggester = Callable[[str], list[tuple[str, str]]]
"""``current -> [(label, value), ...]`` for autocomplete (at most 25)."""


@dataclass(frozen=True, slots=True)
class Backend:
    """What the bot needs from the calculator: the answerer and the autocomplete sources."""

    answer: Answerer
    suggest_models: Suggester
    suggest_gpus: Suggester
    # Where remote reads (a Hub file's header, an Ollama tag's) are kept: the bot gives its store once it is open;
    # None (a fake backend) ignores it.
    use_remote_cache: Callable[[RemoteCache | None], None] | None = None
    # A card already answered for exactly this question, or None; cheap enough to call on the event loop (the bot
    # then needs no worker thread for it). None (a fake backend): every question goes to a worker.
    cached: Callable[[str, Lang | None, Overrides], AnyCard | None] | None = None
    # What the "📈" chart of a card's settings draws (bot.render.chart draws it); None (a fake backend): no chart.
    chart: Callable[[Overrides], ChartSeries] | None = None
    # Compute ahead what every question needs (seconds of CPU once); the bot runs it before it connects. None: none.
    warm: Callable[[], None] | None = None
    # A module-level function that builds this backend again in another process, where the bot computes answers
    # (bot.answering.processes); None (a fake backend, whose calls tests count): answers stay in the bot's threads.
    process_factory: Callable[[], Backend] | None = None
    # Keep a card computed elsewhere (a worker process) so that ``cached`` finds it; None: nothing kept.
    remember: Callable[[str, Lang | None, Overrides, AnyCard], None] | None = None
    quants: tuple[str, ...] = (
        "Q4_K_M",
        "Q5_K_M",
        "Q6_K",
        "Q8_0",
        "F16",
        "BF16",
        "Q4_0",
        "Q4_K_S",
        "Q5_0",
        "Q5_K_S",
        "Q3_K_M",
        "Q3_K_L",
        "Q3_K_S",
        "Q2_K",
        "IQ4_XS",
        "IQ4_NL",
        "IQ3_XXS",
        "IQ2_XS",
        "FP8",
        "INT4",
        "F32",
    )


def settings_of(source: object) -> Overrides:
    """The :data:`SETTINGS` of anything that has them as attributes (card assumptions, a button's state)."""
    return cast(Overrides, {name: getattr(source, name) for name in SETTINGS})


def machine_overrides(
    ram_gb: int, ram_speed: str, runner: str, reserved_mib: int = 0, images: bool = False
) -> Overrides:
    """The question's machine as a card and its buttons carry it: the RAM named, its speed, Ollama, the GPU memory
    other programs hold, whether images are sent (each only when the question said it)."""
    out = Overrides()
    if images:
        out["images"] = True
    if reserved_mib:
        out["reserved_mib"] = reserved_mib
    if ram_gb:
        out["ram_gb"] = ram_gb
    if ram_speed:
        out["ram_speed"] = ram_speed
    if runner:
        out["runner"] = runner
    return out


_RAM_SPEED_CODE = re.compile(r"(ddr[45])-(\d{4,5})x(\d{1,2})")


def ram_speed_code(speed: RamSpeed | None) -> str:
    """A RAM speed as buttons carry it: "ddr4-3200x2" (kind, MT/s, channels); "" for none."""
    return f"{speed.kind}-{speed.mts}x{speed.channels}" if speed is not None else ""


def ram_speed_of(code: str) -> RamSpeed:
    """:func:`ram_speed_code`'s output read back; raises ``ValueError`` on anything else."""
    found = _RAM_SPEED_CODE.fullmatch(code)
    if found is None:
        raise ValueError(f"bad RAM speed: {code!r}")
    kind: RamKind = "ddr4" if found[1] == "ddr4" else "ddr5"
    try:
        return RamSpeed(kind=kind, mts=int(found[2]), channels=int(found[3]))
    except ValidationError as exc:
        raise ValueError(f"bad RAM speed: {code!r}") from exc
