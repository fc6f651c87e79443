"""A hostile Hub (and a canary) on 127.0.0.1: what a repo owner, or whoever answers for the Hub, could send.

Each repo name picks a behaviour:

- ``evil/drip-listing-GGUF``: the file list's status and headers, then its body one byte every ``drip_seconds``;
- ``evil/drip-head-GGUF``: the status line itself one byte at a time;
- ``evil/split-many-GGUF``: a listing of one GGUF split in ``parts`` parts (10,000 by default), all of them listed;
- ``evil/endless-listing-GGUF``: every page of the file list links to a next page, forever (1,000 entries a page);
- ``evil/bad-html-GGUF``, ``evil/bad-object-GGUF``, ``evil/bad-entry-GGUF``: a file list that is HTML with status
  200, a JSON object, a list with an unreadable entry;
- ``evil/redirect-canary-GGUF``: the file resolves to storage on this host, whose answer redirects the ranged read to
  the canary (another port on 127.0.0.1, standing for a cloud metadata service);
- any ``/v2/...`` path (as an Ollama registry): a manifest that drips a byte every ``drip_seconds``;
- ``evil/gzip-bomb-GGUF``: a file list of a few hundred KiB that inflates (gzip) to 256 MiB;
- ``evil/redirect-to-NAME-GGUF``: storage redirecting the ranged read to ``hub.redirect_targets["NAME-GGUF"]``;
- ``evil/bad-token-GGUF``: 401 with the Hub's "Invalid credentials in Authorization header" (a refused HF_TOKEN);
- ``evil/tensors-GGUF``: a GGUF split in ``tensor_parts`` parts (12), each a valid header claiming ``tensors_per_part``
  tensors (130,000), served with range requests.
- safetensors repos (:data:`CHECKPOINTS`): ``evil/deep-index`` (model.safetensors.index.json nested 100,000 deep),
  ``evil/huge-index`` (an index the listing says is 200 MB), ``evil/lying-index`` (listed at 1 KB, 40 MiB served),
  ``evil/huge-config`` (a config.json the listing says is 120 MB) and ``evil/deep-header`` (a safetensors header
  nested 100,000 deep); each lists a valid config.json otherwise.

Every request is logged (method, path, Authorization header), and the server stops its drips when closed, so a test
that gives up leaves nothing running. Bounded: a drip ends after ``max_seconds``.
"""

from __future__ import annotations

import json
import struct
import threading
import time
import zlib
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, unquote, urlparse

from tests.fake_http import QuietServer

COMMIT = "0123456789abcdef0123456789abcdef01234567"
PART_BYTES = 10 << 30  # what the listing says each part of evil/tensors-GGUF weighs


def _gguf_string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def _entry(path: str, size: int) -> dict[str, object]:
    """One file of a listing, as the Hub's tree API writes it."""
    return {"type": "file", "oid": "0" * 40, "size": size, "path": path}


def gguf_header_with_tensors(count: int) -> bytes:
    """A GGUF v3 header (llama, 32 layers) whose tensor table lists ``count`` one-dimensional F32 tensors."""
    kvs = [
        _gguf_string("general.architecture") + struct.pack("<I", 8) + _gguf_string("llama"),
        _gguf_string("llama.block_count") + struct.pack("<II", 4, 32),
    ]
    head = b"GGUF" + struct.pack("<IQQ", 3, count, len(kvs)) + b"".join(kvs)
    tensors = b"".join(_gguf_string(f"t.{i}") + struct.pack("<IQIQ", 1, 32, 0, 128 * i) for i in range(count))
    return head + tensors


# A small Llama's config.json, valid: what the hostile checkpoints list beside their one hostile file
_CONFIG = json.dumps({
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 512, "intermediate_size": 1024,
    "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 8, "vocab_size": 1000,
    "max_position_embeddings": 4096, "torch_dtype": "bfloat16",
}).encode()  # fmt: skip
_DEEP = b"[" * 100_000 + b"]" * 100_000
_INDEX = "model.safetensors.index.json"


def _checkpoints() -> dict[str, dict[str, tuple[int, bytes]]]:
    """repo → file → (size the listing gives, bytes served)."""
    config = {"config.json": (len(_CONFIG), _CONFIG)}
    shard = "model-00001-of-00001.safetensors"
    lying = b'{"weight_map": {' + b" " * (40 << 20) + b"}}"
    return {
        "evil/deep-index": {**config, _INDEX: (len(_DEEP), _DEEP), shard: (1 << 20, b"")},
        "evil/huge-index": {**config, _INDEX: (200_000_000, b"{}"), shard: (1 << 20, b"")},
        "evil/lying-index": {**config, _INDEX: (1000, lying), shard: (1 << 20, b"")},
        "evil/huge-config": {"config.json": (120_000_000, _CONFIG), "model.safetensors": (1 << 20, b"")},
        "evil/deep-header": {**config, "model.safetensors": (1 << 20, struct.pack("<Q", len(_DEEP)) + _DEEP)},
    }


