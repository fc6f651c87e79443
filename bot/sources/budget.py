"""One budget per remote answer: a total deadline, and caps on requests, bytes, split parts and tensors, enforced on
the work itself.

A question that names a Hub repo or an Ollama tag costs requests to a server whose owner may be anyone. Each
request already had a per-read time-out, which a server that drips a byte at a time never trips, and nothing
bounded the number of requests, the bytes or the split parts together. :func:`remote_budget` opens a
:class:`RemoteBudget` for the current thread (a ``ContextVar``); every request vramfit makes goes through
:func:`checked_session`, the huggingface_hub session built by :func:`build_client`, whose

- network backend (:class:`DeadlineBackend`, over httpcore's own) gives every connect, read and write at most the
  time left and checks the budget between quarter-second slices of a read, so the worker thread itself stops at the
  deadline or when the bot cancels the question, not only the caller's wait for it; and counts the bytes received;
- request hook (:func:`_check_request`) counts each request, checks each hop (the redirects httpx follows included)
  against the budget's allowed origins, scheme, host and port, and removes the ``Authorization`` header from any
  request that does not go to the Hub's own host, as huggingface_hub does when a redirect changes host.

httpx has no total time-out (only connect/read/write/pool, each per operation), which is why the deadline lives in
the network backend. Limits beyond the budget are raised as :class:`bot.errors.AnswerError` by the source
that opened it (``remote_unavailable``, ``remote_too_large``, ``ollama_unavailable``), never as a traceback.

httpx2, httpcore2 and huggingface_hub are imported inside the functions that use them: they are the Hub client, a
heavy optional part loaded only when a question reads a remote model, as in the other source modules.
"""

from __future__ import annotations

import contextvars
import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vramfit.bot.errors import AnswerError

if TYPE_CHECKING:
    import httpx2
    from httpcore2 import NetworkStream

SLICE_SECONDS = 0.25  # how often a blocked read looks at the deadline and the cancel flag
CONNECT_SECONDS = 2.0  # a host that has not accepted the connection by then is unreachable, not busy
MAX_REDIRECTS = 5
MAX_SPLIT_PARTS = 128  # the largest split GGUFs on the Hub (BF16 of 1T-parameter models) have about 50


@dataclass(frozen=True, slots=True)
class RemoteLimits:
    """What one remote answer may cost, all its requests together. The caps name the largest real cases."""

    deadline_seconds: float = 15.0
    max_requests: int = 2048  # a 40-part split GGUF: a HEAD and a few ranged reads per part
    max_bytes: int = 256 << 20  # received, all parts together; a GGUF header is 5-8 MiB, split parts' are small
    max_split_parts: int = MAX_SPLIT_PARTS
    max_tensors: int = 1 << 17  # a safetensors checkpoint's, every file together (experts are tensors of their own)
    # a GGUF's, every part together, checked before a part's tensor table is read: DeepSeek V3 has about 1,100, Kimi
    # K2 about 1,800 (a GGUF stores a layer's experts as one tensor)
    max_gguf_tensors: int = 1 << 14
    max_listing_files: int = 250_000  # a repo's file list; the largest GGUF repos list a few hundred


Origin = tuple[str, str, int]  # (scheme, host, port) of a URL, with the scheme's default port filled in


def origin_of(url: httpx2.URL | str) -> Origin:
    """``(scheme, host, port)`` of ``url``, lowercased, with 80/443 for http/https when the URL gives none."""
    import httpx2

    parsed = httpx2.URL(url) if isinstance(url, str) else url
    scheme = parsed.scheme.lower()
    return scheme, (parsed.host or "").lower(), parsed.port or (443 if scheme == "https" else 80)


class BudgetExceeded(Exception):
    """The answer's budget is spent (``what``: "deadline", "cancelled", "requests", "bytes"). Deliberately not an
    httpx or OS error: huggingface_hub's retry loop (``http_backoff``) retries those, and must not retry this."""

    def __init__(self, what: str, detail: str) -> None:
        super().__init__(detail)
        self.what = what


