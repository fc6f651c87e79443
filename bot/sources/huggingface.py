"""A model on the Hugging Face Hub, read from its GGUF file's header without downloading the file.

A question may name a repo (``unsloth/Qwen3.5-9B-GGUF``), a link to it or to one file
(``https://huggingface.co/{repo}/blob/main/{file}.gguf``) or Ollama's form (``hf.co/{repo}:Q4_K_M``).
:func:`find_reference` takes that out of the text; :func:`gguf_model` lists the repo's files, picks the one of the
asked quant (every part of a split file), and reads each header with HTTP range requests: the metadata and the
tensor table only, at most :data:`vramfit.calc.limits.MAX_GGUF_HEADER_BYTES`. What was read is cached in the user's
cache folder (:mod:`calc.cache_files`) for a day, so a second question about the same file needs no network, and
``VRAMFIT_OFFLINE=1`` answers from that cache only; a cached entry is checked with a fresh read's limits
(:mod:`bot.sources.entries`). The bot keeps these reads in its store instead (:mod:`bot.sources.cache`), under the
same rules.

Every request goes through huggingface_hub's HTTP session as :mod:`bot.sources.budget` builds it, within one budget
per question (a total deadline, caps on requests, bytes, split parts and tensors; every redirect hop checked; the
token sent to the endpoint's host only). The file list (the Hub's ``/api/models/{repo}/tree`` pages, as
:meth:`HfApi.list_repo_tree` reads them) and the file's metadata (a HEAD of its resolve URL, as
:func:`get_hf_file_metadata` reads it) are read here, so that each page and hop counts against the budget and a
malformed answer is ``remote_bad_answer``; huggingface_hub's own calls read a safetensors repo's config.json and
headers. The ranged reads of a GGUF header have no huggingface_hub call (:class:`HfFileSystem` would read ahead in
blocks of several MiB and list the repo again). Links to huggingface.co or hf.co are read through ``HF_ENDPOINT``,
so a mirror serves them; a URL to any other host is refused, and the ranged reads go only to the endpoint's host or
the Hub's own storage.
"""

from __future__ import annotations

import functools
import hashlib
import io
import itertools
import json
import math
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, ParamSpec, TypeVar, cast
from urllib.parse import quote, urljoin, urlparse

from vramfit.bot.errors import AnswerError
from vramfit.bot.sources.budget import (
    MAX_REDIRECTS,
    MAX_SPLIT_PARTS,
    BudgetExceeded,
    Origin,
    RemoteBudget,
    RemoteLimits,
    checked_session,
    current_budget,
    is_unreachable,
    origin_of,
    read_body,
    remote_budget,
)
from vramfit.bot.sources.cache import CachedRead, RemoteCache, hub_key
from vramfit.bot.sources.entries import (
    CheckpointEntry,
    E,
    HubHeaderEntry,
    ListingEntry,
    SharedHubHeaderEntry,
    read_entry,
)
from vramfit.bot.sources.ranged import RangedFile, StatusError
from vramfit.bot.sources.references import REPO_ID, HubReference, allowed_storage_host, endpoint, is_offline
from vramfit.bot.untrusted_text import inert
from vramfit.calc.bounded_json import JsonRefused, loads
from vramfit.calc.cache_files import REMOTE_FOLDER_BYTES, cache_dir, read_cache_file, set_aside, write_cache_file
from vramfit.calc.errors import VramfitError
from vramfit.calc.file_types import file_type_in_header, file_type_in_name
from vramfit.calc.files import parse_config_json
from vramfit.calc.gguf import GgufHeader, architecture_from_gguf, merge_gguf_headers, read_gguf_stream
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.limits import MAX_CONFIG_BYTES
from vramfit.calc.request import GpuChoice, ModelRef
from vramfit.calc.safetensors import SafetensorsTensor, checkpoint_from_safetensors

if TYPE_CHECKING:
    import httpx2

TIMEOUT_SECONDS = 10.0
DEFAULT_DEADLINE_SECONDS = 15.0
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