CHECKPOINTS = _checkpoints()


@dataclass
class Hit:
    method: str
    path: str
    authorization: str


class _Server(QuietServer):
    allow_reuse_address = True  # quiet about clients too: one that hangs up mid-drip is what the tests want


class Canary:
    """A server that only counts who reached it."""

    def __init__(self) -> None:
        self.hits: list[Hit] = []
        canary = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                canary.hits.append(Hit("GET", self.path, self.headers.get("Authorization", "")))
                body = b"secret"
                self.send_response(206)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_HEAD = do_GET

        self._server = _Server(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class HostileHub:
    """``with HostileHub() as hub:`` serves the behaviours above at ``hub.url``; ``hub.canary`` is the canary."""

    def __init__(
        self,
        *,
        drip_seconds: float = 0.2,
        max_seconds: float = 20.0,
        parts: int = 10_000,
        tensor_parts: int = 12,
        tensors_per_part: int = 130_000,
    ) -> None:
        self.drip_seconds, self.max_seconds, self.parts = drip_seconds, max_seconds, parts
        self.tensor_parts, self.tensors_per_part = tensor_parts, tensors_per_part
        self._headers: dict[int, bytes] = {}
        self._bomb = b""
        # evil/redirect-to-NAME-GGUF: the storage answer redirects the ranged read to these (NAME-GGUF → URL)
        self.redirect_targets: dict[str, str] = {}
        self.hits: list[Hit] = []
        self.closing = threading.Event()
        self.canary = Canary()
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                hub._answer(self)

            def do_HEAD(self) -> None:
                hub._answer(self)

        self._server = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> HostileHub:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.closing.set()
        self._server.shutdown()
        self._server.server_close()
        self.canary.close()

    def gzip_bomb(self) -> bytes:
        """A gzip body of a few hundred KiB that inflates to 256 MiB ("[" and spaces: JSON that never ends)."""
        if not self._bomb:
            packer = zlib.compressobj(6, zlib.DEFLATED, 31)  # gzip framing
            self._bomb = packer.compress(b"[" + b" " * (256 << 20)) + packer.flush()
        return self._bomb

    def _send(self, handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str]) -> None:
        handler.send_response(status)
        for key, value in headers.items():
            handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if handler.command != "HEAD":
            handler.wfile.write(body)

    def _drip(self, handler: BaseHTTPRequestHandler, data: bytes) -> None:
        started = time.monotonic()
        for i in range(len(data)):
            if self.closing.is_set() or time.monotonic() - started > self.max_seconds:
                return
            try:
                handler.wfile.write(data[i : i + 1])
                handler.wfile.flush()
            except OSError:
                return
            time.sleep(self.drip_seconds)

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        url = urlparse(handler.path)
        path = unquote(url.path)
        if path == "/api/agent-harnesses":  # huggingface_hub's own once-a-day telemetry, when it is not turned off
            self._send(handler, 404, b"{}", {})
            return
        self.hits.append(Hit(handler.command, path, handler.headers.get("Authorization", "")))
        parts = path.strip("/").split("/")
        json_type = {"Content-Type": "application/json"}
        if parts[0] == "v2":  # as an Ollama registry: every manifest drips
            manifest = json.dumps({"schemaVersion": 2, "layers": []}).encode() * 100
            handler.send_response(200)
            handler.send_header("Content-Length", str(len(manifest)))
            handler.end_headers()
            self._drip(handler, manifest)
            return
        if parts[:2] == ["api", "models"] and "tree" in parts:
            repo = "/".join(parts[2 : parts.index("tree")])
            if repo == "evil/drip-listing-GGUF":
                body = json.dumps([_entry("m-Q4_K_M.gguf", 1)] * 10_000).encode()
                handler.send_response(200)
                handler.send_header("Content-Length", str(len(body)))
                handler.end_headers()
                self._drip(handler, body)
            elif repo == "evil/drip-head-GGUF":
                self._drip(handler, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n" + b"X-Pad: " + b"x" * 10_000)
            elif repo in ("evil/split-many-GGUF", "evil/tensors-GGUF"):
                count = self.parts if repo == "evil/split-many-GGUF" else self.tensor_parts
                listing = [_entry(f"m-Q4_K_M-{i:05d}-of-{count:05d}.gguf", PART_BYTES) for i in range(1, count + 1)]
                self._send(handler, 200, json.dumps(listing).encode(), json_type)
            elif repo == "evil/endless-listing-GGUF":
                page = int(parse_qs(url.query).get("page", ["0"])[0])
                listing = [_entry(f"f{page}-{i}.bin", 1) for i in range(1000)]
                link = f'<{self.url}/api/models/{repo}/tree/main?page={page + 1}>; rel="next"'
                self._send(handler, 200, json.dumps(listing).encode(), {**json_type, "Link": link})
            elif repo == "evil/gzip-bomb-GGUF":  # a small body that inflates to 256 MiB
                self._send(handler, 200, self.gzip_bomb(), {**json_type, "Content-Encoding": "gzip"})
            elif repo == "evil/bad-token-GGUF":  # a public repo: only a token the Hub does not know is refused
                headers = {"X-Error-Message": "Invalid credentials in Authorization header", **json_type}
                self._send(handler, 401, b'{"error": "Invalid credentials"}', headers)
            elif repo == "evil/bad-html-GGUF":
                self._send(handler, 200, b"<html><body>Hub maintenance</body></html>", {"Content-Type": "text/html"})
            elif repo == "evil/bad-object-GGUF":
                self._send(handler, 200, json.dumps({"files": []}).encode(), json_type)
            elif repo == "evil/bad-entry-GGUF":
                self._send(handler, 200, json.dumps([{"type": "file", "path": 7}]).encode(), json_type)
            elif repo in CHECKPOINTS:
                listing = [_entry(name, size) for name, (size, _) in CHECKPOINTS[repo].items()]
                self._send(handler, 200, json.dumps(listing).encode(), json_type)
            elif repo == "evil/redirect-canary-GGUF" or repo.startswith("evil/redirect-to-"):
                listing = [_entry("m-Q4_K_M.gguf", 1 << 20)]
                self._send(handler, 200, json.dumps(listing).encode(), json_type)
            else:
                self._send(handler, 404, b"{}", {"X-Error-Code": "RepoNotFound", **json_type})
            return
        if len(parts) > 4 and parts[2] == "resolve":
            repo, file = "/".join(parts[:2]), "/".join(parts[4:])
            headers = {"Location": f"{self.url}/storage/{repo}/{file}", "X-Repo-Commit": COMMIT,
                       "X-Linked-Size": str(PART_BYTES), "ETag": '"e"'}  # fmt: skip
            self._send(handler, 302, b"", headers)
            return
        if parts[0] == "storage" and parts[1:3] == ["evil", "redirect-canary-GGUF"]:
            self._send(handler, 302, b"", {"Location": f"{self.canary.url}/latest/meta-data"})
            return
        if parts[0] == "storage" and parts[1] == "evil" and parts[2].startswith("redirect-to-"):
            self._send(handler, 302, b"", {"Location": self.redirect_targets[parts[2].removeprefix("redirect-to-")]})
            return
        if parts[0] == "storage" and "/".join(parts[1:3]) in CHECKPOINTS:
            _, body = CHECKPOINTS["/".join(parts[1:3])].get("/".join(parts[3:]), (0, b""))
            start_text, _, end_text = handler.headers.get("Range", "bytes=0-").removeprefix("bytes=").partition("-")
            start, end = int(start_text or 0), min(int(end_text or len(body) - 1), len(body) - 1)
            headers = {"X-Repo-Commit": COMMIT, "ETag": '"e"'}
            if "Range" in handler.headers:
                headers["Content-Range"] = f"bytes {start}-{end}/{len(body)}"
            self._send(handler, 206 if "Range" in handler.headers else 200, body[start : end + 1], headers)
            return
        if parts[0] == "storage":  # every part a valid GGUF header (tensors-GGUF: a large tensor table)
            count = self.tensors_per_part if parts[1:3] == ["evil", "tensors-GGUF"] else 300
            if count not in self._headers:
                self._headers[count] = gguf_header_with_tensors(count)
            header = self._headers[count]
            start_text, _, end_text = handler.headers.get("Range", "bytes=0-").removeprefix("bytes=").partition("-")
            start = int(start_text or 0)
            end = min(int(end_text or PART_BYTES - 1), PART_BYTES - 1, start + (8 << 20))
            data = header[start : end + 1]
            data += bytes(end + 1 - start - len(data))  # past the header: zeros (never read far)
            headers = {"Content-Range": f"bytes {start}-{end}/{PART_BYTES}", "X-Repo-Commit": COMMIT,
                       "X-Linked-Size": str(PART_BYTES), "ETag": '"e"'}  # fmt: skip
            self._send(handler, 206 if "Range" in handler.headers else 200, data, headers)
            return
        self._send(handler, 404, b"{}", json_type)
