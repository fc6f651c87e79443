"""Finding model and GPU names among a message's tokens.

Exact keys first (the longest span of tokens whose key is a catalog name or alias wins), then, for models only and
only when no exact name was found, looser readings in this order; each is reported, never silently applied:

1. *family + size* ("qwen 7b", "deepseek qwen 14b"): the catalog names that start with the family word and end with
   that size. One model: accepted and recorded as ``model_fuzzy``. Several that are versions of one model with one
   architecture ("llama 70b": Llama 3, 3.1 and 3.3 70B, which need the same memory): the newest, as ``model_fuzzy``.
   Otherwise several: an error listing them.
2. *prefix* ("llama 3", "gemma 2", "exaone"): the catalog names that start with the text. Several: an error listing
   them (or, for "what fits" questions, candidates to filter the list). One, with a version or second word: accepted
   as ``model_fuzzy``.
3. *spelling* (rapidfuzz over NFD-decomposed Hangul, so 딥씨크 and 딥시크 score close): Hangul words close to a known
   word are retried as that word; Latin spans are compared with catalog keys of the *same digits* only (a typo in
   letters is forgiven, "8b" for "80b" never is). A clearly unique match above 88 is accepted as ``model_fuzzy``;
   weaker or tied matches raise an error with suggestions.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rapidfuzz import fuzz, process

from vramfit.bot.parser.index import CatalogIndex, Token, word_form
from vramfit.bot.parser.lexicon import (
    COUNT_NOUNS,
    GPU_BRANDS,
    GPU_COUNTERS,
    GPU_GAP_WORDS,
    GPU_SKIP,
    MODEL_SKIP,
    NOT_VRAM_AFTER,
    OTHER_MODEL_FAMILIES,
    POPULAR_MODELS,
    decompose,
    strip_particle,
)
from vramfit.calc.errors import BadNumberError, UnknownGpuError, UnknownModelError
from vramfit.calc.gpu import GIB, Gpu, Vendor, generic_gpu
from vramfit.calc.presets import Catalog
from vramfit.calc.request import MAX_GPU_COUNT, GpuChoice

FUZZY_ACCEPT = 88.0
FUZZY_SUGGEST = 75.0
FUZZY_MARGIN = 5.0
FUZZY_MAX_TOKENS = 48  # only the start of a long message is searched for misspelt names
MAX_SUGGESTIONS = 5

_MEMORY_TOKEN = re.compile(r"^(\d+(?:\.\d+)?)gb$")
_SIZE_TOKEN = re.compile(r"^(?:\d+x)?\d+(?:\.\d+)?[bm]$")
_DIGITS = re.compile(r"\D")
_RAM_WORDS = frozenset({"ram", "램", "system", "시스템", "ddr4", "ddr5"})
# Family words that are also ordinary English words: alone they name no model.
_WEAK_FAMILY_WORDS = frozenset({"command", "solar", "nemo", "small", "mini", "open", "gpt", "phi", "grok"})


@dataclass(frozen=True, slots=True)
class Span:
    start: int  # token index
    end: int  # token index, exclusive
    ids: frozenset[str]
    words: int  # tokens that made up the key (filler excluded)


class Tokens:
    """Tokens of the message and which of them are already used."""

    def __init__(self, tokens: list[Token]) -> None:
        self.items = tokens
        self.used: set[int] = set()

    def __len__(self) -> int:
        return len(self.items)

    def free(self, i: int) -> bool:
        return 0 <= i < len(self.items) and i not in self.used

    def use(self, start: int, end: int) -> None:
        self.used.update(range(start, end))

    def form(self, i: int) -> str:
        return self.items[i].form if 0 <= i < len(self.items) else ""


def _counts_people(words: list[str], j: int) -> bool:
    """Whether word ``j`` is a bare number that counts the people after it ("5 users", "5 명"): no name includes it."""
    return words[j].isdigit() and j + 1 < len(words) and words[j + 1] in COUNT_NOUNS


def find_spans(
    tokens: Tokens,
    lookup: Callable[[str], frozenset[str] | None],
    skip: frozenset[str],
    max_tokens: int,
    forms: list[str] | None = None,
    model_names: bool = False,
) -> list[Span]:
    """Every span of free tokens whose key is known to ``lookup``; with ``model_names``, none that takes in a number
    counting people ("kimi k2 5 users"). GPU names may end in one ("4090 동시 사용자")."""
    spans: list[Span] = []
    words = forms if forms is not None else [t.form for t in tokens.items]
    n = len(words)
    for i in range(n):
        if not tokens.free(i) or (words[i] in skip and i + 1 < n and words[i + 1] in skip):
            continue
        key = ""
        count = 0
        for j in range(i, min(n, i + max_tokens)):
            if not tokens.free(j) or (model_names and _counts_people(words, j)):
                break
            if words[j] not in skip:
                key += words[j]
                count += 1
            if not key:
                continue
            ids = lookup(key)
            if ids:
                spans.append(Span(i, j + 1, ids, count))
    return spans


def select(spans: Iterable[Span]) -> list[Span]:
    """Non-overlapping spans, the longest first, returned in text order."""
    chosen: list[Span] = []
    taken: set[int] = set()
    for span in sorted(spans, key=lambda s: (-s.words, -(s.end - s.start), s.start)):
        if taken.isdisjoint(range(span.start, span.end)):
            chosen.append(span)
            taken.update(range(span.start, span.end))
    return sorted(chosen, key=lambda s: s.start)


# --- models ----------------------------------------------------------------------------------------------------


@dataclass
class ModelMatch:
    ids: list[str]  # the models named, in text order (duplicates removed)
    fuzzy: bool = False  # a looser reading than an exact name was used
    candidates: tuple[str, ...] = ()  # a family named without a size, for "what fits" questions


def _ambiguous(text: str, ids: Iterable[str], kind: str = "model") -> UnknownModelError:
    suggestions = sorted(set(ids), key=lambda i: (len(i), i))[:MAX_SUGGESTIONS]
    return UnknownModelError(
        f"which {kind} did you mean by {text!r}?", suggestions=suggestions, query=text, reason="ambiguous"
    )


def _span_text(tokens: Tokens, span: Span) -> str:
    return " ".join(tokens.items[i].text for i in range(span.start, span.end))


def exact_models(tokens: Tokens, idx: CatalogIndex, forms: list[str] | None = None) -> list[Span]:
    spans = find_spans(tokens, idx.model_keys.get, MODEL_SKIP, idx.model_max_tokens, forms, model_names=True)
    return select(spans)


def _ids_by_order(ids: Iterable[str]) -> list[str]:
    return sorted(set(ids), key=lambda i: (len(i), i))


def _keys_with_prefix(idx: CatalogIndex, prefix: str) -> list[str]:
    keys = idx.sorted_model_keys
    lo = bisect.bisect_left(keys, prefix)
    hi = bisect.bisect_left(keys, prefix + "\U0010ffff")
    return keys[lo:hi]


def _is_subsequence(needles: list[str], haystack: list[str]) -> bool:
    it = iter(haystack)
    return all(any(n == h for h in it) for n in needles)


def _family_size_candidates(idx: CatalogIndex, pieces: list[str]) -> set[str]:
    """Models named by a family word and a size, with any words between found in order ("deepseek qwen 14b").

    Compared word by word, so "llama 8b" finds "llama 3 8b" and "llama 3.1 8b" but never "llama 3 80b"."""
    first, middle, size = pieces[0], pieces[1:-1], pieces[-1]
    out: set[str] = set()
    for key in _keys_with_prefix(idx, first):
        for words in idx.model_key_pieces.get(key, ()):
            if len(words) < 2 or words[-1] != size or not words[0].startswith(first):
                continue
            rest = words[0][len(first) :]
            if _is_subsequence(middle, ([rest] if rest else []) + list(words[1:-1])):
                out.update(idx.model_keys[key])
                break
    return out


def _family_of(form: str, idx: CatalogIndex) -> str | None:
    m = re.match(r"^[a-z]+", form)
    return m.group() if m and m.group() in idx.family_words else None


_VERSION = re.compile(r"\d+(?:\.\d+)*")
# A size inside a preset id ("-70b", "-a3b", "-350m"): the same in every version of one model, so no version number.
_SIZE_IN_ID = re.compile(r"-a?\d+(?:\.\d+)?[bm](?=-|$)")


def newest_version(ids: Iterable[str], catalog: Catalog | None) -> str | None:
    """The newest of several presets that are versions of one model and need no more memory than it, else None.

    Versions of one model: the preset ids, their sizes aside, differ only in their version numbers ("llama-2-70b",
    "llama-3-70b", "llama-3.3-70b"; "mistral-small-24b" and "mistral-small-3.2-24b", the unnumbered id the oldest;
    not "qwen2.5-7b" and "qwen2.5-coder-7b", nor "deepseek-v3" and "deepseek-r1"). No more memory: the architectures
    (the presets' config numbers) are equal but for the training context and the vocabulary, and the newest (the
    highest version numbers) has the longest context and the largest vocabulary, so its answer holds for any older
    version at any context that one takes (Llama 2 70B's 32,000-token vocabulary needs less than Llama 3's)."""
    found = sorted(set(ids))
    if catalog is None or len(found) < 2 or any(i not in catalog.models for i in found):
        return None
    unsized = {i: _SIZE_IN_ID.sub("", i) for i in found}
    if len({re.sub(r"-?" + _VERSION.pattern, "", name) for name in unsized.values()}) != 1:
        return None
    archs = {i: catalog.models[i].architecture for i in found}
    numbers = [a.model_dump(exclude={"context_length", "vocab_size"}) for a in archs.values()]
    if any(n != numbers[0] for n in numbers[1:]):
        return None

    def version(model_id: str) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(int(n) for n in v.split(".")) for v in _VERSION.findall(unsized[model_id]))

    newest = max(found, key=version)
    if archs[newest].context_length < max(a.context_length for a in archs.values()):
        return None
    if archs[newest].vocab_size < max(a.vocab_size for a in archs.values()):
        return None
    return newest


def _name_tail(tokens: Tokens, forms: list[str], end: int, model_id: str) -> int:
    """Where the name read as ``model_id`` ends: past the words after the size that are parts of its id too
    ("qwen 235b a22b" is qwen3-235b-a22b, the "a22b" included), so they are not reported as not understood."""
    parts = set(model_id.split("-"))
    while tokens.free(end) and forms[end] in parts and not forms[end].isdigit():
        end += 1
    return end


def loose_models(
    tokens: Tokens,
    idx: CatalogIndex,
    forms: list[str],
    allow_candidates: bool,
    second: bool = False,
    catalog: Catalog | None = None,
) -> ModelMatch | None:
    """Family + size, then prefix readings (see the module docstring). ``second``: looking for the other model of
    a comparison, where a family word alone ("llama 3.1 8b, is llama good?") is not a second model. ``catalog``:
    the presets' architectures, to answer a family + size shared by versions of one model with the newest."""
    best: tuple[int, Span, set[str], str] | None = None  # (kind, span, ids, text): kind 0 family+size, 1 prefix
    n = len(forms)
    for i in range(n):
        if not tokens.free(i) or _family_of(forms[i], idx) is None:
            continue
        pieces: list[str] = []
        for j in range(i, min(n, i + idx.model_max_tokens)):
            if not tokens.free(j) or _counts_people(forms, j):
                break
            if forms[j] in MODEL_SKIP:
                continue
            pieces.append(forms[j])
            span = Span(i, j + 1, frozenset(), len(pieces))
            key = "".join(pieces)
            ids: set[str] = set()
            kind = 1
            if len(pieces) >= 2 and _SIZE_TOKEN.match(pieces[-1]):
                ids = _family_size_candidates(idx, pieces)
                kind = 0
            if not ids:
                kind = 1
                for k in _keys_with_prefix(idx, key):
                    if k != key:
                        ids.update(idx.model_keys[k])
                if len(pieces) == 1 and (second or key in _WEAK_FAMILY_WORDS or len(key) < 3):
                    ids = set()
            if ids and (best is None or (span.words, -kind) > (best[1].words, -best[0])):
                best = (kind, span, ids, _span_text(tokens, span))
    if best is None:
        return None
    kind, span, ids, text = best
    ordered = _ids_by_order(ids)
    if kind == 1 and span.end < n and tokens.free(span.end) and forms[span.end] in _VARIANT_WORDS:
        # "granite 4.0 h small": a variant of the prefix's family that the catalog does not have; its one known
        # sibling (the 350M model) would be another model.
        name = f"{text} {tokens.items[span.end].text}"
        raise UnknownModelError(
            f"unknown model: {name}", suggestions=ordered[:MAX_SUGGESTIONS], query=name, reason="not_in_catalog"
        )
    if kind == 1 and span.end < n and tokens.free(span.end) and _SIZE_TOKEN.match(forms[span.end]):
        # "qwen3.6 35b": the size right after a prefix matched no name of that family and size, so the prefix's
        # models are other sizes; answering with one of them would be a confident wrong answer.
        raise UnknownModelError(
            f"no {text} model of size {forms[span.end]} is known",
            suggestions=ordered[:MAX_SUGGESTIONS],
            query=f"{text} {tokens.items[span.end].text}",
        )
    if len(ordered) == 1 and (kind == 0 or span.words >= 2 or any(ch.isdigit() for ch in text)):
        tokens.use(span.start, _name_tail(tokens, forms, span.end, ordered[0]) if kind == 0 else span.end)
        return ModelMatch([ordered[0]], fuzzy=True)
    newest = newest_version(ordered, catalog) if kind == 0 and not allow_candidates else None
    if newest is not None:
        tokens.use(span.start, _name_tail(tokens, forms, span.end, newest))
        return ModelMatch([newest], fuzzy=True)
    if allow_candidates:
        tokens.use(span.start, span.end)
        return ModelMatch([], candidates=tuple(ordered))
    raise _ambiguous(text, ordered)


