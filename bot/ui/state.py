"""A card's settings packed into a button's ``custom_id``, so buttons work after a restart without a database.

Layout (fields joined by ``:``; ``custom_id`` is at most 100 characters)::

    vf:<action>:<arg>:<model>:<quant>:<context>:<users>:<kv>:<engine>:<flash>:<gpus>:<lang>
    vf:ctx:32768:llama-3.1-8b:Q4_K_M:8192:1:f16:l:1:rtx-3060-12gb*1:en

``engine`` is ``l`` (llama.cpp) or ``v`` (vLLM); ``flash`` is ``1``/``0``, then ``r<GB>`` when the question named its
system RAM and ``o`` when it named Ollama (``1r64o``: flash attention, 64 GB of RAM, Ollama's defaults; ids without
them still decode); ``gpus`` is ``id*count`` joined by ``,`` (``-`` for none). A card whose state does not fit in the
limit (many long GPU ids) gets no stateful buttons.

Cards of the other intents add a tenth field, ``<intent>[+<other>]`` (a fit card has none, so ids posted before
intents existed still decode)::

    vf:ctx:8192:-:-:32768:1:f16:l:1:rtx-3060-12gb*1:en:w            what fits a 3060 (model and quant unused)
    vf:ctx:8192:-:-:32768:1:f16:l:1:rtx-3060-12gb*1:en:w+qwen       ... only preset ids starting with "qwen"
    vf:lang:ko:llama-3-8b:Q4_K_M:8192:1:f16:l:1:-:en:c+gemma-2-9b   Llama 3 8B compared with Gemma 2 9B
    vf:ctx:4096:qwen2.5-14b:Q4_K_M:8192:10:f16:l:1:rtx-3090*1:ko:mu most users on a 3090 (also mc, bq)
    vf:ctx:32768:llama-3.1-8b:Q4_K_M:8192:1:f16:l:1:rtx-4090*1:en:e  llama.cpp and vLLM side by side
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace

from vramfit.bot.answering.cards import (
    INTENTS,
    AnyCard,
    Card,
    CompareCard,
    Intent,
    Overrides,
    Settings,
    machine_overrides,
    settings_of,
)
from vramfit.bot.i18n import Lang

PREFIX = "vf"
MAX_CUSTOM_ID = 100
_ENGINE_CODES = {"llama.cpp": "l", "vllm": "v"}
_ENGINES = {code: name for name, code in _ENGINE_CODES.items()}
_FIELD = re.compile(r"^[A-Za-z0-9._+\-]+$")
STATE_PATTERN = r"(?P<state>[A-Za-z0-9._+\-]+(?::[A-Za-z0-9._+\-,*]+){8,9})"
_INTENT_CODES: dict[str, str] = {
    "what_fits": "w", "compare": "c", "max_context": "mc", "max_users": "mu", "best_quant": "bq", "min_gpus": "mg",
    "engines": "e",
}  # fmt: skip
_INTENTS = {code: name for name, code in _INTENT_CODES.items()}
UNUSED = "-"  # a field the intent does not use (what fits: model and quant)
# flash attention, system RAM in GB, its speed (bot.answering.cards.ram_speed_code), Ollama
_FLAGS = re.compile(
    r"([01])(?:r([1-9][0-9]{0,4}))?(?:s(ddr[45]-[0-9]{4,5}x[0-9]{1,2}))?(o)?(?:d([1-9][0-9]{0,6}))?(i)?(t)?"
    r"(?:m([a-z0-9.\-]+)~([A-Za-z0-9_]+))?(a)?"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class CardState(Settings):
    """A card's question as its buttons carry it: the model, the :class:`~bot.answering.cards.Settings`, the GPUs."""

    model: str
    gpus: tuple[tuple[str, int], ...]
    lang: Lang
    intent: str = "fit"  # a bot.answering.cards Intent, or "engines" (llama.cpp and vLLM side by side)
    other: str = ""  # compare: the second model; what fits: the model-id prefix ("" all)
    ram_gb: int = 0  # the system RAM the question named (0: none)
    ram_speed: str = ""  # its speed, "ddr4-3200x2" ("": none named)
    runner: str = ""  # "ollama": the question named Ollama
    reserved_mib: int = 0  # GPU memory other programs hold, as the question said (0: none)
    images: bool = False  # images are sent: the vision projector is counted
    mtp: bool = False  # drafting with the model's own MTP head
    draft: str = ""  # a draft model's preset id, and its quant ("" none)
    draft_quant: str = ""
    gpu_size_assumed: bool = False  # the GPU's memory size was not named: the card says which it answered

    @classmethod
    def from_card(cls, card: AnyCard, lang: Lang) -> CardState:
        o = card.overrides()
        intent: str = o.get("intent", "fit")
        if isinstance(card, Card) and card.engines:
            intent = "engines"
        other = o.get("compare_model", "") if isinstance(card, CompareCard) else o.get("model_prefix", "")
        return cls(
            model=o.get("model", UNUSED),
            quant=o.get("quant", UNUSED),
            context=o.get("context", 0),
            users=o.get("users", 1),
            kv_cache=o.get("kv_cache", "f16"),
            engine=o.get("engine", "llama.cpp"),
            flash_attn=o.get("flash_attn", True),
            gpus=o.get("gpus", ()),
            lang=lang,
            intent=intent,
            other=other,
            ram_gb=int(o.get("ram_gb", 0)),
            ram_speed=str(o.get("ram_speed", "")),
            runner=str(o.get("runner", "")),
            reserved_mib=int(o.get("reserved_mib", 0)),
            images=bool(o.get("images", False)),
            mtp=bool(o.get("mtp", False)),
            draft=str(o.get("draft", "")),
            draft_quant=str(o.get("draft_quant", "")),
            gpu_size_assumed=bool(o.get("gpu_size_assumed", False)),
        )

    def with_context(self, context: int) -> CardState:
        # The largest context is what a max-context card solved for: at another context it is a plain fit card.
        intent = "fit" if self.intent == "max_context" else self.intent
        return replace(self, context=context, intent=intent)

    def with_lang(self, lang: Lang) -> CardState:
        return replace(self, lang=lang)

    def overrides(self) -> Overrides:
        out = Overrides(gpus=self.gpus)
        out.update(settings_of(self))
        if self.quant == UNUSED:  # what fits: the quant is what the card finds
            del out["quant"]
        if self.model != UNUSED:
            out["model"] = self.model
        if self.intent == "engines":
            out["engines"] = True
        elif self.intent != "fit":
            out["intent"] = _intent(self.intent)
        if self.intent == "compare" and self.other:
            out["compare_model"] = self.other
        if self.intent == "what_fits" and self.other:
            out["model_prefix"] = self.other
        out.update(machine_overrides(self.ram_gb, self.ram_speed, self.runner, self.reserved_mib, self.images))
        if self.draft:
            out["draft"], out["draft_quant"] = self.draft, self.draft_quant
        if self.mtp:
            out["mtp"] = True
        if self.gpu_size_assumed:
            out["gpu_size_assumed"] = True
        return out

    def encode(self) -> str | None:
        """The packed state, or ``None`` when a field cannot be packed (odd characters, unknown engine)."""
        engine = _ENGINE_CODES.get(self.engine.lower())
        code = _INTENT_CODES.get(self.intent, "") if self.intent != "fit" else ""
        words = [self.model, self.quant, self.kv_cache, *(gpu for gpu, _ in self.gpus)]
        words += [self.draft, self.draft_quant] if self.draft else []
        if self.other:
            words.append(self.other)
        if engine is None or (self.intent != "fit" and not code) or not all(_FIELD.match(w) for w in words):
            return None
        gpus = ",".join(f"{gpu}*{count}" for gpu, count in self.gpus) or "-"
        flash = ("1" if self.flash_attn else "0") + (f"r{self.ram_gb}" if self.ram_gb else "")
        flash += f"s{self.ram_speed}" if self.ram_speed else ""
        flash += "o" if self.runner == "ollama" else ""
        flash += f"d{self.reserved_mib}" if self.reserved_mib else ""
        flash += "i" if self.images else ""
        flash += "t" if self.mtp else ""
        flash += f"m{self.draft}~{self.draft_quant}" if self.draft else ""
        flash += "a" if self.gpu_size_assumed else ""
        fields = [self.model, self.quant, str(self.context), str(self.users), self.kv_cache, engine, flash, gpus]
        fields.append(self.lang)
        if code:
            fields.append(f"{code}+{self.other}" if self.other else code)
        return ":".join(fields)

    @classmethod
    def decode(cls, packed: str) -> CardState:
        """Unpack :meth:`encode`'s output; raises ``ValueError`` on anything malformed."""
        parts = packed.split(":")
        if len(parts) not in (9, 10):
            raise ValueError(f"bad card state: {packed!r}")
        intent, other = "fit", ""
        if len(parts) == 10:
            code, _, other = parts.pop().partition("+")
            if code not in _INTENTS:
                raise ValueError(f"bad card state: {packed!r}")
            intent = _INTENTS[code]
        model, quant, context, users, kv, engine, flags, gpus, lang = parts
        found = _FLAGS.fullmatch(flags)
        if engine not in _ENGINES or found is None or lang not in ("ko", "en"):
            raise ValueError(f"bad card state: {packed!r}")
        flash, ram, ram_speed, ollama, reserved, images, mtp, draft, draft_quant, size_assumed = found.groups()
        gpu_pairs: list[tuple[str, int]] = []
        if gpus != "-":
            for item in gpus.split(","):
                gpu, _, count = item.partition("*")
                gpu_pairs.append((gpu, int(count)))
        return cls(
            model=model,
            quant=quant,
            context=int(context),
            users=int(users),
            kv_cache=kv,
            engine=_ENGINES[engine],
            flash_attn=flash == "1",
            ram_gb=int(ram or 0),
            ram_speed=ram_speed or "",
            runner="ollama" if ollama else "",
            reserved_mib=int(reserved or 0),
            images=bool(images),
            mtp=bool(mtp),
            draft=draft or "",
            draft_quant=draft_quant or "",
            gpu_size_assumed=bool(size_assumed),
            gpus=tuple(gpu_pairs),
            lang="ko" if lang == "ko" else "en",
            intent=intent,
            other=other,
        )


def _intent(name: str) -> Intent:
    return next((intent for intent in INTENTS if intent == name), "fit")


@functools.lru_cache(maxsize=1024)
def _packed(state: CardState) -> str | None:
    """:meth:`CardState.encode`, once per state: every button of a card packs the same state."""
    return state.encode()


def custom_id(action: str, arg: str, state: CardState) -> str | None:
    """``vf:<action>:<arg>:<state>``, or ``None`` when it would exceed Discord's 100 characters."""
    packed = _packed(state)
    if packed is None:
        return None
    value = f"{PREFIX}:{action}:{arg}:{packed}"
    return value if len(value) <= MAX_CUSTOM_ID else None