def hub_deadline_seconds() -> float:
    """How long one question may spend on the Hub, every request and every byte together:
    ``VRAMFIT_HUB_DEADLINE_SECONDS``, else 15."""
    try:
        value = float(os.environ.get("VRAMFIT_HUB_DEADLINE_SECONDS", ""))
    except ValueError:
        return DEFAULT_DEADLINE_SECONDS
    return min(600.0, max(0.1, value)) if math.isfinite(value) else DEFAULT_DEADLINE_SECONDS


def hub_limits() -> RemoteLimits:
    return RemoteLimits(deadline_seconds=hub_deadline_seconds())


def _hub_origin_allowed(target: Origin) -> bool:
    """The endpoint itself (scheme, host and port), or the Hub's hosts and storage over HTTPS on port 443."""
    scheme, host, port = target
    if target == origin_of(endpoint()):
        return True
    return scheme == "https" and port == 443 and allowed_storage_host(host)


def _refused(host: str) -> AnswerError:
    return AnswerError("remote_host_refused", f"the Hub redirected to {host}, not its own storage", subject=host)


def _spent(exc: BudgetExceeded) -> AnswerError:
    if exc.what in ("deadline", "cancelled"):
        return AnswerError("remote_unavailable", str(exc), reason=str(exc))
    return AnswerError("remote_too_large", str(exc), reason=str(exc))


@contextmanager
def hub_budget() -> Iterator[RemoteBudget]:
    """The question's budget on the Hub (:mod:`bot.sources.budget`): the token goes to the endpoint's host only."""
    with remote_budget(hub_limits(), allowed=_hub_origin_allowed, token_origin=origin_of(endpoint()),
                       refuse=_refused, exceeded=_spent) as budget:  # fmt: skip
        yield budget


P = ParamSpec("P")
R = TypeVar("R")


def within_hub_budget(read: Callable[P, R]) -> Callable[P, R]:
    """``read`` with every Hub request it makes within one :func:`hub_budget` (an open one is used as it is)."""

    @functools.wraps(read)
    def budgeted(*args: P.args, **kwargs: P.kwargs) -> R:
        with hub_budget():
            return read(*args, **kwargs)

    return budgeted


def _quant_in(name: str, quant: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(quant)}(?![A-Za-z0-9])", name, re.IGNORECASE) is not None


def _is_mmproj(path: str) -> bool:
    return "mmproj" in path.rsplit("/", 1)[-1].lower()


def choose_files(paths: Iterable[str], reference: HubReference, *, max_parts: int = MAX_SPLIT_PARTS) -> (
    list[str]
):  # fmt: skip
    """The GGUF file(s) the question means, every part of a split file, in order; an error listing the quants the
    repo has when none or several match, and ``remote_too_large`` for a file split in more than ``max_parts``."""
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
    if count > max_parts:
        why = f"{chosen[0].rsplit('/', 1)[-1]} is split in {count} parts; vramfit reads at most {max_parts}"
        raise AnswerError("remote_too_large", why, reason=why)
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
    folder = cache_dir()
    if folder is None:
        return None
    key = "|".join((endpoint(), *key_parts))
    return folder / "hub" / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"


def _cache_bytes(path: Path | None, *, any_age: bool) -> bytes | None:
    """The bytes of a cache file written in the last day (at any age with ``any_age``), read as
    :func:`vramfit.calc.cache_files.read_cache_file` reads (no symlink, no FIFO, bounded); None when there is none."""
    found = read_cache_file(path) if path is not None else None
    if found is None or (not any_age and time.time() - found[1] > CACHE_SECONDS):
        return None
    return found[0]


def _cached_entry(kind: type[E], path: Path | None, *, any_age: bool) -> E | None:
    """The cache file at ``path`` as a ``kind`` entry, or None: no cache, none read in the last day (at any age with
    ``any_age``), or not such an entry (read the Hub again)."""
    raw = _cache_bytes(path, any_age=any_age)
    entry = read_entry(kind, raw, str(path)) if raw is not None else None
    if raw is not None and entry is None and path is not None:
        set_aside(path, f"not a {kind.__name__}")  # read again from the Hub, and written anew
    return entry


def _cache_path(reference: HubReference) -> Path | None:
    return _cache_file(reference.repo, reference.revision, reference.file, reference.quant)


