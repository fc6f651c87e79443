"""Where a remote read is kept besides the user's cache folder: the interface the bot's store implements.

What is kept is the summary a question needs (a Hub file's merged GGUF header with its file list, an Ollama tag's
model-blob header), as JSON, under a key naming the source (:func:`hub_key`, :func:`ollama_key`), with the revision
it was read at (the Hub's commit, the registry's manifest digest), the ETag the server gave, and when it was read.
The terminal keeps these in the cache folder (``calc.presets.cache_dir``); the bot passes a :class:`RemoteCache` in
(``bot.storage.remote_cache``: SQLite or PostgreSQL), so a restarted bot, or several bot processes sharing one
database, answer a second question about the same file without a request.

Implementations never raise: a cache that cannot be read is a miss, one that cannot be written is not used.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol

from vramfit.bot.sources.references import HubReference, OllamaReference, endpoint, registry


@dataclass(frozen=True, slots=True)
class CachedRead:
    """One remote read: its key, what it was read at, and the summary as JSON text."""

    key: str
    source: str  # "hub" or "ollama"
    revision: str  # the Hub's commit hash, or the manifest digest of an Ollama tag
    summary: str  # JSON
    etag: str = ""
    fetched_at: float = field(default_factory=time.time)  # epoch seconds

    @property
    def age_seconds(self) -> float:
        return max(0.0, time.time() - self.fetched_at)


class RemoteCache(Protocol):
    """A place for remote reads, shared by every process that uses it."""

    def get(self, key: str) -> CachedRead | None:
        """The read kept under ``key``, or None (never raises)."""

    def put(self, read: CachedRead) -> None:
        """Keep ``read`` under its key, replacing what was there (never raises)."""


def hub_key(reference: HubReference) -> str:
    """The key of a Hub question's file: the endpoint, repo, revision asked, and file or quant asked."""
    return "|".join(("hub", endpoint(), reference.repo, reference.revision, reference.file, reference.quant))


def ollama_key(reference: OllamaReference) -> str:
    """The key of an Ollama tag: the registry, namespace, model and tag."""
    return "|".join(("ollama", registry(), reference.namespace, reference.model, reference.tag))
