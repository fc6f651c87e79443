"""The measured ground truth the tests compare against, committed under ``tests/data/`` (see its README.md).

Nothing here reads outside the repository: ``python -m tests.data.sync`` (``make groundtruth``) refreshes the copies.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent  # the checkout itself (tests/ is at its top)
DATA = REPO_ROOT / "tests" / "data"
MIB = 1 << 20
GIB = 1 << 30


def data_file(*parts: str) -> Path:
    """A file under ``tests/data``; a missing one is a broken checkout, so it fails loudly."""
    path = DATA.joinpath(*parts)
    if not path.is_file():
        raise FileNotFoundError(f"test data missing from the checkout: {path}")
    return path


def _jsonl(path: Path) -> tuple[dict[str, Any], ...]:
    with path.open(encoding="utf-8") as f:
        return tuple(json.loads(line) for line in f if line.strip())


@cache
def llamacpp_rows() -> tuple[dict[str, Any], ...]:
    """llama.cpp loads measured by the project (``groundtruth/llamacpp_cpu.jsonl``, LLAMACPP.md)."""
    return _jsonl(data_file("groundtruth", "llamacpp_cpu.jsonl"))


@cache
def output_limit_rows() -> tuple[dict[str, Any], ...]:
    """llama.cpp loads with llama-server's output limit beside the library default (``groundtruth/
    llamacpp_outputs.jsonl``, tools/llamacpp_truth/measure_outputs.py, LLAMACPP.md)."""
    return _jsonl(data_file("groundtruth", "llamacpp_outputs.jsonl"))


@cache
def llamaserver_rows() -> tuple[dict[str, Any], ...]:
    """The commands vramfit's cards print, run with llama-server b11434 and read back from its log (``groundtruth/
    llamaserver_b11434.jsonl``, tools/llamacpp_truth/measure_server.py, LLAMACPP.md)."""
    return _jsonl(data_file("groundtruth", "llamaserver_b11434.jsonl"))


@cache
def replay_rows() -> tuple[dict[str, Any], ...]:
    """The settings of ``llamacpp_cpu.jsonl`` loaded again with llama-server b11434 (``groundtruth/
    llamaserver_b11434_replay.jsonl``, tools/llamacpp_truth/replay_b11434.py, LLAMACPP.md)."""
    return _jsonl(data_file("groundtruth", "llamaserver_b11434_replay.jsonl"))


@cache
def server_checkpoint_rows() -> tuple[dict[str, Any], ...]:
    """llama-server b11434's context checkpoints, as its trace lines size them (``groundtruth/
    llamaserver_b11434_checkpoints.jsonl``, tools/llamacpp_truth/measure_checkpoints.py, LLAMACPP.md)."""
    return _jsonl(data_file("groundtruth", "llamaserver_b11434_checkpoints.jsonl"))


@cache
def measured_rows() -> tuple[dict[str, Any], ...]:
    """Published engine logs, each with its source and quote (``groundtruth/measured.jsonl``, MEASURED.md)."""
    return _jsonl(data_file("groundtruth", "measured.jsonl"))


@cache
def speed_rows() -> tuple[dict[str, Any], ...]:
    """Published llama-bench speeds (``groundtruth/speed.jsonl``, SPEED.md)."""
    return _jsonl(data_file("groundtruth", "speed.jsonl"))


@cache
def architectures() -> dict[str, dict[str, Any]]:
    """Sourced architecture numbers by model (``groundtruth/architectures.json``)."""
    data = json.loads(data_file("groundtruth", "architectures.json").read_text(encoding="utf-8"))
    models: dict[str, dict[str, Any]] = data["models"]
    return models


@cache
def eval_rows() -> tuple[dict[str, Any], ...]:
    """Natural questions with the parse expected of them (``eval/queries_public.jsonl``)."""
    return _jsonl(data_file("eval", "queries_public.jsonl"))
