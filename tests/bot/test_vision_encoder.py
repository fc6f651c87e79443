"""A model whose config.json describes a vision encoder (Kimi K2.5, Gemma 3, Qwen3.5, Llama 4) is answered for its text
model, as llama.cpp converts it (the encoder goes to a separate mmproj file), and the answer says so: a line on the
terminal card and the Discord embed, in English and Korean, and ``request.model.vision_encoder`` in JSON. A text-only
model gets neither."""

from __future__ import annotations

import io
import json

import pytest

from tests.bot.test_new_architectures import PRESET_CONFIGS, VISION_BY_SOURCE, _config
from tests.groundtruth import DATA
from vramfit.bot.answering.cards import Card
from vramfit.bot.answering.configs import model_from_config
from vramfit.bot.answering.service import CalcBackend
from vramfit.bot.cli import run
from vramfit.bot.render.embed import render_card, render_math
from vramfit.calc.hf_config import declares_vision_encoder
from vramfit.calc.presets import load_catalog

CONFIGS = DATA / "configs"
LINE = {
    "en": "Vision encoder: not in these numbers; llama.cpp converts it to a separate mmproj file (--mmproj)",
    "ko": "비전 인코더: 이 수치에는 빠져 있어요. llama.cpp는 이를 별도의 mmproj 파일로 변환해요 (--mmproj)",
}
# Vision-language presets without a committed copy that shows it, each from its source: the Gemma 3 4B, 12B and 27B
# rows are the text_config of Gemma3ForConditionalGeneration's config (a SigLIP encoder); Llama 4 Scout as above;
# Mistral Small 3.2, Magistral Small 2509 ("Multimodality: The model now has a vision encoder") and Ministral 3 8B/14B
# from their model cards (the text-only copies the presets read drop the wrapper); HyperCLOVA X SEED Think 32B from
# the vision_config of its reconstructed config (configs-2026 SOURCES.md); Gemma 4 E4B from its config's
# vision_config; Gemma 4 E2B from transformers' conversion script (its vision_config, _ON_DEVICE_VISION_CONFIG).
BY_SOURCE = VISION_BY_SOURCE | {
    "gemma-3-4b", "gemma-3-12b", "gemma-3-27b", "mistral-small-3.2-24b", "magistral-small-2509-24b", "ministral-3-8b",
    "ministral-3-14b", "hyperclovax-seed-think-32b", "gemma-4-e4b", "gemma-4-e2b",
}  # fmt: skip


@pytest.mark.parametrize(
    ("file", "vision"),
    [
        ("Kimi-K2.5.json", True),  # MoonViT (vision_config) beside a kimi_k2 text_config
        ("Kimi-K2-Instruct.json", False),
        ("gemma-3-12b-it.json", True),
        ("gemma-3-4b-it.trimmed.json", False),  # the trimmed copy has no vision_config left to read
        ("Qwen3.5-9B.json", True),
        ("Llama-4-Maverick-17B-128E-Instruct.trimmed.json", True),
        ("Devstral-Small-2-24B-Instruct-2512.json", True),
        ("DeepSeek-V3.1.json", False),
        ("GLM-4.5-Air.json", False),
    ],
)
def test_a_config_with_a_vision_config_is_its_text_model_and_says_so(file: str, vision: bool) -> None:
    config = _config(file)
    assert ("vision_config" in config) == vision == declares_vision_encoder(config)
    model = model_from_config(config, fallback_name=file, source=str(CONFIGS / file))
    assert model.vision_encoder == vision


def test_the_presets_that_say_so_are_the_vision_language_models() -> None:
    from_copies = {pid for pid, file in PRESET_CONFIGS.items() if declares_vision_encoder(_config(file))}
    flagged = {m.id for m in load_catalog().models.values() if m.vision_encoder}
    assert "kimi-k2.5" in from_copies
    assert flagged == from_copies | BY_SOURCE


def _terminal(lang: str, *args: str) -> str:
    out = io.StringIO()
    assert run(["--lang", lang, *args], out) == 0, out.getvalue()
    return out.getvalue()


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize(
    ("args", "vision"),
    [
        (("--config", str(CONFIGS / "Kimi-K2.5.json"), "32k 8x h200"), True),
        (("kimi k2.5 32k 8x h200",), True),
        (("qwen3.5 27b 32k 3090",), True),  # no published projector size: the encoder is said not counted
        (("--config", str(CONFIGS / "Kimi-K2-Instruct.json"), "32k 8x h200"), False),
        (("kimi k2 instruct 32k 8x h200",), False),
    ],
)
def test_the_card_and_json_say_the_encoder_is_not_counted(lang: str, args: tuple[str, ...], vision: bool) -> None:
    text = _terminal(lang, *args)
    assert (LINE[lang] in text) == vision
    out = io.StringIO()
    assert run(["--json", *args], out) == 0
    model = json.loads(out.getvalue())["request"]["model"]
    assert model.get("vision_encoder", False) == vision
    assert "vision_encoder" in model or not vision  # the key is present only when true (docs/cli-json.md)


@pytest.mark.parametrize(("lang", "question"), [("en", "kimi k2.5 32k on 8x h200"), ("ko", "키미 k2.5 32k h200 8장")])
def test_the_embed_says_it_too(lang: str, question: str) -> None:
    card = CalcBackend().backend().answer(question, lang, {})
    assert isinstance(card, Card) and card.model.id == "kimi-k2.5" and card.model.vision_encoder
    card_line = {"en": "Vision encoder not counted (--mmproj)", "ko": "비전 인코더는 빠져 있어요 (--mmproj)"}[lang]
    assert "🖼️ " + card_line in render_card(card, lang).to_dict()["description"]
    assert "🖼️ " + LINE[lang] in (render_math(card, lang).description or "")  # whole, under "show the math"
