"""A model in an Ollama registry, read from its GGUF blob's header without downloading the blob.

A question names it by its tag (``qwen3.5:9b``, ``library/qwen3:30b``; ``bot.sources.references`` finds it). The
registry speaks the Docker distribution API: the tag's manifest
(``GET {registry}/v2/{namespace}/{model}/manifests/{tag}``, ``Accept:`` the v2 manifest type) lists the layers, the
one of media type ``application/vnd.ollama.image.model`` is the GGUF file, and its blob
(``GET .../blobs/{digest}``) is answered with a redirect to the registry's storage. Only the header is read from
there, with HTTP range requests (:class:`bot.sources.ranged.RangedFile`, at most
:data:`vramfit.calc.limits.MAX_GGUF_HEADER_BYTES`). An Ollama blob is named by its digest only, so the quant is the
one the header declares (``general.file_type``).

Requests go to the registry's own host and, for blob downloads, to Cloudflare R2 (``*.r2.cloudflarestorage.com``,
HTTPS), where registry.ollama.ai keeps its blobs; a redirect anywhere else is refused before it is followed. The
HTTP client is huggingface_hub's session as :mod:`bot.sources.budget` builds it, with every hop checked (scheme, host
and port) and one deadline for the whole read of a tag (``VRAMFIT_OLLAMA_TIMEOUT_SECONDS``, 10).

What was read is cached for a day in the user's cache folder (``calc.presets.cache_dir``), one entry per registry,
name and tag holding the manifest digest it was read at: within the day a question is answered with no request;
after it the manifest is asked again (one small request) and the header kept when the digest is the same.
``VRAMFIT_OFFLINE=1`` answers from the cache only, at any age. The bot keeps these reads in its store instead
(:mod:`bot.sources.cache`), under the same rules.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, cast
from urllib.parse import urljoin, urlparse

from vramfit.bot.errors import AnswerError
from vramfit.bot.sources.budget import BudgetExceeded, RemoteLimits, checked_session, is_unreachable, remote_budget
from vramfit.bot.sources.cache import CachedRead, RemoteCache, ollama_key
from vramfit.bot.sources.entries import OllamaEntry, read_entry
from vramfit.bot.sources.ranged import MAX_REDIRECTS, REDIRECTS, RangedFile, StatusError
from vramfit.bot.sources.references import OllamaReference, allowed_ollama_host, is_offline, registry
from vramfit.bot.untrusted_text import inert
from vramfit.calc.cache_files import REMOTE_FOLDER_BYTES, cache_dir, read_cache_file, set_aside, write_cache_file
from vramfit.calc.file_types import file_type_in_header
from vramfit.calc.gguf import GgufHeader, architecture_from_gguf, read_gguf_stream
from vramfit.calc.request import ModelRef

if TYPE_CHECKING:
    import httpx2

DEFAULT_TIMEOUT_SECONDS = 10.0
CACHE_SECONDS = 24 * 3600
MANIFEST_TYPE = "application/vnd.docker.distribution.manifest.v2+json"
MODEL_LAYER = "application/vnd.ollama.image.model"
MAX_MANIFEST_BYTES = 1 << 20  # a manifest lists a handful of layers: a few hundred bytes
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def timeout_seconds() -> float:
    """``VRAMFIT_OLLAMA_TIMEOUT_SECONDS``: the whole read of a tag, every request and byte together (and so each one
    of them); 10 when unset or unreadable."""
    try:
        value = float(os.environ.get("VRAMFIT_OLLAMA_TIMEOUT_SECONDS", ""))
    except ValueError:
        return DEFAULT_TIMEOUT_SECONDS
    return value if 0 < value <= 600 else DEFAULT_TIMEOUT_SECONDS


@dataclass(frozen=True, slots=True)
class OllamaHeader:
    """What was read: the model blob's header, the manifest digest it was read at, and the requests it took."""

    header: GgufHeader
    manifest_digest: str
    blob_digest: str
    requests: int


