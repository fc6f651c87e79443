"""Llama 4 Scout and Maverick end to end: chunked attention on three of four layers (8192-token chunks, cached as a
sliding window is), MoE with one shared expert on every layer (Scout) or every second layer (Maverick). Expected
numbers are worked out here from the committed config.json copies and llama.cpp's rules (src/models/llama4.cpp,
llama-kv-cache-iswa.cpp at 0c1e57098), not taken from the calculator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.bot.cli_json import answer as ask
from tests.bot.cli_json import from_config
from tests.groundtruth import DATA, GIB

CONFIGS = DATA / "configs"
SCOUT = "Llama-4-Scout-17B-16E-Instruct.trimmed.json"
MAVERICK = "Llama-4-Maverick-17B-128E-Instruct.trimmed.json"
CHUNK, UBATCH = 8192, 512


def _text_config(name: str) -> dict[str, Any]:
    config: dict[str, Any] = json.loads((CONFIGS / name).read_text(encoding="utf-8"))["text_config"]
    return config


def _kv_by_hand(name: str, context: int, users: int = 1) -> int:
    """Full layers (every fourth) cache the context; chunked layers min(context, chunk × users + n_ubatch) cells
    padded to 256 (unified KV); K and V of 8 heads × 128 in f16."""
    c = _text_config(name)
    layers = c["num_hidden_layers"]
    full = layers // 4
    chunk_cells = min(context * users, CHUNK * users + UBATCH)
    chunk_cells = -(-chunk_cells // 256) * 256
    per_cell = 2 * c["num_key_value_heads"] * c["head_dim"] * 2
    return (full * context * users + (layers - full) * chunk_cells) * per_cell


def _params_by_hand(name: str) -> int:
    c = _text_config(name)
    e, v, hd = c["hidden_size"], c["vocab_size"], c["head_dim"]
    heads, kv, ne = c["num_attention_heads"], c["num_key_value_heads"], c["num_local_experts"]
    fe, ff, step = c["intermediate_size"], c["intermediate_size_mlp"], c["interleave_moe_layer_step"]
    total = 2 * v * e + e  # token_embd, output (not tied), output_norm
    if (c.get("rope_scaling") or {}).get("rope_type") == "llama3":
        total += hd // 2  # rope_freqs
    for il in range(c["num_hidden_layers"]):
        total += 2 * e + e * heads * hd * 2 + e * kv * hd * 2  # norms, q and o, k and v
        if (il + 1) % step == 0:
            total += e * ne + 3 * e * fe * ne + 3 * e * fe  # router, experts, shared expert
        else:
            total += 3 * e * ff
    return total


@pytest.mark.parametrize(
    ("question", "lang", "preset_id", "file", "context"),
    [
        ("llama 4 scout on 2x 3090", "en", "llama-4-scout", SCOUT, 8192),
        ("라마4 스카웃 2x 3090에서 돌아가?", "ko", "llama-4-scout", SCOUT, 8192),
        ("llama4:scout 32k on a 5090 with 64gb ram", "en", "llama-4-scout", SCOUT, 32768),
        ("라마 4 스카우트 128k h100 2장", "ko", "llama-4-scout", SCOUT, 131072),
        ("llama 4 maverick 32k on 4x h100", "en", "llama-4-maverick", MAVERICK, 32768),
        ("라마4 매버릭 32k h200 4장에서 돌아가?", "ko", "llama-4-maverick", MAVERICK, 32768),
    ],
)
def test_llama4_chunked_layers_cache_one_chunk(
    question: str, lang: str, preset_id: str, file: str, context: int
) -> None:
    answer = ask(question, lang)
    assert answer["request"]["model"]["id"] == preset_id
    assert answer["estimate"]["kv_cache_bytes"] == _kv_by_hand(file, context)
    assert answer["estimate"]["params"] == _params_by_hand(file)


def test_scout_at_32k_is_less_than_half_of_what_the_naive_formula_says() -> None:
    # 12 full layers × 32,768 + 36 chunked × 8,704 cells, against 48 × 32,768.
    kv = _kv_by_hand(SCOUT, 32768)
    assert kv == (12 * 32768 + 36 * 8704) * 4096
    assert kv / (48 * 32768 * 4096) < 0.6


def test_scout_does_not_fit_two_3090s_and_gets_an_expert_offload_plan() -> None:
    answer = ask("llama 4 scout on 2x 3090")
    fit = answer["fits"][0]
    # 107.77B parameters at Q4_K_M are more than 48 GB on their own.
    assert answer["estimate"]["params"] == _params_by_hand(SCOUT) == 107_769_861_184
    assert fit["verdict"] == "partial"
    plan = fit["expert_offload"]
    assert plan["expert_blocks"] == 48 and 0 < plan["n_cpu_moe"] < 48
    assert plan["gpu_bytes"] <= fit["usable_bytes"]


def test_maverick_alternates_dense_and_moe_layers() -> None:
    # 24 MoE layers of 128 experts and 24 dense ones: about 400B parameters as Meta states.
    assert 400e9 < _params_by_hand(MAVERICK) < 401e9
    assert ask("llama 4 maverick on 8x h100")["estimate"]["params"] == _params_by_hand(MAVERICK)


def test_a_llama4_config_without_experts_is_an_error(tmp_path: Path) -> None:
    config = json.loads((CONFIGS / SCOUT).read_text(encoding="utf-8"))
    config["text_config"]["num_local_experts"] = 0
    assert from_config(config, tmp_path)["error"]["code"] == "bad_config"


def test_the_scout_config_through_config_gives_the_presets_numbers(tmp_path: Path) -> None:
    from_file = from_config(json.loads((CONFIGS / SCOUT).read_text(encoding="utf-8")), tmp_path)
    assert from_file["estimate"]["params"] == _params_by_hand(SCOUT)
    assert from_file["estimate"]["kv_cache_bytes"] == _kv_by_hand(SCOUT, 8192) == int(1.5 * GIB)
