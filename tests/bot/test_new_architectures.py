"""The 2026 architectures end to end: the presets reproduce their committed config.json; questions naming a hybrid
model get the KV cache of its attention layers plus a recurrent state that does not grow with context, and Gemma 4
its two head sizes (numbers worked out here from the config.json, not taken from the calculator)."""

from __future__ import annotations

import io
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.bot.cli_json import answer as ask
from tests.bot.cli_json import from_config, refused_config
from tests.groundtruth import DATA, GIB
from vramfit.bot.cli import run
from vramfit.bot.preset_row import preset_row
from vramfit.calc.hf_config import from_hf_config, text_model_config
from vramfit.calc.presets import load_catalog

CONFIGS = DATA / "configs"  # verbatim config.json copies, sources in each preset's source_note
PRESET_CONFIGS = {
    "qwen3.5-0.8b": "Qwen3.5-0.8B-Base.json",
    "qwen3.5-4b": "Qwen3.5-4B.json",
    "qwen3.5-27b": "Qwen3.5-27B.json",
    "qwen3.6-27b": "Qwen3.6-27B.json",
    "lfm2-700m": "LFM2-700M.json",
    "qwen3.5-35b-a3b": "Qwen3.5-35B-A3B.json",
    "qwen3.5-122b-a10b": "Qwen3.5-122B-A10B.json",
    "qwen3.5-397b-a17b": "Qwen3.5-397B-A17B.json",
    "qwen3.6-35b-a3b": "Qwen3.6-35B-A3B.json",
    "granite-4.0-h-350m": "granite-4.0-h-350m.json",
    "gemma-4-31b": "Gemma-4-31B-it-NVFP4.json",
    "qwen3-next-80b-a3b": "Qwen3-Next-80B-A3B-Instruct.json",
    "qwen3.5-2b": "Qwen3.5-2B.json",
    "qwen3.5-9b": "Qwen3.5-9B.json",
    "lfm2-1.2b": "LFM2-1.2B.json",
    "exaone-4.0-32b": "EXAONE-4.0-32B.json",
    "glm-4.5-air": "GLM-4.5-Air.json",
    "glm-4.5": "GLM-4.5.json",
    "llama-4-scout": "Llama-4-Scout-17B-16E-Instruct.trimmed.json",
    "llama-4-maverick": "Llama-4-Maverick-17B-128E-Instruct.trimmed.json",
    "deepseek-v3.2": "DeepSeek-V3.2.json",
    "devstral-small-2-24b": "Devstral-Small-2-24B-Instruct-2512.json",
    "glm-4.7": "GLM-4.7.json",
    "minimax-m2.7": "MiniMax-M2.7.json",
    "nemotron-3-nano-30b-a3b": "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json",
    "smollm3-3b": "SmolLM3-3B.json",
    "gpt-oss-20b": "gpt-oss-20b.json",
    "gpt-oss-120b": "gpt-oss-120b.json",
    "kimi-k2-instruct": "Kimi-K2-Instruct.json",
    "kimi-k2.5": "Kimi-K2.5.json",
    "deepseek-v3.1": "DeepSeek-V3.1.json",
    "qwen3-coder-30b-a3b": "Qwen3-Coder-30B-A3B-Instruct.json",
    "qwen3-coder-480b-a35b": "Qwen3-Coder-480B-A35B-Instruct.json",
    "gemma-4-26b-a4b": "gemma-4-26B-A4B.json",
    "olmo-2-7b": "OLMo-2-1124-7B.trimmed.json",
    "olmo-2-13b": "OLMo-2-1124-13B.trimmed.json",
    "olmo-2-32b": "OLMo-2-0325-32B.trimmed.json",
    "glm-5": "GLM-5.json",
    "glm-5.1": "GLM-5.1.json",
    "glm-5.2": "GLM-5.2.json",
    "ministral-3-3b": "Ministral-3-3B-Instruct-2512.mlc.json",
    "minimax-m2.5": "MiniMax-M2.5.trimmed.json",
    "deepseek-v4-flash": "DeepSeek-V4-Flash.json",
    "deepseek-v4-pro": "DeepSeek-V4-Pro.json",
}