def _cached(reference: HubReference, *, any_age: bool) -> RemoteHeader | None:
    """The cached header, or None: no cache, or one that is not an entry within a fresh read's limits (read again)."""
    entry = _cached_entry(HubHeaderEntry, _cache_path(reference), any_age=any_age)
    if entry is None:
        return None
    return RemoteHeader(entry.header, entry.files, entry.commit, 0, entry.mmproj, entry.mmproj_bytes)


def _store(reference: HubReference, remote: RemoteHeader) -> None:
    path = _cache_path(reference)
    if path is None:
        return
    data = {"files": list(remote.files), "commit": remote.commit, "header": remote.header.model_dump(mode="json"),
            "mmproj": remote.mmproj, "mmproj_bytes": remote.mmproj_bytes}  # fmt: skip
    write_cache_file(path, json.dumps(data).encode("utf-8"), folder_limit=REMOTE_FOLDER_BYTES)


def _from_shared(cache: RemoteCache, reference: HubReference, *, any_age: bool) -> RemoteHeader | None:
    read = cache.get(hub_key(reference))
    if read is None or (not any_age and read.age_seconds > CACHE_SECONDS):
        return None
    entry = read_entry(SharedHubHeaderEntry, read.summary, read.key)
    if entry is None:
        return None
    return RemoteHeader(entry.header, entry.files, read.revision[:64], 0, entry.mmproj, entry.mmproj_bytes)


def _to_shared(cache: RemoteCache, reference: HubReference, remote: RemoteHeader) -> None:
    summary = json.dumps({"files": list(remote.files), "header": remote.header.model_dump(mode="json"),
                          "mmproj": remote.mmproj, "mmproj_bytes": remote.mmproj_bytes})  # fmt: skip
    cache.put(CachedRead(hub_key(reference), "hub", remote.commit or reference.revision, summary))


@within_hub_budget
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


def _bad_answer(what: str) -> AnswerError:
    host = urlparse(endpoint()).netloc or endpoint()
    return AnswerError("remote_bad_answer", f"{host}: {what}", subject=host[:80], reason=what[:200])


@contextmanager
def _hub_errors(reference: HubReference) -> Iterator[None]:
    """The network's errors as the answers users read (unreachable, busy, too slow); within the question's budget."""
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        HfHubHTTPError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    with hub_budget():
        try:
            yield
        except GatedRepoError as exc:  # huggingface_hub's own calls: config.json and the safetensors headers
            raise AnswerError("remote_gated", f"{reference.repo} needs access", subject=reference.repo) from exc
        except (RepositoryNotFoundError, RevisionNotFoundError, EntryNotFoundError) as exc:
            raise AnswerError("remote_not_found", f"{reference.repo} was not found", subject=reference.repo) from exc
        except HfHubHTTPError as exc:
            status = exc.response.status_code if exc.response is not None else 0
            retry = exc.response.headers.get("Retry-After") if exc.response is not None else None
            raise _http_error(status, reference.repo, retry) from exc
        except Exception as exc:  # httpx2's time-outs and transport errors are not OSErrors; anything else is a bug
            if is_unreachable(exc):  # refused, no route, a name that does not resolve: within CONNECT_SECONDS
                host = urlparse(endpoint()).hostname or endpoint()
                raise AnswerError("remote_unreachable", f"cannot reach {host}: {exc}", subject=host) from exc
            if isinstance(exc, OSError) or type(exc).__module__.startswith(("httpx", "httpcore")):
                why = "no answer in time" if "Timeout" in type(exc).__name__ else str(exc)[:200]
                raise AnswerError("remote_unavailable", f"cannot reach the Hub: {why}", subject=reference.repo,
                                  reason=why) from exc  # fmt: skip
            raise


TOKEN_REFUSED = "Invalid credentials in Authorization header"  # the Hub's X-Error-Message for a bad token


