"""Serve GGUF files as Ollama tags by hand, to point ``VRAMFIT_OLLAMA_REGISTRY`` at (timings, trying the command):

    python -m tests.fake_ollama library/tiny:3b=path/to/model.gguf [more tags] [--port 8765]

It prints the URL, then logs each request (method, path, range) until interrupted.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from tests.fake_ollama.server import FakeRegistry, Tag


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.fake_ollama")
    parser.add_argument("tags", nargs="+", metavar="NAMESPACE/MODEL:TAG=FILE")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    tags = {name: Tag(gguf=Path(file).read_bytes()) for name, _, file in (t.partition("=") for t in args.tags)}
    registry = FakeRegistry(tags, port=args.port)
    with registry:
        print(registry.url, flush=True)
        seen = 0
        try:
            while True:
                time.sleep(0.2)
                for request in registry.log[seen:]:
                    print(request.method, request.path, request.range, request.bytes_sent, flush=True)
                seen = len(registry.log)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