# A vision-language model whose committed copy lacks the vision_config of the published file: aiconfigurator keeps
# Llama 4 Scout's text_config only; it is Llama4ForConditionalGeneration like Maverick, whose copy has one.
VISION_BY_SOURCE = frozenset({"llama-4-scout"})


def _config(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CONFIGS / name).read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize(("preset_id", "file"), sorted(PRESET_CONFIGS.items()))
def test_the_preset_reproduces_its_config_json(preset_id: str, file: str) -> None:
    config = _config(file)
    preset = load_catalog().models[preset_id]
    assert preset.architecture == from_hf_config(config)
    assert all(preset.config[k] == v for k, v in preset.config.items() if k in text_model_config(config))
    # The one-step row writer gives the same [model.config] table back.
    row = tomllib.loads(preset_row(config, {"id": preset_id, "name": preset.name, "source": preset.source}))
    assert row["model"][0]["config"] == preset.config
    assert preset.vision_encoder == (row["model"][0].get("vision_encoder", False) or preset_id in VISION_BY_SOURCE)


def _qwen35_by_hand(file: str, context: int, users: int = 1) -> tuple[int, int]:
    c = _config(file)["text_config"]
    attention_layers = c["layer_types"].count("full_attention")  # 8 of 32 (4B, 9B), 6 of 24 (2B)
    kv = attention_layers * context * users * 2 * c["num_key_value_heads"] * c["head_dim"] * 2  # K and V, f16
    key_dim = c["linear_num_key_heads"] * c["linear_key_head_dim"]
    value_dim = c["linear_num_value_heads"] * c["linear_value_head_dim"]
    conv = (c["linear_conv_kernel_dim"] - 1) * (2 * key_dim + value_dim)
    delta = c["linear_key_head_dim"] * value_dim
    state = (c["num_hidden_layers"] - attention_layers) * users * 4 * (conv + delta)  # f32
    return kv, state


def _qwen35_4b_by_hand(context: int, users: int = 1) -> tuple[int, int]:
    return _qwen35_by_hand("Qwen3.5-4B.json", context, users)


@pytest.mark.parametrize(
    ("question", "lang", "preset_id"),
    [
        (question.format(size=size), lang, f"qwen3.5-{size}b")
        for size in (4, 9)
        for question, lang in (
            ("qwen3.5 {size}b 32k 3060", "en"),
            ("큐웬3.5 {size}b 32k 3060에서 돌아가?", "ko"),
            ("qwen3.5:{size}b 32k on a 3060", "en"),
        )
    ],
)
def test_qwen35_4b_and_9b_at_32k_on_a_3060_count_their_state_once_per_user(
    question: str, lang: str, preset_id: str
) -> None:
    answer = ask(question, lang)
    assert answer["request"]["model"]["id"] == preset_id
    assert answer["request"]["gpus"][0]["id"] == "rtx-3060-12gb"
    c = _config(PRESET_CONFIGS[preset_id])["text_config"]
    assert (c["num_hidden_layers"], c["num_key_value_heads"], c["head_dim"]) == (32, 4, 256)
    # 8 full-attention layers x 32,768 cells x K and V x 4 KV heads x 256 x 2 bytes (f16) = 1 GiB; the
    # 24 Gated DeltaNet layers hold (3 x (2 x 2048 + 4096) conv + 128 x 4096 delta) f32 values each.
    kv, state = _qwen35_by_hand(PRESET_CONFIGS[preset_id], 32768)
    estimate = answer["estimate"]
    assert (estimate["kv_cache_bytes"], estimate["recurrent_state_bytes"]) == (kv, state) == (GIB, 52_690_944)
    naive = c["num_hidden_layers"] * 32768 * 2 * c["num_key_value_heads"] * c["head_dim"] * 2
    assert estimate["kv_cache_naive_bytes"] == naive == 4 * GIB  # the textbook formula counts all 32 layers
    assert answer["request"]["model"]["context_length"] == c["max_position_embeddings"]
    fit = answer["fits"][0]
    assert fit["verdict"] == "fits"
    assert fit["headroom_bytes"] == fit["usable_bytes"] - fit["total_bytes"] > 0