def _status_error(response: httpx2.Response, subject: str) -> AnswerError:
    """What a Hub answer other than 2xx/3xx means, by its X-Error-Code as huggingface_hub reads it, else its status."""
    code = response.headers.get("X-Error-Code", "")
    if response.status_code == 401 and response.headers.get("X-Error-Message") == TOKEN_REFUSED:
        return AnswerError("remote_token_refused", "the Hub refused HF_TOKEN", subject=subject[:120])
    if code in ("RepoNotFound", "RevisionNotFound", "EntryNotFound"):
        return AnswerError("remote_not_found", f"{subject} was not found", subject=subject[:120])
    if code == "GatedRepo":
        return AnswerError("remote_gated", f"{subject} needs access", subject=subject[:120])
    return _http_error(response.status_code, subject, response.headers.get("Retry-After"))


def _check_repo_id(reference: HubReference) -> None:
    if not REPO_ID.fullmatch(reference.repo):  # huggingface_hub would raise its own validation error
        subject = reference.repo[:80]
        raise AnswerError("remote_not_found", f"{subject!r} is not a Hub repo id", subject=subject)


MAX_LISTING_PAGE_BYTES = 32 << 20  # the Hub pages its file list by 1,000 entries: a few hundred KiB a page


def _listing_page(body: bytes) -> list[tuple[str, int]]:
    """The files of one page of ``/api/models/{repo}/tree``: a JSON list of ``{"type", "path", "size"}`` objects;
    anything else is ``remote_bad_answer``."""
    try:
        page = json.loads(body)
    except ValueError:
        raise _bad_answer("the file list is not JSON") from None
    if not isinstance(page, list):
        raise _bad_answer(f"the file list is a JSON {type(page).__name__}, not a list")
    files = []
    for entry in page:
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) or entry.get("type") not in (
            "file", "directory"
        ):  # fmt: skip
            raise _bad_answer(f"the file list has an unreadable entry: {str(entry)[:80]}")
        size = entry.get("size", 0)
        if entry["type"] == "file":
            if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                raise _bad_answer(f"the file list gives {entry['path'][:80]} no size")
            files.append((entry["path"], size))
    return files


def list_files(reference: HubReference) -> dict[str, int]:
    """Every file in the repo at the reference's revision, path → size in bytes, page by page as the Hub serves
    ``/api/models/{repo}/tree/{revision}?recursive=true`` (huggingface_hub's list_repo_tree, read here so that
    every page counts against the question's budget and a page that is not a file list is an answer, not a
    traceback; huggingface_hub would also retry a 429 for minutes)."""
    from huggingface_hub.utils._headers import build_hf_headers

    _check_repo_id(reference)
    with _hub_errors(reference) as _:
        budget = current_budget()
        assert budget is not None
        session = checked_session()
        headers = build_hf_headers(token=os.environ.get("HF_TOKEN") or None)
        url: str | None = f"{endpoint()}/api/models/{reference.repo}/tree/{quote(reference.revision, safe='')}"
        params: dict[str, str] | None = {"recursive": "true", "expand": "false"}
        files: dict[str, int] = {}
        while url is not None:
            with session.stream("GET", url, params=params, headers=headers, timeout=TIMEOUT_SECONDS) as response:
                if response.status_code != 200:
                    raise _status_error(response, reference.repo)
                too_large = lambda: _bad_answer("a page of the file list is over 32 MiB")  # noqa: E731
                body = read_body(response, MAX_LISTING_PAGE_BYTES, too_large)
                url, params = response.links.get("next", {}).get("url"), None
            files.update(_listing_page(body))
            if len(files) > budget.limits.max_listing_files:
                raise AnswerError(
                    "remote_too_large",
                    f"more than {budget.limits.max_listing_files} files",
                    reason=f"{reference.repo} lists more than {budget.limits.max_listing_files} files",
                )
    return files


