"""What the fake Hub (tests/fake_hub) and the fake Ollama registry (tests/fake_ollama) share: a threading HTTP server
on 127.0.0.1, run by ``with`` in a daemon thread, with a log of the requests it answered and the bytes each was sent
(so a test can count what a read cost). Written on ``http.server`` rather than a web framework so that the real
clients (huggingface_hub, the registry reader) meet a plain socket, with no extra dependency in the tests."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Generic, Protocol, Self, TypeVar


class Sent(Protocol):
    """A logged request: what it was sent."""

    @property
    def bytes_sent(self) -> int: ...


Logged = TypeVar("Logged", bound=Sent)


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that hangs up early (timed out, stopped reading, refused a range) is no failure of the test


class LoggingFake(Generic[Logged]):
    """``with fake:`` serves ``handler`` at ``fake.url`` until the block ends; ``log`` is for the subclass to fill."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], port: int = 0) -> None:
        self.log: list[Logged] = []
        self._server = QuietServer(("127.0.0.1", port), handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def bytes_sent(self) -> int:
        return sum(r.bytes_sent for r in self.log)
