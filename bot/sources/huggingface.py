"""A model on the Hugging Face Hub, read from its GGUF file's header without downloading the file.

A question may name a repo (``unsloth/Qwen3.5-9B-GGUF``), a link to it or to one file
(``https://huggingface.co/{repo}/blob/main/{file}.gguf``) or Ollama's form (``hf.co/{repo}:Q4_K_M``).
:func:`find_reference` takes that out of the text; :func:`gguf_model` lists the repo's files, picks the one of the
asked quant (every part of a split file), and reads each header with HTTP range requests: the metadata and the
tensor table only, at most :data:`vramfit.calc.limits.MAX_GGUF_HEADER_BYTES`. What was read is cached in the user's
cache folder (``calc.presets.cache_dir``) for a day, so a second question about the same file needs no network, and
``VRAMFIT_OFFLINE=1`` answers from that cache only. The bot keeps these reads in its store instead
(:mod:`bot.sources.cache`), under the same rules.

huggingface_hub does the talking (it honours ``HF_ENDPOINT`` and ``HF_TOKEN``): the file list
(:meth:`HfApi.list_repo_tree`), the file's metadata and the storage URL the Hub redirects to
(:func:`get_hf_file_metadata`) and its HTTP session for the ranged reads, which huggingface_hub has no call for
(:class:`HfFileSystem` would, but reads ahead in blocks of several MiB and lists the repo again). Links to
huggingface.co or hf.co are read through ``HF_ENDPOINT``, so a mirror serves them; a URL to any other host is
refused, and the ranged reads go only to the endpoint's host or the Hub's own storage.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO, TypeVar, cast
from urllib.parse import urlparse

from vramfit.bot.answering.cards import AnswerError
from vramfit.bot.sources.cache import CachedRead, RemoteCache, hub_key
from vramfit.bot.sources.ranged import RangedFile, StatusError
from vramfit.bot.sources.references import REPO_ID, HubReference, allowed_storage_host, endpoint, is_offline
from vramfit.calc.architecture import from_hf_config
from vramfit.calc.file_types import file_type_in_header, file_type_in_name
from vramfit.calc.gguf import GgufHeader, architecture_from_gguf, merge_gguf_headers, read_gguf_stream
from vramfit.calc.presets import write_cache_file
from vramfit.calc.request import GpuChoice, ModelRef
from vramfit.calc.safetensors import SafetensorsTensor, checkpoint_from_safetensors

TIMEOUT_SECONDS = 10.0
DEFAULT_DEADLINE_SECONDS = 15.0
T = TypeVar("T")
DEFAULT_QUANT = "Q4_K_M"
_SPLIT = re.compile(r"^(?P<stem>.*)-(?P<index>\d{5})-of-(?P<count>\d{5})\.gguf$")


def _range_error(subject: str) -> StatusError:
    def error(status: int, retry_after: str | None) -> AnswerError:
        if status == 200:
            return AnswerError("remote_unavailable", "the file server does not answer range requests")
        return _http_error(status, subject, retry_after)

    return error


def _http_error(status: int, subject: str, retry_after: str | None = None) -> AnswerError:
    if status in (401, 403):
        return AnswerError("remote_gated", f"{subject} needs access (HTTP {status})", subject=subject[:120])
    if status == 404:
        return AnswerError("remote_not_found", f"{subject} was not found", subject=subject[:120])
    wait = f"; retry after {retry_after} s" if retry_after else ""
    return AnswerError("remote_unavailable", f"the Hub answered HTTP {status}{wait}", subject=subject[:120])


def _quant_in(name: str, quant: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(quant)}(?![A-Za-z0-9])", name, re.IGNORECASE) is not None


def _is_mmproj(path: str) -> bool:
    return "mmproj" in path.rsplit("/", 1)[-1].lower()


def choose_files(paths: Iterable[str], reference: HubReference) -> list[str]:
    """The GGUF file(s) the question means, every part of a split file, in order; an error listing the quants the
    repo has when none or several match."""
    ggufs = sorted(p for p in paths if p.lower().endswith(".gguf") and not _is_mmproj(p))
    if not ggufs:
        raise AnswerError("remote_no_gguf", f"{reference.repo} has no GGUF file", subject=reference.repo)
    if reference.file:
        chosen = [p for p in ggufs if p == reference.file]
    else:
        quant = reference.quant or (DEFAULT_QUANT if any(_quant_in(p, DEFAULT_QUANT) for p in ggufs) else "")
        chosen = [p for p in ggufs if _quant_in(p.rsplit("/", 1)[-1], quant)] if quant else ggufs
    first_parts = {_SPLIT.sub(r"\g<stem>", p.rsplit("/", 1)[-1]) for p in chosen}
    if len(first_parts) != 1:
        quants = sorted({q for p in ggufs if (q := file_type_in_name(p.rsplit("/", 1)[-1]))})
        asked = reference.file or reference.quant or "a quant"
        raise AnswerError(
            "remote_no_gguf",
            f"{reference.repo}: which file? {asked} matches {len(first_parts)} of its GGUF files",
            subject=f"{reference.repo} {asked}".strip(),
            suggestions=quants,
        )
    match = _SPLIT.match(chosen[0].rsplit("/", 1)[-1])
    if match is None:
        return chosen[:1]
    folder = chosen[0].rsplit("/", 1)[0] + "/" if "/" in chosen[0] else ""
    count = int(match["count"])
    parts = [f"{folder}{match['stem']}-{i:05d}-of-{count:05d}.gguf" for i in range(1, count + 1)]
    missing = [p for p in parts if p not in ggufs]
    if missing:
        raise AnswerError("remote_no_gguf", f"{reference.repo} lacks {missing[0]}", subject=missing[0])
    return parts


MMPROJ_PREFERRED = ("F16", "BF16")  # the projector people load: as uploaded, not quantized


def choose_mmproj(paths: Iterable[str]) -> str:
    """The repo's multimodal projector (``mmproj-*.gguf``, which llama-server loads with ``--mmproj FILE``): the
    F16 one first, then BF16, then the first by name; "" when the repo has none."""
    found = sorted(p for p in paths if p.lower().endswith(".gguf") and _is_mmproj(p))
    for quant in MMPROJ_PREFERRED:
        if chosen := [p for p in found if _quant_in(p.rsplit("/", 1)[-1], quant)]:
            return chosen[0]
    return found[0] if found else ""


@dataclass(frozen=True, slots=True)
class RemoteHeader:
    """What was read: the merged header, the files, the commit they were read at and the requests it took; the
    repo's vision projector beside them (its path and size from the file list; "" and 0 when there is none)."""

    header: GgufHeader
    files: tuple[str, ...]
    commit: str
    requests: int
    mmproj: str = ""
    mmproj_bytes: int = 0