MAX_HANGUL_WORD = 16  # syllables; the longest Korean word in the lexicon and aliases, "하이퍼클로바", has 6


def _hangul_alternatives(tokens: Tokens, idx: CatalogIndex) -> list[str] | None:
    """Forms with misspelt Hangul words replaced by the closest known word (NFD, rapidfuzz), or None if none."""
    forms = [t.form for t in tokens.items]
    changed = False
    for i, tok in enumerate(tokens.items[:FUZZY_MAX_TOKENS]):
        if not tok.hangul or len(tok.text) < 3 or not tokens.free(i) or tok.text in idx.vocab:
            continue  # two-syllable words collide too easily (파일 "file" is one jamo from 파이 "phi")
        if strip_particle(tok.text, idx.vocab) is not None:
            continue
        if len(tok.text) > MAX_HANGUL_WORD:
            continue  # no model name is misspelt into a run this long; its prefixes would cost O(n²) matches
        for word in (tok.text, *(tok.text[:k] for k in range(len(tok.text) - 1, 2, -1))):
            hit = process.extractOne(decompose(word), list(idx.decomposed_vocab), scorer=fuzz.ratio, score_cutoff=80.0)
            if hit is not None:
                forms[i] = word_form(idx.decomposed_vocab[hit[0]], idx.vocab)
                changed = True
                break
    return forms if changed else None


