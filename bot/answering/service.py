"""The answering service the bot calls: the parser + :func:`bot.answering.resolve.resolve`, made into a card, with a
cache of finished cards (the :class:`bot.answering.cards.Backend` the bot is given; tests give it a fake one).

Every intent is resolved by :mod:`bot.answering.resolve`: does it fit (also on both engines), what fits a GPU, two
models compared, and the solvers (largest context, most users, best quant). Building a card also reads a few
figures off calc's results (the fits per GPU, the tips when a GPU is short). Structured overrides
(slash options, a button's packed state) may set the intent themselves, so ``/vram-fit`` and a button on a
what-fits card need no text.

Imports of the parser and the calculator happen when the backend is built, so the bot's modules (and its tests
with a fake backend) load without them.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from vramfit.bot.answering.cards import (
    AnyCard,
    Assumptions,
    Backend,
    Card,
    CompareCard,
    Estimate,
    ExpertPlan,
    GpuFit,
    KvDifference,
    ModelChoice,
    ModelInfo,
    Overrides,
    Solution,
    Speed,
    Tip,
    Verdict,
    WhatFitsCard,
    ram_speed_code,
    ram_speed_of,
    rope_scaling_label,
    with_unread,
)
from vramfit.bot.answering.chart_data import ChartSeries, chart_series
from vramfit.bot.answering.commands import (
    ollama_command,
    ollama_name,
    ollama_split,
    placement_caches,
    run_command,
    runnable,
)
from vramfit.bot.answering.configs import ATTACHED_SOURCE
from vramfit.bot.answering.resolve import CompareResult, IntentResult, SolveResult, WhatFitsResult, resolve
from vramfit.bot.errors import AnswerError
from vramfit.bot.i18n import Lang
from vramfit.bot.parser import ParsedQuery, parse, parse_gpu_spec
from vramfit.bot.sources.cache import RemoteCache
from vramfit.bot.sources.huggingface import best_quant_files, hub_model, with_hub_repos
from vramfit.bot.sources.ollama import ollama_model
from vramfit.bot.sources.references import (
    UNREAD_CODES,
    find_ollama_tag,
    find_reference,
    ollama_tags_written,
    preset_in_place_of_reference,
)
from vramfit.calc import solve
from vramfit.calc.advice import WHAT_FITS_LADDER
from vramfit.calc.errors import BadNumberError, UnknownModelError, VramfitError
from vramfit.calc.estimate import estimate as estimate_bytes
from vramfit.calc.estimate import fit_gpu
from vramfit.calc.families import family_of
from vramfit.calc.file_types import parse_file_type
from vramfit.calc.gpu import GIB, Gpu, generic_gpu
from vramfit.calc.kv import kv_value_bytes, naive_heads_and_dim
from vramfit.calc.presets import Catalog, load_catalog
from vramfit.calc.request import Engine, GpuChoice, KvType, Request
from vramfit.calc.results import Answer, DecodeEstimate, Fit
from vramfit.calc.weights import model_weights

log = logging.getLogger(__name__)

AUTOCOMPLETE_LIMIT = 25
CARD_CACHE_SIZE = 1024
TIP_GPU_COUNTS = (2, 4, 8)
ROUNDING_FLOOR = 1024 * 1024  # the smallest buffer growth a tip names: a card shows sizes in whole MiB
_GENERIC_ID = re.compile(r"^generic-(?P<gib>\d+(?:\.\d+)?)gb$")


class Missing:
    """Type of :data:`MISSING` ("not given", where ``None`` is a meaningful value)."""


MISSING = Missing()


class _LruCache:
    """A small LRU of finished cards: the same question (or button) is common in a busy channel."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[Any, AnyCard] = OrderedDict()
        self._lock = threading.Lock()  # answers are computed in several worker threads

    def get(self, key: Any) -> AnyCard | None:
        with self._lock:
            card = self._data.get(key)
            if card is not None:
                self._data.move_to_end(key)
            return card

    def put(self, key: Any, card: AnyCard) -> None:
        with self._lock:
            self._data[key] = card
            if len(self._data) > self.size:
                self._data.popitem(last=False)


def to_answer_error(exc: VramfitError) -> AnswerError:
    """A calculator or parser error as the bot's :class:`AnswerError` (the same fields, the code kept)."""
    error = AnswerError(exc.code, exc.message, subject=exc.subject, reason=exc.reason, suggestions=exc.suggestions)
    if "repos" in exc.details:
        error.details["repos"] = exc.details["repos"]
    return error