def _file_location(reference: HubReference, path: str) -> tuple[str, int | None, str]:
    """Where the Hub keeps ``path`` (refused when it redirects off the Hub), its size and the commit it is at: a HEAD
    of its resolve URL, relative redirects followed, as huggingface_hub's get_hf_file_metadata reads it."""
    from huggingface_hub import hf_hub_url
    from huggingface_hub.utils._headers import build_hf_headers

    hub = endpoint()
    url = hf_hub_url(reference.repo, path, revision=reference.revision, endpoint=hub)
    headers = {**build_hf_headers(token=os.environ.get("HF_TOKEN") or None), "Accept-Encoding": "identity"}
    session = checked_session()
    for _ in range(MAX_REDIRECTS + 1):
        response = session.head(url, headers=headers, follow_redirects=False, timeout=TIMEOUT_SECONDS)
        location = response.headers.get("Location", "")
        if 300 <= response.status_code < 400 and location and not urlparse(location).netloc:
            url = urljoin(url, location)  # a renamed repo: the Hub's own path
            continue
        break
    else:
        raise _bad_answer(f"more than {MAX_REDIRECTS} redirects for {path}")
    if response.status_code >= 400:
        raise _status_error(response, reference.repo if response.status_code != 404 else path)
    location = location or url
    if location.startswith("/"):
        location = hub + location
    if not _hub_origin_allowed(origin_of(location)) or not allowed_storage_host(urlparse(location).hostname or ""):
        host = (urlparse(location).hostname or location)[:120]  # the host refused, not the file that led there
        raise AnswerError("remote_host_refused", f"the Hub redirected {path} to {host}", subject=host)
    size_text = response.headers.get("X-Linked-Size") or response.headers.get("Content-Length")
    size = None
    if size_text is not None:
        if not size_text.strip().isdigit():
            raise _bad_answer(f"the size of {path} is {size_text[:40]!r}")
        size = int(size_text)
    return location, size, response.headers.get("X-Repo-Commit", "")[:64]


def _read_from_hub(reference: HubReference, paths: Mapping[str, int] | None = None) -> RemoteHeader:
    """List the repo (unless ``paths`` is its listing), choose the file(s) and read their headers with range requests
    (see the module docstring)."""
    from huggingface_hub.utils._headers import build_hf_headers

    if paths is None:
        paths = list_files(reference)
    token = os.environ.get("HF_TOKEN") or None  # sent to the Hub's own host only (bot.sources.budget)
    with _hub_errors(reference):
        budget = current_budget()
        assert budget is not None
        files = choose_files(paths, reference, max_parts=budget.limits.max_split_parts)
        headers: list[GgufHeader] = []
        commit, requests, tensors = "", 0, 0
        for path in files:
            location, size, file_commit = _file_location(reference, path)
            if size is None:
                raise AnswerError("remote_unavailable", f"the Hub gave no size for {path}", subject=path)
            stream = RangedFile(checked_session(), location, size, build_hf_headers(token=token),
                                timeout=TIMEOUT_SECONDS, error=_range_error(location))  # fmt: skip
            reader = cast(BinaryIO, io.BufferedReader(stream, buffer_size=1 << 16))
            left = budget.limits.max_gguf_tensors - tensors  # the parts together, as llama.cpp would load them
            try:
                headers.append(read_gguf_stream(reader, path.rsplit("/", 1)[-1], size, max_tensors=left))
            except VramfitError as exc:
                if exc.details.get("field") != "tensors":
                    raise
                why = f"{len(files)} parts with more than {budget.limits.max_gguf_tensors:,} tensors together"
                raise AnswerError("remote_too_large", why, reason=why) from None
            tensors += len(headers[-1].tensors)
            commit = commit or file_commit
            requests += stream.requests
    mmproj = choose_mmproj(paths)
    mmproj_bytes = paths.get(mmproj, 0) if mmproj else 0
    return RemoteHeader(merge_gguf_headers(headers), tuple(files), commit, requests, mmproj, mmproj_bytes)


def _gguf_reference(reference: HubReference, quant: str) -> HubReference:
    if quant and not reference.quant and not reference.file:
        return replace(reference, quant=quant.upper())
    return reference


@within_hub_budget
def gguf_model(
    reference: HubReference, quant: str = "", paths: Mapping[str, int] | None = None, cache: RemoteCache | None = None
) -> tuple[ModelRef, str]:
    """The model of ``reference`` (``quant`` when the reference names none) and the quant of the file read;
    ``paths``: the repo's listing when already read; ``cache``: the bot's store instead of the user's cache folder."""
    reference = _gguf_reference(reference, quant)
    remote = read_remote_header(reference, paths, cache)
    first = remote.files[0].rsplit("/", 1)[-1]
    name = inert(str(remote.header.metadata.get("general.name") or first.removesuffix(".gguf")))[:200]
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