def spelling_models(tokens: Tokens, idx: CatalogIndex) -> ModelMatch | None:
    forms = _hangul_alternatives(tokens, idx)
    if forms is not None:
        spans = exact_models(tokens, idx, forms)
        if spans:
            ids = [next(iter(s.ids)) for s in spans if len(s.ids) == 1]
            if ids:
                tokens.use(spans[0].start, spans[0].end)
                return ModelMatch([ids[0]], fuzzy=True)
    forms = forms or [t.form for t in tokens.items]
    scored: dict[str, float] = {}
    best_span: tuple[float, Span, str] | None = None
    n = min(len(forms), FUZZY_MAX_TOKENS)
    for i in range(n):
        if not tokens.free(i) or forms[i] in MODEL_SKIP or not re.search(r"[a-z\uac00-\ud7a3]", forms[i]):
            continue
        pieces: list[str] = []
        for j in range(i, min(n, i + 5)):
            if not tokens.free(j):
                break
            if forms[j] in MODEL_SKIP:
                continue
            pieces.append(forms[j])
            key = "".join(pieces)
            digits = _DIGITS.sub("", key)
            if len(key) < 4 or (not digits and len(pieces) < 2):
                continue
            choices = idx.model_keys_by_digits.get(digits)
            if not choices:
                continue
            for choice, score, _ in process.extract(
                decompose(key), [decompose(c) for c in choices], scorer=fuzz.ratio, score_cutoff=FUZZY_SUGGEST, limit=5
            ):
                model_key = choices[[decompose(c) for c in choices].index(choice)]
                for model_id in idx.model_keys[model_key]:
                    if score > scored.get(model_id, 0.0):
                        scored[model_id] = score
                if best_span is None or score > best_span[0]:
                    best_span = (score, Span(i, j + 1, frozenset(), len(pieces)), key)
    if not scored or best_span is None:
        return None
    ranking = sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))
    top_id, top = ranking[0]
    runner_up = ranking[1][1] if len(ranking) > 1 else 0.0
    text = _span_text(tokens, best_span[1])
    written = [forms[k] for k in range(best_span[1].start, best_span[1].end)]
    model_words = {w for key, ids in idx.model_keys.items() if top_id in ids for ws in idx.model_key_pieces.get(key, ())
                   for w in ws}  # fmt: skip
    if any(_NAME_SIZE.fullmatch(w) and w[0].isalpha() and w not in model_words for w in written):
        # "gemma3n e4b": a size with a variant letter the model lacks (Gemma 3n, not Gemma 3 4B): another model
        raise UnknownModelError(
            f"unknown model: {text}", suggestions=[m for m, _ in ranking[:3]], query=text, reason="not_in_catalog"
        )
    if top >= FUZZY_ACCEPT and runner_up < top - FUZZY_MARGIN:
        tokens.use(best_span[1].start, best_span[1].end)
        return ModelMatch([top_id], fuzzy=True)
    raise UnknownModelError(
        f"unknown model: {text!r}", suggestions=[m for m, _ in ranking[:MAX_SUGGESTIONS]], query=text
    )