class CalcBackend:
    """Answers questions with the preset catalog, the parser and the calculator."""

    def __init__(self, catalog: Catalog | None = None, *, cache_size: int = CARD_CACHE_SIZE) -> None:
        self.catalog = catalog or load_catalog()
        self._gpus: tuple[Gpu, ...] = tuple(self.catalog.gpus.values())
        self._cache = _LruCache(cache_size)
        self._model_entries = sorted(
            ((m.name, m.id, (m.id, m.name, *m.aliases)) for m in self.catalog.models.values()), key=lambda e: e[1]
        )
        self._gpu_entries = sorted(((g.name, g.id, (g.id, g.name, *g.aliases)) for g in self._gpus), key=lambda e: e[1])
        self.remote_cache: RemoteCache | None = None  # None: remote reads are kept in the user's cache folder

    # -- the port ----------------------------------------------------------------------------------------------------

    def backend(self) -> Backend:
        return Backend(
            answer=self.answer,
            suggest_models=self.suggest_models,
            suggest_gpus=self.suggest_gpus,
            use_remote_cache=self.use_remote_cache,
            cached=self.cached,
            chart=self.chart,
            warm=self.warm,
            process_factory=default_backend,
            remember=self.remember,
        )

    def warm(self) -> None:
        """What every question needs, computed once: the parser's name index and each preset's weights in every
        format "what fits" tries (about 800, 4 s of CPU), which a cold "what fits" otherwise pays for at once."""
        parse("llama3 8b 32k 3060", self.catalog)
        for preset in self.catalog.models.values():
            ref = preset.ref()
            for quant in WHAT_FITS_LADDER:
                try:
                    model_weights(ref, quant)
                except VramfitError:  # a format the architecture has no file in: "what fits" skips it too
                    continue

    def chart(self, overrides: Overrides) -> ChartSeries:
        """What the "📈" chart of a card's settings (its button's state) draws: memory against context."""
        parsed, fields, _lang = self.build_query("", overrides)
        result = resolve(parsed, self.catalog, **fields)
        calculated = getattr(result, "answer", None)
        if not isinstance(calculated, Answer):
            raise AnswerError("chart_one_model", "a chart draws one model's answer")
        return chart_series(calculated)

    def use_remote_cache(self, cache: RemoteCache | None) -> None:
        """Keep remote reads in ``cache`` (the bot's store) rather than the user's cache folder."""
        self.remote_cache = cache

    @staticmethod
    def _card_key(text: str, lang: Lang | None, overrides: Overrides) -> Any:
        return text.strip(), lang, tuple(sorted((k, repr(v)) for k, v in overrides.items()))

    def cached(self, text: str, lang: Lang | None, overrides: Overrides) -> AnyCard | None:
        """The card this exact question was last answered with (an LRU of :data:`CARD_CACHE_SIZE`), or None."""
        return self._cache.get(self._card_key(text, lang, overrides))

    def remember(self, text: str, lang: Lang | None, overrides: Overrides, card: AnyCard) -> None:
        """Keep a card another process computed for this question, as :meth:`answer` keeps its own."""
        self._cache.put(self._card_key(text, lang, overrides), card)

    def answer(self, text: str, lang: Lang | None, overrides: Overrides) -> AnyCard:
        key = self._card_key(text, lang, overrides)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        try:
            unread = ""
            try:
                parsed, fields, question_lang = self.build_query(text, overrides)
            except AnswerError as exc:  # the Hub or registry is down: a model the catalog has is answered by preset
                fallback = self._preset_fallback(exc, text)
                if fallback is None:
                    raise
                preset_text, unread = fallback
                parsed, fields, question_lang = self.build_query(preset_text, overrides)
            result = resolve(parsed, self.catalog, **fields)
            card = self.intent_card(result, lang or question_lang, parsed)
            card = with_unread(card, parsed.unparsed)
            model = fields.get("model")
            read_file = getattr(model, "gguf", None) is not None  # a file's header: every tensor's own type
            if parsed.quant_mix and isinstance(card, Card) and not read_file:
                card = dataclasses.replace(card, quant_mix=parsed.quant_mix)
            if parsed.asks_speed and isinstance(card, Card):
                card = dataclasses.replace(card, speed_first=True)
            if parsed.display_unsized and isinstance(card, Card) and not card.reserved_mib:
                card = dataclasses.replace(card, asks_display_share=True)
            if unread and isinstance(card, Card):
                card = dataclasses.replace(card, source_unread=unread)
            size_assumed = "gpu_variant" in parsed.assumed or overrides.get("gpu_size_assumed", False)
            if size_assumed and isinstance(card, Card) and card.named_gpus:
                card = dataclasses.replace(card, gpu_variant=self.gpu_variant(card.gpus))
        except VramfitError as exc:
            raise to_answer_error(with_hub_repos(exc)) from exc
        except ValueError as exc:  # pydantic validation of an out-of-range number
            raise AnswerError("bad_number", str(exc).splitlines()[0]) from exc
        self._cache.put(key, card)
        return card

    def _preset_fallback(self, error: AnswerError, text: str) -> tuple[str, str] | None:
        """(the question with the preset's id for its repo or tag, the repo or tag) when ``error`` says the server
        could not be read and the repo or tag names a model the catalog has; None otherwise."""
        if error.code not in UNREAD_CODES:
            return None
        return preset_in_place_of_reference(text, self.catalog.find_model)

    def suggest_models(self, current: str) -> list[tuple[str, str]]:
        return _suggest(current, self._model_entries)

    def suggest_gpus(self, current: str) -> list[tuple[str, str]]:
        return _suggest(current, self._gpu_entries)

    # -- building the request ----------------------------------------------------------------------------------------

    def gpu_variant(self, gpus: Iterable[tuple[str, int]]) -> tuple[str, tuple[str, ...]] | None:
        """The first of ``gpus`` that a name without a memory size means while its family has other sizes: (its name,
        the others' names, smallest first); None when none is (calc.presets.Catalog.other_sizes)."""
        for gpu_id, _count in gpus:
            gpu = self.catalog.find_gpu(gpu_id)
            others = self.catalog.other_sizes(gpu) if gpu is not None else []
            if gpu is not None and others:
                return gpu.name, tuple(g.name for g in others)
        return None

    def gpu(self, gpu_id: str) -> Gpu:
        """A preset GPU by id or alias, or a generic card for ``generic-<N>gb`` ids."""
        found = self.catalog.find_gpu(gpu_id)
        if found is not None:
            return found
        if match := _GENERIC_ID.match(gpu_id):
            return generic_gpu(float(match["gib"]))
        return self.catalog.gpu(gpu_id)  # raises UnknownGpuError with suggestions

    def build_query(self, text: str, overrides: Overrides) -> tuple[ParsedQuery, dict[str, Any], Lang]:
        """The question read from ``text`` (or made from ``overrides`` alone), with the structured overrides on it:
        the intent, the models and the engines go into the parsed question, the settings into ``fields`` (Request
        fields for :func:`bot.answering.resolve.resolve`). Also the question's language."""
        fields: dict[str, Any] = {}
        if "quant" in overrides:
            fields["quant"] = parse_file_type(overrides["quant"]).value
        for key in ("context", "users"):
            if key in overrides:
                fields[key] = int(overrides[key])  # type: ignore[literal-required,unused-ignore]
        if "kv_cache" in overrides:
            fields["kv_cache"] = _enum(KvType, overrides["kv_cache"], "kv_cache")
        if "engine" in overrides:
            fields["engine"] = _enum(Engine, overrides["engine"], "engine")
        if "ram_gb" in overrides:  # a button's state: the RAM the question named
            fields["ram_bytes"] = int(overrides["ram_gb"]) * GIB
        if "ram_speed" in overrides:  # and its speed
            try:
                fields["ram_speed"] = ram_speed_of(str(overrides["ram_speed"]))
            except ValueError as exc:
                raise BadNumberError(str(exc), field="ram_speed", value=overrides["ram_speed"]) from exc
        if overrides.get("runner") == "ollama":
            fields["runner"] = "ollama"
        if "reserved_mib" in overrides:  # a button's state: the GPU memory the question said was in use
            fields["reserved_bytes"] = int(overrides["reserved_mib"]) << 20
        if overrides.get("images"):  # a button's state or --mmproj: images are sent
            fields["images"] = True
        if overrides.get("mtp"):  # a button's state or --mtp: the model's own MTP head drafts
            fields["mtp"] = True
        if overrides.get("draft"):  # a button's state or --draft: the draft model and its quant
            fields["draft"] = self.catalog.model(str(overrides["draft"])).ref()
            if overrides.get("draft_quant"):  # else Request's own default
                fields["draft_quant"] = parse_file_type(str(overrides["draft_quant"])).value
        if "flash_attn" in overrides:
            fields["flash_attn"] = bool(overrides["flash_attn"])
        if "gpus" in overrides:
            fields["gpus"] = tuple(GpuChoice(gpu=self.gpu(g), count=c) for g, c in overrides["gpus"])
        elif "gpu" in overrides:
            fields["gpus"] = (self._gpu_spec(overrides["gpu"], overrides.get("gpu_count")),)

        text = text.strip()
        if "model_ref" in overrides:  # read from a file (an attached config.json): the text only says the rest
            fields["model"] = overrides["model_ref"]

        def is_preset(written: str) -> bool:  # "openai/gpt-oss-20b": a preset's alias, answered offline
            return self.catalog.find_model(written) is not None

        found = find_reference(text, skip=is_preset) if text and "model" not in fields else None
        if found is not None:  # a Hub GGUF's header, or a safetensors repo's config.json and headers (cached a day)
            reference, text = found
            quant = str(fields.get("quant") or "")
            engine = str(fields.get("engine") or "")
            said = None
            if text:
                try:
                    said = parse(text, self.catalog)  # "UD-Q4_K_XL" picks that file of the repo
                    quant = quant or str(said.quant_mix or said.quant or "")
                    engine = engine or str(said.engine or "")
                except VramfitError:
                    pass
            best = None
            if (overrides.get("intent") or (said.intent if said is not None else "")) == "best_quant":
                gpus = fields.get("gpus") or (said.gpus if said is not None else ())
                best = best_quant_files(reference, engine or "llama.cpp", gpus, self.remote_cache)
            if best is not None:  # which quant of a GGUF repo fits: its own files, largest first
                fields["model"], fields["quant"], fields["quant_files"] = best
            else:
                model, file_quant = hub_model(reference, quant, engine or "llama.cpp", self.remote_cache)
                fields["model"] = model
                if file_quant or model.checkpoint is None:  # a safetensors repo with no quant: the request's default
                    fields["quant"] = file_quant or quant or "Q4_K_M"
        tag = None
        if found is None and text and "model" not in overrides and "model" not in fields:
            tag = find_ollama_tag(text, skip=is_preset)
        if tag is not None:  # likewise an Ollama tag, unless a preset lists it as its alias ("qwen3.5:4b")
            reference_tag, text = tag
            model, file_quant = ollama_model(reference_tag, self.remote_cache)  # the manifest, then the header
            fields["model"] = model
            if file_quant or "quant" not in fields:  # the tag is one file: its own quant, whatever the words say
                fields["quant"] = file_quant or str(fields.get("quant") or "Q4_K_M")
        if found is None and tag is None and "model" not in fields and "quant" not in fields:
            # "llama3.2:1b", a preset's alias and an Ollama library tag: the quant of the file that tag pulls
            alias_quants = (self.catalog.ollama_tag_quant(written) for written in ollama_tags_written(text))
            if (alias_quant := next((q for q in alias_quants if q), None)) is not None:
                fields["quant"] = alias_quant
        parsed = parse(text, self.catalog) if text else ParsedQuery()
        lang: Lang = "ko" if parsed.lang == "ko" else "en"
        update: dict[str, Any] = {}
        intent = overrides.get("intent") or parsed.intent
        if "model" in overrides:
            update["model"] = self.catalog.model(overrides["model"]).id
        if "compare_model" in overrides:
            update["compare_model"] = self.catalog.model(overrides["compare_model"]).id
        if "model_prefix" in overrides:
            prefix = overrides["model_prefix"]
            update["model_candidates"] = tuple(m for m in self.catalog.models if m.startswith(prefix))
        if overrides.get("engines"):
            update["compare_engines"] = True
            fields.pop("engine", None)  # both engines: the card's own engine setting does not pick one
        count = overrides.get("gpu_count")
        if count and "gpu" not in overrides and "gpus" not in overrides and parsed.gpus:
            update["gpus"] = (parsed.gpus[0].model_copy(update={"count": int(count)}), *parsed.gpus[1:])
        if intent == "compare" and not (update.get("compare_model") or parsed.compare_model):
            intent = "fit"  # "compare" with one model: answer for that model
        update["intent"] = intent
        if not text and not update.get("model") and "model" not in fields and intent != "what_fits":
            raise UnknownModelError("no model named", suggestions=["llama-3.1-8b", "qwen2.5-7b", "gemma-2-9b"])
        return parsed.model_copy(update=update), fields, lang

    def _gpu_spec(self, spec: str, count: int | None) -> GpuChoice:
        choice = parse_gpu_spec(spec, self.catalog)
        return choice.model_copy(update={"count": int(count)}) if count else choice

    # -- the card ----------------------------------------------------------------------------------------------------

    def card(self, result: Answer, lang: Lang, *, with_tips: bool = True) -> Card:
        """The card data for one calculator answer (adds tips when the named GPU falls short)."""
        request, est = result.request, result.estimate
        arch = request.model.architecture
        heads, dim = naive_heads_and_dim(arch)
        attached = request.model.source.startswith(ATTACHED_SOURCE)
        swa = bool(arch.sliding_window and any(arch.swa_layers))
        model = ModelInfo(
            id=request.model.id,
            name=request.model.name,
            params=est.params,
            layers=arch.n_layers,
            kv_heads=heads,
            head_dim=dim,
            sliding_window=arch.sliding_window if swa else 0,
            trained_context=arch.context_length,
            scaled_context=arch.rope_scaled_context,
            rope_scaling=rope_scaling_label(arch),
            mmproj=request.model.mmproj,
            mmproj_bytes=request.model.mmproj_bytes,
            vision_encoder=request.model.vision_encoder,
            attention_sinks=family_of(arch.arch).attention_sinks,
            **_hub_source(request.model.source if _read_from_a_file(request) or attached else ""),
        )
        assumptions = assumptions_of(request)
        byte_fields = {f.name: getattr(est, f.name) for f in dataclasses.fields(Estimate) if f.name != "kv_pool_tokens"}
        estimate = Estimate(**byte_fields, kv_pool_tokens=est.vllm_kv_pool_tokens or 0)
        fits = tuple(self._gpu_fit(f) for f in result.fits)
        tips: tuple[Tip, ...] = ()
        if with_tips and request.gpus and result.fits and str(result.fits[0].verdict) in ("partial", "no", "tight"):
            first = result.fits[0]
            tips = tuple(self.tips(request, request.gpus[0], str(first.verdict), max_context=first.max_context))
        # Buttons recompute a card from its preset's id: a model read from a file has none, whatever its name.
        stateful = not attached and request.model.gguf is None and self.catalog.find_model(request.model.id) is not None
        command = ""
        split = None
        if request.gpus and result.fits and request.runner == "ollama":
            split = ollama_split(result.fits[0], est)
            if runnable(result.fits[0]):
                command = ollama_command(request, ollama_name(request) or "<model>")
        elif request.gpus and result.fits and runnable(result.fits[0]):
            command = run_command(request, result.fits[0])
        offloaded = any(str(f.verdict) in ("partial", "no") and f.ram_bytes for f in result.fits)
        # the command cut llama-server's caches to the RAM: the size it cut them to is part of the answer
        cut = any(c is not None and not c.is_default for c in (placement_caches(f) for f in result.fits[:1]))
        return Card(
            lang=lang,
            model=model,
            assumptions=assumptions,
            estimate=estimate,
            fits=fits,
            named_gpus=bool(request.gpus),
            gpus=tuple((c.gpu.id, c.count) for c in request.gpus),
            tips=tips,
            notes=("sliding_window",) if swa else (),
            stateful=stateful,
            command=command,
            ram_assumed=(offloaded or cut) and request.ram_bytes is None,
            ollama_split=split,
            ram_gb=_whole_gb(request.ram_bytes),
            ram_speed=ram_speed_code(request.ram_speed),
            runner=request.runner,
            reserved_mib=request.reserved_bytes >> 20,
            images=request.images,
            mtp=request.mtp,
            draft=request.draft.id if request.draft is not None else "",
            draft_name=request.draft.name if request.draft is not None else "",
            draft_quant=request.draft_quant if request.draft is not None else "",
        )

    def intent_card(self, result: IntentResult, lang: Lang, parsed: ParsedQuery) -> AnyCard:
        """The card for any intent's result."""
        if isinstance(result, WhatFitsResult):
            return self.what_fits_card(result, lang, parsed.model_candidates)
        if isinstance(result, CompareResult):
            return self.compare_card(result, lang)
        if isinstance(result, SolveResult):
            value = None if result.value is None else str(result.value)
            # At the solver's number the card is at its limit by construction; tips only when nothing fits.
            card = self.card(result.answer, lang, with_tips=value is None)
            solution = Solution(kind=result.intent, value=value, gpu_name=result.gpu.gpu.name, count=result.gpu.count)
            return dataclasses.replace(card, solution=solution)
        if result.engines:
            cards = tuple(self.card(a, lang, with_tips=False) for a in result.engines)
            return dataclasses.replace(cards[0], engines=cards)
        return self.card(result.answer, lang)

    def what_fits_card(self, result: WhatFitsResult, lang: Lang, candidates: tuple[str, ...] = ()) -> WhatFitsCard:
        template, choice = result.template, result.gpu
        prefix = _common_prefix(candidates)
        # Buttons carry the pool as an id prefix: only when that prefix names exactly the candidates.
        stateful = not candidates or set(candidates) == {m for m in self.catalog.models if m.startswith(prefix)}
        assumptions = assumptions_of(template, kv_bytes=False)
        models = tuple(
            ModelChoice(
                model_id=m.model,
                name=m.name,
                family=m.family,
                params=m.params,
                quant=m.quant,
                total_bytes=m.fit.total_bytes,
                headroom_bytes=m.fit.headroom_bytes,
                verdict=_verdict(m.fit.verdict),
            )
            for m in result.models
        )
        return WhatFitsCard(
            lang=lang,
            gpu_id=choice.gpu.id,
            gpu_name=choice.gpu.name,
            count=choice.count,
            memory_bytes=choice.gpu.memory_bytes,
            usable_bytes=choice.gpu.usable_bytes * choice.count,
            assumptions=assumptions,
            models=models,
            model_prefix=prefix if candidates else "",
            stateful=stateful,
        )

    def compare_card(self, result: CompareResult, lang: Lang) -> CompareCard:
        cmp = result.comparison
        a = Answer(request=result.a, estimate=cmp.a, fits=(cmp.fit_a,) if cmp.fit_a is not None else ())
        b = Answer(request=result.b, estimate=cmp.b, fits=(cmp.fit_b,) if cmp.fit_b is not None else ())
        return CompareCard(
            lang=lang,
            a=self.card(a, lang, with_tips=False),
            b=self.card(b, lang, with_tips=False),
            kv_per_token=(cmp.kv_per_token_a, cmp.kv_per_token_b),
            reasons=tuple(KvDifference(factor=r.factor.value, a=r.a, b=r.b) for r in cmp.reasons),
        )

    def _gpu_fit(self, fit: Fit) -> GpuFit:
        gpu = self.catalog.gpus.get(fit.gpu)
        return GpuFit(
            gpu_id=fit.gpu,
            gpu_name=fit.name,
            count=fit.count,
            memory_bytes=fit.memory_bytes,
            verdict=_verdict(fit.verdict),
            gpu_layers=fit.gpu_layers,
            layers=fit.layers,
            headroom_bytes=fit.headroom_bytes,
            segment=str(gpu.segment) if gpu is not None else "generic",
            usable_bytes=fit.usable_bytes,
            max_context=fit.max_context,
            host_bytes=fit.host_bytes,
            ram_bytes=fit.ram_bytes,
            ram_usable_bytes=fit.ram_usable_bytes,
            ram_fits=fit.ram_fits,
            expert_plan=_expert_plan(fit),
            server_caches=placement_caches(fit),
            fit_default=fit.fit_default,
            decode=_speed(fit.decode),
            prefill=_speed(fit.prefill),
            pcie_assumed=fit.pcie_assumed,
            ram_speed=fit.ram_speed,
            ram_speed_assumed=fit.ram_speed_assumed,
        )

    def tips(
        self, request: Request, choice: GpuChoice, verdict: str, *, max_context: int | Missing | None = MISSING
    ) -> Iterable[Tip]:
        """What would make the request fit ``choice``: less context, a quantized KV cache, a smaller quant, more
        GPUs; each with the total it leads to. ``max_context``: the answer's figure for ``choice``, if known."""

        def tip(
            kind: Any, value: str, changed: Request, changed_choice: GpuChoice = choice, lower: bool = False
        ) -> Tip:
            fit = fit_gpu(changed, changed_choice, with_max_context=False)
            buffers = 0
            if kind == "kv_cache":  # the buffer a quantized cache adds (CUDA's f16 copy), said beside what it saves
                backend, count = changed_choice.gpu.backend, changed_choice.count
                before = estimate_bytes(request, count, backend).compute_bytes
                buffers = max(0, estimate_bytes(changed, count, backend).compute_bytes - before)
                # its rotation matrices (calc.server_graph.rotation_bytes, tens of KiB) are below what a card shows
                buffers = buffers if buffers >= ROUNDING_FLOOR else 0
            return Tip(kind=kind, value=value, total_bytes=fit.total_bytes, verdict=_verdict(fit.verdict),
                       usable_bytes=fit.usable_bytes, lower_quality=lower, buffer_bytes=buffers)  # fmt: skip

        # In the order of what each costs in quality: a q8_0 KV cache (next to nothing), a shorter context, a
        # smaller quant (below Q3_K_M said to cost quality), more GPUs (money; never for a laptop or a Mac).
        out: list[Tip] = []
        if request.kv_cache in (KvType.F16, KvType.BF16, KvType.F32):
            smaller = KvType.FP8 if request.engine == Engine.VLLM else KvType.Q8_0
            out.append(tip("kv_cache", smaller.value, request.model_copy(update={"kv_cache": smaller})))
        ctx = solve.max_context(request, choice, limit=request.context) if max_context is MISSING else max_context
        if isinstance(ctx, int) and ctx < request.context:
            out.append(tip("context", str(ctx), request.model_copy(update={"context": ctx})))
        cheap_fix = any(t.verdict == "fits" for t in out if t.kind == "kv_cache")
        if verdict != "tight" and not cheap_fix:
            ladder = solve.VLLM_QUANT_LADDER if request.engine == Engine.VLLM else solve.QUANT_LADDER
            if request.quant in ladder:  # only formats smaller than the one that does not fit
                ladder = ladder[ladder.index(request.quant) + 1 :]
            quant = solve.best_quant(request, choice, ladder) if ladder else None
            if quant is not None and quant != request.quant:
                lower = quant in LOWER_QUALITY_QUANTS
                out.append(tip("quant", quant, request.model_copy(update={"quant": quant}), lower=lower))
            movable = choice.gpu.segment not in ("laptop", "apple", "unified") and not choice.gpu.is_unified
            if movable and not any(t.verdict == "fits" for t in out):
                for count in TIP_GPU_COUNTS:
                    if count <= choice.count:
                        continue
                    more = GpuChoice(gpu=choice.gpu, count=count)
                    candidate = tip("gpus", str(count), request.model_copy(update={"gpus": (more,)}), more)
                    if candidate.verdict in ("fits", "tight"):
                        out.append(candidate)
                        break
        return [t for t in out if t.verdict in ("fits", "tight")][:MAX_TIPS]


