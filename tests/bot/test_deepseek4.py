"""DeepSeek V4 Flash and Pro end to end (deepseek_v4, llama.cpp's deepseek4). llama_kv_cache_dsv4 keeps one K-only
head of head_dim per token in a 128-token window in every layer, compressed rows of head_dim (one per 4 tokens in
the ratio-4 "CSA" layers, one per 128 in the ratio-128 "HCA" layers), the lightning indexer's keys beside the CSA
rows, and a compressor state that does not grow with the context. Expected numbers are worked out here from the
committed config.json copies and llama.cpp's rules (src/models/deepseek4.cpp, src/llama-kv-cache-dsv4.cpp at
0c1e57098); the measured rows are checked in tests/calc/test_kv.py and tests/calc/test_quant.py."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from tests.bot.cli_json import answer as ask
from tests.bot.cli_json import from_config
from tests.groundtruth import DATA
from vramfit.bot.cli import run
from vramfit.calc.errors import BadConfigError, UnsupportedArchitectureError
from vramfit.calc.hf_config import from_hf_config

CONFIGS = DATA / "configs"
FILES = {"deepseek-v4-flash": "DeepSeek-V4-Flash.json", "deepseek-v4-pro": "DeepSeek-V4-Pro.json"}


def _config(preset_id: str) -> dict[str, Any]:
    config: dict[str, Any] = json.loads((CONFIGS / FILES[preset_id]).read_text(encoding="utf-8"))
    return config


def _pad(n: int) -> int:
    return -(-n // 256) * 256


def _kv_by_hand(preset_id: str, context: int) -> int:
    """One sequence, f16, n_ubatch 512: every layer holds pad(128 + 512) = 768 window cells of head_dim; the ratio-4
    layers pad(context / 4) rows of head_dim plus as many indexer keys of index_head_dim; the ratio-128 layers
    pad(context / 128) rows of head_dim. The config lists one ratio more than it has layers (the MTP block's)."""
    c = _config(preset_id)
    ratios = c["compress_ratios"][: c["num_hidden_layers"]]
    head, index = c["head_dim"], c["index_head_dim"]
    window = c["num_hidden_layers"] * _pad(c["sliding_window"] + 512) * head
    csa = ratios.count(4) * _pad(context // 4) * (head + index)
    hca = ratios.count(128) * _pad(context // 128) * head
    return 2 * (window + csa + hca)


def _state_by_hand(c: dict[str, Any]) -> int:
    """f32 kv and score planes per compressing layer: CSA 2·head_dim × 8 plus the indexer's 2·index_head_dim × 8,
    HCA head_dim × 128."""
    ratios = c["compress_ratios"][: c["num_hidden_layers"]]
    csa = 2 * (2 * c["head_dim"] * 8 + 2 * c["index_head_dim"] * 8) * 4
    hca = 2 * (c["head_dim"] * 128) * 4
    return ratios.count(4) * csa + ratios.count(128) * hca


def _params_by_hand(c: dict[str, Any]) -> int:
    """llama_model_n_params of the GGUF DeepseekV4Model writes (no MTP block: mtp.* is left out of the main file)."""
    e, heads, vocab, head = c["hidden_size"], c["num_attention_heads"], c["vocab_size"], c["head_dim"]
    q_lora, groups, o_lora = c["q_lora_rank"], c["o_groups"], c["o_lora_rank"]
    hc = c["hc_mult"]
    mix = (2 + hc) * hc
    attention = (
        2 * e + heads  # attn_norm, ffn_norm, attn_sinks
        + e * q_lora + q_lora + q_lora * heads * head  # q_a, q_a_norm, q_b
        + e * head + head  # attn_kv, its norm
        + heads * head * o_lora  # attn_output_a: (heads × head / groups) × (o_lora × groups)
        + groups * o_lora * e  # attn_output_b
        + 2 * (hc * e * mix + mix + 3)  # hc_attn / hc_ffn: fn, base, scale
    )  # fmt: skip
    ih, idim = c["index_n_heads"], c["index_head_dim"]
    csa = 2 * e * 2 * head + 2 * head * 4 + head  # compressor kv + gate (2 × head wide), ape {2 × head, 4}, norm
    csa += e * ih + q_lora * ih * idim + 2 * e * 2 * idim + 2 * idim * 4 + idim  # the indexer and its compressor
    hca = 2 * e * head + head * 128 + head
    experts, width, used = c["n_routed_experts"], c["moe_intermediate_size"], c["num_experts_per_tok"]
    moe = e * experts + 3 * e * width * experts + 3 * e * width * c["n_shared_experts"]
    layers, n_hash = c["num_hidden_layers"], c["num_hash_layers"]
    ratios = c["compress_ratios"][:layers]
    routing = n_hash * used * vocab + (layers - n_hash) * experts  # tid2eid, or exp_probs_b
    total = layers * (attention + moe) + ratios.count(4) * csa + ratios.count(128) * hca + routing
    return total + 2 * vocab * e + e + hc * e * hc + hc + 1  # token_embd, output, output_norm, output_hc_*


def test_the_flash_config_gives_parameters_and_kv_worked_out_by_hand() -> None:
    """``vram --json --config tests/data/configs/DeepSeek-V4-Flash.json``: 284.33 B parameters, and at 8,192 tokens
    a 768-cell window in 43 layers, 2,048 CSA rows (+ indexer keys) in 21 layers and 256 HCA rows in 20."""
    out = io.StringIO()
    assert run(["--json", "--config", str(CONFIGS / "DeepSeek-V4-Flash.json")], out) == 0
    answer = json.loads(out.getvalue())
    c = _config("deepseek-v4-flash")
    assert answer["estimate"]["params"] == answer["request"]["model"]["params"] == _params_by_hand(c)
    assert _params_by_hand(c) == 284_334_567_511
    assert answer["request"]["context"] == 8192
    window = 43 * 768 * 512 * 2  # 33.0 MiB, the same at any context
    csa = 21 * 2048 * (512 + 128) * 2  # 52.5 MiB
    hca = 20 * 256 * 512 * 2  # 5.0 MiB: pad(8192 / 128 = 64, 256) rows
    assert answer["estimate"]["kv_cache_bytes"] == window + csa + hca == _kv_by_hand("deepseek-v4-flash", 8192)
    assert answer["estimate"]["kv_v_bytes"] == 0  # K only
    # per token of context beyond that: 21 × (512 + 128) × 2 / 4 + 20 × 512 × 2 / 128 = 6,880 bytes
    assert answer["estimate"]["recurrent_state_bytes"] == _state_by_hand(c) == 21 * (65536 + 16384) + 20 * 524288


@pytest.mark.parametrize("preset_id", sorted(FILES))
def test_each_config_gives_its_presets_parameters(preset_id: str, tmp_path: Path) -> None:
    estimate = from_config(_config(preset_id), tmp_path)["estimate"]
    assert estimate["params"] == _params_by_hand(_config(preset_id))
    assert estimate["kv_cache_bytes"] == _kv_by_hand(preset_id, 8192)


@pytest.mark.parametrize(
    ("question", "lang", "preset_id", "context"),
    [
        ("deepseek v4 flash 128k on 4x h200", "en", "deepseek-v4-flash", 131072),
        ("딥시크 v4 플래시 128k h200 4장에서 돌아가?", "ko", "deepseek-v4-flash", 131072),
        ("DeepSeek-V4-Pro 1M context on 8x b200", "en", "deepseek-v4-pro", 1048576),
        ("딥시크 v4 프로 32k b200 8장이면 돼?", "ko", "deepseek-v4-pro", 32768),
    ],
)
def test_questions_name_the_presets(question: str, lang: str, preset_id: str, context: int) -> None:
    answer = ask(question, lang)
    assert (answer["request"]["model"]["id"], answer["lang"]) == (preset_id, lang)
    assert answer["request"]["context"] == context
    assert answer["estimate"]["kv_cache_bytes"] == _kv_by_hand(preset_id, context)


def test_a_million_tokens_of_flash_is_under_7_gib() -> None:
    """At 1,048,576 tokens: 43 × 768 window cells, 21 × 262,144 CSA rows and 20 × 8,192 HCA rows, f16: 6.75 GiB,
    where the textbook 2 × 43 × 1 × 512 × tokens × 2 bytes says 86 GiB."""
    assert _kv_by_hand("deepseek-v4-flash", 1048576) == 7_248_019_456


def test_the_file_has_no_mtp_block_and_hash_layers_have_no_bias() -> None:
    from vramfit.calc.tensors import gguf_tensors

    c = _config("deepseek-v4-flash")
    names = {t.name for t in gguf_tensors(from_hf_config(c))}
    assert not any(name.startswith("blk.43.") or ".nextn." in name for name in names)
    assert {"blk.2.ffn_gate_tid2eid.weight", "blk.3.exp_probs_b.bias"} <= names
    assert "blk.2.exp_probs_b.bias" not in names and "blk.3.ffn_gate_tid2eid.weight" not in names
    assert "blk.2.indexer.proj.weight" in names and "blk.3.indexer.proj.weight" not in names  # CSA, HCA
    assert "blk.1.attn_compressor_kv.weight" not in names  # ratio 0: the window only


@pytest.mark.parametrize(
    ("change", "error", "field"),
    [
        ({"compress_ratios": [0, 4, 16] * 15}, UnsupportedArchitectureError, "compress_ratios"),
        ({"compress_ratios": [0, 4]}, BadConfigError, "compress_ratios"),
        ({"scoring_func": "sigmoid"}, UnsupportedArchitectureError, "scoring_func"),
    ],
)
def test_what_llama_cpp_would_not_load_is_refused(change: dict[str, Any], error: type[Exception], field: str) -> None:
    with pytest.raises(error) as exc:
        from_hf_config({**_config("deepseek-v4-flash"), **change})
    assert exc.value.details["field"] == field


@pytest.mark.parametrize(
    ("question", "label", "other"),
    [
        ("deepseek v4 flash 32k on a 4090", "Compressor state", "Recurrent state"),
        ("딥시크 v4 플래시 32k 4090에서 돌아가?", "압축기 상태", "순환 상태"),
        ("qwen3.5 9b 32k on a 3060", "Recurrent state", "Compressor state"),  # a hybrid model's state keeps its name
    ],
)
def test_the_card_names_deepseek_v4s_fixed_state_for_what_it_is(question: str, label: str, other: str) -> None:
    """DeepSeek V4's per-sequence buffers are its KV compressor's (llama_dsv4_comp_state), not a recurrent layer's."""
    out = io.StringIO()
    assert run([question], out) == 0
    text = out.getvalue()
    assert label in text and other not in text