def _sized_reading(tokens: Tokens, idx: CatalogIndex, span: Span) -> tuple[Span, set[str]] | None:
    """A name without a size followed by a size ("deepseek-r1:14b", ollama's tag for the 14B distill): the models
    named by both, if any; the exact name alone would be a different model."""
    nxt = span.end
    if not tokens.free(nxt) or not _SIZE_TOKEN.match(tokens.form(nxt)):
        return None
    pieces = [tokens.form(i) for i in range(span.start, span.end) if tokens.form(i) not in MODEL_SKIP]
    if pieces and _SIZE_TOKEN.match(pieces[-1]):
        return None
    found = _family_size_candidates(idx, [*pieces, tokens.form(nxt)])
    return (Span(span.start, nxt + 1, frozenset(found), span.words + 1), found) if found else None


def match_models(
    tokens: Tokens, idx: CatalogIndex, *, compare: bool, allow_candidates: bool, catalog: Catalog | None = None
) -> ModelMatch:
    """The models a question names (see the module docstring); ``catalog`` lets a family + size shared by versions of
    one model with one architecture answer with the newest instead of an ambiguity error."""
    spans = exact_models(tokens, idx)
    ids: list[str] = []
    fuzzy = False
    for span in spans:
        if len(span.ids) > 1:
            raise _ambiguous(_span_text(tokens, span), span.ids)
        sized = _sized_reading(tokens, idx, span)
        if sized is not None:
            span, sized_ids = sized
            newest = newest_version(sized_ids, catalog) if len(sized_ids) > 1 else None
            if newest is not None:
                span = Span(span.start, span.end, frozenset({newest}), span.words)
            elif len(sized_ids) > 1:
                raise _ambiguous(_span_text(tokens, span), sized_ids)
            fuzzy = True
        tokens.use(span.start, span.end)
        _take_version_after(tokens, span)
        model_id = next(iter(span.ids))
        if model_id not in ids:
            ids.append(model_id)
    forms = [t.form for t in tokens.items]
    if ids:
        if len(ids) == 1 and compare:
            extra = loose_models(tokens, idx, forms, allow_candidates=False, second=True, catalog=catalog)
            if extra is not None and extra.ids and extra.ids[0] not in ids:
                return ModelMatch(ids + extra.ids, fuzzy=True)
        return ModelMatch(ids, fuzzy=fuzzy)
    loose = loose_models(tokens, idx, forms, allow_candidates, catalog=catalog) or spelling_models(tokens, idx)
    if loose is not None:
        return loose
    for i, tok in enumerate(tokens.items):
        if tokens.free(i) and tok.form in OTHER_MODEL_FAMILIES and tok.form not in idx.family_words:
            suggestions = [m for m in POPULAR_MODELS if any(m in ids for ids in idx.model_keys.values())]
            raise UnknownModelError(f"unknown model: {tok.text}", suggestions=suggestions, query=tok.text)
    return ModelMatch([])


def check_unknown_model(tokens: Tokens, idx: CatalogIndex) -> None:
    """UnknownModelError for a model named with its size that no catalog name took ("Seed-OSS-36B", "Qwen4 14B"),
    after the GPUs have taken their words ("rtx 3060m" is a GPU, not a 3,060M model): said plainly, with the
    family's real sizes as suggestions, never answered as another model."""
    named = unknown_model_name(tokens)
    if named is not None:
        name, family, size = named
        raise UnknownModelError(
            f"unknown model: {name}", suggestions=_family_sizes(idx, family, size), query=name, reason="not_in_catalog"
        )