MAX_TIPS = 3
# Below Q3_K_M the quality loss is large enough that a tip must say so: llama.cpp's quantizer lists the perplexity
# each format adds on Llama 3 8B (tools/quantize/quantize.cpp QUANT_OPTIONS at 0c1e57098): Q3_K_M +0.6569,
# Q3_K_S +1.6321, Q2_K +3.5199.
LOWER_QUALITY_QUANTS = frozenset({"Q3_K_S", "Q2_K", "IQ3_XXS", "IQ2_XS", "IQ2_XXS", "IQ1_S", "INT4"})


def _verdict(value: Any) -> Verdict:
    text = str(getattr(value, "value", value))
    if text not in ("fits", "tight", "partial", "no"):
        raise ValueError(f"unknown verdict {text!r}")
    return text  # type: ignore[return-value]


def _enum(kind: Callable[[str], Any], value: str, what: str) -> Any:
    try:
        return kind(value.lower())
    except ValueError as exc:
        raise BadNumberError(f"unknown {what}: {value}", value=value) from exc


def _common_prefix(ids: Iterable[str]) -> str:
    """The longest common prefix of preset ids ("qwen2.5-7b", "qwen3-8b" → "qwen")."""
    items = list(ids)
    if not items:
        return ""
    first, last = min(items), max(items)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]