def _new_preset_kv_by_hand(file: str, context: int) -> tuple[int, int]:
    """KV cache and recurrent state of one user, f16 KV, llama.cpp's defaults (micro-batch 512)."""
    if file.startswith("Qwen3.5-"):
        return _qwen35_by_hand(file, context)
    c = _config(file)
    if c["model_type"] == "lfm2":
        head_dim = c["hidden_size"] // c["num_attention_heads"]
        kv = len(c["full_attn_idxs"]) * context * 2 * c["num_key_value_heads"] * head_dim * 2
        conv_layers = c["num_hidden_layers"] - len(c["full_attn_idxs"])
        return kv, conv_layers * 4 * c["hidden_size"] * (c["conv_L_cache"] - 1)
    # EXAONE 4.0: sliding layers cache the window plus one micro-batch (llama_kv_cache_iswa), global layers all.
    per_cell = 2 * c["num_key_value_heads"] * c["head_dim"] * 2
    sliding = c["layer_types"].count("sliding_attention")
    window_cells = min(context, c["sliding_window"] + 512)
    return sliding * window_cells * per_cell + (c["num_hidden_layers"] - sliding) * context * per_cell, 0


@pytest.mark.parametrize(
    ("question", "lang", "preset_id", "kv", "state"),
    [
        ("qwen3.5 2b 32k 3060", "en", "qwen3.5-2b", 384 << 20, 20_201_472),  # 6 of 24 layers x 2 KV heads x 256
        ("큐웬3.5 2b 32k 3060에서 돌아가?", "ko", "qwen3.5-2b", 384 << 20, 20_201_472),
        ("lfm2 1.2b 32k 3060", "en", "lfm2-1.2b", 384 << 20, 163_840),  # 6 of 16 layers x 8 KV heads x 64
        ("리퀴드 lfm2 1.2b 32k 3060에서 돌아가?", "ko", "lfm2-1.2b", 384 << 20, 163_840),
        ("exaone 4.0 32b 32k 4090", "en", "exaone-4.0-32b", 2912 << 20, 0),  # 48 x 4,608 + 16 x 32,768 cells
        ("엑사원 4.0 32b 32k 4090에서 돌아가?", "ko", "exaone-4.0-32b", 2912 << 20, 0),
    ],
)
def test_new_presets_cache_what_their_config_json_says(
    question: str, lang: str, preset_id: str, kv: int, state: int
) -> None:
    answer = ask(question, lang)
    assert answer["request"]["model"]["id"] == preset_id
    estimate = answer["estimate"]
    by_hand = _new_preset_kv_by_hand(PRESET_CONFIGS[preset_id], 32768)
    assert (estimate["kv_cache_bytes"], estimate["recurrent_state_bytes"]) == by_hand == (kv, state)


def test_the_state_grows_with_users_not_with_context() -> None:
    short, long = ask("qwen3.5 4b 4k"), ask("qwen3.5 4b 128k")
    assert short["estimate"]["recurrent_state_bytes"] == long["estimate"]["recurrent_state_bytes"]
    four = ask("qwen3.5 4b 32k 4 users")
    assert four["estimate"]["recurrent_state_bytes"] == _qwen35_4b_by_hand(32768, 4)[1] == 4 * 52_690_944