CACHE_SECONDS = 24 * 3600  # a header read once answers again for a day without the network


def _cache_file(*key_parts: str) -> Path | None:
    """The cache file of what was read at the endpoint under ``key_parts``; None when there is no cache folder."""
    from vramfit.calc.presets import cache_dir

    folder = cache_dir()
    if folder is None:
        return None
    key = "|".join((endpoint(), *key_parts))
    return folder / "hub" / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"


def _cache_json(path: Path | None, *, any_age: bool) -> Any:
    """The JSON in a cache file written in the last day (at any age with ``any_age``); raises OSError when there is
    none, ValueError when it cannot be read."""
    if path is None or (not any_age and time.time() - path.stat().st_mtime > CACHE_SECONDS):
        raise FileNotFoundError("no fresh cache file")
    return json.loads(path.read_bytes())


def _cache_path(reference: HubReference) -> Path | None:
    return _cache_file(reference.repo, reference.revision, reference.file, reference.quant)


def _cached(reference: HubReference, *, any_age: bool) -> RemoteHeader | None:
    try:
        data = _cache_json(_cache_path(reference), any_age=any_age)
        header = GgufHeader.model_validate(data["header"])
        mmproj, mmproj_bytes = str(data.get("mmproj", "")), int(data.get("mmproj_bytes", 0))
        return RemoteHeader(header, tuple(data["files"]), str(data["commit"]), 0, mmproj, mmproj_bytes)
    except (OSError, ValueError, KeyError, TypeError):
        return None  # no cache, or one that cannot be read: read the Hub again


