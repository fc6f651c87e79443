"""The model's limit with the RoPE scaling its config declares: Qwen2.5's documented "add YaRN ×4 for 128K" reaches
4 × 32,768 = 131,072 tokens (vLLM derives max_model_len the same way); past the training context on that scaling the
card notes it, past the scaling it warns. Other kinds extend nothing (their max_position_embeddings already is the
scaled length)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from tests.bot.cli_json import from_config
from vramfit.bot.cli import run
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.presets import load_catalog

YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}


def _qwen25_7b(**extra: Any) -> dict[str, Any]:
    return {**load_catalog().models["qwen2.5-7b"].config, **extra}


def _card(config: dict[str, Any], tmp_path: Path, *argv: str) -> str:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    out = io.StringIO()
    assert run(["--config", str(path), *argv], out) == 0
    return out.getvalue()


@pytest.mark.parametrize(
    ("scaling", "limit"),
    [
        (YARN, 4 * 32768),
        ({**YARN, "type": "yarn", "rope_type": None}, 4 * 32768),  # the older key
        ({"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 8192}, 32768),  # 16K: not longer
        ({"rope_type": "linear", "factor": 8.0}, 32768),  # Gemma 3's kind: inside max_position_embeddings
        ({"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}, 32768),
        ({"rope_type": "yarn", "factor": "four", "original_max_position_embeddings": 32768}, 32768),  # malformed
        ({"rope_type": "yarn", "factor": 4.0}, 32768),  # no original length: nothing to multiply
        (None, 32768),
    ],
)
def test_the_limit_is_what_a_yarn_scaling_reaches(scaling: dict[str, Any] | None, limit: int) -> None:
    arch = from_hf_config(_qwen25_7b(rope_scaling=scaling))
    assert arch.context_length == 32768
    assert arch.context_limit == limit


def test_inside_the_scaling_the_card_notes_it_and_does_not_warn(tmp_path: Path) -> None:
    card = _card(_qwen25_7b(rope_scaling=YARN), tmp_path, "--context", "65536", "--gpu", "4090", "--lang", "en")
    assert "ℹ️ Past the 32,768 tokens" in card and "yarn ×4 RoPE scaling" in card and "(up to 131,072)" in card
    assert "⚠️" not in card.split("\n")[1]
    ko = _card(_qwen25_7b(rope_scaling=YARN), tmp_path, "--context", "65536", "--gpu", "4090", "--lang", "ko")
    assert "토큰 32,768개를 넘지만, config에 있는 yarn ×4 RoPE 스케일링 범위 안이에요 (최대 131,072)" in ko
    answer = from_config(_qwen25_7b(rope_scaling=YARN), tmp_path)
    assert answer["request"]["model"]["context_limit"] == 131072
    assert answer["request"]["model"]["context_length"] == 32768


def test_past_the_scaling_the_card_warns_in_both_languages(tmp_path: Path) -> None:
    config = _qwen25_7b(rope_scaling=YARN)
    en = _card(config, tmp_path, "--context", "200000", "--gpu", "h100", "--lang", "en")
    assert "⚠️ " in en and "was trained for 32,768 tokens and its yarn ×4 RoPE scaling reaches 131,072" in en
    ko = _card(config, tmp_path, "--context", "200000", "--gpu", "h100", "--lang", "ko")
    assert "토큰 32,768개까지 학습됐고 yarn ×4 RoPE 스케일링으로 131,072까지 늘어나요" in ko
    out = io.StringIO()
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    assert run(["--json", "--config", str(path), "--context", "200000", "--gpu", "h100"], out) == 0
    assert json.loads(out.getvalue())["warnings"] == ["beyond_trained_context"]


def test_without_scaling_the_warning_is_the_training_context_alone(tmp_path: Path) -> None:
    card = _card(_qwen25_7b(), tmp_path, "--context", "65536", "--gpu", "4090", "--lang", "en")
    assert "was trained for 32,768 tokens; past that its answers degrade." in card
    assert "RoPE" not in card


def test_the_largest_context_reaches_the_scaled_limit(tmp_path: Path) -> None:
    # On an H200 memory allows far more than 131,072 tokens of Qwen2.5 7B; the model's limit caps it there, not at
    # the 32,768 it was trained for.
    scaled = from_config(_qwen25_7b(rope_scaling=YARN), tmp_path)
    plain = from_config(_qwen25_7b(), tmp_path)
    assert scaled["request"]["model"]["context_limit"] == 131072
    path = tmp_path / "config.json"
    for config, limit in ((_qwen25_7b(rope_scaling=YARN), 131072), (_qwen25_7b(), 32768)):
        path.write_text(json.dumps(config), encoding="utf-8")
        out = io.StringIO()
        assert run(["--json", "--config", str(path), "--gpu", "h200"], out) == 0
        assert json.loads(out.getvalue())["fits"][0]["max_context"] == limit
    assert plain["request"]["model"]["context_limit"] == 32768
