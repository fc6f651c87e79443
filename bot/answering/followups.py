"""Pure helpers for answering on one's own: does a message ask a memory question, and what does a follow-up change?

* :func:`asks_memory_question`: the message names a model (read exactly, or loosely with a "run/fit/돌아가/될까"
  word), or names a GPU with such a word ("can a 3060 run it?").
* :func:`followup_slots`: what a short follow-up in a thread states ("what about 32k?" → context 32768,
  "q8이면?" → quant Q8_0, "4090이면?" → the GPU), as :class:`bot.answering.cards.Overrides`.
* :func:`merge`: the thread's last question with the follow-up's slots applied; the backend then answers the
  original text with these overrides, which win over what the text says.

Everything here reads text with :func:`bot.parser.parse` and never raises: a message the parser cannot place is
simply not a question (nobody asked the bot, so nobody should get an error message).
"""

from __future__ import annotations

import re
from typing import Any

from vramfit.bot.answering.cards import Overrides
from vramfit.bot.i18n import Lang
from vramfit.bot.parser import ParsedQuery, parse
from vramfit.calc.errors import VramfitError

RUN_WORDS = re.compile(
    r"\b(run|runs|running|fit|fits|work|works|load|enough|vram)\b|돌아가|돌아갈|될까|되나|될까요|돌릴|돌려|돌아|실행|가능|"
    r"올라가|올릴|충분|버틸",
    re.IGNORECASE,
)
FOLLOWUP_CUES = re.compile(
    r"\b(what about|how about|and with|and if|with|instead)\b|이면|라면|이라면|으로는|로는|면\?|는\?|은\?|그럼|그러면",
    re.IGNORECASE,
)
FOLLOWUP_MAX_CHARS = 80  # a longer message is a new message, not a follow-up, unless it asks ("?") or has a cue
SLOT_KEYS = ("model", "quant", "context", "users", "kv_cache", "engine", "gpus", "flash_attn", "ram_gb", "reserved_mib")


def parse_or_none(text: str) -> ParsedQuery | None:
    """The parse of ``text``, or None for text the parser cannot place (never raises)."""
    try:
        return parse(text)
    except VramfitError:
        return None
    except Exception:  # the parser promises VramfitError only; a message must never break the listener
        return None


def has_run_word(text: str) -> bool:
    return RUN_WORDS.search(text) is not None


def asks_memory_question(text: str) -> bool:
    """Whether a message (no mention of the bot) asks about a model's or a GPU's memory."""
    text = text.strip()
    if not text:
        return False
    parsed = parse_or_none(text)
    if parsed is None:
        return False
    if parsed.model is not None:
        return "model_fuzzy" not in parsed.assumed or has_run_word(text)
    return bool(parsed.gpus or parsed.model_candidates) and has_run_word(text)


def slots_of(parsed: ParsedQuery) -> Overrides:
    """The slots a parsed message states (nothing it merely assumed)."""
    out = Overrides()
    if parsed.model is not None:
        out["model"] = parsed.model
    if parsed.quant is not None:
        out["quant"] = parsed.quant
    if parsed.context is not None:
        out["context"] = parsed.context
    if parsed.users is not None:
        out["users"] = parsed.users
    if parsed.kv_cache is not None:
        out["kv_cache"] = parsed.kv_cache.value
    if parsed.engine is not None and not parsed.compare_engines:
        out["engine"] = parsed.engine.value
    if parsed.flash_attn is not None:
        out["flash_attn"] = parsed.flash_attn
    if parsed.gpus:
        out["gpus"] = tuple((choice.gpu.id, choice.count) for choice in parsed.gpus)
    if parsed.ram_bytes:  # "with 64gb ram?", "램 64기가면?"
        out["ram_gb"] = max(1, round(parsed.ram_bytes / (1 << 30)))
    if parsed.reserved_bytes:  # "1.5gb already used?", "이미 2기가 쓰고 있으면?"
        out["reserved_mib"] = parsed.reserved_bytes >> 20
    return out


_ENGLISH_FOLLOWUP = re.compile(r"\b(what|how|about|with|and|if|instead|then)\b", re.IGNORECASE)
_HANGUL = re.compile("[\uac00-\ud7a3]")


def followup_lang(text: str, question_lang: str) -> Lang:
    """The language to answer a follow-up in: Korean if it has Hangul, English if it has English words, else the
    language of the thread's question ("32k?" says nothing about language)."""
    if _HANGUL.search(text):
        return "ko"
    if _ENGLISH_FOLLOWUP.search(text):
        return "en"
    return "ko" if question_lang == "ko" else "en"


def looks_like_followup(text: str) -> bool:
    text = text.strip()
    return len(text) <= FOLLOWUP_MAX_CHARS or text.endswith("?") or FOLLOWUP_CUES.search(text) is not None


def followup_slots(text: str) -> Overrides | None:
    """What a follow-up changes, or ``None`` when the message states nothing the card depends on."""
    if not text.strip() or not looks_like_followup(text):
        return None
    parsed = parse_or_none(text)
    if parsed is None:
        return None
    slots = slots_of(parsed)
    return slots or None


def change_only(text: str) -> Overrides | None:
    """What ``text`` changes of an earlier question when it names no model and asks nothing of its own ("128k?",
    "램 64기가면?", "4090이면?"), or None ("what fits a 3060?", "llama3 8b 3060" are questions of their own)."""
    change = followup_slots(text)
    parsed = parse_or_none(text) if change is not None else None
    if change is None or parsed is None or parsed.model is not None or parsed.model_candidates:
        return None
    return change if parsed.intent == "fit" else None


def merge(previous: Overrides, change: Overrides) -> Overrides:
    """``previous`` with ``change`` applied: a GPU named in the follow-up replaces the question's GPUs."""
    merged = Overrides(**previous)
    if "gpus" in change or "gpu" in change:
        for key in ("gpu", "gpu_count", "gpus"):
            merged.pop(key, None)  # type: ignore[misc]
    merged.update(change)
    return merged


def to_json(overrides: Overrides) -> dict[str, Any]:
    """Overrides as JSON-ready data (the ``gpus`` pairs as lists)."""
    data: dict[str, Any] = dict(overrides)
    if "gpus" in data:
        data["gpus"] = [[gpu_id, count] for gpu_id, count in data["gpus"]]
    return data


def from_json(data: dict[str, Any]) -> Overrides:
    """The inverse of :func:`to_json` (unknown keys are dropped)."""
    out = Overrides()
    for key, value in data.items():
        if key == "gpus":
            out["gpus"] = tuple((str(gpu_id), int(count)) for gpu_id, count in value)
        elif key in ("context", "users", "gpu_count", "ram_gb", "reserved_mib"):
            out[key] = int(value)  # type: ignore[literal-required]
        elif key == "flash_attn":
            out["flash_attn"] = bool(value)
        elif key in ("model", "gpu", "quant", "kv_cache", "engine"):
            out[key] = str(value)  # type: ignore[literal-required]
    return out