def _store(reference: HubReference, remote: RemoteHeader) -> None:
    path = _cache_path(reference)
    if path is None:
        return
    data = {"files": list(remote.files), "commit": remote.commit, "header": remote.header.model_dump(mode="json"),
            "mmproj": remote.mmproj, "mmproj_bytes": remote.mmproj_bytes}  # fmt: skip
    write_cache_file(path, json.dumps(data).encode("utf-8"))


def _from_shared(cache: RemoteCache, reference: HubReference, *, any_age: bool) -> RemoteHeader | None:
    read = cache.get(hub_key(reference))
    try:
        if read is None or (not any_age and read.age_seconds > CACHE_SECONDS):
            return None
        data = json.loads(read.summary)
        header = GgufHeader.model_validate(data["header"])
        mmproj, mmproj_bytes = str(data.get("mmproj", "")), int(data.get("mmproj_bytes", 0))
        return RemoteHeader(header, tuple(data["files"]), read.revision, 0, mmproj, mmproj_bytes)
    except (ValueError, KeyError, TypeError):
        return None


def _to_shared(cache: RemoteCache, reference: HubReference, remote: RemoteHeader) -> None:
    summary = json.dumps({"files": list(remote.files), "header": remote.header.model_dump(mode="json"),
                          "mmproj": remote.mmproj, "mmproj_bytes": remote.mmproj_bytes})  # fmt: skip
    cache.put(CachedRead(hub_key(reference), "hub", remote.commit or reference.revision, summary))


def read_remote_header(
    reference: HubReference, paths: Mapping[str, int] | None = None, cache: RemoteCache | None = None
) -> RemoteHeader:
    """The header of the reference's file: from the cache when read in the last day (or at any age with
    ``VRAMFIT_OFFLINE=1``), else listed and read from the Hub and cached. ``cache``: where to keep it instead of the
    user's cache folder (the bot's store, see :mod:`bot.sources.cache`)."""
    offline = is_offline()
    cached = _cached(reference, any_age=offline) if cache is None else _from_shared(cache, reference, any_age=offline)
    if cached is not None:
        return cached
    if offline:
        raise AnswerError(
            "remote_offline", f"{reference.repo} is not in the cache and VRAMFIT_OFFLINE is set", subject=reference.repo
        )
    remote = _read_from_hub(reference, paths)
    if cache is None:
        _store(reference, remote)
    else:
        _to_shared(cache, reference, remote)
    return remote


def hub_deadline_seconds() -> float:
    """How long a question waits for the Hub's file list: ``VRAMFIT_HUB_DEADLINE_SECONDS``, else 15."""
    try:
        return max(0.1, float(os.environ.get("VRAMFIT_HUB_DEADLINE_SECONDS", "")))
    except ValueError:
        return DEFAULT_DEADLINE_SECONDS


