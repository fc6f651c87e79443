"""Gemma 4 26B-A4B (gemma4 with ``enable_moe_block``) end to end: questions in both languages reach the preset and
get the KV cache worked out here from the committed config.json (sliding layers: the window plus a micro-batch,
global layers: the whole context, each with its own KV heads and head size); the tensors are listed by hand from
llama.cpp's loader (src/models/gemma4.cpp and llama-model.cpp's optional scales at 0c1e57098) and checked against
the scaled copy llama.cpp loaded; a GGUF header written with Gemma4Model's keys gives the architecture back; an
expert block llama.cpp could not load is a bad config and E2B/E4B's shared KV layers stay refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gguf import GGUFWriter, LlamaFileType

from tests.bot.cli_json import answer, from_config
from tests.gguf_by_hand import assert_read_as_predicted, write_keys, write_text_model_keys, write_zero_tensors
from tests.groundtruth import DATA, GIB, llamacpp_rows
from vramfit.calc.file_types import FileType
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.tensors import count_params, gguf_tensors
from vramfit.calc.weights import weight_bytes

CONFIG = DATA / "configs" / "gemma-4-26B-A4B.json"


def _text_config() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(CONFIG.read_text(encoding="utf-8"))
    return dict(data["text_config"])


def _pad(cells: int) -> int:
    return -(-cells // 256) * 256  # llama_kv_cache pads its size to 256 cells


def _kv_by_hand(context: int, ubatch: int = 512) -> int:
    """f16 K and V per layer: a sliding layer caches min(context, window + micro-batch) cells (llama_kv_cache_iswa)
    of num_key_value_heads × head_dim, a global layer the whole context of num_global_key_value_heads ×
    global_head_dim (V is stored although the checkpoint has no v_proj there: attention_k_eq_v)."""
    c = _text_config()
    kinds = c["layer_types"]
    sliding_cells = min(context, _pad(c["sliding_window"] + ubatch))
    per_cell_sliding = 2 * c["num_key_value_heads"] * c["head_dim"] * 2
    per_cell_global = 2 * c["num_global_key_value_heads"] * c["global_head_dim"] * 2
    sliding, full = kinds.count("sliding_attention"), kinds.count("full_attention")
    assert (sliding, full) == (25, 5) and sliding + full == c["num_hidden_layers"]
    return sliding * sliding_cells * per_cell_sliding + full * context * per_cell_global


@pytest.mark.parametrize(
    ("question", "lang", "context", "mib"),
    [
        ("gemma 4 26b 32k on a 4090", "en", 32768, 940),  # 25 x 1,536 x 8 KiB + 5 x 32,768 x 4 KiB
        ("gemma-4-26b-a4b 32k on a 4090", "en", 32768, 940),
        ("gemma4:26b 128k on a 5090", "en", 131072, 2860),
        ("gemma4 26b a4b 8k on a 3090", "en", 8192, 460),
        ("젬마4 26b 32k 4090에서 돌아가?", "ko", 32768, 940),
        ("젬마 4 26b 128k 5090에서 돼?", "ko", 131072, 2860),
    ],
)
def test_gemma4_26b_caches_a_window_on_sliding_layers_and_the_context_on_global_ones(
    question: str, lang: str, context: int, mib: int
) -> None:
    result = answer(question, lang)
    model = result["request"]["model"]
    assert (model["id"], model["layers"], model["context_length"]) == ("gemma-4-26b-a4b", 30, 262144)
    assert result["request"]["context"] == context
    assert result["estimate"]["kv_cache_bytes"] == _kv_by_hand(context) == mib << 20
    assert result["estimate"]["recurrent_state_bytes"] == 0
    c = _text_config()  # the textbook formula: every layer at full context with the sliding layers' heads
    naive = c["num_hidden_layers"] * context * 2 * c["num_key_value_heads"] * c["head_dim"] * 2
    assert result["estimate"]["kv_cache_naive_bytes"] == naive


def test_gemma4_26b_at_4_bits_fits_a_24_gb_card_but_not_a_12_gb_one() -> None:
    fit = answer("gemma 4 26b 32k on a 4090")["fits"][0]
    assert fit["verdict"] == "fits"
    assert answer("젬마4 26b 32k 3060에서 돌아가?", "ko")["fits"][0]["verdict"] != "fits"
    weights = weight_bytes(from_hf_config(_text_config()), FileType.Q4_K_M)
    assert 15 * GIB < weights.tensor_bytes < 17 * GIB  # 25.2 B parameters, experts' down falls back (704 % 256)


def _tensors_by_hand(c: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """llama_model_gemma4::load_arch_tensors for a config without per-layer embeddings or shared KV layers, plus the
    per-expert down scale llama-model.cpp's generic pass loads, in ggml order (row length first)."""
    e, v, ff, h = c["hidden_size"], c["vocab_size"], c["intermediate_size"], c["num_attention_heads"]
    fe, ne = c["moe_intermediate_size"], c["num_experts"]
    out: dict[str, tuple[int, ...]] = {
        "token_embd.weight": (e, v),  # tied: no output.weight, token_embd is duplicated as the head
        "output_norm.weight": (e,),
        "rope_freqs.weight": (c["global_head_dim"] // 2,),  # once, for the global layers' proportional RoPE
    }
    for il, kind in enumerate(c["layer_types"]):
        sliding = kind == "sliding_attention"
        hd = c["head_dim"] if sliding else c["global_head_dim"]
        kv = c["num_key_value_heads"] if sliding else c["num_global_key_value_heads"]
        out |= {
            f"blk.{il}.attn_norm.weight": (e,),
            f"blk.{il}.attn_q.weight": (e, hd * h),
            f"blk.{il}.attn_k.weight": (e, hd * kv),
            f"blk.{il}.attn_output.weight": (hd * h, e),
            f"blk.{il}.attn_q_norm.weight": (hd,),
            f"blk.{il}.attn_k_norm.weight": (hd,),
            f"blk.{il}.post_attention_norm.weight": (e,),
            f"blk.{il}.layer_output_scale.weight": (1,),
            f"blk.{il}.ffn_norm.weight": (e,),
            f"blk.{il}.ffn_gate.weight": (e, ff),  # the dense MLP, "normal FFN as shared expert"
            f"blk.{il}.ffn_up.weight": (e, ff),
            f"blk.{il}.ffn_down.weight": (ff, e),
            f"blk.{il}.post_ffw_norm.weight": (e,),
            f"blk.{il}.ffn_gate_inp.weight": (e, ne),  # router.proj
            f"blk.{il}.ffn_gate_inp.scale": (e,),  # router.scale
            f"blk.{il}.pre_ffw_norm_2.weight": (e,),
            f"blk.{il}.post_ffw_norm_1.weight": (e,),
            f"blk.{il}.post_ffw_norm_2.weight": (e,),
            f"blk.{il}.ffn_gate_up_exps.weight": (e, 2 * fe, ne),  # experts.gate_up_proj, fused in the checkpoint
            f"blk.{il}.ffn_down_exps.weight": (fe, e, ne),
            f"blk.{il}.ffn_down_exps.scale": (ne,),  # router.per_expert_scale
        }
        if sliding:  # attention_k_eq_v: only the sliding layers have a V projection
            out[f"blk.{il}.attn_v.weight"] = (e, hd * kv)
    return out


def test_the_tensors_are_the_loaders() -> None:
    c = _text_config()
    arch = from_hf_config(c)
    specs = gguf_tensors(arch)
    assert {s.name: s.shape for s in specs} == _tensors_by_hand(c)
    assert len(specs) == 3 + 25 * 22 + 5 * 21 == 658
    assert count_params(arch) == sum(int(np.prod(shape)) for shape in _tensors_by_hand(c).values()) == 25_233_142_046
    assert (arch.n_experts, arch.n_experts_used, arch.expert_ffn_size) == (128, 8, 704)
    assert (arch.n_shared_experts, arch.shared_expert_ffn_size) == (1, 2112)
    w = weight_bytes(arch, FileType.Q4_K_M)
    embd = next(s for s in specs if s.name == "token_embd.weight")
    # Everything in the file is loaded: token_embd stays in system RAM and, tied, is copied to the GPU as the head.
    assert w.host_bytes == w.output_bytes == 605_552_640 and w.gpu_bytes == w.tensor_bytes
    assert embd.shape == (2816, 262144)
    assert len(w.expert_layer_bytes) == 30 and all(w.expert_layer_bytes)  # every block has experts


def test_the_hand_count_is_what_llama_cpp_loaded_from_the_scaled_copy() -> None:
    rows = [r for r in llamacpp_rows() if r["arch_model"] == "Gemma-4-26B-A4B-6L16E"]
    assert len(rows) == 17  # Q4_K_M across contexts, Q2_K and Q8_0 at one
    for row in rows:
        by_hand = _tensors_by_hand(row["config"])  # 6 layers and 16 experts, every other key as published
        assert row["gguf_tensor_facts"]["n_tensors"] == len(by_hand) == 3 + 5 * 22 + 21 == 134
        assert row["model_n_params_api"] == sum(int(np.prod(shape)) for shape in by_hand.values()) == 1_638_648_422


def test_without_the_expert_block_the_layers_are_dense() -> None:
    arch = from_hf_config({**_text_config(), "enable_moe_block": False})  # num_experts alone builds no router
    assert not arch.is_moe and arch.ffn_size == (2112,) * 30
    assert not any("exps" in s.name or "ffn_gate_inp" in s.name for s in gguf_tensors(arch))


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"num_experts": 0}, "needs num_experts above 0"),
        ({"num_experts": None}, "needs num_experts above 0"),
        ({"top_k_experts": 0}, "needs top_k_experts above 0"),
        ({"top_k_experts": 129}, "top_k_experts (129) is more than num_experts (128)"),
        ({"moe_intermediate_size": 0}, "needs expert_intermediate_size above 0"),
        ({"num_global_key_value_heads": 3}, "16 attention heads cannot share 3 KV heads"),
    ],
)
def test_an_expert_block_llama_cpp_could_not_load_is_a_bad_config(
    change: dict[str, Any], words: str, tmp_path: Path
) -> None:
    error = from_config({**_text_config(), **change}, tmp_path)["error"]
    assert error["code"] == "bad_config"
    assert words in error["message"]


