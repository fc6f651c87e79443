"""A card's settings packed into a button's ``custom_id``, so buttons work after a restart without a database.

Layout (fields joined by ``:``; ``custom_id`` is at most 100 characters)::

    vf:<action>:<arg>:<model>:<quant>:<context>:<users>:<kv>:<engine>:<flash>:<gpus>:<lang>
    vf:ctx:32768:llama-3.1-8b:Q4_K_M:8192:1:f16:l:1:rtx-3060-12gb*1:en

``engine`` is ``l`` (llama.cpp) or ``v`` (vLLM); ``flash`` is ``1``/``0``; ``gpus`` is ``id*count`` joined by ``,``
(``-`` for none). A card whose state does not fit in the limit (many long GPU ids) gets no stateful buttons.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from bot.answer_port import Card, Overrides
from bot.i18n import Lang

PREFIX = "vf"
MAX_CUSTOM_ID = 100
_ENGINE_CODES = {"llama.cpp": "l", "vllm": "v"}
_ENGINES = {code: name for name, code in _ENGINE_CODES.items()}
_FIELD = re.compile(r"^[A-Za-z0-9._+\-]+$")
STATE_PATTERN = r"(?P<state>[A-Za-z0-9._+\-]+(?::[A-Za-z0-9._+\-,*]+){8})"


@dataclass(frozen=True, slots=True)
class CardState:
    model: str
    quant: str
    context: int
    users: int
    kv_cache: str
    engine: str
    flash_attn: bool
    gpus: tuple[tuple[str, int], ...]
    lang: Lang

    @classmethod
    def from_card(cls, card: Card, lang: Lang) -> CardState:
        a = card.assumptions
        return cls(
            model=card.model.id,
            quant=a.quant,
            context=a.context,
            users=a.users,
            kv_cache=a.kv_cache,
            engine=a.engine,
            flash_attn=a.flash_attn,
            gpus=card.gpus,
            lang=lang,
        )

    def with_context(self, context: int) -> CardState:
        return replace(self, context=context)

    def with_lang(self, lang: Lang) -> CardState:
        return replace(self, lang=lang)

    def overrides(self) -> Overrides:
        return Overrides(
            model=self.model,
            quant=self.quant,
            context=self.context,
            users=self.users,
            kv_cache=self.kv_cache,
            engine=self.engine,
            flash_attn=self.flash_attn,
            gpus=self.gpus,
        )

    def encode(self) -> str | None:
        """The packed state, or ``None`` when a field cannot be packed (odd characters, unknown engine)."""
        engine = _ENGINE_CODES.get(self.engine.lower())
        words = [self.model, self.quant, self.kv_cache, *(gpu for gpu, _ in self.gpus)]
        if engine is None or not all(_FIELD.match(w) for w in words):
            return None
        gpus = ",".join(f"{gpu}*{count}" for gpu, count in self.gpus) or "-"
        flash = "1" if self.flash_attn else "0"
        return ":".join(
            [self.model, self.quant, str(self.context), str(self.users), self.kv_cache, engine, flash, gpus, self.lang]
        )

    @classmethod
    def decode(cls, packed: str) -> CardState:
        """Unpack :meth:`encode`'s output; raises ``ValueError`` on anything malformed."""
        parts = packed.split(":")
        if len(parts) != 9:
            raise ValueError(f"bad card state: {packed!r}")
        model, quant, context, users, kv, engine, flash, gpus, lang = parts
        if engine not in _ENGINES or flash not in ("0", "1") or lang not in ("ko", "en"):
            raise ValueError(f"bad card state: {packed!r}")
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
            gpus=tuple(gpu_pairs),
            lang="ko" if lang == "ko" else "en",
        )


def custom_id(action: str, arg: str, state: CardState) -> str | None:
    """``vf:<action>:<arg>:<state>``, or ``None`` when it would exceed Discord's 100 characters."""
    packed = state.encode()
    if packed is None:
        return None
    value = f"{PREFIX}:{action}:{arg}:{packed}"
    return value if len(value) <= MAX_CUSTOM_ID else None
