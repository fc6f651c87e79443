"""Tokens of a question and the catalog's names as lookup keys.

A question and every catalog name (id, display name, aliases, Hugging Face repo, GPU family) go through the same
steps: lowercase and NFKC (:func:`bot.parser.text.prepare`), split into tokens at spaces, punctuation and
Hangul/Latin boundaries ("라마3" → "라마", "3"; "3060에서" → "3060", "에서"), translate Hangul words
("라마" → "llama", "맥스" → "max", dropping a trailing particle: "라마를" → "llama"), drop filler and brand words, and
join the rest without separators. "Llama-3.1 8B", "llama3.1-8b" and "라마3.1 8b" all become ``llama318b``.
"""

from __future__ import annotations

import hashlib
import json
import re
import weakref
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from vramfit.bot.parser.lexicon import GPU_SKIP, KO_WORDS, MODEL_SKIP, decompose, strip_particle
from vramfit.bot.parser.text import prepare
from vramfit.calc.bounded_json import loads
from vramfit.calc.cache_files import MAX_CACHE_FILE_BYTES, cache_dir, read_cache_file, set_aside, write_cache_file
from vramfit.calc.gpu import Gpu
from vramfit.calc.presets import Catalog

TOKEN_RE = re.compile(r"[a-z0-9][a-z0-9._]*|[\uac00-\ud7a3\u3131-\u318e]+")
_SEPARATORS = re.compile(r"[\s\-_.]+")
_ALPHA_PREFIX = re.compile(r"^[a-z]+")
_DECIMAL_SIZE = re.compile(r"\d+\.\d+gb")  # "7.5gb": a size keeps its decimal point (squashed it reads 75 GB)


@dataclass(frozen=True, slots=True)
class Token:
    text: str  # as written (lowercased), trailing dots/underscores dropped
    start: int
    end: int
    form: str  # the word it stands for, without separators ("라마를" → "llama", "3.1" → "31")
    hangul: bool


def squash(text: str) -> str:
    """Drop spaces, hyphens, underscores and dots (calc.presets.normalize_key on lowercased text)."""
    return _SEPARATORS.sub("", text)


def word_form(word: str, vocab: dict[str, str]) -> str:
    """The word a token stands for: Hangul words translated and particles dropped; Latin words as written."""
    if not ("\uac00" <= word[0] <= "\ud7a3" or "\u3131" <= word[0] <= "\u318e"):
        return word if _DECIMAL_SIZE.fullmatch(word) else squash(word)
    found = vocab.get(word)
    if found is None:
        stem = strip_particle(word, vocab)
        found = vocab[stem] if stem is not None else word
    return squash(found)


def tokenize(text: str, vocab: dict[str, str]) -> list[Token]:
    tokens: list[Token] = []
    for m in TOKEN_RE.finditer(text):
        raw = m.group().rstrip("._")
        if not raw:
            continue
        hangul = not raw[0].isascii()
        tokens.append(Token(raw, m.start(), m.start() + len(raw), word_form(raw, vocab), hangul))
    return tokens


@dataclass
class CatalogIndex:
    """Lookup keys of one catalog's models and GPUs."""

    vocab: dict[str, str]
    model_keys: dict[str, frozenset[str]]
    gpu_keys: dict[str, frozenset[str]]
    model_max_tokens: int
    gpu_max_tokens: int
    sorted_model_keys: list[str]
    family_words: frozenset[str]  # leading words of model names: "llama", "qwen", "gemma", ...
    model_keys_by_digits: dict[str, list[str]]
    model_key_pieces: dict[str, list[tuple[str, ...]]]  # key → the words it was made of, per catalog name
    decomposed_vocab: dict[str, str]  # NFD of each Hangul word → the word

    def gpu_family(self, gpu: Gpu) -> str:
        return gpu.family or gpu.id


def _model_texts(catalog: Catalog) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for m in catalog.models.values():
        texts = [m.id, m.name, *m.aliases]
        if m.hf_repo:
            texts.append(m.hf_repo.rsplit("/", 1)[-1])
        rows += [(m.id, t) for t in texts]
    return rows


def _gpu_texts(catalog: Catalog) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for g in catalog.gpus.values():
        rows += [(g.id, t) for t in (g.id, g.name, *g.aliases)]
        if g.family:
            rows.append((g.id, g.family))
    return rows


