"""DeepSeek V3.2 end to end: MLA's latent cache plus the DSA lightning indexer's keys (llama_kv_cache_dsa: one
head of index_head_dim per token and layer, K only), and the NextN/MTP block in the file but not loaded. Expected
numbers are worked out here from the committed config.json and llama.cpp's rules (src/models/deepseek32.cpp,
src/llama-kv-cache-dsa.cpp at 0c1e57098)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.bot.cli_json import answer as ask
from tests.bot.cli_json import from_config
from tests.groundtruth import DATA
from vramfit.calc.hf_config import from_hf_config

CONFIG = DATA / "configs" / "DeepSeek-V3.2.json"


def _config() -> dict[str, Any]:
    config: dict[str, Any] = json.loads(CONFIG.read_text(encoding="utf-8"))
    return config


def _kv_by_hand(context: int, users: int = 1) -> int:
    """Every trunk layer caches kv_lora_rank + qk_rope_head_dim latent values and index_head_dim indexer values per
    token, f16; the MTP block (num_nextn_predict_layers) gets no cells."""
    c = _config()
    per_token = c["kv_lora_rank"] + c["qk_rope_head_dim"] + c["index_head_dim"]  # 512 + 64 + 128
    return c["num_hidden_layers"] * context * users * per_token * 2


@pytest.mark.parametrize(
    ("question", "lang", "context"),
    [
        ("deepseek v3.2 32k on 8x h200", "en", 32768),
        ("딥시크 v3.2 32k h200 8장에서 돌아가?", "ko", 32768),
        ("DeepSeek-V3.2-Exp 128k on 8x b200", "en", 131072),
        ("deepseek 3.2 on a mac studio m3 ultra 512gb", "en", 8192),
    ],
)
def test_deepseek_v32_caches_the_latent_and_the_indexer_keys(question: str, lang: str, context: int) -> None:
    answer = ask(question, lang)
    assert answer["request"]["model"]["id"] == "deepseek-v3.2"
    assert answer["estimate"]["kv_cache_bytes"] == _kv_by_hand(context)


def test_the_indexer_cache_is_what_sets_v32_apart_from_v3() -> None:
    v3 = ask("deepseek v3 32k on 8x h200")["estimate"]["kv_cache_bytes"]
    v32 = ask("deepseek v3.2 32k on 8x h200")["estimate"]["kv_cache_bytes"]
    assert v32 - v3 == 61 * 32768 * 128 * 2  # one 128-value indexer key per token and layer


def test_the_mtp_block_is_in_the_file_but_not_loaded() -> None:
    from vramfit.calc.file_types import FileType
    from vramfit.calc.tensors import gguf_tensors
    from vramfit.calc.weights import weight_bytes

    c = _config()
    arch = from_hf_config(c)
    names = {t.name for t in gguf_tensors(arch)}
    mtp = c["num_hidden_layers"]  # blk.61: the converter's block_count is 61 + num_nextn_predict_layers
    assert {
        f"blk.{mtp}.nextn.eh_proj.weight",
        f"blk.{mtp}.indexer.attn_q_b.weight",
        "blk.0.indexer.proj.weight",
    } <= names
    assert f"blk.{mtp + 1}.attn_norm.weight" not in names
    assert "blk.3.exp_probs_b.bias" in names and "blk.2.exp_probs_b.bias" not in names  # noaux_tc, after 3 dense
    w = weight_bytes(arch, FileType.Q4_K_M)
    assert len(w.layer_bytes) == 61
    assert w.gpu_bytes + w.host_bytes < w.tensor_bytes


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"kv_lora_rank": None}, "kv_lora_rank"),
        ({"index_head_dim": 0}, "index_head_dim"),
        ({"index_n_heads": None}, "index_n_heads"),
    ],
)
def test_a_broken_v32_config_is_an_error_naming_the_field(change: dict[str, Any], field: str, tmp_path: Path) -> None:
    config = {**_config(), **change}
    error = from_config({k: v for k, v in config.items() if v is not None}, tmp_path)["error"]
    assert error["code"] == "bad_config"
    assert field in error["message"]


def test_the_config_alone_gives_the_presets_kv(tmp_path: Path) -> None:
    estimate = from_config(_config(), tmp_path)["estimate"]
    assert estimate["kv_cache_bytes"] == _kv_by_hand(8192)
