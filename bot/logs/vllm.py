"""vLLM's start-up log (V0 and V1, 2024–26): the weights loaded, the memory profile (the instance's share of the GPU,
weights, non-torch memory, the activation peak, what is left for the KV cache), the KV cache in blocks and tokens, the
concurrency it allows, the command's own settings, and the ways it fails (the max model length past what the cache
holds, no memory left for cache blocks, PyTorch's out-of-memory)."""

from __future__ import annotations

import re
from typing import Any

_NUMBER = r"(-?[\d.]+)"
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("weights_gib", re.compile(rf"(?:Loading model weights|Model loading) took\W*\s*{_NUMBER} ?(?:GiB|GB)")),
    ("weights_gib", re.compile(rf"model weights take\s*{_NUMBER} ?GiB")),
    ("weights_gib", re.compile(rf"Weight memory\W*\s*{_NUMBER} ?GiB")),
    ("non_torch_gib", re.compile(
        rf"non_torch_memory(?: takes)?\s*{_NUMBER} ?GiB|Non-torch memory\W*\s*{_NUMBER} ?GiB")),
    ("activation_gib", re.compile(
        rf"activation peak memory(?: takes)?\s*{_NUMBER} ?GiB|Peak activation memory\W*\s*{_NUMBER} ?GiB")),
    ("kv_cache_gib", re.compile(
        rf"reserved for KV Cache is\s*{_NUMBER} ?GiB|available_kv_cache_memory\s*{_NUMBER} ?GiB"
        rf"|Available KV cache memory\W*\s*{_NUMBER} ?GiB|KV cache memory\W*\s*{_NUMBER} ?GiB")),
    ("cudagraph_gib", re.compile(
        rf"CUDAGraph memory\W*\s*{_NUMBER} ?GiB|Graph capturing finished .*? took {_NUMBER} GiB")),
    ("gpu_memory_utilization", re.compile(
        rf"gpu_memory_utilization\s*\(?{_NUMBER}\)?|--gpu[-_]memory[-_]utilization[= ]{_NUMBER}")),
    ("max_model_len", re.compile(r"--max[-_]model[-_]len[= ](\d+)|max_model_len[= ](\d+)")),
    ("tensor_parallel", re.compile(r"(?:-tp|--tensor-parallel-size)[= ](\d+)")),
    ("gpu_blocks", re.compile(r"# (?:GPU|CUDA) blocks: (\d+)")),
    ("kv_tokens", re.compile(r"GPU KV cache size: ([\d,]+) tokens")),
)  # fmt: skip
_TOTAL = re.compile(rf"total_gpu_memory\s*\(?{_NUMBER} ?GiB")
_CONCURRENCY = re.compile(r"Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x")
_TOO_LONG = re.compile(
    r"max seq len \((\d+)\) is larger than the maximum number of tokens that can be stored in KV cache \((\d+)\)"
)
_NO_BLOCKS = re.compile(r"No available memory for the cache blocks")
_TORCH_OOM = re.compile(r"CUDA out of memory\. Tried to allocate ([\d.]+) (GiB|MiB)")
_INT_FIELDS = frozenset(("max_model_len", "tensor_parallel", "gpu_blocks", "kv_tokens"))


def looks_like(text: str) -> bool:
    return bool(re.search(r"vllm|model weights take|Loading model weights took|# GPU blocks|KV cache size:|"
                          r"Maximum concurrency for|gpu_memory_utilization", text, re.IGNORECASE))  # fmt: skip


def read(lines: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    failures: list[dict[str, Any]] = []
    gpus: list[dict[str, Any]] = []
    for line in lines:
        for key, pattern in _PATTERNS:
            if (m := pattern.search(line)) and key not in out:
                value = next(g for g in m.groups() if g is not None).replace(",", "")
                out[key] = int(value) if key in _INT_FIELDS else float(value)
        if (m := _TOTAL.search(line)) and not gpus:
            gpus.append({"name": "GPU", "total_mib": float(m[1]) * 1024})
        if m := _CONCURRENCY.search(line):
            out.setdefault("max_model_len", int(m[1].replace(",", "")))
            out["max_concurrency"] = float(m[2])
        if m := _TOO_LONG.search(line):
            out["max_model_len"], out["kv_tokens"] = int(m[1]), int(m[2])
            failures.append({"what": "vllm_kv", "message": m[0]})
        if _NO_BLOCKS.search(line):
            failures.append({"what": "vllm_kv", "message": "No available memory for the cache blocks"})
        if m := _TORCH_OOM.search(line):
            mib = float(m[1]) * (1024 if m[2] == "GiB" else 1)
            failures.append({"what": "torch", "mib": mib, "message": m[0]})
    out["failures"] = tuple(failures)
    out["gpus"] = tuple(gpus)
    return out