class RemoteBudget:
    """The budget of one remote answer; thread-safe counters (the bot reads Hub files from worker threads)."""

    def __init__(
        self,
        limits: RemoteLimits,
        *,
        allowed: Callable[[Origin], bool],
        token_origin: Origin | None,
        refuse: Callable[[str], AnswerError],
        cancelled: threading.Event | None = None,
    ) -> None:
        self.limits = limits
        self.allowed, self.token_origin, self.refuse = allowed, token_origin, refuse
        self.cancelled = cancelled or threading.Event()
        self.started = time.monotonic()
        self.deadline = self.started + limits.deadline_seconds
        self.requests = 0
        self.bytes = 0
        self._lock = threading.Lock()

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def check(self) -> None:
        """Raise :class:`BudgetExceeded` when the question was cancelled or its time is up."""
        if self.cancelled.is_set():
            raise BudgetExceeded("cancelled", "the question was given up on")
        if self.remaining() <= 0:
            raise BudgetExceeded("deadline", f"no answer within {self.limits.deadline_seconds:g} s")

    def count_request(self) -> None:
        with self._lock:
            self.requests += 1
            over = self.requests > self.limits.max_requests
        if over:
            raise BudgetExceeded("requests", f"more than {self.limits.max_requests} requests")

    def count_bytes(self, n: int) -> None:
        with self._lock:
            self.bytes += n
            over = self.bytes > self.limits.max_bytes
        if over:
            raise BudgetExceeded("bytes", f"more than {self.limits.max_bytes >> 20} MiB")

    def timeout(self, asked: float | None) -> float:
        """``asked`` (None: no limit) cut to the time left; raises when none is left."""
        self.check()
        left = self.remaining()
        return left if asked is None else max(0.001, min(asked, left))


_CURRENT: contextvars.ContextVar[RemoteBudget | None] = contextvars.ContextVar("vramfit_remote_budget", default=None)
_CANCEL: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("vramfit_remote_cancel", default=None)


def current_budget() -> RemoteBudget | None:
    return _CURRENT.get()


@contextmanager
def cancel_scope(event: threading.Event) -> Iterator[None]:
    """Remote reads started inside stop (``BudgetExceeded("cancelled")``) once ``event`` is set: how the bot ends
    the reads of a question it stopped waiting for."""
    token = _CANCEL.set(event)
    try:
        yield
    finally:
        _CANCEL.reset(token)


@contextmanager
def remote_budget(
    limits: RemoteLimits,
    *,
    allowed: Callable[[Origin], bool],
    token_origin: Origin | None,
    refuse: Callable[[str], AnswerError],
    exceeded: Callable[[BudgetExceeded], AnswerError],
) -> Iterator[RemoteBudget]:
    """The budget for the remote reads inside; a budget already open in this thread is used as it is (a listing
    inside a header read counts against the question's one budget). ``exceeded`` turns a spent budget into the
    error the user reads."""
    outer = _CURRENT.get()
    if outer is not None:
        yield outer
        return
    budget = RemoteBudget(limits, allowed=allowed, token_origin=token_origin, refuse=refuse, cancelled=_CANCEL.get())
    token = _CURRENT.set(budget)
    try:
        yield budget
    except BudgetExceeded as exc:
        raise exceeded(exc) from None
    except Exception as exc:  # httpx wraps nothing of ours, but a transport error may carry ours as its cause
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, BudgetExceeded):
            raise exceeded(cause) from None
        raise
    finally:
        _CURRENT.reset(token)


# -- the network backend: every socket operation within the budget's time ----------------------------------------------


class DeadlineStream:
    """An httpcore network stream whose reads and writes end by the budget's deadline, in slices of
    :data:`SLICE_SECONDS` so that a cancelled question stops reading within a slice."""

    def __init__(self, inner: NetworkStream) -> None:
        self.inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        import httpcore2

        budget = _CURRENT.get()
        if budget is None:
            return self.inner.read(max_bytes, timeout)
        asked_until = math.inf if timeout is None else time.monotonic() + timeout
        while True:
            budget.check()
            now = time.monotonic()
            slice_seconds = max(0.001, min(SLICE_SECONDS, budget.deadline - now, asked_until - now))
            try:
                data = self.inner.read(max_bytes, slice_seconds)
            except httpcore2.ReadTimeout:
                if time.monotonic() >= asked_until:
                    raise  # the read's own time-out: httpx's ReadTimeout, as without a budget
                continue
            budget.count_bytes(len(data))
            return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        budget = _CURRENT.get()
        self.inner.write(buffer, budget.timeout(timeout) if budget is not None else timeout)

    def close(self) -> None:
        self.inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> Any:
        budget = _CURRENT.get()
        limit = budget.timeout(timeout) if budget is not None else timeout
        return DeadlineStream(self.inner.start_tls(ssl_context, server_hostname, limit))

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


