"""The question-understanding set (tests/data/eval/queries_understanding.jsonl, written by hand): well formed, at
least 150 questions, half Korean, every id a real catalog entry; and each question read as its row says, field by
field (benchmarks/question_understanding.py prints the same as a table)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.understanding import FIELDS, read, rows, score_understanding
from vramfit.calc.presets import load_catalog

ROWS: list[dict[str, Any]] = rows("queries_understanding.jsonl")


def test_the_set_is_large_half_korean_and_names_real_entries() -> None:
    catalog = load_catalog()
    assert len(ROWS) >= 150
    assert 2 * sum(row["lang"] == "ko" for row in ROWS) >= len(ROWS)
    for row in ROWS:
        assert set(FIELDS) <= set(row), row["q"]
        assert row["model"] in (None, "unknown") or row["model"] in catalog.models, row["q"]
        assert all(gpu in catalog.gpus or gpu.startswith("generic-") for gpu, _ in row["gpus"]), row["q"]


@pytest.mark.parametrize("row", ROWS, ids=[row["q"] for row in ROWS])
def test_each_question_is_read_as_written(row: dict[str, Any]) -> None:
    scores = score_understanding(row, read(row["q"]))
    wrong = {field: got for field, (right, got) in scores.items() if not right}
    assert not wrong, wrong