# Words that name a variant of a model family ("Granite 4.0 H Small", "Qwen3 Max"): after a prefix that matched only
# other variants, the question names one the catalog does not have.
_VARIANT_WORDS = frozenset(("small", "tiny", "micro", "nano", "medium", "large"))
_NAME_SIZE = re.compile(r"^[a-z]?(\d+(?:\.\d+)?)[bm]$")  # "36b", "14b", "e4b", "a3b", "350m"
# Words around a model's name that are not part of it.
_NOT_NAME = frozenset((
    "will", "would", "can", "could", "does", "do", "is", "are", "the", "a", "an", "run", "runs", "fit", "fits", "on",
    "in", "with", "my", "i", "how", "what", "about", "and", "or", "for", "to", "of", "it", "this", "that", "model",
    "models", "llm", "vram", "gpu", "card", "at", "using", "use", "try", "load", "모델",
))  # fmt: skip


_VERSION_WORD = re.compile(r"[a-z]\d+(?:\.\d+)?")  # "m2", "k2", "v3": a version glued to a family name


def _take_version_after(tokens: Tokens, span: Span) -> None:
    """A model named by its family word that a version follows ("MiniMax-M2", "minimax m2"): the version is part of the
    name, never hardware (not an Apple M2)."""
    last = tokens.form(span.end - 1)
    if last.isalpha() and tokens.free(span.end) and _VERSION_WORD.fullmatch(tokens.form(span.end)):
        tokens.use(span.end, span.end + 1)


def unknown_model_name(tokens: Tokens) -> tuple[str, str, float] | None:
    """A model named with its size that no catalog name took ("seed oss 36b", "qwen4 14b"): (the words as written,
    the first word's letters as a family, the size in billions); None when the text names no such thing."""
    for i, tok in enumerate(tokens.items):
        size = _NAME_SIZE.match(tok.form)
        if size is None or not tokens.free(i):
            continue
        j = i
        while j > 0 and i - j < 3 and tokens.free(j - 1):
            word = tokens.items[j - 1]
            version = word.form.isdigit() and len(word.form) <= 2  # "foobar 2 70b"
            if word.hangul or word.form in _NOT_NAME or not (version or re.search("[a-z]", word.form)):
                break
            j -= 1
        while j < i and not re.search("[a-z]", tokens.items[j].form):
            j += 1  # a name starts with a word
        if j == i:
            continue  # a size alone ("14b") names no model
        words = [tokens.items[k].text for k in range(j, i + 1)]
        family = _ALPHA.match(tokens.items[j].form)
        billions = float(size[1]) / (1000 if tok.form.endswith("m") else 1)
        return " ".join(words), family[0] if family else "", billions
    return None


_ALPHA = re.compile(r"[a-z]+")


def _family_sizes(idx: CatalogIndex, family: str, size: float) -> list[str]:
    """The catalog's models of ``family`` nearest in size to ``size`` billion parameters (none when the family is not
    one the catalog knows): real entries only."""
    if len(family) < 3 or family not in idx.family_words:
        return []
    found: dict[str, float] = {}
    for key, ids in idx.model_keys.items():
        for words in idx.model_key_pieces.get(key, ()):
            first = _ALPHA.match(words[0]) if words else None
            if first is None or first[0] != family:
                continue
            sizes = [float(m[1]) for w in words if (m := _NAME_SIZE.match(w)) is not None and w.endswith("b")]
            for model_id in ids:
                if sizes:
                    found[model_id] = min(found.get(model_id, 1e9), abs(sizes[-1] - size))
    return sorted(found, key=lambda m: (found[m], m))[:3]


# --- GPUs ------------------------------------------------------------------------------------------------------


@dataclass
class GpuMatch:
    choices: list[GpuChoice]
    variant_assumed: bool = False
    generic: bool = False
    chip_assumed: bool = False


def _gpu_lookup(idx: CatalogIndex) -> Callable[[str], frozenset[str] | None]:
    def lookup(key: str) -> frozenset[str] | None:
        found = idx.gpu_keys.get(key)
        if found is None and len(key) > 2 and key.endswith("s") and key[-2].isdigit():
            found = idx.gpu_keys.get(key[:-1])  # "3090s"
        return found

    return lookup


def _memory_of(form: str) -> float | None:
    m = _MEMORY_TOKEN.match(form)
    if m is None:
        return None
    if len(m.group(1)) > 8:
        raise BadNumberError(f"memory size too large: {form}", number=form)
    return float(m.group(1))


def _check_memory(value: float) -> float:
    if not 0 < value <= 4096:
        raise BadNumberError(f"GPU memory must be between 1 and 4096 GB, not {value:g}", number=value)
    return value


def _count_value(text: str) -> int:
    """A GPU count as written, within the one limit every way of giving it has (``--gpu-count``, "2x 3090")."""
    if len(text) > 6 or not 1 <= int(text) <= MAX_GPU_COUNT:
        raise BadNumberError(
            f"GPU count must be between 1 and {MAX_GPU_COUNT}, not {text}", field="gpu_count", value=text, low=1,
            high=MAX_GPU_COUNT,
        )  # fmt: skip
    return int(text)


def _is_counter(form: str) -> bool:
    return form in GPU_COUNTERS or strip_particle(form, GPU_COUNTERS) is not None