class DeadlineBackend:
    """httpcore's synchronous backend with :class:`DeadlineStream` streams and connects cut to the time left."""

    def __init__(self) -> None:
        from httpcore2._backends.sync import SyncBackend  # httpcore's default backend; no public name for it

        self.inner = SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> DeadlineStream:
        budget = _CURRENT.get()
        limit = budget.timeout(timeout) if budget is not None else timeout
        limit = CONNECT_SECONDS if limit is None else min(limit, CONNECT_SECONDS)
        return DeadlineStream(self.inner.connect_tcp(host, port, limit, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> DeadlineStream:
        return DeadlineStream(self.inner.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        budget = _CURRENT.get()
        if budget is not None:
            budget.check()
            seconds = min(seconds, max(0.0, budget.remaining()))
        time.sleep(seconds)


# -- the client: huggingface_hub's session, built with the backend and the per-hop checks ------------------------------


def _check_request(request: httpx2.Request) -> None:
    """Every request and every redirect hop: counted, its origin checked, the token kept to the Hub's host."""
    budget = _CURRENT.get()
    if budget is None:
        return
    budget.check()
    budget.count_request()
    target = origin_of(request.url)
    if not budget.allowed(target):
        raise budget.refuse(target[1] or str(request.url)[:80])
    if target != budget.token_origin:
        request.headers.pop("authorization", None)


def build_client() -> httpx2.Client:
    """huggingface_hub's default client (its request hook, its headers), on :class:`DeadlineBackend`, with every hop
    checked by :func:`_check_request` and at most :data:`MAX_REDIRECTS` redirects."""
    import httpcore2
    import httpx2
    from huggingface_hub.utils._http import hf_request_event_hook

    transport = httpx2.HTTPTransport()
    # HTTPTransport takes no network backend of its own; its httpcore pool is given this one, all else as built.
    pool = transport._pool
    assert isinstance(pool, httpcore2.ConnectionPool)
    pool._network_backend = DeadlineBackend()  # type: ignore[assignment]
    return httpx2.Client(
        transport=transport,
        event_hooks={"request": [hf_request_event_hook, _check_request]},
        follow_redirects=True,
        max_redirects=MAX_REDIRECTS,
        timeout=None,
    )


_INSTALLED = threading.Lock()
_installed = False


def checked_session() -> httpx2.Client:
    """The HTTP client every remote read uses: huggingface_hub's shared session, set once to :func:`build_client`
    (so its own calls, safetensors headers among them, run within the budget too)."""
    global _installed
    from huggingface_hub.utils._http import get_session, set_client_factory

    if not _installed:
        with _INSTALLED:
            if not _installed:
                set_client_factory(build_client)
                _installed = True
    return get_session()


def is_unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` says the host cannot be reached at all (no route, refused, a name that does not resolve, no
    connection within :data:`CONNECT_SECONDS`), as opposed to a server that answers slowly or refuses the request."""
    import httpx2

    if isinstance(exc, httpx2.ConnectError | httpx2.ConnectTimeout):
        return True
    return isinstance(exc, OSError) and not isinstance(exc, TimeoutError)


def read_body(response: httpx2.Response, limit: int, too_large: Callable[[], AnswerError]) -> bytes:
    """A streamed response's body, decoded, at most ``limit`` bytes (``too_large()`` is raised past it: a gzip bomb
    stops at the limit, not at its end)."""
    body = bytearray()
    for chunk in response.iter_bytes():
        body += chunk
        if len(body) > limit:
            raise too_large()
    return bytes(body)