def _norm(text: str) -> str:
    return re.sub(r"[\s\-_.]+", "", text.lower())


def _suggest(current: str, entries: list[tuple[str, str, tuple[str, ...]]]) -> list[tuple[str, str]]:
    """Autocomplete: prefix matches, then substring matches, then fuzzy ones (at most 25 ``(label, id)``)."""
    key = _norm(current)
    if not key:
        return [(label, value) for label, value, _ in entries[:AUTOCOMPLETE_LIMIT]]
    prefix: list[tuple[str, str]] = []
    inner: list[tuple[str, str]] = []
    for label, value, keys in entries:
        norms = [_norm(k) for k in keys]
        if any(n.startswith(key) for n in norms):
            prefix.append((label, value))
        elif any(key in n for n in norms):
            inner.append((label, value))
    found = prefix + inner
    if len(found) < AUTOCOMPLETE_LIMIT:
        from rapidfuzz import fuzz, process

        names = {value: label for label, value, _ in entries}
        seen = {value for _, value in found}
        choices = {value: " ".join(_norm(k) for k in keys) for _, value, keys in entries if value not in seen}
        for _, score, value in process.extract(key, choices, scorer=fuzz.partial_ratio, limit=AUTOCOMPLETE_LIMIT):
            if score >= 60:
                found.append((names[value], value))
    return found[:AUTOCOMPLETE_LIMIT]