def _within_deadline(call: Callable[[], T], subject: str) -> T:
    """``call()``, or remote_unavailable when it takes longer than :func:`hub_deadline_seconds`. huggingface_hub
    retries a 429 five times, sleeping its Retry-After each time (``http_backoff``, which the file list uses and
    which takes no retry settings): two and a half minutes for "Retry-After: 30". A question should hear "try again
    later" at once instead, so the listing runs in a daemon thread that is abandoned past the deadline."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # handed to the caller's thread as is
            outcome["error"] = exc

    worker = threading.Thread(target=run, name="hub-file-list", daemon=True)
    worker.start()
    worker.join(hub_deadline_seconds())
    if worker.is_alive():
        raise AnswerError("remote_unavailable", "the Hub is busy or limiting requests", subject=subject)
    if "error" in outcome:
        raise outcome["error"]
    return cast(T, outcome["value"])


@contextmanager
def _hub_errors(reference: HubReference) -> Iterator[None]:
    """huggingface_hub's and the network's errors as the answers users read (gated, not found, busy, unreachable)."""
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        HfHubHTTPError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    try:
        yield
    except GatedRepoError as exc:
        raise AnswerError("remote_gated", f"{reference.repo} needs access", subject=reference.repo) from exc
    except (RepositoryNotFoundError, RevisionNotFoundError, EntryNotFoundError) as exc:
        raise AnswerError("remote_not_found", f"{reference.repo} was not found", subject=reference.repo) from exc
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else 0
        retry = exc.response.headers.get("Retry-After") if exc.response is not None else None
        raise _http_error(status, reference.repo, retry) from exc
    except OSError as exc:  # connection refused, DNS, time-outs (httpx2's errors are OSErrors)
        raise AnswerError("remote_unavailable", f"cannot reach the Hub: {exc}", subject=reference.repo) from exc
    except Exception as exc:  # httpx2's transport errors are not OSErrors; anything else is a bug and propagates
        if type(exc).__module__.startswith("httpx"):
            raise AnswerError("remote_unavailable", f"cannot reach the Hub: {exc}", subject=reference.repo) from exc
        raise


def _check_repo_id(reference: HubReference) -> None:
    if not REPO_ID.fullmatch(reference.repo):  # huggingface_hub would raise its own validation error
        subject = reference.repo[:80]
        raise AnswerError("remote_not_found", f"{subject!r} is not a Hub repo id", subject=subject)


def list_files(reference: HubReference) -> dict[str, int]:
    """Every file in the repo at the reference's revision, path → size in bytes (within
    :func:`hub_deadline_seconds`)."""
    from huggingface_hub import HfApi
    from huggingface_hub.hf_api import RepoFile

    _check_repo_id(reference)
    with _hub_errors(reference):
        api = HfApi(endpoint=endpoint(), token=os.environ.get("HF_TOKEN") or None)
        tree = _within_deadline(
            lambda: list(api.list_repo_tree(reference.repo, recursive=True, revision=reference.revision)),
            reference.repo,
        )
    return {item.path: int(item.size or 0) for item in tree if isinstance(item, RepoFile)}


def _file_location(reference: HubReference, path: str) -> tuple[str, int | None, str]:
    """Where the Hub keeps ``path`` (refused when it redirects off the Hub), its size and the commit it is at."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url

    hub = endpoint()
    url = hf_hub_url(reference.repo, path, revision=reference.revision, endpoint=hub)
    meta = get_hf_file_metadata(url, token=os.environ.get("HF_TOKEN") or None, timeout=TIMEOUT_SECONDS, endpoint=hub)
    location = meta.location
    if location.startswith("/"):
        location = hub + location
    if not allowed_storage_host(urlparse(location).hostname or ""):
        raise AnswerError("remote_host_refused", f"the Hub redirected {path} to another host", subject=path)
    return location, meta.size, meta.commit_hash or ""


