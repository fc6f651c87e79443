"""`vram --json` run in process, for tests that read its answer: a question, or a config.json given to --config."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from vramfit.bot.cli import EXIT_ERROR, run


def run_json(*argv: str, status: int = 0) -> dict[str, Any]:
    """The JSON of ``vram --json`` with ``argv``, which must exit with ``status`` (0: an answer; else an error's)."""
    out = io.StringIO()
    assert run(["--json", *argv], out) == status, out.getvalue()
    result: dict[str, Any] = json.loads(out.getvalue())
    return result


def answer(question: str, lang: str = "en") -> dict[str, Any]:
    """The JSON answer to a question that must parse (the exit code is checked)."""
    return run_json("--lang", lang, question)


def from_config(config: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """The JSON of ``vram --json --config`` for a config.json written to ``tmp_path``: an answer or an error."""
    out = io.StringIO()
    run(["--json", "--config", _written(config, tmp_path)], out)
    result: dict[str, Any] = json.loads(out.getvalue())
    return result


def refused_config(config: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """The error of ``vram --json --config`` for a config.json written to ``tmp_path`` that it must refuse."""
    error: dict[str, Any] = run_json("--config", _written(config, tmp_path), status=EXIT_ERROR)["error"]
    return error


def _written(config: dict[str, Any], tmp_path: Path) -> str:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return str(path)