_HUB_FILE = re.compile(r"^https://huggingface\.co/[\w.-]+/[\w.-]+/blob/(?P<revision>[\w.-]+)/(?P<file>.+)$")
_HUB_TREE = re.compile(r"^https://huggingface\.co/(?P<repo>[\w.-]+/[\w.-]+)/tree/(?P<revision>[\w.-]+)$")


_OLLAMA_SOURCE = re.compile(
    r"^ollama://[^/]+/(?P<namespace>[\w.-]+)/(?P<model>[\w.-]+):(?P<tag>[\w.-]+)@(?P<digest>\w+)$"
)


def _whole_gb(ram_bytes: int | None) -> int:
    """The RAM a question named, in the whole GB a button's state carries (0 when none, or not whole)."""
    return ram_bytes // GIB if ram_bytes and ram_bytes % GIB == 0 else 0


def _read_from_a_file(request: Request) -> bool:
    """Whether the model's numbers are a file's own: a GGUF header, or a safetensors repo's headers."""
    return request.model.gguf is not None or request.model.checkpoint is not None


def _hub_source(source: str) -> dict[str, str]:
    """The card's source line for a model read from a file's header: a Hub file (bot.sources.huggingface writes its
    source as https://huggingface.co/{repo}/blob/{revision}/{file}, a safetensors repo's as .../{repo}/tree/{revision})
    or an Ollama tag (bot.sources.ollama: ollama://{registry}/{namespace}/{model}:{tag}@{manifest digest}, linked to
    the tag's page on ollama.com); or a config.json attached to the question (attachment:{file name})."""
    if source.startswith(ATTACHED_SOURCE):
        return {"source_kind": "attachment", "source_file": source.removeprefix(ATTACHED_SOURCE)}
    if found := _OLLAMA_SOURCE.match(source):
        namespace, name = found["namespace"], f"{found['model']}:{found['tag']}"
        shown = name if namespace == "library" else f"{namespace}/{name}"
        url = f"https://ollama.com/{namespace}/{name}"
        return {"source_url": url, "source_file": shown, "source_revision": found["digest"]}
    if found := _HUB_TREE.match(source):  # a safetensors repo: https://huggingface.co/{repo}/tree/{revision}
        return {"source_url": source, "source_file": found["repo"], "source_revision": found["revision"],
                "source_kind": "safetensors"}  # fmt: skip
    found = _HUB_FILE.match(source)
    if found is None:
        return {}
    return {"source_url": source, "source_file": found["file"].rsplit("/", 1)[-1], "source_revision": found["revision"]}