def build_index(catalog: Catalog) -> CatalogIndex:
    vocab: dict[str, str] = dict(KO_WORDS)
    model_rows = _model_texts(catalog)
    gpu_rows = _gpu_texts(catalog)
    # Hangul words of the catalog's own aliases are words too ("커맨드알"), so a particle after them is dropped.
    for _, text in model_rows + gpu_rows:
        for m in TOKEN_RE.finditer(prepare(text)):
            word = m.group()
            if not word[0].isascii() and word not in vocab:
                vocab[word] = word

    def collect(
        rows: list[tuple[str, str]], skip: frozenset[str], pieces: dict[str, list[tuple[str, ...]]]
    ) -> tuple[dict[str, frozenset[str]], int]:
        keys: dict[str, set[str]] = defaultdict(set)
        longest = 1
        for item_id, text in rows:
            tokens = tokenize(prepare(text), vocab)
            words = tuple(t.form for t in tokens if t.form not in skip)
            key = "".join(words)
            if key:
                keys[key].add(item_id)
                longest = max(longest, len(tokens))
                if words not in pieces[key]:
                    pieces[key].append(words)
        return {k: frozenset(v) for k, v in keys.items()}, longest

    model_pieces: dict[str, list[tuple[str, ...]]] = defaultdict(list)
    model_keys, model_max = collect(model_rows, MODEL_SKIP, model_pieces)
    gpu_keys, gpu_max = collect(gpu_rows, GPU_SKIP, defaultdict(list))
    family_words: set[str] = set()
    by_digits: dict[str, list[str]] = defaultdict(list)
    for key in model_keys:
        for words in model_pieces[key]:
            prefix = _ALPHA_PREFIX.match(words[0])
            if prefix and len(prefix.group()) >= 3:
                family_words.add(prefix.group())
        by_digits[re.sub(r"\D", "", key)].append(key)
    return CatalogIndex(
        vocab=vocab,
        model_keys=model_keys,
        gpu_keys=gpu_keys,
        model_max_tokens=model_max + 2,
        gpu_max_tokens=gpu_max + 2,
        sorted_model_keys=sorted(model_keys),
        family_words=frozenset(family_words),
        model_keys_by_digits=dict(by_digits),
        model_key_pieces=dict(model_pieces),
        decomposed_vocab={decompose(w): w for w in vocab},
    )


_INDEXES: weakref.WeakKeyDictionary[Catalog, CatalogIndex] = weakref.WeakKeyDictionary()


def index_for(catalog: Catalog) -> CatalogIndex:
    """The index of ``catalog``, built once per catalog object (and, for the shipped catalog, once per version of
    its preset files and of the parser: see :func:`_stored_index`)."""
    found = _INDEXES.get(catalog)
    if found is None:
        found = _stored_index(catalog)
        _INDEXES[catalog] = found
    return found


# What the index is built from besides the catalog: this module and the word lists it reads.
_INDEX_SOURCES = ("index.py", "lexicon.py", "text.py")


def index_to_json(index: CatalogIndex) -> bytes:
    """The index as JSON: sets and tuples as sorted lists, read back by :func:`index_from_json`."""
    data = {
        "vocab": index.vocab,
        "model_keys": {key: sorted(ids) for key, ids in index.model_keys.items()},
        "gpu_keys": {key: sorted(ids) for key, ids in index.gpu_keys.items()},
        "model_max_tokens": index.model_max_tokens,
        "gpu_max_tokens": index.gpu_max_tokens,
        "sorted_model_keys": index.sorted_model_keys,
        "family_words": sorted(index.family_words),
        "model_keys_by_digits": index.model_keys_by_digits,
        "model_key_pieces": {key: [list(words) for words in pieces] for key, pieces in index.model_key_pieces.items()},
        "decomposed_vocab": index.decomposed_vocab,
    }
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _strings(value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError("not a list of strings")
    return value


def _string_map(value: object) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError("not a map of strings")
    return value


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 1000:
        raise ValueError("not a token count")
    return value


def index_from_json(raw: bytes) -> CatalogIndex:
    """The index :func:`index_to_json` wrote; ValueError for anything else (a damaged or hand-made file)."""
    data = loads(raw, max_bytes=MAX_CACHE_FILE_BYTES)  # JsonRefused (a ValueError) when too large or too deep
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    try:
        return CatalogIndex(
            vocab=_string_map(data["vocab"]),
            model_keys={str(k): frozenset(_strings(v)) for k, v in dict(data["model_keys"]).items()},
            gpu_keys={str(k): frozenset(_strings(v)) for k, v in dict(data["gpu_keys"]).items()},
            model_max_tokens=_count(data["model_max_tokens"]),
            gpu_max_tokens=_count(data["gpu_max_tokens"]),
            sorted_model_keys=_strings(data["sorted_model_keys"]),
            family_words=frozenset(_strings(data["family_words"])),
            model_keys_by_digits={str(k): _strings(v) for k, v in dict(data["model_keys_by_digits"]).items()},
            model_key_pieces={
                str(k): [tuple(_strings(words)) for words in pieces]
                for k, pieces in dict(data["model_key_pieces"]).items()
            },
            decomposed_vocab=_string_map(data["decomposed_vocab"]),
        )
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a name index: {exc}") from exc


def _stored_index(catalog: Catalog) -> CatalogIndex:
    """Building the index takes a tenth of a question's cold start, so the shipped catalog's index is kept in the
    user's cache folder under the SHA-256 of the preset files and of the parser modules that build it; a custom
    catalog (no fingerprint), a cache turned off or a file that cannot be read or written just builds it.

    JSON, never pickle: whatever is in the cache folder is data, so a file planted there cannot run code; one that
    is not an index as :func:`index_to_json` writes it is rebuilt."""
    folder = cache_dir()
    if not catalog.fingerprint or folder is None:
        return build_index(catalog)
    here = Path(__file__).parent
    digest = hashlib.sha256(catalog.fingerprint.encode())
    for name in _INDEX_SOURCES:
        digest.update((here / name).read_bytes())
    stored = folder / f"parser-index-{digest.hexdigest()[:20]}.json"
    found = read_cache_file(stored)
    if found is not None:
        try:
            return index_from_json(found[0])
        except ValueError as exc:
            set_aside(stored, str(exc))
    index = build_index(catalog)
    write_cache_file(stored, index_to_json(index))
    return index