def _count_after(tokens: Tokens, i: int) -> tuple[int, int] | None:
    """A count right after token ``i - 1``: "x2", "x 2", "2장", "2 cards". Returns (count, next free index)."""
    f0, f1 = tokens.form(i), tokens.form(i + 1)
    if tokens.free(i) and re.fullmatch(r"x\d+", f0):  # every digit: "x99999999999999999999" is too many, not none
        return _count_value(f0[1:]), i + 1
    if tokens.free(i) and tokens.free(i + 1) and f0 == "x" and f1.isdigit():
        return _count_value(f1), i + 2
    if tokens.free(i) and tokens.free(i + 1) and f0.isdigit() and _is_counter(tokens.items[i + 1].text):
        return _count_value(f0), i + 2
    return None


def _count_before(tokens: Tokens, i: int) -> tuple[int, int] | None:
    """A count right before token ``i``: "2x", "2 x", "2" ("2 3090s"). Returns (count, first index used)."""
    f1, f2 = tokens.form(i - 1), tokens.form(i - 2)
    if tokens.free(i - 1) and re.fullmatch(r"\d+x", f1):
        return _count_value(f1[:-1]), i - 1
    if tokens.free(i - 1) and tokens.free(i - 2) and f1 == "x" and f2.isdigit():
        return _count_value(f2), i - 2
    if tokens.free(i - 1) and f1.isdigit() and 1 <= len(f1) <= 2 and 2 <= int(f1) <= 16:
        return int(f1), i - 1
    return None


def _memory_after(
    tokens: Tokens, i: int, allow_gap: bool, sizes: frozenset[float] = frozenset()
) -> tuple[float, int] | None:
    """The memory size right after a GPU's name ("3060 12gb"); a bare number too when it is one of ``sizes``, the
    memory sizes that GPU comes in ("strix halo 128", "스트릭스 할로 128")."""
    j = i
    while allow_gap and tokens.free(j) and tokens.form(j) in GPU_GAP_WORDS and j < i + 3:
        j += 1
    if not tokens.free(j):
        return None
    mem = _memory_of(tokens.form(j))
    if mem is None and tokens.form(j).isdigit() and float(tokens.form(j)) in sizes:
        mem = float(tokens.form(j))
    if mem is None:
        return None
    if not allow_gap and tokens.form(j + 1) in NOT_VRAM_AFTER:
        return None
    return mem, j


def _close(gpu: Gpu, mem: float) -> bool:
    return abs(gpu.memory_bytes / GIB - mem) <= max(0.5, 0.03 * mem)


def _apple_with_memory(base: Gpu, family: str, mem: float) -> Gpu:
    size = f"{mem:g}"
    name = re.sub(r"\s*\d+(?:\.\d+)?\s*GB$", "", base.name)
    return base.model_copy(
        update={
            "id": f"{family}-{size}gb",
            "name": f"{name} {size}GB",
            "memory_bytes": int(mem * GIB),
            "default": False,
        }
    )


def _resolve_gpu(
    catalog: Catalog, idx: CatalogIndex, ids: frozenset[str], mem: float | None, text: str
) -> tuple[Gpu, bool]:
    """The GPU a span names, given a memory size next to it; (gpu, whether the variant was assumed)."""
    gpus = [catalog.gpus[i] for i in sorted(ids)]
    families = sorted({idx.gpu_family(g) for g in gpus})
    if len(families) > 1:
        if mem is not None:
            gpus = [g for g in gpus if _close(g, mem)]
            families = sorted({idx.gpu_family(g) for g in gpus})
        if len(families) != 1:
            raise UnknownGpuError(
                f"which GPU did you mean by {text!r}?", suggestions=sorted(ids)[:MAX_SUGGESTIONS], query=text
            )
    family = families[0]
    variants = catalog.gpu_variants(family) or gpus
    if mem is not None:
        mem = _check_memory(mem)
        fitting = [g for g in variants if _close(g, mem)]
        if fitting:
            return min(fitting, key=lambda g: abs(g.memory_bytes / GIB - mem)), False
        base = next((g for g in variants if g.default), variants[0])
        if base.vendor == Vendor.APPLE:
            return _apple_with_memory(base, family, mem), False
        raise UnknownGpuError(
            f"{text} does not come with {mem:g} GB", suggestions=[g.id for g in variants][:MAX_SUGGESTIONS], query=text
        )
    if len(gpus) == 1:
        return gpus[0], False
    defaults = [g for g in gpus if g.default]
    if len(defaults) == 1:
        return defaults[0], True
    raise UnknownGpuError(
        f"which {text!r}?", suggestions=[g.id for g in gpus][:MAX_SUGGESTIONS], query=text, reason="ambiguous"
    )


