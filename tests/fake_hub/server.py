"""The fake Hub: ``GET /api/models?search=`` (the model search, as huggingface_hub's list_models asks it),
``GET /api/models/{repo}/tree/{revision}`` (the file list, as huggingface_hub's list_repo_tree reads
it), ``HEAD|GET /{repo}/resolve/{revision}/{file}`` (a 302 to ``/storage/...`` with the X-Repo-Commit, X-Linked-Etag
and X-Linked-Size headers the Hub sends) and ``GET /storage/...`` honouring ``Range`` with 206 answers. The storage
answers carry the commit and ETag too: huggingface_hub follows a redirect to the same host (this fake's storage is
on it) and reads them from the last answer. Enough for list_repo_tree, get_hf_file_metadata, hf_hub_download and
get_safetensors_metadata (HEADs for model.safetensors or its index, the index downloaded, each shard's first 100 kB
read by range; tests/fake_hub/safetensors.py writes such files). A repo can be
gated (401 + X-Error-Code GatedRepo), rate-limited (429 + Retry-After) or slow; unknown repos are 404 RepoNotFound.
Every request is logged with the bytes it was sent, so a test can count what a read cost."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, unquote, urlparse

from tests.fake_http import LoggingFake
from vramfit.bot.sources.cache import CachedRead

COMMIT = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"


class MemoryCache:
    """A shared cache of remote reads in a dict (bot.sources.cache.RemoteCache), as the bot's store keeps them."""

    def __init__(self) -> None:
        self.reads: dict[str, CachedRead] = {}

    def get(self, key: str) -> CachedRead | None:
        return self.reads.get(key)

    def put(self, read: CachedRead) -> None:
        self.reads[read.key] = read


@dataclass
class Repo:
    files: dict[str, bytes] = field(default_factory=dict)
    gated: bool = False
    rate_limited: bool = False
    ignores_ranges: bool = False
    delay_seconds: float = 0.0
    redirect_to: str = ""  # an absolute storage URL on another host, to test that vramfit refuses it


@dataclass
class LoggedRequest:
    method: str
    path: str
    range: str
    bytes_sent: int


class FakeHub(LoggingFake[LoggedRequest]):
    """``with FakeHub({"owner/name": Repo(files={...})}) as hub:`` serves them at ``hub.url``."""

    def __init__(self, repos: dict[str, Repo]) -> None:
        self.repos = repos
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_HEAD(self) -> None:
                hub._answer(self, head=True)

            def do_GET(self) -> None:
                hub._answer(self, head=False)

        super().__init__(Handler)

    def _send(self, handler: BaseHTTPRequestHandler, status: int, body: bytes = b"", head: bool = False,
              headers: dict[str, str] | None = None) -> None:  # fmt: skip
        path = urlparse(handler.path).path
        sent = 0 if head else len(body)
        # Logged before the answer leaves, so a client that has its answer finds the request counted.
        self.log.append(LoggedRequest(handler.command, path, handler.headers.get("Range", ""), sent))
        handler.send_response(status)
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if not head:
            handler.wfile.write(body)

    def _error(self, handler: BaseHTTPRequestHandler, status: int, code: str, head: bool,
               extra: dict[str, str] | None = None) -> None:  # fmt: skip
        body = json.dumps({"error": code}).encode()
        headers = {"X-Error-Code": code, "Content-Type": "application/json", **(extra or {})}
        self._send(handler, status, body, head, headers)

    def _repo(self, handler: BaseHTTPRequestHandler, name: str, head: bool) -> Repo | None:
        repo = self.repos.get(name)
        if repo is None:
            self._error(handler, 404, "RepoNotFound", head)
            return None
        if repo.delay_seconds:
            time.sleep(repo.delay_seconds)
        if repo.gated:
            self._error(handler, 401, "GatedRepo", head)
            return None
        if repo.rate_limited:
            self._error(handler, 429, "RateLimited", head, {"Retry-After": "30"})
            return None
        return repo

    def _answer(self, handler: BaseHTTPRequestHandler, head: bool) -> None:
        parts = unquote(urlparse(handler.path).path).strip("/").split("/")
        if parts == ["api", "models"]:  # the model search: repos whose id contains ?search=, GGUF ones with filter
            query = parse_qs(urlparse(handler.path).query)
            search = query.get("search", [""])[0].lower()
            found = [name for name in sorted(self.repos) if search in name.lower()]
            if query.get("filter", [""])[0] == "gguf":
                found = [name for name in found if any(f.endswith(".gguf") for f in self.repos[name].files)]
            limit = int(query.get("limit", ["10"])[0])
            listing = [{"id": name, "modelId": name} for name in found[:limit]]
            self._send(handler, 200, json.dumps(listing).encode(), head, {"Content-Type": "application/json"})
            return
        if parts[:2] == ["api", "models"] and "tree" in parts:
            at = parts.index("tree")
            repo = self._repo(handler, "/".join(parts[2:at]), head)
            if repo is not None:
                listing = [
                    {"type": "file", "oid": hashlib.sha1(data).hexdigest(), "size": len(data), "path": path}
                    for path, data in sorted(repo.files.items())
                ]
                self._send(handler, 200, json.dumps(listing).encode(), head, {"Content-Type": "application/json"})
            return
        if len(parts) > 4 and parts[2] == "resolve":
            name, file = "/".join(parts[:2]), "/".join(parts[4:])
            repo = self._repo(handler, name, head)
            if repo is None:
                return
            if file not in repo.files:
                self._error(handler, 404, "EntryNotFound", head)
                return
            data = repo.files[file]
            etag = hashlib.sha256(data).hexdigest()
            headers = {"Location": f"{repo.redirect_to}/storage/{name}/{file}", "X-Repo-Commit": COMMIT,
                       "X-Linked-Etag": f'"{etag}"', "X-Linked-Size": str(len(data)), "ETag": f'"{etag}"'}  # fmt: skip
            self._send(handler, 302, b"", head, headers)
            return
        if parts[0] == "storage":
            name, file = "/".join(parts[1:3]), "/".join(parts[3:])
            repo = self.repos.get(name)
            if repo is None or file not in repo.files:
                self._error(handler, 404, "EntryNotFound", head)
                return
            data = repo.files[file]
            etag = f'"{hashlib.sha256(data).hexdigest()}"'
            same = {"X-Repo-Commit": COMMIT, "ETag": etag, "X-Linked-Etag": etag, "X-Linked-Size": str(len(data))}
            wanted = handler.headers.get("Range", "")
            if wanted.startswith("bytes=") and not repo.ignores_ranges:
                start_text, _, end_text = wanted[6:].partition("-")
                start, end = int(start_text), min(int(end_text or len(data) - 1), len(data) - 1)
                headers = {"Content-Range": f"bytes {start}-{end}/{len(data)}", "Accept-Ranges": "bytes", **same}
                self._send(handler, 206, data[start : end + 1], head, headers)
            else:
                self._send(handler, 200, data, head, {"Accept-Ranges": "bytes", **same})
            return
        self._error(handler, 404, "NotFound", head)
