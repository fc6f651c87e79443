"""The families measured with llama.cpp on 2026-12-01 (SmolLM3, Kimi K2, DeepSeek V3.1, gpt-oss, EXAONE 4.0), asked
through the CLI in English and Korean: the KV cache is worked out here from the committed config.json by llama.cpp's
rules, not taken from the calculator, and gpt-oss is answered in the form it ships in (MXFP4_MOE) unless a quant is
named."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.bot.cli_json import answer as ask
from tests.bot.test_new_architectures import PRESET_CONFIGS, _config
from tests.groundtruth import GIB
from vramfit.bot.cli import run
from vramfit.calc.hf_config import text_model_config

CONTEXT = 32768
F16 = 2  # bytes per cached value (the default KV type)
UBATCH = 512  # llama.cpp's default n_ubatch


def _full_attention(c: dict[str, Any], context: int) -> int:
    """Every layer caches K and V of num_key_value_heads × head_dim for each token (llama_kv_cache)."""
    head = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    return c["num_hidden_layers"] * context * 2 * c["num_key_value_heads"] * head * F16


def _mla(c: dict[str, Any], context: int) -> int:
    """DeepSeek MLA: one latent of kv_lora_rank plus the rope part of the key per token and layer, and no V."""
    return c["num_hidden_layers"] * context * (c["kv_lora_rank"] + c["qk_rope_head_dim"]) * F16


def _sliding_and_full(c: dict[str, Any], context: int) -> int:
    """llama_kv_cache_iswa: full layers hold the context; sliding layers GGML_PAD(min(n_ctx, n_swa + n_ubatch), 256)
    cells (one sequence, unified)."""
    per_token = 2 * c["num_key_value_heads"] * c["head_dim"] * F16
    kinds = c["layer_types"][: c["num_hidden_layers"]]
    window_cells = -(-min(context, c["sliding_window"] + UBATCH) // 256) * 256
    full = kinds.count("full_attention") * context * per_token
    return full + kinds.count("sliding_attention") * window_cells * per_token


KvRule = Callable[[dict[str, Any], int], int]

QUESTIONS: list[tuple[str, str, str, KvRule, float]] = [
    # 36 layers x 32,768 x 2 x 4 KV heads x 128 x 2 B; the NoPE layers cache like the others
    ("smollm3 32k on a 3060", "en", "smollm3-3b", _full_attention, 2.25),
    ("스몰lm3 32k 3060에서 돌아가?", "ko", "smollm3-3b", _full_attention, 2.25),
    # 61 layers x 32,768 x (512 + 64) x 2 B
    ("kimi k2 instruct 32k on 8x h100", "en", "kimi-k2-instruct", _mla, 2.14453125),
    ("키미 k2 instruct 32k h100 8장에서 돌아가?", "ko", "kimi-k2-instruct", _mla, 2.14453125),
    # Kimi K2.5's text model (its config.json's text_config): the same 61 MLA layers
    ("kimi k2.5 32k on 8x h100", "en", "kimi-k2.5", _mla, 2.14453125),
    ("키미 k2.5 32k h100 8장에서 돌아가?", "ko", "kimi-k2.5", _mla, 2.14453125),
    ("deepseek v3.1 32k on 8x h200", "en", "deepseek-v3.1", _mla, 2.14453125),
    ("딥시크 v3.1 32k h200 8장에서 돌아가?", "ko", "deepseek-v3.1", _mla, 2.14453125),
    # 18 full layers x 32,768 + 18 sliding layers x 768 cells (128 + 512, padded), 2 x 8 x 64 x 2 B each
    ("gpt-oss 120b 32k on an h100", "en", "gpt-oss-120b", _sliding_and_full, 1236271104 / GIB),
    ("gpt-oss 120b 32k h100에서 돌아가?", "ko", "gpt-oss-120b", _sliding_and_full, 1236271104 / GIB),
    ("gpt-oss 20b 32k on a 4090", "en", "gpt-oss-20b", _sliding_and_full, 824180736 / GIB),
    # 16 global layers x 32,768 + 48 local layers x 4,608 cells (4,096 + 512), 2 x 8 x 128 x 2 B each
    ("exaone 4 32b 32k on a 4090", "en", "exaone-4.0-32b", _sliding_and_full, 3053453312 / GIB),
    ("엑사원4 32b 32k 4090에서 돌아가?", "ko", "exaone-4.0-32b", _sliding_and_full, 3053453312 / GIB),
]


@pytest.mark.parametrize(("question", "lang", "preset_id", "rule", "gib"), QUESTIONS)
def test_the_kv_cache_of_a_measured_family_follows_llama_cpp(
    question: str, lang: str, preset_id: str, rule: KvRule, gib: float
) -> None:
    answer = ask(question, lang)
    assert answer["request"]["model"]["id"] == preset_id
    assert answer["request"]["context"] == CONTEXT
    kv = rule(dict(text_model_config(_config(PRESET_CONFIGS[preset_id]))), CONTEXT)  # a wrapper's text_config
    assert answer["estimate"]["kv_cache_bytes"] == kv == round(gib * GIB)


@pytest.mark.parametrize(
    ("question", "lang", "quant"),
    [
        ("gpt-oss 120b", "en", "MXFP4_MOE"),
        ("gpt-oss 120b 32k h100에서 돌아가?", "ko", "MXFP4_MOE"),
        ("gpt-oss 20b on a 4090", "en", "MXFP4_MOE"),
        ("gpt-oss 120b q4_k_m", "en", "Q4_K_M"),  # a named quant wins
        ("gpt-oss 20b Q8_0 4090에서 돌아가?", "ko", "Q8_0"),
        ("smollm3", "en", "Q4_K_M"),  # presets without a default_quant keep the general default
    ],
)
def test_gpt_oss_is_answered_in_the_form_it_ships_in(question: str, lang: str, quant: str) -> None:
    answer = ask(question, lang)
    assert answer["request"]["quant"] == quant


def test_gpt_oss_mxfp4_keeps_the_experts_at_4_25_bits() -> None:
    """llama-quantize's MXFP4_MOE (llama-quant.cpp at 0c1e57098): 3-D expert tensors MXFP4 (17 bytes per 32 values),
    the other 2-D weights and token_embd/output Q8_0 (34 per 32); biases, norms, sinks and the router stay F32."""
    c = _config("gpt-oss-120b.json")
    layers, experts, vocab = c["num_hidden_layers"], c["num_local_experts"], c["vocab_size"]
    embd, ffn = c["hidden_size"], c["intermediate_size"]
    q_dim, kv_dim = c["num_attention_heads"] * c["head_dim"], c["num_key_value_heads"] * c["head_dim"]
    mxfp4 = layers * experts * 3 * embd * ffn // 32 * 17
    q8_0 = (2 * vocab * embd + layers * 2 * embd * (q_dim + kv_dim)) // 32 * 34
    per_layer_f32 = experts * (2 * ffn + embd) + q_dim + 2 * kv_dim + embd + c["num_attention_heads"] + 2 * embd
    f32 = 4 * (layers * (per_layer_f32 + embd * experts + experts) + embd)
    tensors = mxfp4 + q8_0 + f32
    file_bytes = ask("gpt-oss 120b")["estimate"]["file_bytes"]
    assert tensors <= file_bytes <= tensors + (16 << 20)  # + the header: 201,088 BPE tokens and their merges
    assert ask("gpt-oss 120b q4_k_m")["estimate"]["file_bytes"] != file_bytes


def test_a_preset_default_quant_must_be_a_quant_calc_knows() -> None:
    from pydantic import ValidationError

    from vramfit.calc.presets import ModelPreset, load_catalog

    row = load_catalog().models["gpt-oss-20b"].model_dump()
    assert row["default_quant"] == "MXFP4_MOE"
    with pytest.raises(ValidationError):
        ModelPreset(**{**row, "default_quant": "Q9_K"})


@pytest.mark.parametrize(
    ("file", "update", "bias"),
    [
        ("Kimi-K2-Instruct.json", {}, True),
        ("Kimi-K2-Instruct.json", {"n_routed_experts": 16, "num_hidden_layers": 4}, True),  # the measured copy
        ("DeepSeek-V3.1.json", {}, True),
        ("DeepSeek-V3.1.json", {"topk_method": "greedy", "model_type": "deepseek_v2"}, False),  # V2's router
    ],
)
def test_deepseek_v3_routers_carry_exp_probs_b_whatever_the_expert_count(
    file: str, update: dict[str, Any], bias: bool
) -> None:
    """convert_hf_to_gguf.py writes gate.e_score_correction_bias (topk_method noaux_tc) as blk.N.exp_probs_b.bias,
    one F32 per expert in each MoE layer; a 16-expert copy has it as the 384-expert original does."""
    from vramfit.calc.hf_config import from_hf_config
    from vramfit.calc.tensors import gguf_tensors

    c = {**_config(file), **update}
    biases = [t for t in gguf_tensors(from_hf_config(c)) if t.name.endswith("exp_probs_b.bias")]
    moe_layers = c["num_hidden_layers"] - c["first_k_dense_replace"]
    assert [t.n_elements for t in biases] == ([c["n_routed_experts"]] * moe_layers if bias else [])


@pytest.mark.parametrize(("layers", "sliding"), [(64, 48), (4, 0), (30, 0)])
def test_exaone_4_slides_only_with_its_64_layers(layers: int, sliding: int, tmp_path: Path) -> None:
    """llama_model_exaone4::load_arch_hparams turns the 4,096-token window on inside ``if (n_layer() == 64)``: a copy
    with 4 layers (measured) caches the whole context in every layer, LLLG pattern or not."""
    c = _config("EXAONE-4.0-32B.json")
    c = {**c, "num_hidden_layers": layers, "layer_types": (c["layer_types"] * 2)[:layers]}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(c), encoding="utf-8")
    out = io.StringIO()
    assert run(["--json", "--config", str(path), "--context", str(CONTEXT)], out) == 0
    per_token = 2 * c["num_key_value_heads"] * c["head_dim"] * F16
    window_cells = 4096 + UBATCH  # GGML_PAD(4,608, 256)
    kv = (layers - sliding) * CONTEXT * per_token + sliding * window_cells * per_token
    assert json.loads(out.getvalue())["estimate"]["kv_cache_bytes"] == kv
