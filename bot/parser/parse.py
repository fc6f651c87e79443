"""``parse(text)``: a Korean or English question → :class:`ParsedQuery` → :class:`calc.request.Request`.

The order of reading matters and is fixed: the message is cleaned (mentions, links, markdown, numbers as digits,
memory sizes as "<n>gb"), then the engine, flash attention, KV cache type and Apple product words are read and
blanked, then model names and GPU names (with their memory size and count) are found among the tokens, then the
weight format, the number of users and the context size are read from what is left. Whatever the text does not say
is left as None and listed in ``assumed``; :meth:`ParsedQuery.to_request` fills it from the JSON contract's defaults.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError

import vramfit.bot.parser.match as match
import vramfit.bot.parser.slots as slots
from vramfit.bot.parser.index import CatalogIndex, index_for, tokenize
from vramfit.bot.parser.lexicon import POPULAR_MODELS, has_hangul
from vramfit.bot.parser.text import clean
from vramfit.calc.errors import BadNumberError, UnknownGpuError, UnknownModelError, UnsupportedSettingError
from vramfit.calc.gpu import GIB
from vramfit.calc.ollama import default_context
from vramfit.calc.presets import Catalog, load_catalog
from vramfit.calc.ram_speed import RamSpeed
from vramfit.calc.request import Engine, GpuChoice, KvType, ModelRef, Request, unstated_context

# "min_gpus": how many of the named GPU the model needs ("how many 3090s do i need for deepseek v3", "3090 몇 장
# 필요해?"). The parser reads it; bot.answering.resolve does not answer it yet (it answers such a question as "fit").
Intent = Literal["fit", "what_fits", "compare", "max_context", "max_users", "best_quant", "min_gpus"]
Lang = Literal["ko", "en"]

# Stable keys of what was filled in rather than read, in this order.
ASSUMED_KEYS: tuple[str, ...] = (
    "quant",  # no weight format named: Q4_K_M
    "context",  # no context named: 8192
    "users",  # no number of users: 1
    "kv_cache",  # no KV cache type: f16
    "engine",  # no engine: llama.cpp
    "gpu_variant",  # a GPU with several memory sizes named without one: its default ("3060" = 12 GB)
    "gpu_chip",  # a Mac named by its product and memory only ("mac studio 512gb"): the chip it came with (M3 Ultra)
    "gpu_generic",  # only a memory size named: a generic GPU of that size ("24gb card")
    "model_fuzzy",  # the model was read loosely (misspelt, or a family plus a size); the answer should say so
    "ram",  # no system RAM size: calc.host_memory.ASSUMED_RAM_BYTES (said only where RAM matters: offload)
    "ram_speed",  # no RAM kind or rate ("ddr4-3200"): calc.ram_speed.ASSUMED_RAM_SPEED (said where weights sit in RAM)
)

DEFAULT_QUANT = "Q4_K_M"
DEFAULT_USERS = 1
DEFAULT_KV = KvType.F16
DEFAULT_ENGINE = Engine.LLAMA_CPP

EXAMPLES: dict[str, str] = {
    "en": "llama 3.1 8b q4 32k on a 3060",
    "ko": "라마3.1 8b 32k 컨텍스트로 3060에서 돌아가?",
}


class ParsedQuery(BaseModel):
    """What a question asks, as read from its text (None: the text did not say; see ``assumed``)."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    lang: Lang = "en"
    intent: Intent = "fit"
    model: str | None = None  # preset id
    compare_model: str | None = None  # second preset id ("X vs Y"); intent is then "compare"
    model_candidates: tuple[str, ...] = ()  # preset ids of a family named without a size ("what qwen fits")
    quant: str | None = None  # calc.file_types.FileType value: "Q4_K_M", "Q8_0", "F16", "INT4", ...
    context: int | None = None  # tokens per user
    users: int | None = None
    kv_cache: KvType | None = None
    engine: Engine | None = None
    compare_engines: bool = False  # both llama.cpp and vLLM were named
    flash_attn: bool | None = None
    gpus: tuple[GpuChoice, ...] = ()  # one machine's GPUs, unless compare_gpus
    compare_gpus: bool = False  # several GPUs named as alternatives ("3060 or 4060"): answer for each separately
    assumed: tuple[str, ...] = ()
    unparsed: tuple[str, ...] = ()  # words that look like settings but no slot took ("5090ti", "q9")
    ram_bytes: int | None = None  # system RAM ("with 64GB RAM", "램 64기가")
    reserved_bytes: int = 0  # GPU memory other programs already hold ("1.5gb already used", "이미 2기가 사용 중")
    display_unsized: bool = False  # a display runs on the card, its share unsaid: the answer asks for it
    ram_speed: RamSpeed | None = None  # its kind, rate and channels ("ddr4-3200 dual channel", "ddr5 4채널")
    runner: str = ""  # "ollama" when the question names it: Ollama's defaults (calc.ollama)
    quant_mix: str = ""  # an uploader's mix as written ("UD-Q4_K_XL"); ``quant`` is the standard type it is sized as
    checkpoint_kind: str = ""  # the kind of 4-bit checkpoint named for vLLM ("awq", "gptq", "bnb-4bit"); quant INT4
    asks_speed: bool = False  # "how fast", "몇 토큰 나와?": the answer leads with the speed
    images: bool = False  # "with images", "이미지도", "--mmproj": the vision projector is loaded and counted
    mtp: bool = False  # "with mtp": llama.cpp drafts with the model's own MTP head
    draft: str | None = None  # preset id of a draft model ("with qwen3 0.6b as draft"): speculative decoding
    draft_quant: str | None = None  # its file type when the draft's words name one ("qwen3 0.6b q8_0 as draft")

    _catalog: Catalog | None = PrivateAttr(default=None)

    def _resolve_catalog(self, catalog: Catalog | None) -> Catalog:
        return catalog or self._catalog or load_catalog()

    def to_request(self, *, catalog: Catalog | None = None, **overrides: Any) -> Request:
        """The calc request, defaults filled from the JSON contract; keyword overrides (CLI flags) win.

        Overrides are Request fields; a value of None means "not given". ``model`` may be a preset id or a ModelRef,
        ``quant`` any spelling (``"q4_k_m"``). Raises UnknownModelError (with suggestions and an example in
        ``details["example"]``) when no model was named, BadNumberError when a value is out of range.
        """
        return self._request(self.model, self._resolve_catalog(catalog), overrides)

    def compare_request(self, *, catalog: Catalog | None = None, **overrides: Any) -> Request:
        """The request for ``compare_model`` (the second model of "X vs Y"), otherwise like :meth:`to_request`."""
        return self._request(self.compare_model, self._resolve_catalog(catalog), overrides)

    def _request(self, model_id: str | None, catalog: Catalog, overrides: dict[str, Any]) -> Request:
        given = {k: v for k, v in overrides.items() if v is not None}
        unknown = set(given) - set(Request.model_fields)
        if unknown:
            raise TypeError(f"not Request fields: {sorted(unknown)}")
        model = given.pop("model", None)
        preset = None
        if isinstance(model, str):
            preset = catalog.model(model)
            model = preset.ref()
        if model is None:
            if model_id is None:
                raise no_model_error(self.lang, catalog)
            preset = catalog.model(model_id)
            model = preset.ref()
        if not isinstance(model, ModelRef):
            raise TypeError("model must be a preset id or a ModelRef")
        engine = Engine(given.pop("engine", None) or self.engine or DEFAULT_ENGINE)
        default_quant = DEFAULT_QUANT
        if preset is not None and preset.default_quant and engine == Engine.LLAMA_CPP:
            default_quant = preset.default_quant  # the form the model ships in (gpt-oss: MXFP4_MOE)
        if preset is not None and engine == Engine.VLLM:
            default_quant = preset.release_quant  # vLLM serves the release: BF16, or its native FP8 / MXFP4
        if model.checkpoint is not None and engine == Engine.VLLM:
            default_quant = model.checkpoint.file_type  # a safetensors repo: vLLM runs its checkpoint as it is
        quant = given.pop("quant", None)
        quant = slots.canonical_quant(str(quant), engine) if quant is not None else self.quant or default_quant
        fields: dict[str, Any] = {
            "model": model,
            "quant": quant,
            "context": self.context or unstated_context(model.architecture),
            "users": self.users or DEFAULT_USERS,
            "kv_cache": self.kv_cache or DEFAULT_KV,
            "engine": engine,
            "flash_attn": self.flash_attn,
            "gpus": self.gpus,
            "ram_bytes": self.ram_bytes,
            "ram_speed": self.ram_speed,
            "reserved_bytes": self.reserved_bytes,
            "runner": self.runner,
            "checkpoint_kind": self.checkpoint_kind,
            "images": self.images,
            "mtp": self.mtp,
        }
        if self.draft is not None:
            fields["draft"] = catalog.model(self.draft).ref()
            if self.draft_quant:  # else Request's own default
                fields["draft_quant"] = self.draft_quant
        fields.update(given)
        drafts = fields.get("draft") is not None or fields.get("mtp")
        if drafts and (engine == Engine.VLLM or fields["runner"] == "ollama"):
            raise UnsupportedSettingError("a draft model is counted for llama-server only", setting="draft")
        if (
            fields["runner"] == "ollama"
            and self.context is None
            and "context" not in given
            and engine == Engine.LLAMA_CPP
        ):
            vram = sum(c.gpu.memory_bytes * c.count for c in fields["gpus"])
            fields["context"] = default_context(vram, model.architecture.context_length)
        try:
            return Request(**fields)
        except ValidationError as exc:
            raise BadNumberError(f"invalid request: {exc.errors()[0].get('msg', exc)}") from exc