def test_shared_kv_layers_own_no_cache(tmp_path: Path) -> None:
    """The last num_kv_shared_layers read an earlier layer's cache (llama.cpp's n_layer_kv_from_start): the cache is
    that of the layers before them alone."""
    text = _text_config()
    shared = from_config({**text, "num_kv_shared_layers": 10}, tmp_path)
    kept = text["num_hidden_layers"] - 10
    first = {**text, "num_hidden_layers": kept, "layer_types": text["layer_types"][:kept]}
    assert shared["estimate"]["kv_cache_bytes"] == from_config(first, tmp_path)["estimate"]["kv_cache_bytes"] > 0


TINY: dict[str, Any] = {
    "model_type": "gemma4_text", "hidden_size": 256, "intermediate_size": 192, "num_hidden_layers": 6,
    "num_attention_heads": 4, "num_key_value_heads": 2, "num_global_key_value_heads": 1, "head_dim": 64,
    "global_head_dim": 128, "vocab_size": 1024, "sliding_window": 128, "attention_k_eq_v": True,
    "layer_types": ["sliding_attention"] * 5 + ["full_attention"], "tie_word_embeddings": True,
    "enable_moe_block": True, "num_experts": 8, "top_k_experts": 2, "moe_intermediate_size": 96,
    "max_position_embeddings": 4096, "num_kv_shared_layers": 0,
}  # fmt: skip


