"""The fake registry, the Docker distribution routes Ollama's registry answers:

    GET /v2/{namespace}/{model}/manifests/{tag}   the manifest (with Accept: the v2 manifest type; 404 MANIFEST_UNKNOWN
                                                  for an unknown tag), with the Docker-Content-Digest header
    GET /v2/{namespace}/{model}/blobs/{digest}    a 307 to /storage/{digest}?X-Amz-Signature=... (the registry's
                                                  storage; ``redirect_to`` puts it on another host)
    GET /storage/{digest}                         the blob, honouring Range with 206 answers

A tag can be rate-limited (429 + Retry-After), slow (its manifest answers after ``delay_seconds``), without a model
layer, or redirect its blob to another host. Every request is logged with the bytes sent, so a test can count them.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from urllib.parse import unquote, urlparse

from tests.fake_http import LoggingFake

MANIFEST_TYPE = "application/vnd.docker.distribution.manifest.v2+json"


@dataclass
class Tag:
    gguf: bytes = b""  # the model layer's blob
    model_layer: bool = True  # False: a manifest of a template and parameters only
    rate_limited: bool = False
    delay_seconds: float = 0.0
    redirect_to: str = ""  # storage on another host (an absolute base URL), to test that it is refused
    template: bytes = b"{{ .Prompt }}"


@dataclass
class LoggedRequest:
    method: str
    path: str
    range: str
    accept: str
    bytes_sent: int


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


class FakeRegistry(LoggingFake[LoggedRequest]):
    """``with FakeRegistry({"library/tiny:3b": Tag(gguf=...)}) as registry:`` serves them at ``registry.url``."""

    def __init__(self, tags: dict[str, Tag], port: int = 0) -> None:
        self.tags = tags
        self.blobs: dict[str, bytes] = {}
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                registry._answer(self)

        super().__init__(Handler, port)
        for tag in tags.values():
            self.manifest(tag)  # every blob downloadable from the start, as in a registry

    def manifest(self, tag: Tag) -> bytes:
        """The manifest of ``tag`` as the registry serves it (its blobs kept for the blob routes)."""
        config = json.dumps({"model_format": "gguf", "model_family": "llama", "file_type": "unknown"}).encode()
        layers = [(b'{"temperature": 0.7}', "application/vnd.ollama.image.params"),
                  (tag.template, "application/vnd.ollama.image.template")]  # fmt: skip
        if tag.model_layer:
            layers.insert(0, (tag.gguf, "application/vnd.ollama.image.model"))
        for data, _ in [*layers, (config, "")]:
            self.blobs[_digest(data)] = data
        body = {
            "schemaVersion": 2,
            "mediaType": MANIFEST_TYPE,
            "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": _digest(config),
                       "size": len(config)},
            "layers": [{"mediaType": kind, "digest": _digest(data), "size": len(data)} for data, kind in layers],
        }  # fmt: skip
        return json.dumps(body).encode()

    def _send(self, handler: BaseHTTPRequestHandler, status: int, body: bytes = b"",
              headers: dict[str, str] | None = None) -> None:  # fmt: skip
        path, accept = urlparse(handler.path).path, handler.headers.get("Accept", "")
        # Logged before the answer leaves, so a client that has its answer finds the request counted.
        self.log.append(LoggedRequest(handler.command, path, handler.headers.get("Range", ""), accept, len(body)))
        handler.send_response(status)
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    def _error(self, handler: BaseHTTPRequestHandler, status: int, code: str,
               extra: dict[str, str] | None = None) -> None:  # fmt: skip
        body = json.dumps({"errors": [{"code": code, "message": code.lower().replace("_", " ")}]}).encode()
        self._send(handler, status, body, {"Content-Type": "application/json", **(extra or {})})

    def _tag(self, handler: BaseHTTPRequestHandler, name: str) -> Tag | None:
        tag = self.tags.get(name)
        if tag is None:
            self._error(handler, 404, "MANIFEST_UNKNOWN")
            return None
        if tag.delay_seconds:
            time.sleep(tag.delay_seconds)
        if tag.rate_limited:
            self._error(handler, 429, "TOOMANYREQUESTS", {"Retry-After": "30"})
            return None
        return tag

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        parts = unquote(urlparse(handler.path).path).strip("/").split("/")
        if len(parts) == 5 and parts[0] == "v2" and parts[3] == "manifests":
            if MANIFEST_TYPE not in handler.headers.get("Accept", ""):
                self._error(handler, 404, "MANIFEST_UNKNOWN")  # the registry has no other kind of manifest to give
                return
            tag = self._tag(handler, f"{parts[1]}/{parts[2]}:{parts[4]}")
            if tag is not None:
                body = self.manifest(tag)
                self._send(handler, 200, body, {"Content-Type": MANIFEST_TYPE, "Docker-Content-Digest": _digest(body)})
            return
        if len(parts) == 5 and parts[0] == "v2" and parts[3] == "blobs":
            name, digest = f"{parts[1]}/{parts[2]}", parts[4]
            tags = [t for key, t in self.tags.items() if key.partition(":")[0] == name]
            if digest not in self.blobs or not tags:
                self._error(handler, 404, "BLOB_UNKNOWN")
                return
            base = next((t.redirect_to for t in tags if t.redirect_to), "") or self.url
            location = f"{base}/storage/{digest}?X-Amz-Expires=1200&X-Amz-Signature=fake"
            self._send(handler, 307, b"", {"Location": location})
            return
        if len(parts) == 2 and parts[0] == "storage":
            data = self.blobs.get(parts[1])
            if data is None:
                self._error(handler, 404, "NoSuchKey")
                return
            wanted = handler.headers.get("Range", "")
            if wanted.startswith("bytes="):
                start_text, _, end_text = wanted[6:].partition("-")
                start, end = int(start_text), min(int(end_text or len(data) - 1), len(data) - 1)
                headers = {"Content-Range": f"bytes {start}-{end}/{len(data)}", "Accept-Ranges": "bytes"}
                self._send(handler, 206, data[start : end + 1], headers)
            else:
                self._send(handler, 200, data, {"Accept-Ranges": "bytes"})
            return
        self._error(handler, 404, "NAME_UNKNOWN")