def no_model_error(lang: str, catalog: Catalog | None = None) -> UnknownModelError:
    """The error for a question that names no model: suggestions and an example question."""
    cat = catalog or load_catalog()
    suggestions = [m for m in POPULAR_MODELS if m in cat.models] or list(cat.models)[:5]
    example = EXAMPLES.get(lang, EXAMPLES["en"])
    return UnknownModelError("no model named", suggestions=suggestions, example=example, reason="no_model")


def parse_gpu_spec(spec: str, catalog: Catalog | None = None) -> GpuChoice:
    """One GPU as a flag value names it: "rtx-3060-12gb", "3060 8gb", "2x 3090", "4090 두 장", "m2 max 64gb",
    "24gb" (a generic card). Raises UnknownGpuError with suggestions, BadNumberError for a count out of range."""
    cat = catalog or load_catalog()
    idx = index_for(cat)
    scratch = slots.Scratch(clean(spec))
    refuse_negative_numbers(scratch.text)
    apple_hint = slots.remove_apple_words(scratch)
    tokens = match.Tokens(tokenize(scratch.text, idx.vocab))
    gpus = match.match_gpus(tokens, idx, cat)
    if not gpus.choices:
        gpus = match.machine_gpus(tokens, cat, apple_hint)
    if not gpus.choices:
        match.check_unknown_gpus(tokens, idx, bool(apple_hint))
        gpus = match.generic_gpus(tokens)
    if not gpus.choices:
        raise UnknownGpuError(f"unknown GPU: {spec}", suggestions=cat.suggest_gpus(spec), query=spec)
    return gpus.choices[0]


