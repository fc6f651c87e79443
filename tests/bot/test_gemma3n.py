"""Gemma 3n E2B and E4B (gemma3n): AltUp and Laurel blocks, per-layer embeddings kept in system RAM with token_embd,
and KV sharing: llama.cpp gives only the first 20 layers a cache (4 global, 16 sliding of 512 tokens), whatever the
model's depth. Worked out here from the committed configs, by hand, and checked against llama.cpp's own loads
(src/models/gemma3n.cpp at 0c1e57098; every row is also checked with the others in tests/calc/test_kv.py and
tests/calc/test_quant.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.bot.cli_json import answer as ask
from tests.bot.cli_json import refused_config
from tests.groundtruth import DATA, MIB, llamacpp_rows
from vramfit.calc.file_types import FileType
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.tensors import gguf_tensors
from vramfit.calc.weights import weight_bytes


def _text(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / "configs" / f"gemma-3n-{name}-it.json").read_text(encoding="utf-8"))
    return data["text_config"]  # type: ignore[no-any-return]


E2B, E4B = _text("E2B"), _text("E4B")
ROWS = {
    (row["arch_model"], row["quant"]): row
    for row in llamacpp_rows()
    if row["llama_arch"] == "gemma3n" and row["n_ctx"] == 4096 and not row["flash_attn"]
}


def _kv_by_hand(c: dict[str, Any], context: int) -> int:
    """f16, one user, flash attention on: layers 0–19 own a cache (gemma3n.cpp: n_layer_kv_from_start = 20), every
    fifth one global. A global layer caches K and V of 2 heads × 256 per token; a sliding one the 512-token window plus
    a micro-batch of 512, padded to 256 cells."""
    kinds = c["layer_types"][:20]
    per_token = 2 * c["num_key_value_heads"] * c["head_dim"] * 2
    window = -(-min(context, c["sliding_window"] + 512) // 256) * 256
    return kinds.count("full_attention") * context * per_token + kinds.count("sliding_attention") * window * per_token


def _params_by_hand(c: dict[str, Any]) -> int:
    """llama_model_gemma3n::load_arch_tensors, tensor by tensor (tied output: token_embd counted once)."""
    e, v, n, h, kv, hd = (c[k] for k in ("hidden_size", "vocab_size", "num_hidden_layers", "num_attention_heads",
                                          "num_key_value_heads", "head_dim"))  # fmt: skip
    per_layer, altup, rank = c["hidden_size_per_layer_input"], c["altup_num_inputs"], c["laurel_rank"]
    globals_ = (
        e * v  # token_embd
        + 2 * e * e * (altup - 1)  # altup_proj, altup_unembd_proj
        + per_layer * n * v  # per_layer_token_embd
        + e * per_layer * n  # per_layer_model_proj
        + per_layer  # per_layer_proj_norm
        + e  # output_norm
    )
    layers = 0
    for ff in c["intermediate_size"]:
        attention = 2 * e * hd * h + 2 * e * hd * kv + 2 * hd  # q, o, k, v, q/k norms
        ffn = 3 * e * ff
        norms = 6 * e  # attn, post-attention, ffn, post-ffw, per-layer post, laurel post
        per_layer_io = 2 * e * per_layer
        altup_block = altup * altup + e + altup * altup * altup + e * altup + e  # coefs, scale, router and its norm
        laurel = 2 * e * rank
        layers += attention + ffn + norms + per_layer_io + altup_block + laurel
    return globals_ + layers


@pytest.mark.parametrize(
    ("question", "lang", "model", "context", "mib"),
    [
        ("gemma 3n e4b 32k on a 3060", "en", "gemma-3n-e4b", 32768, 288),  # llama.cpp: 288.00 MiB (E2B and E4B)
        ("젬마3n e2b 4k 4gb 그래픽카드에서 돌아가?", "ko", "gemma-3n-e2b", 4096, 64),  # 64.00 MiB
        ("gemma-3n-e2b-it 16k", "en", "gemma-3n-e2b", 16384, 160),  # 128 + 32 (not measured at 16K with FA on)
    ],
)
def test_twenty_layers_own_the_cache(question: str, lang: str, model: str, context: int, mib: int) -> None:
    answer = ask(question, lang)
    assert answer["request"]["model"]["id"] == model
    assert answer["request"]["context"] == context
    config = E4B if model.endswith("e4b") else E2B
    assert answer["estimate"]["kv_cache_bytes"] == _kv_by_hand(config, context) == mib * MIB


@pytest.mark.parametrize(("name", "config", "tensors"), [("Gemma-3n-E2B-it", E2B, 727), ("Gemma-3n-E4B-it", E4B, 847)])
def test_parameters_and_tensors_are_the_loaders(name: str, config: dict[str, Any], tensors: int) -> None:
    arch = from_hf_config(config)
    assert (arch.kv_shared_layers, arch.per_layer_input_size) == (config["num_hidden_layers"] - 20, 256)
    listed = gguf_tensors(arch)
    assert len(listed) == tensors == 7 + 24 * config["num_hidden_layers"]
    params = weight_bytes(arch, FileType.Q4_K_M).params
    assert params == _params_by_hand(config)
    row = ROWS.get((name, "Q4_K_M"))
    if row is not None:  # llama.cpp's llama_model_n_params of the measured file
        assert row["model_n_params_api"] == params


def test_the_embedding_tables_stay_in_system_ram_and_the_card_says_effective() -> None:
    arch = from_hf_config(E2B)
    weights = weight_bytes(arch, FileType.Q4_K_M)
    # token_embd (262,400 × 2,048) and per_layer_token_embd (262,400 × 256 × 30), both Q6_K: 210 bytes per 256 values
    assert weights.host_bytes == (262400 * 2048 + 262400 * 7680) // 256 * 210 == 440832000 + 1653120000
    row = ROWS[("Gemma-3n-E2B-it", "Q4_K_M")]
    assert row["gguf_tensor_facts"]["roles"]["token_embd.weight"] == {"type": "Q6_K", "bytes": 440832000}
    answer = ask("gemma 3n e2b 8k on a 4gb card")
    # 4.46 B in the file, 1.91 B without the two tables: what "E2B" counts
    assert answer["estimate"]["effective_params"] == 4458122848 - 262400 * (2048 + 7680) == 1905495648


def test_a_layout_llamacpp_reads_its_own_defaults_for_is_refused(tmp_path: Any) -> None:
    wrong = {**E4B, "laurel_rank": 32}
    error = refused_config(wrong, tmp_path)
    assert error["code"] == "bad_config" and "laurel_rank" in error["message"]
