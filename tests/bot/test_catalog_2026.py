"""The presets added for models people ask about (Llama 2, Mistral Small 3.2, Magistral Small 1.2, Ministral 3 8B and
14B, HyperCLOVA X SEED Think 32B, GLM-4.6, MiniMax M2 and M2.1, Phi-4-reasoning, Nemotron Nano v2 and Nemotron-H):
an English and a Korean question reach each one, and the KV cache of a few of them equals the one worked out here
from the committed config.json (tests/data/configs/, copied from the sources each preset's source_note names)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from vramfit.bot.cli import run

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "configs"
GIB = 1024**3


def _run(question: str, lang: str) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    status = run(["--json", "--lang", lang, question], out)
    result: dict[str, Any] = json.loads(out.getvalue())
    return status, result


def _answer(question: str, lang: str) -> dict[str, Any]:
    status, result = _run(question, lang)
    assert status == 0, result
    return result


def _text_config(name: str) -> dict[str, Any]:
    """The text model's keys of a committed config.json (a multimodal checkpoint's text_config)."""
    data: dict[str, Any] = json.loads((CONFIGS / name).read_text(encoding="utf-8"))
    text: dict[str, Any] = data.get("text_config", data)
    return text


@pytest.mark.parametrize(
    ("question", "lang", "model_id"),
    [
        ("llama 2 7b on a 3060", "en", "llama-2-7b"),
        ("라마2 7b 3060에서 돌아가?", "ko", "llama-2-7b"),
        ("llama2:7b on a 3060", "en", "llama-2-7b"),
        ("llama 2 13b on a 3090", "en", "llama-2-13b"),
        ("라마2 13b 4090에서 돌아가?", "ko", "llama-2-13b"),
        ("llama 2 70b on two 3090s", "en", "llama-2-70b"),
        ("라마2 70b 3090 두 장에서 돌아가?", "ko", "llama-2-70b"),
        ("mistral small 3.2 on a 3090", "en", "mistral-small-3.2-24b"),
        ("Mistral-Small-3.2-24B-Instruct-2506 on a 4090", "en", "mistral-small-3.2-24b"),
        ("미스트랄 스몰 3.2 4090에서 돌아가?", "ko", "mistral-small-3.2-24b"),
        ("magistral small on a 4090", "en", "magistral-small-2509-24b"),
        ("마기스트랄 4090에서 돌아가?", "ko", "magistral-small-2509-24b"),
        ("ministral 3 8b on a 3060", "en", "ministral-3-8b"),
        ("미니스트랄 3 8b 3060에서 돌아가?", "ko", "ministral-3-8b"),
        ("ministral 3 14b on a 4070 ti super", "en", "ministral-3-14b"),
        ("미니스트랄3 14b 4080에서 돌아가?", "ko", "ministral-3-14b"),
        ("hyperclova x seed think 32b on a 4090", "en", "hyperclovax-seed-think-32b"),
        ("하이퍼클로바 x 씽크 32b 4090에서 돌아가?", "ko", "hyperclovax-seed-think-32b"),
        ("glm 4.6 on 4x h100", "en", "glm-4.6"),
        ("지엘엠 4.6 h100 4장에서 돌아가?", "ko", "glm-4.6"),
        ("minimax m2 on 4x h100", "en", "minimax-m2"),
        ("미니맥스 m2 h100 4장에서 돌아가?", "ko", "minimax-m2"),
        ("minimax m2.1 on 4x h100", "en", "minimax-m2.1"),
        ("미니맥스 m2.1 h100 4장에서 돌아가?", "ko", "minimax-m2.1"),
        ("phi 4 reasoning on a 4090", "en", "phi-4-reasoning"),
        ("파이4 리즈닝 4090에서 돌아가?", "ko", "phi-4-reasoning"),
        ("nemotron nano 9b v2 on a 3060", "en", "nemotron-nano-9b-v2"),
        ("네모트론 나노 9b 3060에서 돌아가?", "ko", "nemotron-nano-9b-v2"),
        ("nemotron nano 12b v2 on a 3090", "en", "nemotron-nano-12b-v2"),
        ("네모트론 나노 12b v2 3090에서 돌아가?", "ko", "nemotron-nano-12b-v2"),
        ("nemotron-h 8b on a 3060", "en", "nemotron-h-8b"),
        ("네모트론 h 8b 3060에서 돌아가?", "ko", "nemotron-h-8b"),
        ("nemotron h 47b on an a100 80gb", "en", "nemotron-h-47b"),
        ("네모트론 h 47b a100 80gb에서 돌아가?", "ko", "nemotron-h-47b"),
    ],
)
def test_a_question_reaches_the_new_preset(question: str, lang: str, model_id: str) -> None:
    assert _answer(question, lang)["request"]["model"]["id"] == model_id


@pytest.mark.parametrize(("question", "lang"), [("llama 2 7b on a 3060", "en"), ("라마 2 7b 3060에서 돌아가?", "ko")])
def test_llama_2_7b_is_no_longer_one_of_several_llamas(question: str, lang: str) -> None:
    status, result = _run(question, lang)
    assert status == 0 and "error" not in result, result
    assert "several" not in json.dumps(result)
    assert result["request"]["model"]["id"] == "llama-2-7b"
    assert result["request"]["model"]["context_length"] == 4096  # Llama 2's max_position_embeddings


@pytest.mark.parametrize(
    ("question", "model_id", "context"),
    [
        ("mistral small on a 3090", "mistral-small-24b", 32768),  # the 2501 release keeps its row
        ("mistral small 3.2 on a 3090", "mistral-small-3.2-24b", 131072),
    ],
)
def test_mistral_small_3_2_is_its_own_preset(question: str, model_id: str, context: int) -> None:
    model = _answer(question, "en")["request"]["model"]
    assert (model["id"], model["context_length"]) == (model_id, context)


def _full_attention_kv(config: dict[str, Any], context: int) -> int:
    """K and V of every layer in f16: layers × context × 2 × kv_heads × head_dim × 2 bytes."""
    head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    return config["num_hidden_layers"] * context * 2 * config["num_key_value_heads"] * head_dim * 2


@pytest.mark.parametrize(
    ("question", "lang", "model_id", "config", "context", "gib"),
    [
        # 32 layers × 4,096 × 2 × 32 KV heads × 128 × 2 B (no GQA in Llama 2 7B)
        ("llama 2 7b 4k on a 3060", "en", "llama-2-7b", "Llama-2-7b-hf.json", 4096, 2.0),
        ("라마2 7b 4k 3060에서 돌아가?", "ko", "llama-2-7b", "Llama-2-7b-hf.json", 4096, 2.0),
        # 80 layers × 4,096 × 2 × 8 KV heads × 128 × 2 B
        ("llama 2 70b 4k on 2x 3090", "en", "llama-2-70b", "Llama-2-70b-hf.json", 4096, 1.25),
        # 40 layers × 32,768 × 2 × 8 × 128 × 2 B
        ("mistral small 3.2 32k on a 4090", "en", "mistral-small-3.2-24b", "Mistral-Small-3.2-24B-Instruct-2506.json",
         32768, 5.0),
        ("미스트랄 스몰 3.2 32k 4090에서 돌아가?", "ko", "mistral-small-3.2-24b",
         "Mistral-Small-3.2-24B-Instruct-2506.json", 32768, 5.0),
        # 40 layers × 16,384 × 2 × 10 KV heads × 128 × 2 B
        ("phi 4 reasoning 16k on a 4090", "en", "phi-4-reasoning", "Phi-4-reasoning.json", 16384, 3.125),
        # 92 layers (the MTP layer caches nothing) × 32,768 × 2 × 8 × 128 × 2 B
        ("glm 4.6 32k on 4x h100", "en", "glm-4.6", "GLM-4.6.json", 32768, 11.5),
        # 72 layers × 32,768 × 2 × 8 × 128 × 2 B
        ("hyperclova x seed think 32b 32k on a 5090", "en", "hyperclovax-seed-think-32b",
         "HyperCLOVAX-SEED-Think-32B.json", 32768, 9.0),
    ],
)  # fmt: skip
def test_full_attention_kv_cache_is_worked_out_from_the_config(
    question: str, lang: str, model_id: str, config: str, context: int, gib: float
) -> None:
    c = _text_config(config)
    answer = _answer(question, lang)
    model = answer["request"]["model"]
    assert model["id"] == model_id
    assert (model["layers"], model["kv_heads"]) == (c["num_hidden_layers"], c["num_key_value_heads"])
    assert answer["request"]["context"] == context
    assert answer["estimate"]["kv_cache_bytes"] == _full_attention_kv(c, context) == int(gib * GIB)


def test_nemotron_nano_9b_v2_caches_only_its_attention_layers() -> None:
    """Nemotron-H: '*' in hybrid_override_pattern is an attention layer (4 of 56); the Mamba-2 ('M') and MLP ('-')
    layers hold no KV cache."""
    c = _text_config("NVIDIA-Nemotron-Nano-9B-v2.json")
    attention_layers = c["hybrid_override_pattern"].count("*")
    assert attention_layers == 4 and len(c["hybrid_override_pattern"]) == c["num_hidden_layers"] == 56
    context = 131072
    by_hand = attention_layers * context * 2 * c["num_key_value_heads"] * c["head_dim"] * 2
    answer = _answer("nemotron nano 9b v2 128k on a 3060", "en")
    assert answer["request"]["model"]["id"] == "nemotron-nano-9b-v2"
    assert answer["request"]["context"] == context
    assert answer["estimate"]["kv_cache_bytes"] == by_hand == 2 * GIB
    assert answer["estimate"]["recurrent_state_bytes"] > 0  # the Mamba-2 layers keep a state instead
