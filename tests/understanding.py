"""Scoring a question's parse against the parse its row expects (tests/data/eval): shared by the tests and
``benchmarks/question_understanding.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vramfit.bot.parser import ParsedQuery, parse
from vramfit.calc.errors import VramfitError
from vramfit.calc.gpu import GIB

EVAL = Path(__file__).resolve().parent / "data" / "eval"
FIELDS = ("model", "gpus", "ram_gb", "context", "quant", "intent", "asks_speed")


def rows(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (EVAL / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def read(question: str) -> ParsedQuery | str:
    """The parse, or the error code when the parser refuses the question."""
    try:
        return parse(question)
    except VramfitError as exc:
        return exc.code


def score_understanding(row: dict[str, Any], parsed: ParsedQuery | str) -> dict[str, tuple[bool, Any]]:
    """Each field: (right, what was read)."""
    if isinstance(parsed, str):
        right = row["model"] == "unknown" and parsed == "unknown_model"
        return {"model": (right, parsed)} | {f: (right, parsed) for f in FIELDS[1:]}
    got = {
        "model": parsed.model,
        "gpus": [[choice.gpu.id, choice.count] for choice in parsed.gpus],
        "ram_gb": round(parsed.ram_bytes / GIB) if parsed.ram_bytes else None,
        "context": parsed.context,
        "quant": parsed.quant,
        "intent": parsed.intent,
        "asks_speed": getattr(parsed, "asks_speed", False),  # (a checkout from before speed questions has none)
    }
    return {field: (got[field] == row[field], got[field]) for field in FIELDS}