def _retry_seconds(retry_after: str | None) -> str:
    """Retry-After as whole seconds (it may be a number or an HTTP date), or "" when there is none."""
    if not retry_after:
        return ""
    text = retry_after.strip()
    if text.isdigit():
        return str(min(int(text), 86400))
    try:
        return str(max(0, min(86400, round(parsedate_to_datetime(text).timestamp() - time.time()))))
    except (TypeError, ValueError, OverflowError):
        return ""


def _status_error(reference: OllamaReference, host: str) -> StatusError:
    def error(status: int, retry_after: str | None) -> AnswerError:
        if status in (401, 403, 404):  # an unknown name or tag; a private one is not read either
            return AnswerError(
                "ollama_not_found", f"{reference.name} is not in {host} (HTTP {status})", subject=reference.name
            )
        if status == 429:
            seconds = _retry_seconds(retry_after)
            wait = f"; retry after {seconds} s" if seconds else ""
            return AnswerError("ollama_rate_limited", f"{host} answered HTTP 429{wait}", subject=seconds)
        if status == 200:
            return AnswerError("ollama_unavailable", f"the storage of {host} does not answer range requests")
        if status in REDIRECTS:
            return AnswerError("ollama_unavailable", f"{host} redirected more than {MAX_REDIRECTS} times")
        return AnswerError("ollama_unavailable", f"{host} answered HTTP {status}", subject=reference.name)

    return error


def _checked(url: str) -> str:
    """``url`` when a request may go there (the registry, or its R2 storage), else remote_host_refused."""
    if not allowed_ollama_host(url):
        host = (urlparse(url).hostname or url)[:80]
        raise AnswerError("ollama_host_refused", f"the registry redirected to {host}, not its own", subject=host)
    return url


class _Registry:
    """The requests for one tag, all through one session, each redirect checked before it is followed."""

    def __init__(self, session: httpx2.Client, reference: OllamaReference) -> None:
        self.session, self.reference = session, reference
        self.base = registry()
        self.host = urlparse(self.base).netloc or self.base
        self.timeout = timeout_seconds()
        self.error = _status_error(reference, self.host)
        self.requests = 0
        ref = reference
        self.path = f"{self.base}/v2/{ref.namespace}/{ref.model}"

    def manifest(self) -> tuple[dict[str, Any], str]:
        """The tag's manifest and its digest (the SHA-256 of the bytes served, as the registry names it)."""
        url = _checked(f"{self.path}/manifests/{self.reference.tag}")
        headers = {"Accept": MANIFEST_TYPE}
        for _ in range(MAX_REDIRECTS + 1):
            self.requests += 1
            with self.session.stream("GET", url, headers=headers, timeout=self.timeout, follow_redirects=False) as got:
                location = got.headers.get("Location")
                if got.status_code in REDIRECTS and location:
                    url = _checked(urljoin(url, location))
                    continue
                if got.status_code != 200:
                    raise self.error(got.status_code, got.headers.get("Retry-After"))
                body = b""
                for chunk in got.iter_bytes():
                    body += chunk
                    if len(body) > MAX_MANIFEST_BYTES:
                        raise self._no_model(f"its manifest is larger than {MAX_MANIFEST_BYTES >> 10} KiB")
            try:
                manifest = json.loads(body)
            except ValueError as exc:
                raise self._no_model("its manifest is not JSON") from exc
            if not isinstance(manifest, dict):
                raise self._no_model("its manifest is not a JSON object")
            return manifest, "sha256:" + hashlib.sha256(body).hexdigest()
        raise self.error(REDIRECTS[0], None)

    def _no_model(self, why: str) -> AnswerError:
        name = self.reference.name
        return AnswerError("ollama_no_model", f"{name}: {why}", subject=name)

    def model_layer(self, manifest: dict[str, Any]) -> tuple[str, int]:
        """The digest and size of the manifest's GGUF layer."""
        layers = manifest.get("layers")
        for layer in layers if isinstance(layers, list) else []:
            if not isinstance(layer, dict) or layer.get("mediaType") != MODEL_LAYER:
                continue
            digest, size = layer.get("digest"), layer.get("size")
            if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
                raise self._no_model(f"its model layer has no sha256 digest ({str(digest)[:80]})")
            if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
                raise self._no_model(f"its model layer has no size ({str(size)[:40]})")
            return digest, size
        raise self._no_model(f"its manifest lists no {MODEL_LAYER} layer")

    def header(self, digest: str, size: int) -> GgufHeader:
        """The blob's GGUF header, read by range requests where the registry redirects the download."""
        url = _checked(f"{self.path}/blobs/{digest}")
        stream = RangedFile(self.session, url, size, {}, timeout=self.timeout, error=self.error, redirect=_checked)
        try:
            reader = cast(BinaryIO, io.BufferedReader(stream, buffer_size=1 << 16))
            return read_gguf_stream(reader, f"{self.reference.name} ({digest[:19]})", size,
                                    max_tensors=RemoteLimits().max_gguf_tensors)  # fmt: skip
        finally:
            self.requests += stream.requests