_LEFTOVER_WORD = re.compile(r"[^\s\0,;!?()\"'`]+")
MAX_UNPARSED = 5


def _unparsed(leftover: str) -> tuple[str, ...]:
    """What the question said that no slot took, when it looks like a setting: a leftover word with a digit
    ("5090ti", "q9", "64gb"). Words are reported, never guessed at (the card says them)."""
    words = [w.strip(".:") for w in _LEFTOVER_WORD.findall(leftover)]
    return tuple(w[:32] for w in words if any(ch.isdigit() for ch in w))[:MAX_UNPARSED]


# A minus sign (not a hyphen inside a name, "rtx-3060-12gb", "8k-32k", nor a dash between words, "8b - 32k") right
# before a size, a count or a context.
_NEGATIVE = re.compile(r"(?<![a-z0-9.])-\d+(?:\.\d+)?\s?(?:gb|tb|x|k)(?![a-z0-9])")


def refuse_negative_numbers(cleaned: str) -> None:
    """BadNumberError for "-64gb ram", "-2x 3090": a size or count is never negative, nor read as its magnitude."""
    found = _NEGATIVE.search(cleaned)
    if found is not None:
        raise BadNumberError(f"a size or count cannot be negative: {found[0]}", number=found[0].replace(" ", ""))


def _draft_model(words: str, idx: CatalogIndex, cat: Catalog) -> tuple[str, str | None]:
    """The preset a draft's words name, and the quant they name; UnknownModelError (with suggestions) otherwise."""
    scratch = slots.Scratch(words)
    quant = slots.extract_quant(scratch, None)
    tokens = match.Tokens(tokenize(scratch.text, idx.vocab))
    found = match.match_models(tokens, idx, compare=False, allow_candidates=False, catalog=cat)
    if not found.ids:
        match.check_unknown_model(tokens, idx)
        raise UnknownModelError(f"no model named {words!r} as the draft", query=words)
    return found.ids[0], quant


def draft_model_ref(words: str, catalog: Catalog | None = None) -> ModelRef:
    """The draft model ``--draft`` names (a preset id, or its name and size as a question writes it)."""
    cat = catalog or load_catalog()
    model_id, _ = _draft_model(clean(words), index_for(cat), cat)
    return cat.model(model_id).ref()


