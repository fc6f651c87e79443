"""``nvidia-smi``'s table (each GPU's name and its memory used of the total) and ``rocm-smi`` (recognised; its concise
table gives VRAM as a percentage only)."""

from __future__ import annotations

import re
from typing import Any

_NAME = re.compile(r"^\|\s+(\d+)\s+(.+?)\s{2,}(?:On|Off|WDDM|TCC)\s+\|")
_MEMORY = re.compile(r"(\d+)MiB\s*/\s*(\d+)MiB")


def looks_like_nvidia(text: str) -> bool:
    return "NVIDIA-SMI" in text or bool(_MEMORY.search(text) and "Driver Version" in text)


def looks_like_rocm(text: str) -> bool:
    return "rocm-smi" in text.lower() or "ROCm System Management Interface" in text


def read(lines: list[str]) -> dict[str, Any]:
    gpus: list[dict[str, Any]] = []
    name = ""
    for line in lines:
        if m := _NAME.search(line):
            name = m[2].strip()
        elif name and (m := _MEMORY.search(line)):
            gpus.append({"name": name, "used_mib": float(m[1]), "total_mib": float(m[2])})
            name = ""
    return {"gpus": tuple(gpus)}