def test_granite_4_h_keeps_kv_in_four_layers_and_mamba_state_in_the_rest() -> None:
    answer = ask("그래니트 4 350m 32k 3060에서 돌아가?", "ko")
    assert answer["request"]["model"]["id"] == "granite-4.0-h-350m"
    c = _config("granite-4.0-h-350m.json")
    attention = c["layer_types"].count("attention")  # 4 of 32; NoPE attention with head size 768 / 12
    kv = attention * 32768 * 2 * c["num_key_value_heads"] * (c["hidden_size"] // c["num_attention_heads"]) * 2
    inner = c["mamba_n_heads"] * c["mamba_d_head"]
    conv = (c["mamba_d_conv"] - 1) * (inner + 2 * c["mamba_n_groups"] * c["mamba_d_state"])
    ssm = c["mamba_d_state"] * inner
    state = (c["num_hidden_layers"] - attention) * 4 * (conv + ssm)
    estimate = answer["estimate"]
    assert (estimate["kv_cache_bytes"], estimate["recurrent_state_bytes"]) == (kv, state) == (128 << 20, 22_622_208)


@pytest.mark.parametrize("question", ["lfm2 700m 32k", "LFM2-700M 32k 3060", "리퀴드 lfm2 700m 32k"])
def test_lfm2_has_kv_only_in_its_attention_layers(question: str) -> None:
    answer = ask(question)
    assert answer["request"]["model"]["id"] == "lfm2-700m"
    c = _config("LFM2-700M.json")
    head_dim = c["hidden_size"] // c["num_attention_heads"]
    kv = len(c["full_attn_idxs"]) * 32768 * 2 * c["num_key_value_heads"] * head_dim * 2
    conv_layers = c["num_hidden_layers"] - len(c["full_attn_idxs"])
    state = conv_layers * 4 * c["hidden_size"] * (c["conv_L_cache"] - 1)  # llama_hparams::n_embd_r, f32
    assert (answer["estimate"]["kv_cache_bytes"], answer["estimate"]["recurrent_state_bytes"]) == (kv, state)


def test_the_card_shows_the_state_on_its_own_line() -> None:
    for lang, label, note in (("en", "Recurrent state", "does not grow"), ("ko", "순환 상태", "그대로예요")):
        out = io.StringIO()
        assert run(["--lang", lang, "qwen3.5 27b 32k 4090"], out) == 0
        line = next(line for line in out.getvalue().splitlines() if label in line)
        assert "150" in line and note in line  # 48 Gated DeltaNet layers × 3.1 MiB


def test_vllm_refuses_a_hybrid_model_instead_of_guessing() -> None:
    out = io.StringIO()
    assert run(["--json", "--engine", "vllm", "qwen3.5 4b 32k"], out) != 0
    assert json.loads(out.getvalue())["error"]["code"] == "unsupported_architecture"


@pytest.mark.parametrize(
    ("question", "lang", "family"),
    [
        ("qwen3.6 14b 32k 4090", "en", "qwen3.6-"),
        ("qwen3.5 14b 32k 3060", "en", "qwen3.5-"),  # 9B has a preset now
        ("큐웬3.5 14b 32k 3060에서 돌아가?", "ko", "qwen3.5-"),
    ],
)
def test_a_size_the_catalog_lacks_is_never_read_as_another_size(question: str, lang: str, family: str) -> None:
    # The family exists, that size does not: an error naming the sizes there are, not the answer for a 27B model.
    out = io.StringIO()
    assert run(["--json", "--lang", lang, question], out) != 0
    error = json.loads(out.getvalue())["error"]
    assert error["code"] == "unknown_model"
    assert error["suggestions"] and all(s.startswith(family) for s in error["suggestions"])


@pytest.mark.parametrize(
    ("question", "note"),
    [
        ("mac studio m3 ultra 512gb deepseek r1", "Metal"),
        ("llama 3.1 8b on a 7900 xtx", "ROCm"),
        ("llama 3.1 8b on a 3060", "CUDA"),
    ],
)
def test_the_runtime_line_names_the_backend(question: str, note: str) -> None:
    out = io.StringIO()
    assert run([question], out) == 0
    runtime = next(line for line in out.getvalue().splitlines() if line.strip().startswith("Runtime"))
    assert note in runtime


def test_gemma_4_caches_a_window_on_sliding_layers_and_wide_heads_on_global_ones() -> None:
    answer = ask("젬마4 31b 32k 4090에서 돌아가?", "ko")
    assert answer["request"]["model"]["id"] == "gemma-4-31b"
    c = _config("Gemma-4-31B-it-NVFP4.json")["text_config"]
    sliding = c["layer_types"].count("sliding_attention")  # 50 of 60, window 1024
    full = c["num_hidden_layers"] - sliding
    window_cells = 1024 + 512  # the window plus one micro-batch, padded to 256: llama_kv_cache_iswa
    per_cell_sliding = 2 * c["num_key_value_heads"] * c["head_dim"] * 2  # K and V, f16
    per_cell_full = 2 * c["num_global_key_value_heads"] * c["global_head_dim"] * 2  # V is stored though K = V
    kv = sliding * window_cells * per_cell_sliding + full * 32768 * per_cell_full
    assert answer["estimate"]["kv_cache_bytes"] == kv == 3760 << 20
    # The textbook formula with config.json's num_key_value_heads × head_dim counts every layer at full context.
    assert answer["estimate"]["kv_cache_naive_bytes"] == c["num_hidden_layers"] * 32768 * per_cell_sliding


def test_gemma_4_with_shared_kv_layers_caches_the_layers_before_them(tmp_path: Path) -> None:
    text = _config("Gemma-4-31B-it-NVFP4.json")["text_config"]
    config = {**text, "num_kv_shared_layers": 20}  # E2B/E4B: the last layers read an earlier layer's cache
    first = {**text, "num_hidden_layers": 40, "layer_types": text["layer_types"][:40]}
    assert from_config(config, tmp_path)["estimate"]["kv_cache_bytes"] == from_config(first, tmp_path)["estimate"][
        "kv_cache_bytes"
    ]


@pytest.mark.parametrize(
    ("question", "gpu_id", "gib"),
    [
        ("llama 3.1 8b on a 4090 48gb", "rtx-4090-48gb", 48),
        ("llama 3.1 8b on a 4090", "rtx-4090", 24),  # the modded card never takes the stock card's name
        ("llama 3.1 8b 2080ti 22g", "rtx-2080-ti-22gb", 22),
        ("qwen3.6 35b a3b on an r9700", "radeon-ai-pro-r9700", 32),
        ("gemma 4 31b rtx pro 4000", "rtx-pro-4000-blackwell", 24),
        ("gemma 4 31b rtx pro 4500", "rtx-pro-4500-blackwell", 32),
        ("deepseek r1 on 8x b300", "b300", 288),
        ("deepseek r1 on 4x gb200", "gb200", 186),
    ],
)
def test_gpus_people_buy_in_2026(question: str, gpu_id: str, gib: int) -> None:
    gpu = ask(question)["request"]["gpus"][0]
    assert (gpu["id"], gpu["memory_bytes"]) == (gpu_id, gib * GIB)


def test_a_strix_halo_with_64_gb_gives_the_gpu_three_quarters() -> None:
    # AMD's Variable Graphics Memory: up to 75 % of system memory (96 of 128 GB on the 128 GB machine).
    fit = ask("qwen3.5 35b on a ryzen ai max 395 64gb")["fits"][0]
    assert (fit["gpu"], fit["usable_bytes"]) == ("ryzen-ai-max-395-64gb", 48 * GIB)


def _glm45_kv_by_hand(file: str, context: int, users: int = 1) -> int:
    """GLM-4.5: every trunk layer caches K and V of num_key_value_heads × head_dim (f16); the NextN/MTP block the
    converter appends (num_nextn_predict_layers) gets no cells (llama.cpp filters the KV cache to il < n_layer)."""
    c = _config(file)
    return c["num_hidden_layers"] * context * users * 2 * c["num_key_value_heads"] * c["head_dim"] * 2


@pytest.mark.parametrize(
    ("question", "lang", "preset_id", "gib"),
    [
        ("glm 4.5 air 32k 4090", "en", "glm-4.5-air", 5.75),  # 46 layers x 32,768 x 2 x 8 KV heads x 128 x 2 B
        ("지엘엠 4.5 에어 32k 4090에서 돌아가?", "ko", "glm-4.5-air", 5.75),
        ("GLM-4.5-Air 32k on 4x 3090", "en", "glm-4.5-air", 5.75),
        ("glm4.5 air 32k", "en", "glm-4.5-air", 5.75),
        ("glm 4.5 32k on 8x h100", "en", "glm-4.5", 11.5),  # 92 layers
        ("지엘엠 4.5 32k h100 8장에서 돌아가?", "ko", "glm-4.5", 11.5),
    ],
)
def test_glm_45_caches_its_trunk_layers_not_its_mtp_block(question: str, lang: str, preset_id: str, gib: float) -> None:
    answer = ask(question, lang)
    assert answer["request"]["model"]["id"] == preset_id
    kv = _glm45_kv_by_hand(PRESET_CONFIGS[preset_id], 32768)
    assert answer["estimate"]["kv_cache_bytes"] == kv == int(gib * GIB)
    assert answer["request"]["model"]["context_length"] == 131072


def test_glm_45_air_file_holds_an_mtp_block_that_llama_cpp_does_not_load() -> None:
    from vramfit.calc.file_types import FileType
    from vramfit.calc.tensors import gguf_tensors
    from vramfit.calc.weights import weight_bytes

    c = _config("GLM-4.5-Air.json")
    arch = from_hf_config(c)
    names = {t.name for t in gguf_tensors(arch)}
    mtp = c["num_hidden_layers"]  # blk.46: the converter's block_count is 46 + num_nextn_predict_layers
    assert {f"blk.{mtp}.nextn.eh_proj.weight", f"blk.{mtp}.nextn.shared_head_head.weight"} <= names
    assert f"blk.{mtp + 1}.attn_norm.weight" not in names
    # 803 tensors, as in published GGUFs of GLM-4.5-Air: 3 outside the blocks, 12 in the dense block 0, 17 in each
    # of the 45 MoE blocks (q/k/v biases, router, exp_probs_b, experts, shared expert), 17 + 6 nextn in blk.46.
    assert len(names) == 3 + 12 + 45 * 17 + 23 == 803
    assert "blk.0.ffn_gate_exps.weight" not in names and "blk.1.ffn_gate_exps.weight" in names
    w = weight_bytes(arch, FileType.Q4_K_M)
    assert len(w.layer_bytes) == 46 and w.expert_layer_bytes[0] == 0 and all(w.expert_layer_bytes[1:])
    assert w.gpu_bytes + w.host_bytes < w.tensor_bytes  # the MTP block is in the file only


def test_glm_45_without_experts_is_an_error_not_a_guess(tmp_path: Path) -> None:
    config = {**_config("GLM-4.5-Air.json"), "n_routed_experts": 0}
    assert refused_config(config, tmp_path)["code"] == "bad_config"


@pytest.mark.parametrize(
    ("question", "lang", "preset_id", "file", "context"),
    [
        (
            "devstral small 2 64k on a 4090",
            "en",
            "devstral-small-2-24b",
            "Devstral-Small-2-24B-Instruct-2512.json",
            65536,
        ),
        (
            "데브스트랄 스몰 2 64k 4090에서 돌아가?",
            "ko",
            "devstral-small-2-24b",
            "Devstral-Small-2-24B-Instruct-2512.json",
            65536,
        ),
        ("glm 4.7 32k on 8x h100", "en", "glm-4.7", "GLM-4.7.json", 32768),
        ("지엘엠 4.7 32k h100 8장에서 돌아가?", "ko", "glm-4.7", "GLM-4.7.json", 32768),
    ],
)
def test_plain_gqa_presets_cache_every_layer(question: str, lang: str, preset_id: str, file: str, context: int) -> None:
    """Devstral Small 2 (Ministral 3 text model, llama's layout) and GLM-4.7 (GLM-4.5's, MTP block uncached): K and V
    of num_key_value_heads × head_dim in every trunk layer, f16."""
    c = text_model_config(_config(file))
    answer = ask(question, lang)
    assert answer["request"]["model"]["id"] == preset_id
    kv = c["num_hidden_layers"] * context * 2 * c["num_key_value_heads"] * c["head_dim"] * 2
    assert answer["estimate"]["kv_cache_bytes"] == kv
    assert answer["request"]["model"]["context_length"] == c["max_position_embeddings"]


@pytest.mark.parametrize("preset_id", sorted(PRESET_CONFIGS))
def test_a_question_naming_each_new_preset_is_answered_in_both_languages(preset_id: str) -> None:
    """Every preset with a committed config.json, asked by its name and by each alias people type, in English and in
    Korean, is answered for that preset (the Korean question gets a Korean card)."""
    preset = load_catalog().models[preset_id]
    for name in (preset.name, *preset.aliases):
        for question, lang in ((f"{name} 32k on a 4090", "en"), (f"{name} 32k 4090에서 돌아가?", "ko")):
            out = io.StringIO()
            assert run(["--json", question], out) == 0, question  # no --lang: the question's own language
            answer = json.loads(out.getvalue())
            hangul = any("\uac00" <= ch <= "\ud7a3" for ch in name)  # a Korean alias makes any question Korean
            assert (answer["request"]["model"]["id"], answer["lang"]) == (preset_id, "ko" if hangul else lang), question


def _olmo2_by_hand(file: str, context: int) -> tuple[int, int]:
    """Parameters and f16 KV of an OLMo 2 config: q/k norms over the whole projection, two post-norms per layer, no
    biases, its own output head (src/models/olmo2.cpp)."""
    c = _config(file)
    e, f, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    kv_width = c["num_key_value_heads"] * (e // c["num_attention_heads"])
    layer = 2 * e * e + 2 * e * kv_width + 3 * e * f + (e + kv_width) + 2 * e
    params = 2 * v * e + e + c["num_hidden_layers"] * layer
    kv = c["num_hidden_layers"] * context * 2 * kv_width * 2
    return params, kv


@pytest.mark.parametrize(
    ("question", "lang", "preset_id", "file"),
    [
        ("olmo 2 7b 4k on a 3060", "en", "olmo-2-7b", "OLMo-2-1124-7B.trimmed.json"),
        ("올모2 13b 4k 4090에서 돌아가?", "ko", "olmo-2-13b", "OLMo-2-1124-13B.trimmed.json"),
        ("olmo2:13b on a 4090", "en", "olmo-2-13b", "OLMo-2-1124-13B.trimmed.json"),
        ("OLMo 2 32B 4k on a 5090", "en", "olmo-2-32b", "OLMo-2-0325-32B.trimmed.json"),
    ],
)
def test_olmo2_questions(question: str, lang: str, preset_id: str, file: str) -> None:
    answer = ask(question, lang)
    assert answer["request"]["model"]["id"] == preset_id
    assert answer["request"]["context"] == 4096  # the training context, asked or not
    params, kv = _olmo2_by_hand(file, 4096)
    assert (answer["estimate"]["params"], answer["estimate"]["kv_cache_bytes"]) == (params, kv)
    if preset_id == "olmo-2-7b":
        assert (params, kv) == (7_298_617_344, 2 * GIB)  # the measured load's 7.30 B parameters and 2048 MiB of KV


@pytest.mark.parametrize(
    ("question", "lang"), [("ministral 3 3b 32k on a 3060", "en"), ("미니스트랄3 3b 32k 3060에서 돌아가?", "ko")]
)
def test_ministral3_3b_at_32k(question: str, lang: str) -> None:
    c = _config("Ministral-3-3B-Instruct-2512.mlc.json")["text_config"]
    answer = ask(question, lang)
    assert answer["request"]["model"]["id"] == "ministral-3-3b"
    assert answer["request"]["model"]["vision_encoder"] is True  # the pixtral tower is a separate mmproj file
    kv = c["num_hidden_layers"] * 32768 * 2 * c["num_key_value_heads"] * c["head_dim"] * 2  # K and V, f16
    e, f, layers = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"]
    q, kv_width = c["num_attention_heads"] * c["head_dim"], c["num_key_value_heads"] * c["head_dim"]
    per_layer = 2 * e * q + 2 * e * kv_width + 3 * e * f + 2 * e  # q, o, k, v, the feed-forward, two norms
    params = c["vocab_size"] * e + e + layers * per_layer  # the output head is the embeddings (tied)
    assert (answer["estimate"]["kv_cache_bytes"], answer["estimate"]["params"]) == (kv, params)
    assert (kv, params) == (3_489_660_928, 3_429_006_336)  # 3.25 GiB; the model card's "3.4B language model"
    assert answer["request"]["model"]["context_limit"] == 262_144  # YaRN 16 × 16,384