def match_gpus(tokens: Tokens, idx: CatalogIndex, catalog: Catalog) -> GpuMatch:
    spans = select(find_spans(tokens, _gpu_lookup(idx), GPU_SKIP, idx.gpu_max_tokens))
    result = GpuMatch([])
    for span in spans:
        tokens.use(span.start, span.end)
    read: list[tuple[GpuChoice, bool, bool]] = []  # each GPU, whether its memory was named, whether it was assumed
    for span in spans:
        text = _span_text(tokens, span)
        probe = catalog.gpus[min(span.ids)]
        apple = probe.vendor == Vendor.APPLE
        mem: float | None = None
        after = span.end
        named_size = any(_MEMORY_TOKEN.match(tokens.form(i)) for i in range(span.start, span.end))
        sizes = frozenset(round(g.memory_bytes / GIB) for g in catalog.gpu_variants(probe.family or probe.id))
        found = None if named_size else _memory_after(tokens, span.end, allow_gap=apple, sizes=sizes)
        before = None if named_size or not tokens.free(span.start - 1) else _memory_of(tokens.form(span.start - 1))
        if found is not None:
            mem, j = found
            tokens.use(j, j + 1)
            after = j + 1
        elif before is not None and tokens.form(span.start - 2) not in _RAM_WORDS:
            mem = before
            tokens.use(span.start - 1, span.start)
        gpu, assumed = _resolve_gpu(catalog, idx, span.ids, mem, text)
        count = 1
        counted = _count_after(tokens, after)
        if counted is not None:
            count, nxt = counted
            tokens.use(after, nxt)
        else:
            first = span.start - 1 if mem is not None and not tokens.free(span.start - 1) else span.start
            counted = _count_before(tokens, first)
            if counted is not None:
                count, used_from = counted
                tokens.use(used_from, first)
        read.append((GpuChoice(gpu=gpu, count=count), named_size or mem is not None, assumed))
    kept = _one_machine_named_twice(read)
    result.choices = [choice for choice, _, _ in kept]
    result.variant_assumed = any(assumed for _, _, assumed in kept)
    return result


def _one_machine_named_twice(read: list[tuple[GpuChoice, bool, bool]]) -> list[tuple[GpuChoice, bool, bool]]:
    """One machine named twice in a phrase ("Ryzen AI Max+ 395 (Strix Halo, 64GB)") is one machine: of two choices of
    one family, one with its memory named and one without, the named one stays (where the first stood)."""
    kept: list[tuple[GpuChoice, bool, bool]] = []
    for choice, named, assumed in read:
        family = choice.gpu.family
        same = next(
            (k for k, (c, n, _) in enumerate(kept) if family and c.gpu.family == family and n != named), None
        )
        if same is None:
            kept.append((choice, named, assumed))
        elif named:
            kept[same] = (choice, named, assumed)
    return kept


def machine_gpus(tokens: Tokens, catalog: Catalog, product_words: list[str]) -> GpuMatch:
    """A Mac named by its product and memory but no chip ("mac studio 512gb", "맥미니 64기가"): the first chip that
    machine was sold with at that memory (calc.gpu.Machine: newest generation first). A size the machine never
    came with is an error naming the sizes it did; no memory size, or no known product, reads nothing."""
    machine = next((m for m in (catalog.find_machine(w) for w in product_words) if m is not None), None)
    if machine is None:
        return GpuMatch([])
    for i, tok in enumerate(tokens.items):
        mem = _memory_of(tok.form) if tokens.free(i) else None
        if mem is None or tokens.form(i + 1) in NOT_VRAM_AFTER:
            continue
        chip = machine.chip_with(mem)
        if chip is None:
            sizes = ", ".join(f"{m} GB" for m in machine.memory_sizes())
            nearest = sorted(
                (g for c in machine.sold for g in catalog.gpu_variants(c.chip)),
                key=lambda g: abs(g.memory_bytes / GIB - mem),
            )
            raise UnknownGpuError(
                f"a {machine.name} came with {sizes}, not {mem:g} GB",
                suggestions=list(dict.fromkeys(g.id for g in nearest))[:MAX_SUGGESTIONS],
                query=f"{machine.name} {mem:g}GB",
            )
        variants = catalog.gpu_variants(chip)
        fitting = [g for g in variants if _close(g, mem)]
        base = next((g for g in variants if g.default), variants[0])
        gpu = fitting[0] if fitting else _apple_with_memory(base, chip, mem)
        tokens.use(i, i + 1)
        return GpuMatch([GpuChoice(gpu=gpu, count=1)], chip_assumed=True)
    return GpuMatch([])


MAX_RAM_GB = 65536  # calc.request.MAX_RAM_BYTES in GB: larger numbers are typos


_GPU_NUMBER = re.compile(r"(?:rtx|gtx|rx|arc)?[a-z]?\d{3,4}(?:ti|super|xtx|xt|gre|m)*")  # "4060ti", "3090", "a770"
_VRAM_WORDS = ("vram", "video", "비램")
# "램은 32": a RAM word's size may come without its unit, when it is a size RAM is sold in (not a GPU's number: "ram
# 4090" names a card).
_BARE_RAM_SIZES = frozenset((4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048))


def _ram_size(tokens: Tokens, i: int, *, bare: bool) -> float | None:
    """The size at token ``i`` if it can be system RAM: a free memory size not followed by "vram" (with ``bare``, a
    plain number after a RAM word too: "램은 32")."""
    if not tokens.free(i) or tokens.form(i + 1) in _VRAM_WORDS:
        return None
    mem = _memory_of(tokens.form(i))
    form = tokens.form(i)
    if mem is None and bare and form.isdigit() and int(form) in _BARE_RAM_SIZES:
        mem = float(form)
    return mem


