"""The command a card prints, run with llama-server b11434 itself: the KV cache, recurrent state, slots and outputs it
allocated are what the card counts (rows: tests/data/groundtruth/llamaserver_b11434.jsonl, written by
tools/llamacpp_truth/measure_server.py on a CPU build of llama.cpp 515e855)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from tests.groundtruth import MIB, llamaserver_rows
from vramfit.bot.cli import run
from vramfit.calc.compute import server_outputs

ROWS = llamaserver_rows()


def _row_id(row: dict[str, Any]) -> str:
    return f"{row['model']}-{row['context']}x{row['users']}"


def _answer(row: dict[str, Any], folder: Path) -> dict[str, Any]:
    config = folder / f"{row['model']}.config.json"  # the file name the measured command's -m was made from
    config.write_text(json.dumps(row["config"]), encoding="utf-8")
    out = io.StringIO()
    argv = ["--json", "--config", str(config), "--quant", "F16", "--context", str(row["context"]),
            "--users", str(row["users"]), "--gpu", "b200"]  # fmt: skip
    assert run(argv, out) == 0, out.getvalue()[-500:]
    answer: dict[str, Any] = json.loads(out.getvalue())
    return answer


@pytest.mark.parametrize("row", ROWS, ids=_row_id)
def test_the_command_on_the_card_allocates_what_the_card_counts(row: dict[str, Any], tmp_path: Path) -> None:
    answer = _answer(row, tmp_path)
    logged = row["log"]
    # the command the card prints today is the one that was measured
    assert answer["commands"]["llama_server"] == row["command"]
    # one slot a user, named in the command: llama-server b11434 opens 4 when it names none
    assert logged["n_seq"] == row["users"] and f"-np {row['users']}" in row["command"]
    assert logged["n_outputs_max"] == row["users"]  # llama-server reserves one output a slot
    estimate = answer["estimate"]
    assert round(estimate["kv_cache_bytes"] / MIB, 2) == logged["kv_mib"]
    assert round(estimate.get("recurrent_state_bytes", 0) / MIB, 2) == (logged["recurrent_mib"] or 0)
    # the compute buffer is sized for the outputs llama-server logged (one a slot: the command names the slots)
    assert server_outputs(row["users"]) == logged["n_outputs_max"]


def test_the_rows_cover_the_kinds_of_memory_and_both_slot_counts() -> None:
    models = {row["model"] for row in ROWS}
    assert {row["users"] for row in ROWS} == {1, 4}
    assert any(row["log"]["recurrent_mib"] for row in ROWS)  # hybrid models
    assert len(models) >= 6
    writer = "tools/llamacpp_truth/measure_server.py"
    assert all(row["revision"] == "b11434" and row["writer"] == writer for row in ROWS)