def _expert_plan(fit: Fit) -> ExpertPlan | None:
    plan = fit.expert_offload
    if plan is None:
        return None
    return ExpertPlan(
        n_cpu_moe=plan.n_cpu_moe,
        blocks=plan.expert_blocks,
        moved=plan.expert_blocks_moved,
        all_experts=plan.all_experts,
        gpu_bytes=plan.gpu_bytes,
        host_bytes=plan.host_bytes,
        ram_fits=plan.ram_fits,
        decode=_speed(plan.decode),
        prefill=_speed(plan.prefill),
    )


def _speed(decode: DecodeEstimate | None) -> Speed | None:
    if decode is None:
        return None
    return Speed(tokens_per_second=decode.tokens_per_second, low=decode.low, high=decode.high)


def default_backend() -> Backend:
    """The production backend (raises ``ImportError`` while the calculator or parser is missing)."""
    return CalcBackend().backend()


def assumptions_of(request: Request, *, kv_bytes: bool = True) -> Assumptions:
    """A request's :data:`bot.answering.cards.SETTINGS` as a card echoes them (the engine's effective flash
    attention; with ``kv_bytes``, the bytes per cached element the math shows)."""
    extra = {"kv_bytes_per_element": kv_value_bytes(request.kv_cache)} if kv_bytes else {}
    return Assumptions(
        quant=request.quant,
        context=request.context,
        users=request.users,
        kv_cache=request.kv_cache.value,
        engine=request.engine.value,
        flash_attn=request.flash_attn_effective,
        **extra,
    )