def _read_from_hub(reference: HubReference, paths: Mapping[str, int] | None = None) -> RemoteHeader:
    """List the repo (unless ``paths`` is its listing), choose the file(s) and read their headers with range requests
    (see the module docstring)."""
    from huggingface_hub.utils._headers import build_hf_headers
    from huggingface_hub.utils._http import get_session

    if paths is None:
        paths = list_files(reference)
    token = os.environ.get("HF_TOKEN") or None
    with _hub_errors(reference):
        files = choose_files(paths, reference)
        headers: list[GgufHeader] = []
        commit, requests = "", 0
        for path in files:
            location, size, file_commit = _file_location(reference, path)
            if size is None:
                raise AnswerError("remote_unavailable", f"the Hub gave no size for {path}", subject=path)
            stream = RangedFile(get_session(), location, size, build_hf_headers(token=token),
                                timeout=TIMEOUT_SECONDS, error=_range_error(location))  # fmt: skip
            reader = cast(BinaryIO, io.BufferedReader(stream, buffer_size=1 << 16))
            headers.append(read_gguf_stream(reader, path.rsplit("/", 1)[-1], size))
            commit = commit or file_commit
            requests += stream.requests
    mmproj = choose_mmproj(paths)
    mmproj_bytes = paths.get(mmproj, 0) if mmproj else 0
    return RemoteHeader(merge_gguf_headers(headers), tuple(files), commit, requests, mmproj, mmproj_bytes)


def _gguf_reference(reference: HubReference, quant: str) -> HubReference:
    if quant and not reference.quant and not reference.file:
        return replace(reference, quant=quant.upper())
    return reference


def gguf_model(
    reference: HubReference, quant: str = "", paths: Mapping[str, int] | None = None, cache: RemoteCache | None = None
) -> tuple[ModelRef, str]:
    """The model of ``reference`` (``quant`` when the reference names none) and the quant of the file read;
    ``paths``: the repo's listing when already read; ``cache``: the bot's store instead of the user's cache folder."""
    reference = _gguf_reference(reference, quant)
    remote = read_remote_header(reference, paths, cache)
    first = remote.files[0].rsplit("/", 1)[-1]
    name = str(remote.header.metadata.get("general.name") or first.removesuffix(".gguf"))[:200]
    revision = remote.commit[:12] or reference.revision
    source = f"https://huggingface.co/{reference.repo}/blob/{revision}/{remote.files[0]}"
    model = ModelRef(
        id=f"{reference.repo}/{first}"[:200],
        name=name,
        architecture=architecture_from_gguf(remote.header),
        gguf=remote.header,
        source=source,
        mmproj=remote.mmproj.rsplit("/", 1)[-1][:200],
        mmproj_bytes=remote.mmproj_bytes,
    )
    return model, file_type_in_name(first) or file_type_in_header(remote.header.metadata) or reference.quant


# -- every quant of a GGUF repo, for "which quant fits" ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QuantFile:
    """One quant a GGUF repo has: its label ("Q4_K_M", "" when the name carries none), its file or every part of a
    split file, and their bytes together."""

    quant: str
    files: tuple[str, ...]
    size: int


def quant_files(listing: Mapping[str, int]) -> list[QuantFile]:
    """Every GGUF model file of a repo's listing (path → bytes) by quant, the parts of a split file as one, largest
    first (the projector and incomplete splits left out)."""
    groups: dict[str, list[str]] = {}
    for path in sorted(p for p in listing if p.lower().endswith(".gguf") and not _is_mmproj(p)):
        folder, _, name = path.rpartition("/")
        split = _SPLIT.match(name)
        groups.setdefault(f"{folder}/{split['stem'] if split else name}", []).append(path)
    out = []
    for parts in groups.values():
        split = _SPLIT.match(parts[0].rsplit("/", 1)[-1])
        if split is not None and len(parts) != int(split["count"]):
            continue  # a part is missing: llama.cpp could not load it
        name = parts[0].rsplit("/", 1)[-1]
        out.append(QuantFile(file_type_in_name(name), tuple(parts), sum(listing[p] for p in parts)))
    return sorted(out, key=lambda q: (-q.size, q.files))


def _listing_cache_path(reference: HubReference) -> Path | None:
    return _cache_file(reference.repo, reference.revision, "listing")


def _listing_key(reference: HubReference) -> str:
    return hub_key(replace(reference, file="", quant="")) + "|listing"