@within_hub_budget
def repo_listing(reference: HubReference, cache: RemoteCache | None = None) -> dict[str, int]:
    """The repo's GGUF files (path → bytes): from the cache when listed in the last day (at any age with
    ``VRAMFIT_OFFLINE=1``), else listed on the Hub and cached (the user's cache folder, or ``cache``)."""
    offline = is_offline()
    raw: bytes | str | None
    if cache is None:
        where = str(_listing_cache_path(reference))
        raw = _cache_bytes(_listing_cache_path(reference), any_age=offline)
    else:
        where = _listing_key(reference)
        read = cache.get(where)
        raw = read.summary if read is not None and (offline or read.age_seconds <= CACHE_SECONDS) else None
    entry = read_entry(ListingEntry, raw, where) if raw is not None else None
    if entry is not None and all(size >= 0 for size in entry.files.values()):
        return dict(entry.files)
    if offline:
        raise AnswerError(
            "remote_offline", f"{reference.repo} is not in the cache and VRAMFIT_OFFLINE is set", subject=reference.repo
        )
    listing = {p: size for p, size in list_files(reference).items() if p.lower().endswith(".gguf")}
    summary = json.dumps({"files": listing})
    if cache is None:
        if (path := _listing_cache_path(reference)) is not None:
            write_cache_file(path, summary.encode("utf-8"), folder_limit=REMOTE_FOLDER_BYTES)
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


@within_hub_budget
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
    """The cached config.json and safetensors headers, or None: no cache, or not an entry (read the Hub again)."""
    entry = _cached_entry(CheckpointEntry, _checkpoint_cache_path(reference), any_age=any_age)
    if entry is None:
        return None
    try:
        tensors = tuple(
            SafetensorsTensor(name=name, dtype=dtype, shape=shape, nbytes=nbytes)
            for name, dtype, shape, nbytes in entry.tensors
        )
    except ValueError:
        return None
    return RemoteCheckpoint(dict(entry.config), tensors, entry.files, entry.commit)


def _store_checkpoint(reference: HubReference, remote: RemoteCheckpoint) -> None:
    path = _checkpoint_cache_path(reference)
    if path is None:
        return
    tensors = [[t.name, t.dtype, list(t.shape), t.nbytes] for t in remote.tensors]
    data = {"files": list(remote.files), "commit": remote.commit, "config": remote.config, "tensors": tensors}
    write_cache_file(path, json.dumps(data, separators=(",", ":")).encode("utf-8"), folder_limit=REMOTE_FOLDER_BYTES)


def has_safetensors(paths: Iterable[str]) -> bool:
    """Whether the listing is a Transformers checkpoint huggingface_hub can read the headers of: one
    ``model.safetensors`` or the index of its shards."""
    return any(p in (SAFETENSORS_SINGLE, SAFETENSORS_INDEX) for p in paths)


MAX_INDEX_BYTES = 32 << 20  # model.safetensors.index.json: Kimi K2's lists about 140,000 tensors in under 20 MiB
MAX_SAFETENSORS_HEADER_BYTES = 32 << 20  # one file's header (huggingface_hub reads up to 25 MiB)
FIRST_HEADER_BYTES = 100_000  # the first read of a header: most headers fit (huggingface_hub's figure)


def _checked_size(reference: HubReference, paths: Mapping[str, int], path: str, limit: int) -> None:
    """Refuse ``path`` before any byte of it is read when the listing says it is larger than ``limit``."""
    if paths.get(path, 0) > limit:
        why = f"{path} is {paths[path]:,} bytes, more than {limit:,}"
        raise AnswerError("remote_too_large", why, subject=reference.repo, reason=why)


def _download(reference: HubReference, path: str, revision: str, limit: int, *, ranged: str = "") -> bytes:
    """``path`` at ``revision`` (the bytes ``ranged`` names, "0-99999", when given), at most ``limit`` bytes: a
    larger answer stops being read at the limit (``remote_too_large``), whatever its headers claimed."""
    from huggingface_hub import hf_hub_url
    from huggingface_hub.utils._headers import build_hf_headers

    url = hf_hub_url(reference.repo, path, revision=revision, endpoint=endpoint())
    headers = build_hf_headers(token=os.environ.get("HF_TOKEN") or None)
    if ranged:
        headers = {**headers, "Range": f"bytes={ranged}", "Accept-Encoding": "identity"}

    def too_large() -> AnswerError:
        why = f"{path} is more than {limit:,} bytes"
        return AnswerError("remote_too_large", why, subject=reference.repo, reason=why)

    with checked_session().stream("GET", url, headers=headers, timeout=TIMEOUT_SECONDS) as response:
        if response.status_code not in (200, 206):
            raise _status_error(response, reference.repo if response.status_code != 404 else path)
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > limit:
            raise too_large()
        return read_body(response, limit, too_large)