def system_ram(tokens: Tokens) -> float | None:
    """The system RAM a question names, in GB (taken from the tokens so no GPU matcher reads it): "64gb ram",
    "64gb of ram", "ram 64gb", "램 64기가", "램은 32", "ddr5 128gb"; None when none. A RAM word takes the size after it
    ("램 32기가", the Korean order) unless that one is VRAM ("32gb ram 8gb vram"); else the size before it, unless that
    size follows a GPU's name and so is the GPU's ("4060ti 16gb 램 32기가": a 16 GB card, 32 GB of RAM)."""
    for r, _tok in enumerate(tokens.items):
        if tokens.form(r) not in _RAM_WORDS or not tokens.free(r):
            continue
        size_after = r + 1 if tokens.form(r + 1) not in ("memory", "메모리") else r + 2
        after = _ram_size(tokens, size_after, bare=True)
        if after is None and tokens.free(size_after) and tokens.form(size_after + 1) in _VRAM_WORDS and (
            _memory_of(tokens.form(size_after + 2)) is not None
        ):  # "ram 32gb vram 8gb": a size between a RAM word and a VRAM word that has its own size is the RAM's
            after = _memory_of(tokens.form(size_after))
        before_at = r - 1
        if tokens.form(r - 1) == "of":  # "64gb of ram"
            before_at = r - 2
        before = _ram_size(tokens, before_at, bare=False) if before_at >= 0 else None
        gpus_size = before is not None and _GPU_NUMBER.fullmatch(tokens.form(before_at - 1)) is not None
        # "vram 12gb ram 32gb", "VRAM: 12GB / RAM: 32GB" (a pasted form): the size after a VRAM word is the card's
        # ("16gb vram 32gb system memory": that VRAM word ends "16gb vram", so 32gb is free to be the RAM)
        vram_size = (
            before is not None
            and tokens.form(before_at - 1) in _VRAM_WORDS
            and _memory_of(tokens.form(before_at - 2)) is None
        )
        if after is not None and (before is None or gpus_size or vram_size or tokens.form(r) != "ram"):
            mem, used = after, (r, size_after + 1)
        elif before is not None and not vram_size:
            mem, used = before, (before_at, r + 1)
        elif after is not None:
            mem, used = after, (r, size_after + 1)
        else:
            continue
        if not 0 < mem <= MAX_RAM_GB:
            raise BadNumberError(f"system RAM must be between 1 and {MAX_RAM_GB} GB, not {mem:g}", number=mem)
        end = used[1] + 1 if tokens.form(used[1]) in ("memory", "메모리") else used[1]
        tokens.use(used[0], end)
        return mem
    return None


def generic_gpus(tokens: Tokens) -> GpuMatch:
    """Memory sizes that are not next to a GPU name: "24gb card", "12기가 그래픽카드", "is 8gb enough"."""
    result = GpuMatch([], generic=True)
    seen: set[float] = set()
    for i, tok in enumerate(tokens.items):
        if not tokens.free(i):
            continue
        mem = _memory_of(tok.form)
        if mem is None:
            continue
        nxt = tokens.form(i + 1)
        # "ram 32gb" is system RAM; in "32gb ram 8gb vram" the "ram" belongs to the size before it.
        ram_before = tokens.form(i - 1) in _RAM_WORDS and _memory_of(tokens.form(i - 2)) is None
        ram_after = nxt in NOT_VRAM_AFTER or (nxt == "of" and tokens.form(i + 2) in NOT_VRAM_AFTER)
        # "vram 12gb ram 32gb": the card's, whatever follows (unless that VRAM word ends "16gb vram")
        vram_before = tokens.form(i - 1) in _VRAM_WORDS and _memory_of(tokens.form(i - 2)) is None
        if not vram_before and nxt not in ("vram", "video") and (ram_before or ram_after):
            continue
        _check_memory(mem)
        tokens.use(i, i + 1)
        count = 1
        j = i + 1
        while tokens.free(j) and tokens.form(j) in ("card", "gpu", "gpus", "cards", "vram", "짜리") and j < i + 3:
            j += 1
        counted = _count_after(tokens, j)
        if counted is not None:
            count, nxt_i = counted
            tokens.use(j, nxt_i)
        else:
            counted = _count_before(tokens, i)
            if counted is not None:
                count, used_from = counted
                tokens.use(used_from, i)
        if mem in seen:
            continue
        seen.add(mem)
        result.choices.append(GpuChoice(gpu=generic_gpu(mem), count=count))
    return result


def check_unknown_gpus(tokens: Tokens, idx: CatalogIndex, apple_hint: bool) -> None:
    """Raise UnknownGpuError for GPU-looking names the catalog lacks ("rtx 4050", "gtx 970", "m5 max")."""
    for i, tok in enumerate(tokens.items):
        if not tokens.free(i):
            continue
        nxt = tokens.form(i + 1)
        text = ""
        if tok.form in GPU_BRANDS and tokens.free(i + 1) and re.search(r"\d", nxt) and not _MEMORY_TOKEN.match(nxt):
            text = f"{tok.text} {tokens.items[i + 1].text}"
        elif re.fullmatch(r"m[1-9]", tok.form) and (apple_hint or nxt in ("pro", "max", "ultra")):
            text = f"{tok.text} {nxt}".strip() if nxt in ("pro", "max", "ultra") else tok.text
        elif re.fullmatch(r"\d{3,4}", tok.form) and nxt in ("ti", "super", "xt", "xtx", "gre"):
            text = f"{tok.text} {tokens.items[i + 1].text}"
        if text:
            key = "".join(word_form(w, idx.vocab) for w in text.split() if word_form(w, idx.vocab) not in GPU_SKIP)
            hits = process.extract(key, list(idx.gpu_keys), scorer=fuzz.ratio, limit=20)
            suggestions: list[str] = []
            for hit_key, _, _ in hits:
                for gpu_id in sorted(idx.gpu_keys[hit_key]):
                    if gpu_id not in suggestions:
                        suggestions.append(gpu_id)
            raise UnknownGpuError(f"unknown GPU: {text}", suggestions=suggestions[:MAX_SUGGESTIONS], query=text)
