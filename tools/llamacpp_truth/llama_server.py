"""llama-server as the measuring scripts run it: the arguments they share, a loopback port, start, wait until it
serves, stop with SIGINT (which prints llama.cpp's memory breakdown on the way out) and its whole log.

Shared by measure_server.py and measure_checkpoints.py.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The arguments every llama-server measurement takes: the models, the binary, its tree's gguf-py, the revision
    the rows name, where they go and where the scratch files go."""
    ap.add_argument("models", help="archs.py models, comma-separated")
    ap.add_argument("--llama-server", required=True, type=Path)
    ap.add_argument("--gguf-py", required=True, help="the same tree's gguf-py")
    ap.add_argument("--revision", required=True, help="the llama.cpp revision the server was built from (b11434)")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--workdir", default=tempfile.gettempdir())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_server(server: Path, args: list[str], while_serving: Callable[[int], None] | None = None,
               timeout: float = 600.0) -> str:  # fmt: skip
    """Start ``server`` with ``args`` (``--host``/``--port`` on loopback added), wait until /health answers, call
    ``while_serving(port)``, stop it, and return everything it logged."""
    port = free_port()
    argv = [str(server), *args, "--host", "127.0.0.1", "--port", str(port)]
    env = {**os.environ, "LD_LIBRARY_PATH": str(server.parent)}
    with tempfile.TemporaryFile(mode="w+") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, text=True)
        try:
            started = time.monotonic()
            while time.monotonic() - started < timeout and process.poll() is None:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
                        if answer.status == 200:
                            break
                except OSError:
                    time.sleep(0.5)
            if while_serving is not None and process.poll() is None:
                while_serving(port)
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
                try:
                    process.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    process.kill()
        log.seek(0)
        return log.read()