def _cache_path(reference: OllamaReference) -> Path | None:
    folder = cache_dir()
    if folder is None:
        return None
    key = "|".join((registry(), reference.namespace, reference.model, reference.tag))
    return folder / "ollama" / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"


def _cached(reference: OllamaReference) -> tuple[OllamaHeader, float] | None:
    """The cached read of the tag and its age in seconds."""
    path = _cache_path(reference)
    found = read_cache_file(path) if path is not None else None
    entry = read_entry(OllamaEntry, found[0], str(path)) if found is not None else None
    if found is not None and entry is None and path is not None:
        set_aside(path, "not an OllamaEntry")  # read again from the registry, and written anew
    if found is None or entry is None:
        return None  # no cache, or not an entry within a fresh read's limits: read the registry again
    return OllamaHeader(entry.header, entry.manifest_digest, entry.blob_digest, 0), time.time() - found[1]


def _store(reference: OllamaReference, remote: OllamaHeader) -> None:
    path = _cache_path(reference)
    if path is None:
        return
    data = {
        "registry": registry(),
        "name": f"{reference.namespace}/{reference.model}",
        "tag": reference.tag,
        "manifest_digest": remote.manifest_digest,
        "blob_digest": remote.blob_digest,
        "header": remote.header.model_dump(mode="json"),
    }
    write_cache_file(path, json.dumps(data).encode("utf-8"), folder_limit=REMOTE_FOLDER_BYTES)


def _from_shared(cache: RemoteCache, reference: OllamaReference) -> tuple[OllamaHeader, float] | None:
    read = cache.get(ollama_key(reference))
    entry = read_entry(OllamaEntry, read.summary, read.key) if read is not None else None
    if read is None or entry is None:
        return None
    return OllamaHeader(entry.header, read.revision[:80], entry.blob_digest, 0), read.age_seconds


def _to_shared(cache: RemoteCache, reference: OllamaReference, remote: OllamaHeader) -> None:
    summary = json.dumps({"blob_digest": remote.blob_digest, "header": remote.header.model_dump(mode="json")})
    cache.put(CachedRead(ollama_key(reference), "ollama", remote.manifest_digest, summary, etag=remote.manifest_digest))


def read_ollama_header(reference: OllamaReference, cache: RemoteCache | None = None) -> OllamaHeader:
    """The header of the tag's model blob: from the cache when read in the last day (or at any age with
    ``VRAMFIT_OFFLINE=1``), else from the registry (see the module docstring) and cached. ``cache``: where to keep
    it instead of the user's cache folder (the bot's store, see :mod:`bot.sources.cache`)."""
    offline = is_offline()
    cached = _cached(reference) if cache is None else _from_shared(cache, reference)
    if cached is not None and (offline or cached[1] <= CACHE_SECONDS):
        return cached[0]
    if offline:
        name = reference.name
        raise AnswerError("ollama_offline", f"{name} is not in the cache and VRAMFIT_OFFLINE is set", subject=name)
    remote = _read_from_registry(reference, cached[0] if cached else None)
    if cache is None:
        _store(reference, remote)
    else:
        _to_shared(cache, reference, remote)  # a digest seen before: kept again, as read now
    return remote


