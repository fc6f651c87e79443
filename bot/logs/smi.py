"""``nvidia-smi``'s table (each GPU's name and its memory used of the total) and ``rocm-smi`` (recognised; its concise
table gives VRAM as a percentage only)."""

from __future__ import annotations

import re
from typing import Any

# "|   0  NVIDIA GeForce RTX 3090        On  |": the name is words with single spaces between them, so where it ends
# is never in doubt (a lazy ".+?" before "\s{2,}" was quadratic in a long run of spaces)
_NAME = re.compile(r"\|\s+(\d+)\s+(\S+(?: \S+)*)\s{2,}(?:On|Off|WDDM|TCC)\s+\|")
_MEMORY = re.compile(r"(?<!\d)(\d+)MiB\s*/\s*(\d+)MiB")


def looks_like_nvidia(text: str) -> bool:
    return "NVIDIA-SMI" in text or bool("Driver Version" in text and _MEMORY.search(text))


def looks_like_rocm(text: str) -> bool:
    return "rocm-smi" in text.lower() or "ROCm System Management Interface" in text


class Reader:
    """nvidia-smi's table, fed one line at a time."""

    def __init__(self) -> None:
        self.gpus: list[dict[str, Any]] = []
        self.name = ""

    def feed(self, i: int, line: str, lines: list[str]) -> None:
        if line.startswith("|") and (m := _NAME.match(line)):
            self.name = m[2].strip()
        elif self.name and "MiB" in line and (m := _MEMORY.search(line)):
            self.gpus.append({"name": self.name, "used_mib": float(m[1]), "total_mib": float(m[2])})
            self.name = ""

    def fields(self) -> dict[str, Any]:
        return {"gpus": tuple(self.gpus)}


def read(lines: list[str]) -> dict[str, Any]:
    reader = Reader()
    for i, line in enumerate(lines):
        reader.feed(i, line, lines)
    return reader.fields()