def _json_of(reference: HubReference, path: str, data: bytes) -> Any:
    """A JSON file read from the Hub, parsed as data (bounded nesting): ``bad_file`` when it is not JSON."""
    try:
        return loads(data, max_bytes=len(data))
    except JsonRefused as exc:
        raise AnswerError("bad_file", f"{path}: {exc}", subject=reference.repo, reason=f"{path}: {exc}") from None


def _tensor(name: str, info: Any) -> SafetensorsTensor:
    """One entry of a safetensors header: ``{"dtype", "shape", "data_offsets": [start, end]}``."""
    start, end = info["data_offsets"]
    return SafetensorsTensor(name=name, dtype=info["dtype"], shape=tuple(info["shape"]), nbytes=end - start)


def _header_tensors(reference: HubReference, path: str, revision: str) -> list[SafetensorsTensor]:
    """Every tensor of one safetensors file's header, read with range requests (the first 100 kB, then the rest of
    a longer header), as huggingface_hub's parse_safetensors_file_metadata reads it; bounded and parsed here."""
    first = _download(reference, path, revision, FIRST_HEADER_BYTES, ranged=f"0-{FIRST_HEADER_BYTES - 1}")
    if len(first) < 8:
        raise AnswerError("bad_file", f"{path}: no safetensors header", subject=reference.repo,
                          reason=f"{path}: no safetensors header")  # fmt: skip
    size = int.from_bytes(first[:8], "little")
    if size > MAX_SAFETENSORS_HEADER_BYTES:
        why = f"{path}'s header is {size:,} bytes, more than {MAX_SAFETENSORS_HEADER_BYTES:,}"
        raise AnswerError("remote_too_large", why, subject=reference.repo, reason=why)
    header = first[8 : 8 + size]
    if len(header) < size:
        header = _download(reference, path, revision, size, ranged=f"8-{size + 7}")
    found = _json_of(reference, path, header)
    if not isinstance(found, dict):
        raise AnswerError("bad_file", f"{path}: the header is not an object", subject=reference.repo,
                          reason=f"{path}: the header is not an object")  # fmt: skip
    try:
        return [_tensor(name, info) for name, info in found.items() if name != "__metadata__"]
    except (ValueError, TypeError, IndexError, KeyError) as exc:  # pydantic's ValidationError is a ValueError
        why = f"unreadable safetensors header: {str(exc)[:200]}"
        raise AnswerError("bad_file", why, reason="unreadable safetensors header", subject=reference.repo) from exc