def parse(text: str, catalog: Catalog | None = None) -> ParsedQuery:
    """Read a question. Raises a :class:`calc.errors.VramfitError` subclass (UnknownModelError, UnknownGpuError,
    UnknownQuantError, BadNumberError) for a name it cannot place or a number out of range; never anything else."""
    cat = catalog or load_catalog()
    idx = index_for(cat)
    lang: Lang = "ko" if has_hangul(text) else "en"
    scratch = slots.Scratch(clean(text))
    refuse_negative_numbers(scratch.text)
    intent_text = scratch.text
    named_ollama = slots.mentions_ollama(scratch.text)
    cache_flag = slots.names_cache_flag(scratch.text)

    engine, compare_engines = slots.extract_engine(scratch)
    # Ollama's own defaults, unless the engines are compared (then both answer at the same settings).
    runner = "ollama" if named_ollama and not compare_engines else ""
    flash_attn = slots.extract_flash_attn(scratch)
    kv_cache = slots.extract_kv_cache(scratch, engine)
    apple_hint = slots.remove_apple_words(scratch)
    ram_speed = slots.extract_ram_speed(scratch)  # before the tokens: "ddr5 128gb" keeps its RAM word
    reserved_gb = slots.extract_reserved(scratch)  # before the tokens: "1.5gb already used" is no GPU's size
    images = slots.extract_images(scratch)
    mtp = slots.extract_mtp(scratch)
    draft_words = slots.extract_draft(scratch)
    draft, draft_quant = _draft_model(draft_words, idx, cat) if draft_words is not None else (None, None)
    flag_users = slots.extract_user_flags(scratch)  # before the tokens: "-np=2 4090" is one 4090

    tokens = match.Tokens(tokenize(scratch.text, idx.vocab))
    wants_list = slots.detect_intent(intent_text, 0) == "what_fits"
    ram_gb = match.system_ram(tokens)
    models = match.match_models(
        tokens, idx, compare=slots.mentions_compare(intent_text), allow_candidates=wants_list, catalog=cat
    )
    gpus = match.match_gpus(tokens, idx, cat)
    if not gpus.choices:
        gpus = match.machine_gpus(tokens, cat, apple_hint)
    if not gpus.choices:
        gpus = match.generic_gpus(tokens)
    match.check_unknown_gpus(tokens, idx, bool(apple_hint))
    if not models.ids and not models.candidates:
        match.check_unknown_model(tokens, idx)
    for i in tokens.used:
        tok = tokens.items[i]
        scratch.blank(tok.start, tok.end)

    mix = slots.quant_mix(scratch.text)
    kind = slots.checkpoint_kind(scratch.text)
    quant = slots.extract_quant(scratch, engine)
    users = flag_users or slots.extract_users(scratch)
    context = slots.extract_context(scratch)
    if cache_flag and flag_users and context is not None:  # "-c 16384 -np 4": 16,384 cells for 4 slots, 4,096 each
        context = max(1, context // flag_users)
    # a comparison takes two models: the others are said as not understood, never dropped silently
    unparsed = (*_unparsed(scratch.text), *(cat.models[m].name for m in models.ids[2:]))
    intent = slots.detect_intent(intent_text, len(models.ids))
    if intent == "fit" and models.candidates and not models.ids:
        intent = "what_fits"

    filled = {
        "quant": quant is None,
        "context": context is None,
        "users": users is None,
        "kv_cache": kv_cache is None,
        "engine": engine is None,
        "gpu_variant": gpus.variant_assumed,
        "gpu_chip": gpus.chip_assumed,
        "gpu_generic": gpus.generic and bool(gpus.choices),
        "model_fuzzy": models.fuzzy,
        "ram": ram_gb is None,
        "ram_speed": ram_speed is None or not ram_speed.kind_named,
    }
    parsed = ParsedQuery(
        lang=lang,
        intent=intent,
        model=models.ids[0] if models.ids else None,
        compare_model=models.ids[1] if len(models.ids) > 1 else None,
        model_candidates=models.candidates,
        quant=quant,
        context=context,
        users=users,
        kv_cache=kv_cache,
        engine=engine,
        compare_engines=compare_engines,
        flash_attn=flash_attn,
        gpus=tuple(gpus.choices),
        compare_gpus=len(gpus.choices) > 1 and slots.mentions_alternatives(intent_text),
        assumed=tuple(k for k in ASSUMED_KEYS if filled[k]),
        unparsed=unparsed,
        ram_bytes=int(ram_gb * GIB) if ram_gb is not None else None,
        reserved_bytes=int(reserved_gb * GIB) if reserved_gb is not None else 0,
        ram_speed=ram_speed.speed if ram_speed is not None else None,
        runner=runner,
        quant_mix=mix,
        checkpoint_kind=kind,
        asks_speed=slots.asks_speed(intent_text),
        display_unsized=reserved_gb is None and slots.mentions_display(intent_text),
        images=images,
        mtp=mtp,
        draft=draft,
        draft_quant=draft_quant,
    )
    parsed._catalog = cat
    return parsed
