"""Kimi K2.5 (model_type kimi_k25, KimiK25ForConditionalGeneration) is sized by its text model, as llama.cpp converts
it: the text_config (kimi_k2, DeepseekV3ForCausalLM) becomes a deepseek2 GGUF (conversion/deepseek.py DeepseekV2Model
at 0c1e57098) and the vision tower an mmproj file (conversion/kimivl.py KimiK25Model). The numbers are worked out here
from the committed config.json (tests/data/configs/Kimi-K2.5.json, verbatim), not taken from the calculator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.bot.cli_json import run_json
from tests.bot.test_new_architectures import _config
from tests.groundtruth import DATA, GIB
from vramfit.bot.parser import parse
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.presets import load_catalog
from vramfit.calc.tensors import count_params, gguf_tensors

FILE = "Kimi-K2.5.json"
CONFIG_PATH = DATA / "configs" / FILE
TEXT: dict[str, Any] = _config(FILE)["text_config"]
F16 = 2  # bytes per cached value (the default KV type)


def _mla_kv_by_hand(context: int, users: int = 1) -> int:
    """MLA: one latent of kv_lora_rank plus the rope part of the key per token and layer, K only (no V): 61 × 576."""
    return TEXT["num_hidden_layers"] * context * users * (TEXT["kv_lora_rank"] + TEXT["qk_rope_head_dim"]) * F16


def _params_by_hand() -> int:
    """deepseek2's tensors (src/llama-model.cpp at 0c1e57098) from the text_config: token_embd and output (untied),
    output_norm; per layer the MLA attention with a q LoRA (q_a, q_a_norm, q_b, kv_a_mqa, kv_a_norm, k_b and v_b split
    from kv_b, output) and two norms; layer 0 a dense FFN (first_k_dense_replace 1), the others the router, its
    exp_probs_b bias (topk_method noaux_tc), 384 experts of 2048 and one shared expert."""
    t = TEXT
    hidden, heads, vocab, layers = t["hidden_size"], t["num_attention_heads"], t["vocab_size"], t["num_hidden_layers"]
    q, kv, rope = t["q_lora_rank"], t["kv_lora_rank"], t["qk_rope_head_dim"]
    nope, v = t["qk_nope_head_dim"], t["v_head_dim"]
    attention = (
        hidden * q + q + q * heads * (nope + rope)  # attn_q_a, attn_q_a_norm, attn_q_b
        + hidden * (kv + rope) + kv  # attn_kv_a_mqa, attn_kv_a_norm
        + heads * nope * kv + heads * kv * v  # attn_k_b, attn_v_b
        + heads * v * hidden  # attn_output
        + 2 * hidden  # attn_norm, ffn_norm
    )  # fmt: skip
    experts, ffn = t["n_routed_experts"], t["moe_intermediate_size"]
    moe = hidden * experts + experts + 3 * experts * hidden * ffn + 3 * t["n_shared_experts"] * hidden * ffn
    dense = t["first_k_dense_replace"]
    outside = 2 * vocab * hidden + hidden  # token_embd, output, output_norm
    return outside + layers * attention + dense * 3 * hidden * t["intermediate_size"] + (layers - dense) * moe


def test_the_config_is_read_as_its_mla_moe_text_model() -> None:
    arch = from_hf_config(_config(FILE))
    t = TEXT
    assert (_config(FILE)["model_type"], t["model_type"]) == ("kimi_k25", "kimi_k2")
    assert (arch.arch, arch.n_layers, arch.hidden_size, arch.vocab_size) == ("deepseek2", 61, 7168, 163840)
    experts = (t["n_routed_experts"], t["num_experts_per_tok"], t["moe_intermediate_size"])
    assert (arch.n_experts, arch.n_experts_used, arch.expert_ffn_size) == experts == (384, 8, 2048)
    assert arch.kv_lora_rank == t["kv_lora_rank"] == 512 and arch.expert_probs_bias
    assert sum(arch.moe_layers) == t["num_hidden_layers"] - t["first_k_dense_replace"] == 60  # never dense
    assert arch.context_length == t["max_position_embeddings"] == 262144
    assert count_params(arch) == _params_by_hand() == 1_026_408_232_448


def test_the_text_model_has_kimi_k2s_tensors_with_a_longer_context() -> None:
    """The memory-relevant difference from Kimi K2 Instruct (measured with llama.cpp, LLAMACPP.md): the context (262,144
    for 131,072, YaRN factor 64 for 32); every tensor's name and shape is the same, and so are the caches per token."""
    k25, k2 = from_hf_config(_config(FILE)), from_hf_config(_config("Kimi-K2-Instruct.json"))
    assert [(t.name, t.shape) for t in gguf_tensors(k25)] == [(t.name, t.shape) for t in gguf_tensors(k2)]
    assert len(gguf_tensors(k25)) == 3 + 13 + 60 * 18  # outside the blocks, the dense block 0, 60 MoE blocks
    differing = {f for f in type(k25).model_fields if getattr(k25, f) != getattr(k2, f)}
    assert differing == {"context_length", "rope_scaling_factor"}