def test_a_gguf_header_written_as_the_converter_does_gives_the_config_architecture(tmp_path: Path) -> None:
    path = tmp_path / "gemma4.gguf"
    writer = GGUFWriter(str(path), arch="gemma4")
    # TextModel / Gemma3Model / Gemma4Model.set_gguf_parameters (conversion/gemma.py at 0c1e57098).
    swa = [k == "sliding_attention" for k in TINY["layer_types"]]
    write_text_model_keys(writer, TINY, head_count_kv=[2 if s else 1 for s in swa])
    write_keys(
        writer,
        {
            "expert_count": TINY["num_experts"],
            "expert_used_count": TINY["top_k_experts"],
            "sliding_window": TINY["sliding_window"],
            "shared_kv_layers": 0,
            "embedding_length_per_layer_input": 0,
            "sliding_window_pattern": swa,
            "key_length": TINY["global_head_dim"],
            "value_length": TINY["global_head_dim"],
            "key_length_swa": TINY["head_dim"],
            "value_length_swa": TINY["head_dim"],
            "expert_feed_forward_length": TINY["moe_intermediate_size"],
            "file_type": LlamaFileType.MOSTLY_F16,
        },
    )
    writer.add_token_list([f"t{i}" for i in range(1024)])
    header = write_zero_tensors(writer, path, _tensors_by_hand(TINY))
    from_file, from_config_json = assert_read_as_predicted(header, TINY)
    assert from_file == from_config_json
    assert from_file.n_experts == 8 and from_file.n_experts_used == 2 and from_file.shared_expert_ffn_size == 192
