"""An Ollama tag that is a preset's alias answers for the file that tag pulls (issue 24: ``llama3.2:1b`` is Ollama's
Q8_0 file, and was answered as Q4_K_M).

The expected quants are read off public copies of ollama.com's tag pages, where a tag and its quant-named sibling
share one manifest digest and size (auditomatic/ollama-models-registry data/models.json at 31464bb, 2026-08-21;
MarkWard0110/ollama-models agrees), or an ``ollama show`` posted in openai/codex#2293 (gpt-oss:20b):
  llama3.2:1b  = llama3.2:1b-instruct-q8_0   (1.3GB, baf6a787fdff)
  llama3.2:3b  = llama3.2:3b-instruct-q4_K_M (2.0GB, a80c4f17acd5)
  llama3:8b    = llama3:8b-instruct-q4_0     (4.7GB, 365c0bd3c000)
  gemma2:9b    = gemma2:9b-instruct-q4_0     (5.4GB)
  qwen3.5:2b   = qwen3.5:2b-q8_0             (2.7GB, 324d162be6ca)
  gpt-oss:20b  "quantization MXFP4" (llama.cpp's MXFP4_MOE file type)
"""

from __future__ import annotations

import pytest

from tests.bot.cli_json import run_json
from vramfit.bot.answering.cards import Card
from vramfit.bot.answering.service import CalcBackend
from vramfit.bot.sources.references import find_ollama_tag, ollama_tags_written
from vramfit.calc.presets import ModelPreset, load_catalog

ALIAS_TAGS = [
    ("llama3.2:1b on a 3060", "llama-3.2-1b", "Q8_0"),
    ("llama3.2:3b 32k 3060", "llama-3.2-3b", "Q4_K_M"),
    ("llama3:8b 8k on a 3060", "llama-3-8b", "Q4_0"),
    ("gemma2:9b on a 4060", "gemma-2-9b", "Q4_0"),
    ("qwen3.5:2b 16k", "qwen3.5-2b", "Q8_0"),
    ("gpt-oss:20b on a 4090", "gpt-oss-20b", "MXFP4_MOE"),
    ("라마3 말고 llama3.2:1b 3060에서 돼?", "llama-3.2-1b", "Q8_0"),
]


@pytest.mark.parametrize(("question", "model", "quant"), ALIAS_TAGS)
def test_the_terminal_answers_the_tags_own_quant(question: str, model: str, quant: str) -> None:
    request = run_json(question)["request"]
    assert (request["model"]["id"], request["quant"]) == (model, quant)
    assert "quant" not in request["assumed"]  # the tag says it


@pytest.mark.parametrize(("question", "model", "quant"), ALIAS_TAGS)
def test_the_bot_answers_the_tags_own_quant(question: str, model: str, quant: str) -> None:
    card = CalcBackend().answer(question, None, {})
    assert isinstance(card, Card)
    assert (card.model.id, card.assumptions.quant) == (model, quant)


def test_the_name_without_the_tag_keeps_the_general_default() -> None:
    assert run_json("llama 3.2 1b on a 3060")["request"]["quant"] == "Q4_K_M"
    assert run_json("llama3.2:1b on a 3060", "--quant", "Q6_K")["request"]["quant"] == "Q6_K"  # the flag wins


def test_a_quant_word_beside_the_tag_that_its_file_is_not_is_said() -> None:
    request = run_json("llama3.2:1b q4_k_m on a 3060")["request"]
    assert request["quant"] == "Q8_0" and request["unparsed"] == ["Q4_K_M"]  # as for any tag: one file


def test_a_tag_with_no_sourced_quant_is_read_from_the_registry() -> None:
    """granite4:tiny-h is a real library tag whose quant no public page gave: not an alias, so its file is read."""
    catalog = load_catalog()
    found = find_ollama_tag("granite4:tiny-h on a 3060", skip=lambda w: catalog.find_model(w) is not None)
    assert found is not None and found[0].name == "granite4:tiny-h"
    assert catalog.ollama_tag_quant("granite4:tiny-h") is None


def test_every_recorded_tag_is_an_alias_with_a_source() -> None:
    catalog = load_catalog()
    recorded = {tag: m for m in catalog.models.values() for tag in m.ollama_quants}
    assert len(recorded) >= 80
    assert all(tag in m.aliases and m.ollama_quants_source.count(tag + ":") >= 1 for tag, m in recorded.items())
    row = {"id": "x", "name": "X", "source": "s", "config": {}, "aliases": ["x:1b"]}
    with pytest.raises(ValueError, match="not one of its aliases"):
        ModelPreset(**row, ollama_quants={"y:1b": "Q8_0"}, ollama_quants_source="y:1b: somewhere")
    with pytest.raises(ValueError, match="without ollama_quants_source"):
        ModelPreset(**row, ollama_quants={"x:1b": "Q8_0"})
    with pytest.raises(ValueError):
        ModelPreset(**row, ollama_quants={"x:1b": "Q9_Z"}, ollama_quants_source="x:1b: somewhere")


def test_tags_written_leave_settings_out() -> None:
    assert ollama_tags_written("llama3.2:1b ctx:32k on a 3060, also someone/model:q8") == [
        "llama3.2:1b",
        "someone/model:q8",
    ]
    assert ollama_tags_written("no tag here") == []