def _refused(host: str) -> AnswerError:
    return AnswerError("ollama_host_refused", f"the registry redirected to {host}, not its own", subject=host[:80])


def _spent(exc: BudgetExceeded) -> AnswerError:
    if exc.what in ("deadline", "cancelled"):
        return AnswerError("ollama_unavailable", str(exc), reason=str(exc))
    return AnswerError("remote_too_large", str(exc), reason=str(exc))


def _read_from_registry(reference: OllamaReference, known: OllamaHeader | None) -> OllamaHeader:
    """The manifest and the model blob's header, every request within one budget of
    ``VRAMFIT_OLLAMA_TIMEOUT_SECONDS`` in all (:mod:`bot.sources.budget`); no token is ever sent."""
    limits = RemoteLimits(deadline_seconds=timeout_seconds())
    allowed = lambda origin: allowed_ollama_host(f"{origin[0]}://{origin[1]}:{origin[2]}/")  # noqa: E731
    with remote_budget(limits, allowed=allowed, token_origin=None, refuse=_refused, exceeded=_spent):
        return _read_within_budget(reference, known)


def _read_within_budget(reference: OllamaReference, known: OllamaHeader | None) -> OllamaHeader:
    from huggingface_hub.errors import OfflineModeIsEnabled

    client = _Registry(checked_session(), reference)
    try:
        manifest, digest = client.manifest()
        if known is not None and known.manifest_digest == digest:  # the same tag as a day ago: the same file
            return OllamaHeader(known.header, digest, known.blob_digest, client.requests)
        blob, size = client.model_layer(manifest)
        header = client.header(blob, size)
    except OfflineModeIsEnabled as exc:  # huggingface_hub's session refuses every request under HF_HUB_OFFLINE
        raise AnswerError("ollama_unavailable", "HF_HUB_OFFLINE is set, which stops vramfit's HTTP client") from exc
    except Exception as exc:  # httpx2's time-outs and transport errors are not OSErrors; anything else is a bug
        if is_unreachable(exc):  # refused, no route, a name that does not resolve: within CONNECT_SECONDS
            host = urlparse(client.base).hostname or client.host
            raise AnswerError("remote_unreachable", f"cannot reach {host}: {exc}", subject=host) from exc
        if isinstance(exc, OSError):
            raise AnswerError("ollama_unavailable", f"{client.host}: {exc}", subject=reference.name) from exc
        if type(exc).__module__.startswith("httpx"):
            why = f"no answer within {client.timeout:g} s" if "Timeout" in type(exc).__name__ else str(exc)[:200]
            raise AnswerError("ollama_unavailable", f"{client.host}: {why}", subject=reference.name) from exc
        raise
    return OllamaHeader(header, digest, blob, client.requests)


def ollama_model(reference: OllamaReference, cache: RemoteCache | None = None) -> tuple[ModelRef, str]:
    """The model of ``reference`` and the quant its header declares ("" when it declares none)."""
    remote = read_ollama_header(reference, cache)
    host = urlparse(registry()).netloc or registry()
    short = remote.manifest_digest.removeprefix("sha256:")[:12]
    source = f"ollama://{host}/{reference.namespace}/{reference.model}:{reference.tag}@{short}"
    name = inert(str(remote.header.metadata.get("general.name") or reference.name))[:200]
    model = ModelRef(
        id=reference.name[:200],
        name=name,
        architecture=architecture_from_gguf(remote.header),
        gguf=remote.header,
        source=source,
    )
    return model, file_type_in_header(remote.header.metadata)
