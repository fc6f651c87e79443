"""A remote file read forward with HTTP range requests: what :func:`vramfit.calc.gguf.read_gguf_stream` reads a
GGUF header through, never past :data:`vramfit.calc.limits.MAX_GGUF_HEADER_BYTES` and never the whole file.

The session is huggingface_hub's HTTP client (an ``httpx2.Client``); each source gives the errors its answers name,
and may check every redirect itself (the Ollama registry sends blob downloads to its storage host).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from vramfit.bot.errors import AnswerError
from vramfit.calc.limits import MAX_GGUF_HEADER_BYTES

if TYPE_CHECKING:
    import httpx2

MAX_REDIRECTS = 5
REDIRECTS = (301, 302, 303, 307, 308)

StatusError = Callable[[int, str | None], AnswerError]
"""``(status, Retry-After) -> the error to raise`` for an answer that is not 206 (a 200 ignored the range)."""


class RangedFile(io.RawIOBase):
    """``size`` bytes at ``url``, read forward; ``error`` names what went wrong, and ``redirect`` (when given)
    checks each redirect's absolute target and returns the URL to follow, or raises; the file's later reads go
    straight to where the redirects led. Without ``redirect`` the session follows redirects as it is set to."""

    def __init__(
        self,
        session: httpx2.Client,
        url: str,
        size: int,
        headers: dict[str, str],
        *,
        timeout: float,
        error: StatusError,
        redirect: Callable[[str], str] | None = None,
    ) -> None:
        super().__init__()
        self.session, self.url, self.size, self.headers = session, url, size, headers
        self.timeout, self.error, self.redirect = timeout, error, redirect
        self.position = 0
        self.requests = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def read(self, n: int = -1) -> bytes:
        if n < 0 or self.position + n > self.size:
            n = self.size - self.position
        n = min(n, MAX_GGUF_HEADER_BYTES - self.position)
        if n <= 0:
            return b""
        headers = {**self.headers, "Range": f"bytes={self.position}-{self.position + n - 1}"}
        options: dict[str, Any] = {"timeout": self.timeout}
        if self.redirect is not None:
            options["follow_redirects"] = False
        for _ in range(MAX_REDIRECTS + 1):
            self.requests += 1
            with self.session.stream("GET", self.url, headers=headers, **options) as response:
                location = response.headers.get("Location")
                if self.redirect is not None and response.status_code in REDIRECTS and location:
                    self.url = self.redirect(urljoin(self.url, location))
                    continue
                if response.status_code != 206:  # a 200 ignored the range: never download a whole model file
                    raise self.error(response.status_code, response.headers.get("Retry-After"))
                data = b""
                for chunk in response.iter_bytes():
                    data += chunk
                    if len(data) >= n:
                        break
            data = data[:n]
            self.position += len(data)
            return data
        raise self.error(REDIRECTS[0], None)  # redirected in a loop
