#!/usr/bin/env python3
"""What llama-server's compute buffer holds at its peak: the tensors ggml's graph allocator had placed when the
buffer reached its size, with their addresses.

usage (from the repository root, with the measuring venv and a llama-server built from llama.cpp b11434):
  python tools/llamacpp_truth/trace_compute.py MODEL --llama-server BUILD/bin/llama-server --gguf-py TREE/gguf-py \\
      --debug-ggml DEBUG/build/src -- -c 4096 -np 1 -fa on [more llama-server flags]

``--debug-ggml`` is a folder holding ``libggml-base.so*`` built from the same tree with ggml-alloc.c's allocator
debugging on (README.md, "Tracing the compute buffer"): it prints, every time the buffer's highest address grows,
every tensor placed at that moment. This script writes the model's all-zero F16 GGUF (gen_gguf.py), starts
llama-server with that library in front of its own (LD_LIBRARY_PATH), keeps the largest such print and the
server's ``compute buffer size`` lines, and prints one line a tensor: name, start and end in MiB, size. Nothing is
computed here; calc/server_graph.py's rules were read from these prints.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from llama_server import run_server

HERE = Path(__file__).resolve().parent
PEAK = re.compile(r"max_size\[\d+\] = ([\d.]+) MB: tensors: (.*)")
TENSOR = re.compile(r"(\S+) \[\d+: ([0-9a-f]+)-([0-9a-f]+)\] \([\d.]+ MB\)")
COMPUTE = re.compile(r"(\S+) compute buffer size = +([\d.]+) MiB")
MIB = 1024 * 1024


def peak_tensors(log: str) -> list[tuple[str, float, float]]:
    """The tensors of the allocator's largest print: (name, start MiB, end MiB)."""
    peaks = PEAK.findall(log)
    if not peaks:
        return []
    _, listing = max(peaks, key=lambda peak: float(peak[0]))
    return [(name, int(start, 16) / MIB, int(end, 16) / MIB) for name, start, end in TENSOR.findall(listing)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", help="an archs.py model")
    ap.add_argument("--llama-server", required=True, type=Path)
    ap.add_argument("--gguf-py", required=True)
    ap.add_argument("--debug-ggml", required=True, type=Path, help="folder of the debugging libggml-base.so*")
    ap.add_argument("--workdir", default=tempfile.gettempdir())
    argv = sys.argv[1:]
    server_args = argv[argv.index("--") + 1 :] if "--" in argv else []
    a = ap.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    sys.path[:0] = [a.gguf_py, str(HERE)]
    from archs import model_config
    from gen_gguf import write_gguf

    # llama-server finds its libraries through its RUNPATH; LD_LIBRARY_PATH comes first, so a folder holding the
    # server's libraries with the debugging libggml-base in place of its own makes it load that one
    libs = Path(tempfile.mkdtemp(prefix="trace-libs-", dir=a.workdir))
    for library in a.llama_server.parent.glob("lib*.so*"):
        shutil.copy2(library, libs / library.name, follow_symlinks=True)
    for library in a.debug_ggml.glob("libggml-base.so*"):
        shutil.copy2(library, libs / library.name, follow_symlinks=True)
    server = libs / "llama-server"
    shutil.copy2(a.llama_server, server)
    os.chmod(server, 0o755)
    gguf = Path(a.workdir) / f"{a.model}.trace.gguf"
    write_gguf(a.model, str(gguf), model_config(a.model))
    try:
        log = run_server(server, ["-m", str(gguf), "-ngl", "99", "--no-warmup", "-v", *server_args])
    finally:
        gguf.unlink(missing_ok=True)
        shutil.rmtree(libs, ignore_errors=True)
    for backend, size in dict(COMPUTE.findall(log)).items():
        print(f"{backend} compute buffer size = {size} MiB")
    for name, start, end in peak_tensors(log):
        print(f"  {name:40} {start:10.3f} {end:10.3f} {end - start:10.3f}")


if __name__ == "__main__":
    main()
