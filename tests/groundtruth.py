"""Access to the measured ground truth in ../shared (beside the repository checkout)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

SHARED = Path(__file__).resolve().parents[2] / "shared"
MIB = 1 << 20
GIB = 1 << 30


def shared_file(*parts: str) -> Path:
    path = SHARED.joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"ground truth missing: {path} (the shared/ folder must sit beside the checkout)")
    return path


@cache
def llamacpp_rows() -> tuple[dict[str, Any], ...]:
    with shared_file("groundtruth", "llamacpp_cpu.jsonl").open(encoding="utf-8") as f:
        return tuple(json.loads(line) for line in f if line.strip())


@cache
def measured_rows() -> tuple[dict[str, Any], ...]:
    with shared_file("groundtruth", "measured.jsonl").open(encoding="utf-8") as f:
        return tuple(json.loads(line) for line in f if line.strip())


@cache
def architectures() -> dict[str, dict[str, Any]]:
    data = json.loads(shared_file("groundtruth", "architectures.json").read_text(encoding="utf-8"))
    models: dict[str, dict[str, Any]] = data["models"]
    return models
