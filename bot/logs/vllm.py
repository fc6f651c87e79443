"""vLLM's start-up log (V0 and V1, 2024–26): the weights loaded, the memory profile (the instance's share of the GPU,
weights, non-torch memory, the activation peak, what is left for the KV cache), the KV cache in blocks and tokens, the
concurrency it allows, the command's own settings, and the ways it fails (the max model length past what the cache
holds, no memory left for cache blocks, PyTorch's out-of-memory)."""

from __future__ import annotations

import contextlib
import re
from typing import Any

from vramfit.bot.logs.scan import first

_NUMBER = r"(-?[\d.]+)"
_GAP = r"[^\w.\-]*"  # ": ", " = ": what stands between a label and its number (never the number's own sign or point)
# (field, the literals a pattern starts with, the pattern): tried where a literal occurs (bot.logs.scan.first)
_PATTERNS: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = (
    ("weights_gib", ("Loading model weights", "Model loading"),
     re.compile(rf"(?:Loading model weights|Model loading) took{_GAP}{_NUMBER} ?(?:GiB|GB)")),
    ("weights_gib", ("model weights take",), re.compile(rf"model weights take\s*{_NUMBER} ?GiB")),
    ("weights_gib", ("Weight memory",), re.compile(rf"Weight memory{_GAP}{_NUMBER} ?GiB")),
    ("non_torch_gib", ("non_torch_memory", "Non-torch memory"), re.compile(
        rf"non_torch_memory(?: takes)?\s*{_NUMBER} ?GiB|Non-torch memory{_GAP}{_NUMBER} ?GiB")),
    ("activation_gib", ("activation peak memory", "Peak activation memory"), re.compile(
        rf"activation peak memory(?: takes)?\s*{_NUMBER} ?GiB|Peak activation memory{_GAP}{_NUMBER} ?GiB")),
    ("kv_cache_gib", ("reserved for KV Cache is", "available_kv_cache_memory", "Available KV cache memory",
                      "KV cache memory"), re.compile(
        rf"reserved for KV Cache is\s*{_NUMBER} ?GiB|available_kv_cache_memory\s*{_NUMBER} ?GiB"
        rf"|Available KV cache memory{_GAP}{_NUMBER} ?GiB|KV cache memory{_GAP}{_NUMBER} ?GiB")),
    ("cudagraph_gib", ("CUDAGraph memory", "Graph capturing finished"), re.compile(
        rf"CUDAGraph memory{_GAP}{_NUMBER} ?GiB|Graph capturing finished [^\n]*? took {_NUMBER} GiB")),
    ("gpu_memory_utilization", ("gpu_memory_utilization", "--gpu-memory-utilization", "--gpu_memory_utilization"),
     re.compile(rf"gpu_memory_utilization\s*\(?{_NUMBER}\)?|--gpu[-_]memory[-_]utilization[= ]{_NUMBER}")),
    ("max_model_len", ("--max-model-len", "max_model_len"),
     re.compile(r"--max[-_]model[-_]len[= ](\d+)|max_model_len[= ](\d+)")),
    ("tensor_parallel", ("-tp", "--tensor-parallel-size"), re.compile(r"(?:-tp|--tensor-parallel-size)[= ](\d+)")),
    ("gpu_blocks", ("# GPU blocks", "# CUDA blocks"), re.compile(r"# (?:GPU|CUDA) blocks: (\d+)")),
    ("kv_tokens", ("GPU KV cache size",), re.compile(r"GPU KV cache size: ([\d,]+) tokens")),
)  # fmt: skip
_TOTAL = re.compile(rf"total_gpu_memory\s*\(?{_NUMBER} ?GiB")
_CONCURRENCY = re.compile(r"Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x")
_TOO_LONG = re.compile(
    r"max seq len \((\d+)\) is larger than the maximum number of tokens that can be stored in KV cache \((\d+)\)"
)
_NO_BLOCKS = "No available memory for the cache blocks"
_TORCH_OOM = re.compile(r"CUDA out of memory\. Tried to allocate ([\d.]+) (GiB|MiB)")
_INT_FIELDS = frozenset(("max_model_len", "tensor_parallel", "gpu_blocks", "kv_tokens"))
_LOOKS_LIKE = re.compile(r"vllm|model weights take|Loading model weights took|# GPU blocks|KV cache size:|"
                         r"Maximum concurrency for|gpu_memory_utilization", re.IGNORECASE)  # fmt: skip


def looks_like(text: str) -> bool:
    return bool(_LOOKS_LIKE.search(text))


class Reader:
    """vLLM's lines, fed one at a time."""

    def __init__(self) -> None:
        self.out: dict[str, Any] = {}
        self.failures: list[dict[str, Any]] = []
        self.gpus: list[dict[str, Any]] = []

    def feed(self, i: int, line: str, lines: list[str]) -> None:
        out = self.out
        for key, literals, pattern in _PATTERNS:
            if key not in out and (m := first(pattern, line, *literals)):
                value = next(g for g in m.groups() if g is not None).replace(",", "")
                try:
                    out[key] = int(value) if key in _INT_FIELDS else float(value)
                except ValueError:  # "1.2.3", "-": not a number
                    continue
        if not self.gpus and (m := first(_TOTAL, line, "total_gpu_memory")):
            with contextlib.suppress(ValueError):
                self.gpus.append({"name": "GPU", "total_mib": float(m[1]) * 1024})
        if m := first(_CONCURRENCY, line, "Maximum concurrency for"):
            with contextlib.suppress(ValueError):
                out.setdefault("max_model_len", int(m[1].replace(",", "")))
                out["max_concurrency"] = float(m[2])
        if m := first(_TOO_LONG, line, "max seq len ("):
            out["max_model_len"], out["kv_tokens"] = int(m[1]), int(m[2])
            self.failures.append({"what": "vllm_kv", "message": m[0]})
        if _NO_BLOCKS in line:
            self.failures.append({"what": "vllm_kv", "message": _NO_BLOCKS})
        if m := first(_TORCH_OOM, line, "CUDA out of memory"):
            with contextlib.suppress(ValueError):
                mib = float(m[1]) * (1024 if m[2] == "GiB" else 1)
                self.failures.append({"what": "torch", "mib": mib, "message": m[0]})

    def fields(self) -> dict[str, Any]:
        return self.out | {"failures": tuple(self.failures), "gpus": tuple(self.gpus)}


def read(lines: list[str]) -> dict[str, Any]:
    reader = Reader()
    for i, line in enumerate(lines):
        reader.feed(i, line, lines)
    return reader.fields()
