"""What a cached remote read may hold, checked with the limits of a fresh read before it is used.

A cache entry (a file in the user's cache folder, a row of the bot's store) is read back as JSON and parsed into one
of these frozen models; the GGUF header in it then passes :func:`check_header`, the bounds
:func:`vramfit.calc.gguf.read_gguf_stream` and :mod:`bot.sources.budget` put on a header read from the network. An
entry that fails (edited by hand, truncated, a million tensors, a number like ``1e400``) is a miss: the source reads
the Hub or the registry again, and says so in the log once.
"""

from __future__ import annotations

import logging
import math
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vramfit.bot.sources.budget import MAX_SPLIT_PARTS, RemoteLimits
from vramfit.calc.bounded_json import loads
from vramfit.calc.cache_files import MAX_CACHE_FILE_BYTES
from vramfit.calc.gguf import GgufHeader
from vramfit.calc.limits import GGML_MAX_DIMS, MAX_GGUF_KEYS, MAX_TENSOR_ELEMENTS

log = logging.getLogger("vramfit.sources")
MAX_FILE_BYTES = 1 << 50  # one GGUF or safetensors file: 1 PiB is far past any
_warned: set[str] = set()


class _Entry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", allow_inf_nan=False, defer_build=True)


class HubHeaderEntry(_Entry):
    """A Hub GGUF's merged header, the files it was read from and the commit (the user's cache folder)."""

    files: tuple[str, ...] = Field(min_length=1, max_length=MAX_SPLIT_PARTS)
    commit: str = Field(default="", max_length=64)
    header: GgufHeader
    mmproj: str = Field(default="", max_length=1000)
    mmproj_bytes: int = Field(default=0, ge=0, le=MAX_FILE_BYTES)


class SharedHubHeaderEntry(HubHeaderEntry):
    """The same in the bot's store, where the commit is the row's revision."""


class ListingEntry(_Entry):
    """A repo's GGUF files, path → bytes."""

    files: dict[str, int] = Field(max_length=RemoteLimits().max_listing_files)


class CheckpointEntry(_Entry):
    """A safetensors repo's config.json and every tensor of its headers, ``[name, dtype, shape, bytes]``."""

    files: tuple[str, ...]
    commit: str = Field(default="", max_length=64)
    config: dict[str, Any]
    tensors: tuple[tuple[str, str, tuple[int, ...], int], ...] = Field(max_length=RemoteLimits().max_tensors)


class OllamaEntry(_Entry):
    """An Ollama tag's model-blob header and the digests it was read at."""

    manifest_digest: str = Field(default="", max_length=80)
    blob_digest: str = Field(max_length=80)
    header: GgufHeader


def _finite(value: Any, depth: int = 0) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if depth > 8:
        return False
    if isinstance(value, dict):
        return all(_finite(v, depth + 1) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_finite(v, depth + 1) for v in value)
    return True


def check_header(header: GgufHeader, parts: int = 1) -> None:
    """The bounds a header read from the network keeps (ValueError otherwise): tensors of the merged parts, keys per
    part, at most four dimensions per tensor, elements as their shape says, finite numbers."""
    limits = RemoteLimits()
    if len(header.tensors) > limits.max_gguf_tensors:
        raise ValueError(f"{len(header.tensors)} tensors")
    if len(header.metadata) > MAX_GGUF_KEYS * parts:
        raise ValueError(f"{len(header.metadata)} metadata keys")
    for tensor in header.tensors:
        if len(tensor.shape) > GGML_MAX_DIMS or any(d < 0 for d in tensor.shape):
            raise ValueError(f"tensor {tensor.name[:80]} has shape {tensor.shape}")
        if tensor.n_elements != math.prod(tensor.shape) or tensor.n_elements > MAX_TENSOR_ELEMENTS:
            raise ValueError(f"tensor {tensor.name[:80]} has {tensor.n_elements} elements")
        if not 0 <= tensor.n_bytes <= MAX_FILE_BYTES:
            raise ValueError(f"tensor {tensor.name[:80]} has {tensor.n_bytes} bytes")
    if not 0 <= header.file_bytes <= MAX_FILE_BYTES * parts or not 0 <= header.metadata_bytes <= header.file_bytes:
        raise ValueError("file sizes out of range")
    if not _finite(header.metadata):
        raise ValueError("a metadata number is not finite")


E = TypeVar("E", bound=_Entry)


def read_entry(kind: type[E], raw: bytes | str, where: str) -> E | None:
    """``raw`` as a ``kind`` entry, its header checked; None (a miss, logged once per ``where``) when it is not one."""
    try:
        entry = kind.model_validate(loads(raw, max_bytes=MAX_CACHE_FILE_BYTES))
        header = getattr(entry, "header", None)
        if isinstance(header, GgufHeader):
            check_header(header, len(getattr(entry, "files", ())) or 1)
        return entry
    except (ValueError, TypeError) as exc:  # pydantic's ValidationError and bounded_json's JsonRefused are ValueErrors
        if where not in _warned:
            _warned.add(where)
            why = exc.errors()[0].get("msg", "") if isinstance(exc, ValidationError) else str(exc)
            log.warning("A cached remote read could not be used, reading it again (%s): %s", where, str(why)[:200])
        return None