def repo_listing(reference: HubReference, cache: RemoteCache | None = None) -> dict[str, int]:
    """The repo's GGUF files (path → bytes): from the cache when listed in the last day (at any age with
    ``VRAMFIT_OFFLINE=1``), else listed on the Hub and cached (the user's cache folder, or ``cache``)."""
    offline = is_offline()
    try:
        if cache is None:
            data = _cache_json(_listing_cache_path(reference), any_age=offline)
        else:
            read = cache.get(_listing_key(reference))
            if read is None or (not offline and read.age_seconds > CACHE_SECONDS):
                raise FileNotFoundError("no fresh listing")
            data = json.loads(read.summary)
        return {str(path): int(size) for path, size in data["files"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass  # not listed yet, or unreadable: list again
    if offline:
        raise AnswerError(
            "remote_offline", f"{reference.repo} is not in the cache and VRAMFIT_OFFLINE is set", subject=reference.repo
        )
    listing = {p: size for p, size in list_files(reference).items() if p.lower().endswith(".gguf")}
    summary = json.dumps({"files": listing})
    if cache is None:
        if (path := _listing_cache_path(reference)) is not None:
            write_cache_file(path, summary.encode("utf-8"))
    else:
        cache.put(CachedRead(_listing_key(reference), "hub", reference.revision, summary))
    return listing


CANNOT_FIT_FACTOR = 2  # a file over twice the GPUs' memory cannot fit whole: only its token embeddings stay in RAM


def quant_candidates(
    reference: HubReference,
    listing: Mapping[str, int],
    usable_bytes: int | None = None,
    cache: RemoteCache | None = None,
) -> Iterator[tuple[str, ModelRef]]:
    """The repo's quants, largest file first, each as (its quant label, the model read from its own header), read
    one at a time as the caller asks for the next, each header cached like any other. A file over
    :data:`CANNOT_FIT_FACTOR` times ``usable_bytes`` is not read (the smallest always is, for the answer when none
    fits)."""
    files = quant_files(listing)
    for index, group in enumerate(files):
        if usable_bytes is not None and group.size > CANNOT_FIT_FACTOR * usable_bytes and index < len(files) - 1:
            continue
        by_quant = replace(reference, file="", quant=group.quant.upper())
        try:  # the same cache entry as a question naming that quant, when the quant names this file alone
            same = bool(group.quant) and tuple(choose_files(listing, by_quant)) == group.files
        except AnswerError:
            same = False
        one = by_quant if same else replace(reference, file=group.files[0], quant="")
        model, label = gguf_model(one, paths=listing, cache=cache)
        yield group.quant or label or DEFAULT_QUANT, model


def repo_quants(reference: HubReference, engine: str = "llama.cpp", cache: RemoteCache | None = None) -> (
    dict[str, int] | None
):  # fmt: skip
    """The GGUF listing of a repo a "which quant fits" question names, or None when the answer is not over its GGUF
    files: the reference names one file or quant, the repo has none (a safetensors repo), or vLLM is asked of a repo
    that also has safetensors (checked on the Hub only when the listing is not cached)."""
    if reference.file or reference.quant:
        return None
    listing = repo_listing(reference, cache)
    if not quant_files(listing):
        return None
    if engine == "vllm":
        return None  # vLLM answers a GGUF repo from its safetensors, or as before
    return listing


def best_quant_files(
    reference: HubReference, engine: str, gpus: tuple[GpuChoice, ...], cache: RemoteCache | None = None
) -> tuple[ModelRef, str, Iterator[tuple[str, ModelRef]]] | None:
    """For "which quant of REPO fits": the largest file worth reading (its model and quant, for the request) and
    every candidate from it down (for :func:`bot.answering.resolve.resolve`'s ``quant_files``), read lazily on the
    first named GPU's memory; None when the answer is not over the repo's GGUF files (:func:`repo_quants`)."""
    listing = repo_quants(reference, engine, cache)
    if listing is None:
        return None
    usable = gpus[0].gpu.usable_bytes * gpus[0].count if gpus else None
    candidates = quant_candidates(reference, listing, usable, cache)
    quant, model = next(candidates)
    return model, quant, itertools.chain([(quant, model)], candidates)


# -- safetensors repos: config.json and the safetensors headers -------------------------------------------------------

SAFETENSORS_SINGLE = "model.safetensors"
SAFETENSORS_INDEX = "model.safetensors.index.json"


@dataclass(frozen=True, slots=True)
class RemoteCheckpoint:
    """What was read of a safetensors repo: its config.json, every tensor its headers list, the weight files and the
    commit they were read at."""

    config: dict[str, Any]
    tensors: tuple[SafetensorsTensor, ...]
    files: tuple[str, ...]
    commit: str


def _checkpoint_cache_path(reference: HubReference) -> Path | None:
    return _cache_file(reference.repo, reference.revision, "safetensors")


def _cached_checkpoint(reference: HubReference, *, any_age: bool) -> RemoteCheckpoint | None:
    try:
        data = _cache_json(_checkpoint_cache_path(reference), any_age=any_age)
        tensors = tuple(
            SafetensorsTensor(name=name, dtype=dtype, shape=tuple(shape), nbytes=nbytes)
            for name, dtype, shape, nbytes in data["tensors"]
        )
        return RemoteCheckpoint(dict(data["config"]), tensors, tuple(data["files"]), str(data["commit"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # no cache, or one that cannot be read: read the Hub again


def _store_checkpoint(reference: HubReference, remote: RemoteCheckpoint) -> None:
    path = _checkpoint_cache_path(reference)
    if path is None:
        return
    tensors = [[t.name, t.dtype, list(t.shape), t.nbytes] for t in remote.tensors]
    data = {"files": list(remote.files), "commit": remote.commit, "config": remote.config, "tensors": tensors}
    write_cache_file(path, json.dumps(data, separators=(",", ":")).encode("utf-8"))


def has_safetensors(paths: Iterable[str]) -> bool:
    """Whether the listing is a Transformers checkpoint huggingface_hub can read the headers of: one
    ``model.safetensors`` or the index of its shards."""
    return any(p in (SAFETENSORS_SINGLE, SAFETENSORS_INDEX) for p in paths)


def _read_checkpoint(reference: HubReference, paths: Mapping[str, int]) -> RemoteCheckpoint:
    """config.json (downloaded: a few KiB) and every tensor of the safetensors headers, which huggingface_hub's
    :meth:`HfApi.get_safetensors_metadata` reads with range requests (the first 100 kB of each file, and the rest of
    a longer header), shard by shard as the index lists them. The storage host of config.json and of the first
    weight file is checked first, as for a GGUF (huggingface_hub follows the Hub's redirects itself)."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import NotASafetensorsRepoError, SafetensorsParsingError
    from huggingface_hub.utils.tqdm import disable_progress_bars
    from pydantic import ValidationError

    from vramfit.calc.files import read_config_json

    if "config.json" not in paths:
        raise AnswerError("remote_no_config", f"{reference.repo} has no config.json", subject=reference.repo)
    weights = sorted(p for p in paths if p.endswith(".safetensors") and "/" not in p)
    token = os.environ.get("HF_TOKEN") or None
    with _hub_errors(reference):
        _, _, commit = _file_location(reference, "config.json")
        if weights:
            _file_location(reference, weights[0])
        api = HfApi(endpoint=endpoint(), token=token)
        revision = commit or reference.revision  # every read at the commit config.json was read at
        config = read_config_json(api.hf_hub_download(reference.repo, "config.json", revision=revision))
        disable_progress_bars()  # get_safetensors_metadata shows a tqdm bar for sharded repos
        try:
            metadata = _within_deadline(
                lambda: api.get_safetensors_metadata(reference.repo, revision=revision, timeout=TIMEOUT_SECONDS),
                reference.repo,
            )
        except NotASafetensorsRepoError as exc:
            raise AnswerError("remote_no_weights", str(exc), subject=reference.repo) from exc
        except SafetensorsParsingError as exc:
            raise AnswerError("bad_file", str(exc), subject=reference.repo, reason=str(exc)[:300]) from exc
    try:
        tensors = tuple(
            SafetensorsTensor(
                name=name, dtype=info.dtype, shape=tuple(info.shape), nbytes=info.data_offsets[1] - info.data_offsets[0]
            )
            for _, file_metadata in sorted(metadata.files_metadata.items())
            for name, info in file_metadata.tensors.items()
        )
    except (ValidationError, TypeError, IndexError) as exc:
        raise AnswerError("bad_file", f"unreadable safetensors header: {exc}", reason="unreadable safetensors header",
                          subject=reference.repo) from exc  # fmt: skip
    return RemoteCheckpoint(config, tensors, tuple(sorted(metadata.files_metadata)), commit)


def read_remote_checkpoint(reference: HubReference, paths: Mapping[str, int]) -> RemoteCheckpoint:
    """The repo's config.json and safetensors headers, read from the Hub (``paths``: its listing) and cached."""
    remote = _read_checkpoint(reference, paths)
    _store_checkpoint(reference, remote)
    return remote


def checkpoint_model(reference: HubReference, remote: RemoteCheckpoint) -> ModelRef:
    """The model of a safetensors repo: the architecture from its config.json (an unknown model_type is
    ``unsupported_architecture``), the checkpoint's bytes and format from its headers and quantization_config."""
    architecture = from_hf_config(remote.config)
    checkpoint = checkpoint_from_safetensors(remote.tensors, remote.config)
    revision = remote.commit[:12] or reference.revision
    return ModelRef(
        id=reference.repo[:200],  # what `vllm serve` takes
        name=reference.repo.rsplit("/", 1)[-1][:200],
        architecture=architecture,
        checkpoint=checkpoint,
        source=f"https://huggingface.co/{reference.repo}/tree/{revision}",
    )


def hub_model(
    reference: HubReference, quant: str = "", engine: str = "llama.cpp", cache: RemoteCache | None = None
) -> tuple[ModelRef, str]:
    """The model a Hub reference names and the quant to answer in: a GGUF file's header (a link to the file, a
    ``:QUANT`` tag, or a repo of GGUF files, as :func:`gguf_model`), or a safetensors repo's config.json and headers.

    A repo with both answers from its GGUF files, unless ``engine`` is vLLM. For a safetensors repo the quant is
    ``quant`` as asked, or "": the request's default is then the checkpoint's own format with vLLM
    (``ParsedQuery.to_request``) and, with llama.cpp, a GGUF llama.cpp's quantizer would make from the
    architecture. From the cache when read in the last day (at any age with ``VRAMFIT_OFFLINE=1``); ``cache``: the
    bot's store for GGUF headers (a safetensors summary stays in the user's cache folder)."""
    if reference.file or reference.quant:  # one GGUF file, or Ollama's hf.co/{repo}:{quant}
        return gguf_model(reference, quant, cache=cache)
    offline = is_offline()
    remote = _cached_checkpoint(reference, any_age=offline)
    if remote is None:
        as_gguf = _gguf_reference(reference, quant)
        known = _cached(as_gguf, any_age=offline) if cache is None else _from_shared(cache, as_gguf, any_age=offline)
        if known is not None:
            return gguf_model(reference, quant, cache=cache)
        if offline:
            raise AnswerError(
                "remote_offline",
                f"{reference.repo} is not in the cache and VRAMFIT_OFFLINE is set",
                subject=reference.repo,
            )
        paths = list_files(reference)
        ggufs = [p for p in paths if p.lower().endswith(".gguf")]
        if ggufs and not (engine == "vllm" and has_safetensors(paths)):
            return gguf_model(reference, quant, paths, cache)
        if not has_safetensors(paths):
            raise AnswerError(
                "remote_no_weights", f"{reference.repo} has neither GGUF nor safetensors files", subject=reference.repo
            )
        remote = read_remote_checkpoint(reference, paths)
    return checkpoint_model(reference, remote), quant
