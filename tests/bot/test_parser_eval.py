"""Every row of tests/data/eval/queries_public.jsonl parses exactly, against the shipped catalog."""

from __future__ import annotations

from typing import Any

import pytest

from tests.groundtruth import eval_rows
from vramfit.bot.parser import parse
from vramfit.calc.gpu import GIB
from vramfit.calc.presets import load_catalog
from vramfit.calc.tensors import count_params

ROWS = list(eval_rows())


@pytest.mark.parametrize("row", ROWS, ids=[r["q"] for r in ROWS])
def test_eval_row(row: dict[str, Any]) -> None:
    catalog = load_catalog()
    parsed = parse(row["q"], catalog)
    request = parsed.to_request()

    assert parsed.lang == row["lang"]

    expected_model = row["model"]
    assert parsed.model is not None, "no model read"
    arch = catalog.models[parsed.model].architecture
    assert arch.n_layers == expected_model["layers"], parsed.model
    params_b = count_params(arch) / 1e9
    assert params_b == pytest.approx(expected_model["params_b"], rel=0.02), parsed.model

    if row["quant"] is None:
        assert parsed.quant is None
        assert "quant" in parsed.assumed
    else:
        assert parsed.quant in row["quant"]

    if row["context"] is None:
        assert parsed.context is None
        assert "context" in parsed.assumed
        assert request.context == 8192
    else:
        assert parsed.context in row["context"]

    assert request.users == row["users"]
    if parsed.users is None:
        assert "users" in parsed.assumed

    if row["kv"] is None:
        assert parsed.kv_cache is None
        assert "kv_cache" in parsed.assumed
    else:
        assert parsed.kv_cache is not None and parsed.kv_cache.value in row["kv"]

    assert len(parsed.gpus) == len(row["gpus"])
    for choice, expected in zip(parsed.gpus, row["gpus"], strict=True):
        assert choice.gpu.memory_bytes / GIB in expected["mem_gib"], choice.gpu.id
        assert choice.count == expected["count"]
