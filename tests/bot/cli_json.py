"""`vram --json` run in process, for tests that read its answer: a question, or a config.json given to --config."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from vramfit.bot.cli import run


def answer(question: str, lang: str = "en") -> dict[str, Any]:
    """The JSON answer to a question that must parse (the exit code is checked)."""
    out = io.StringIO()
    assert run(["--json", "--lang", lang, question], out) == 0, out.getvalue()
    result: dict[str, Any] = json.loads(out.getvalue())
    return result


def from_config(config: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """The JSON of ``vram --json --config`` for a config.json written to ``tmp_path``: an answer or an error."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    out = io.StringIO()
    run(["--json", "--config", str(path)], out)
    result: dict[str, Any] = json.loads(out.getvalue())
    return result