def _read_checkpoint(reference: HubReference, paths: Mapping[str, int]) -> RemoteCheckpoint:
    """config.json and every tensor of the safetensors headers, shard by shard as the index lists them, read with
    range requests (the first 100 kB of each file, and the rest of a longer header). Each file's size is checked
    against its limit before it is read (by the listing, then as it arrives), and its JSON is parsed as data
    (:mod:`calc.bounded_json`); nothing is written to huggingface_hub's download cache. The storage host of
    config.json and of the first weight file is checked first, as for a GGUF."""
    if "config.json" not in paths:
        raise AnswerError("remote_no_config", f"{reference.repo} has no config.json", subject=reference.repo)
    weights = sorted(p for p in paths if p.endswith(".safetensors") and "/" not in p)
    _checked_size(reference, paths, "config.json", MAX_CONFIG_BYTES)
    _checked_size(reference, paths, SAFETENSORS_INDEX, MAX_INDEX_BYTES)
    with _hub_errors(reference):
        _, _, commit = _file_location(reference, "config.json")
        if weights:
            _file_location(reference, weights[0])
        revision = commit or reference.revision  # every read at the commit config.json was read at
        try:
            config = parse_config_json(_download(reference, "config.json", revision, MAX_CONFIG_BYTES))
        except VramfitError as exc:
            raise AnswerError("bad_file", exc.message, subject=reference.repo, reason=exc.message) from exc
        if SAFETENSORS_SINGLE in paths:
            shards = [SAFETENSORS_SINGLE]
        elif SAFETENSORS_INDEX in paths:
            index = _json_of(reference, SAFETENSORS_INDEX,
                             _download(reference, SAFETENSORS_INDEX, revision, MAX_INDEX_BYTES))  # fmt: skip
            weight_map = index.get("weight_map") if isinstance(index, dict) else None
            if not isinstance(weight_map, dict) or not all(isinstance(f, str) for f in weight_map.values()):
                raise AnswerError("bad_file", f"{SAFETENSORS_INDEX} has no weight_map", subject=reference.repo,
                                  reason=f"{SAFETENSORS_INDEX} has no weight_map")  # fmt: skip
            shards = sorted(set(weight_map.values()))
            if len(shards) > MAX_SPLIT_PARTS:
                why = f"{len(shards)} safetensors files, more than {MAX_SPLIT_PARTS}"
                raise AnswerError("remote_too_large", why, subject=reference.repo, reason=why)
        else:
            raise AnswerError("remote_no_weights", f"{reference.repo} has no safetensors", subject=reference.repo)
        tensors = tuple(tensor for shard in shards for tensor in _header_tensors(reference, shard, revision))
    return RemoteCheckpoint(config, tensors, tuple(shards), commit)


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


@within_hub_budget
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


# -- a model the catalog does not know: GGUF repos on the Hub that may be it -------------------------------------------

SEARCH_SECONDS = 2.0  # best effort: suggestions for an unknown model are not worth a longer wait
MAX_SEARCH_BYTES = 1 << 20


def search_gguf_repos(name: str, limit: int = 3) -> list[str]:
    """The most downloaded GGUF repos whose id contains ``name`` ("qwen4 14b" → searched as "qwen4-14b"), as
    huggingface_hub's :meth:`HfApi.list_models` asks ``/api/models?search=…&filter=gguf&sort=downloads``; [] when the
    Hub cannot be read within :data:`SEARCH_SECONDS`, offline, or has none (never raises)."""
    from huggingface_hub.utils._headers import build_hf_headers

    query = re.sub(r"[\s_]+", "-", name.strip())[:100]
    if not query or is_offline():
        return []
    limits = RemoteLimits(deadline_seconds=min(SEARCH_SECONDS, hub_deadline_seconds()), max_requests=4)
    params = {"search": query, "filter": "gguf", "sort": "downloads", "direction": "-1", "limit": str(limit)}
    try:
        with remote_budget(limits, allowed=_hub_origin_allowed, token_origin=origin_of(endpoint()), refuse=_refused,
                           exceeded=_spent):  # fmt: skip
            headers = build_hf_headers(token=os.environ.get("HF_TOKEN") or None)
            with checked_session().stream("GET", f"{endpoint()}/api/models", params=params, headers=headers,
                                          timeout=SEARCH_SECONDS) as response:  # fmt: skip
                if response.status_code != 200:
                    return []
                body = read_body(response, MAX_SEARCH_BYTES, lambda: _bad_answer("a search answer over 1 MiB"))
        found = json.loads(body)
    except Exception:  # a suggestion, not an answer: any failure means no suggestion
        return []
    if not isinstance(found, list):
        return []
    ids = [str(item.get("id") or item.get("modelId") or "") for item in found if isinstance(item, dict)]
    return [repo for repo in ids if REPO_ID.fullmatch(repo)][:limit]


def with_hub_repos(error: VramfitError) -> VramfitError:
    """``error`` with ``details["repos"]``: the GGUF repos on the Hub that may be the model it says the catalog does
    not know (:func:`search_gguf_repos`); the same error otherwise."""
    if error.code == "unknown_model" and error.reason == "not_in_catalog" and error.subject:
        repos = search_gguf_repos(error.subject)
        if repos:
            error.details["repos"] = repos
    return error
