"""Ollama's server log: its own placement line (``msg=offload``, or ``msg="offload to cuda"`` before 0.6:
layers of the model and offloaded, the memory available, required in full and in part, the KV cache, the weights and
the graph) and `ollama ps` (NAME, SIZE, PROCESSOR such as ``48%/52% CPU/GPU``). The runner's own llama.cpp lines are
read by :mod:`bot.logs.llamacpp`."""

from __future__ import annotations

import re
from typing import Any

from vramfit.bot.logs.scan import first, number

# key=value pairs, a key only where a word begins: a 4,000-character word with no "=" is passed over once
_PAIR = re.compile(r'(?<![\w.])([\w.]+)=("[^"]*"|\S+)')
_SIZE = re.compile(r"(?<![\d.])([\d.]+) ?(B|KiB|MiB|GiB|TiB)")
_UNIT_GIB = {"B": 1 / 2**30, "KiB": 1 / 2**20, "MiB": 1 / 1024, "GiB": 1.0, "TiB": 1024.0}
# The new engine's own buffers (2025-): msg="model weights" buffer=CUDA0 size="11.5 GiB", and its KV cache and graph
_BUFFER = re.compile(
    r'msg="(?P<what>model weights|kv cache|compute graph)" (?:buffer|device)=(?P<dev>[^\s"]+) size="(?P<size>[^"]+)"'
)
_BUFFER_FIELD = {"model weights": "model_mib", "kv cache": "kv_mib", "compute graph": "compute_mib"}
_OFFLOADED = re.compile(r"offloaded (\d+)/(\d+) layers to GPU")
_FILE_TYPE = re.compile(r"architecture=(?P<arch>\S+) file_type=(?P<ftype>\S+)")
_PS_HEADER = re.compile(r"^\s*NAME\s+ID\s+SIZE\s+PROCESSOR")
_PS_CELLS = re.compile(r"\s{2,}")
_LOOKS_LIKE = re.compile(r'msg="?offload|source=\w+\.go:\d+|ollama\[\d+\]|NAME\s+ID\s+SIZE\s+PROCESSOR|runner\.go')


def _gib(text: str) -> float | None:
    m = _SIZE.search(text)
    value = number(m[1]) if m else None
    return round(value * _UNIT_GIB[m[2]], 6) if m and value is not None else None


def looks_like(text: str) -> bool:
    return bool(_LOOKS_LIKE.search(text))


def is_ps(text: str) -> bool:
    return bool(re.search(r"NAME\s+ID\s+SIZE\s+PROCESSOR", text))


class Reader:
    """Ollama's lines, fed one at a time."""

    def __init__(self) -> None:
        self.out: dict[str, Any] = {}
        self.rows: list[tuple[str, str, str]] = []
        self.buffers: dict[str, dict[str, float]] = {}
        self.in_ps = False

    def feed(self, i: int, line: str, lines: list[str]) -> None:
        out = self.out
        if (m := first(_BUFFER, line, 'msg="')) and (gib := _gib(m["size"])) is not None:
            self.buffers.setdefault(_BUFFER_FIELD[m["what"]], {})[m["dev"]] = round(gib * 1024, 2)
        if m := first(_OFFLOADED, line, "offloaded "):
            out["layers_on_gpu"], out["layers_total"] = int(m[1]), int(m[2])
        if m := first(_FILE_TYPE, line, "architecture="):
            out.setdefault("arch", m["arch"])
            out.setdefault("file_type", m["ftype"])
        if "msg=offload" in line or 'msg="offload to' in line:
            self._offload({k: v.strip('"') for k, v in _PAIR.findall(line)})
        if _PS_HEADER.match(line):
            self.in_ps = True
            return
        if self.in_ps:
            cells = _PS_CELLS.split(line.strip())
            if len(cells) >= 4:
                self.rows.append((cells[0], cells[2], cells[3]))
            elif line.strip():
                self.in_ps = False

    def _offload(self, pairs: dict[str, str]) -> None:
        out = self.out
        if pairs.get("layers.model", "").isdigit():
            out["ollama_layers_model"] = int(pairs["layers.model"])
        if pairs.get("layers.offload", "").isdigit():
            out["ollama_layers_offload"] = int(pairs["layers.offload"])
        for key, field in (("memory.required.full", "ollama_required_full_gib"),
                           ("memory.required.partial", "ollama_required_partial_gib"),
                           ("memory.required.kv", "ollama_kv_gib"), ("memory.weights.total", "ollama_weights_gib"),
                           ("memory.graph.full", "ollama_graph_full_gib")):  # fmt: skip
            if key in pairs and (value := _gib(pairs[key])) is not None:
                out[field] = value
        if "memory.available" in pairs:
            out["ollama_available_gib"] = tuple(
                v for part in pairs["memory.available"].strip("[]").split(",") if (v := _gib(part)) is not None
            )

    def fields(self) -> dict[str, Any]:
        out = dict(self.out)
        if self.rows:
            out["ollama_ps"] = tuple(self.rows)
        return out | self.buffers


def read(lines: list[str]) -> dict[str, Any]:
    reader = Reader()
    for i, line in enumerate(lines):
        reader.feed(i, line, lines)
    return reader.fields()