def test_the_wrapper_type_alone_is_still_the_text_model() -> None:
    """A text_config without its own model_type takes the wrapper's, kimi_k25: still deepseek2 with its router bias."""
    config = _config(FILE)
    text = {k: v for k, v in config["text_config"].items() if k not in ("model_type", "topk_method")}
    assert from_hf_config({**config, "text_config": text}) == from_hf_config(config)


@pytest.mark.parametrize(
    ("args", "model_id", "lang"),
    [
        # a file with a name of its own is named by it (a config.json by its folder)
        (("--config", str(CONFIG_PATH), "32k on 8x h200"), "kimi-k2.5", "en"),
        (("--config", str(CONFIG_PATH), "32k h200 8장에서 돌아가?"), "kimi-k2.5", "ko"),
        (("kimi k2.5 32k on 8x h200",), "kimi-k2.5", "en"),
        (("Kimi-K2.5 32k on 8x h200",), "kimi-k2.5", "en"),
        (("키미 k2.5 32k h200 8장에서 돌아가?",), "kimi-k2.5", "ko"),
        (("키미2.5 32k h200 8장에서 돌아가?",), "kimi-k2.5", "ko"),
    ],
)
def test_config_and_preset_answer_the_text_model(args: tuple[str, ...], model_id: str, lang: str) -> None:
    answer = run_json(*args)
    assert (answer["request"]["model"]["id"], answer["lang"]) == (model_id, lang)
    model, estimate = answer["request"]["model"], answer["estimate"]
    assert (model["layers"], model["context_length"], model["params"]) == (61, 262144, _params_by_hand())
    assert estimate["kv_cache_bytes"] == _mla_kv_by_hand(32768) == round(2.14453125 * GIB)
    assert estimate["kv_v_bytes"] == 0  # MLA caches the latent as K only
    assert estimate["params"] == count_params(from_hf_config(_config("Kimi-K2-Instruct.json")))


def test_the_preset_and_the_config_give_the_same_numbers() -> None:
    by_config = run_json("--config", str(CONFIG_PATH), "32k 4 users on 8x h200")
    by_preset = run_json("kimi k2.5 32k 4 users on 8x h200")
    assert by_config["estimate"] == by_preset["estimate"]
    assert by_preset["estimate"]["kv_cache_bytes"] == _mla_kv_by_hand(32768, 4)
    assert load_catalog().models["kimi-k2.5"].architecture == from_hf_config(_config(FILE))


@pytest.mark.parametrize(
    ("question", "model", "users"),
    [
        # "k2.5" is the token k25, which "k2 5" also joins into: a number counting people is never part of a name.
        ("kimi k2 5 users 8x h200", "kimi-k2-instruct", 5),
        ("kimi k2 for 5 people on 8x h200", "kimi-k2-instruct", 5),
        ("키미 k2 5명 h200 8장에서 돌아가?", "kimi-k2-instruct", 5),
        ("kimi k2.5 5 users 8x h200", "kimi-k2.5", 5),
        ("키미 k2.5 5명 h200 8장에서 돌아가?", "kimi-k2.5", 5),
        ("kimi k2 on 8x h200", "kimi-k2-instruct", None),
        ("kimi 2.5 on 8x h200", "kimi-k2.5", None),
    ],
)
def test_kimi_k2_and_k25_questions_keep_their_model_and_users(question: str, model: str, users: int | None) -> None:
    parsed = parse(question, load_catalog())
    assert (parsed.model, parsed.users) == (model, users)


def test_the_committed_copy_is_the_published_file() -> None:
    """Byte for byte the aiconfigurator copy (its source_note); the preset keeps no vision key, only the text model."""
    data = Path(CONFIG_PATH).read_bytes()
    assert data.startswith(b'{\n  "architectures": [\n    "KimiK25ForConditionalGeneration"') and data.endswith(b"}")
    preset = load_catalog().models["kimi-k2.5"]
    assert "vision_config" not in preset.config and preset.config["model_type"] == "kimi_k2"
    assert "tests/data/configs/Kimi-K2.5.json" in preset.source_note
