"""MiniMax M2.7 (minimax_m2, llama.cpp's minimax-m2) end to end: questions in both languages reach the preset and
get the KV cache worked out here from the committed config.json; the tensors are listed by hand from llama.cpp's
loader (src/models/minimax-m2.cpp at 0c1e57098) and checked against the scaled copy llama.cpp loaded; the MTP
modules the config announces are not in the file; a GGUF header written with the converter's keys gives the
architecture back; configs llama.cpp could not load are refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gguf import GGUFWriter, LlamaFileType

from tests.bot.cli_json import answer as ask
from tests.bot.cli_json import refused_config
from tests.gguf_by_hand import assert_read_as_predicted, write_text_model_keys, write_zero_tensors
from tests.groundtruth import DATA, GIB, llamacpp_rows
from vramfit.calc.file_types import FileType
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.tensors import count_params, gguf_tensors
from vramfit.calc.weights import weight_bytes

CONFIG = DATA / "configs" / "MiniMax-M2.7.json"


def _config() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(CONFIG.read_text(encoding="utf-8"))
    return data


def _kv_by_hand(context: int) -> int:
    """Every one of the 62 layers is full attention (attn_type_list all 1) and caches K and V of
    num_key_value_heads × head_dim in f16; rotary_dim 64 rotates part of each head but caches all 128."""
    c = _config()
    assert set(c["attn_type_list"]) == {1} and len(c["attn_type_list"]) == c["num_hidden_layers"]
    return c["num_hidden_layers"] * context * 2 * c["num_key_value_heads"] * c["head_dim"] * 2


@pytest.mark.parametrize(
    ("question", "lang", "context", "gib"),
    [
        ("minimax m2.7 32k on 4x h100", "en", 32768, 7.75),  # 62 x 32,768 x 2 x 8 KV heads x 128 x 2 B
        ("MiniMax-M2.7 32k on 4x h100", "en", 32768, 7.75),
        ("미니맥스 m2.7 32k h100 4장에서 돌아가?", "ko", 32768, 7.75),
        ("미니맥스 32k h100 4장", "ko", 32768, 7.75),
        ("minimax m2.7 128k on 8x h100", "en", 131072, 31.0),
        ("미니맥스 m2.7 8k", "ko", 8192, 1.9375),
    ],
)
def test_minimax_m27_caches_every_layer_at_full_head_size(question: str, lang: str, context: int, gib: float) -> None:
    answer = ask(question, lang)
    model = answer["request"]["model"]
    assert (model["id"], model["layers"], model["kv_heads"], model["head_dim"]) == ("minimax-m2.7", 62, 8, 128)
    assert model["context_length"] == 204800
    assert answer["request"]["context"] == context
    assert answer["estimate"]["kv_cache_bytes"] == _kv_by_hand(context) == int(gib * GIB)
    assert answer["estimate"]["recurrent_state_bytes"] == 0


@pytest.mark.parametrize(
    ("question", "lang", "verdict"),
    [
        ("minimax m2.7 32k on 4x h100", "en", "fits"),  # about 130 GiB of Q4_K_M weights on 320 GiB
        ("미니맥스 m2.7 32k h100 4장에서 돌아가?", "ko", "fits"),
        ("minimax m2.7 32k on a 4090", "en", "partial"),  # 24 GiB holds a sixth of it at most
    ],
)
def test_minimax_m27_needs_more_than_one_consumer_card(question: str, lang: str, verdict: str) -> None:
    fit = ask(question, lang)["fits"][0]
    assert fit["verdict"] == verdict


def _tensors_by_hand(c: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """llama_model_minimax_m2::load_arch_tensors, in ggml order (row length first), read off the source."""
    e, v, ff, ne = c["hidden_size"], c["vocab_size"], c["intermediate_size"], c["num_local_experts"]
    h, kv, hd = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    out: dict[str, tuple[int, ...]] = {"token_embd.weight": (e, v), "output_norm.weight": (e,), "output.weight": (e, v)}
    for il in range(c["num_hidden_layers"]):
        out |= {
            f"blk.{il}.attn_q.weight": (e, h * hd),
            f"blk.{il}.attn_k.weight": (e, kv * hd),
            f"blk.{il}.attn_v.weight": (e, kv * hd),
            f"blk.{il}.attn_output.weight": (h * hd, e),
            f"blk.{il}.attn_norm.weight": (e,),
            f"blk.{il}.attn_q_norm.weight": (h * hd,),  # over the whole projection, not per head
            f"blk.{il}.attn_k_norm.weight": (kv * hd,),
            f"blk.{il}.ffn_norm.weight": (e,),
            f"blk.{il}.ffn_gate_inp.weight": (e, ne),
            f"blk.{il}.ffn_gate_exps.weight": (e, ff, ne),
            f"blk.{il}.ffn_down_exps.weight": (ff, e, ne),
            f"blk.{il}.ffn_up_exps.weight": (e, ff, ne),
            f"blk.{il}.exp_probs_b.bias": (ne,),
        }
    return out


def test_the_tensors_are_the_loaders_and_no_mtp_module_is_in_the_file() -> None:
    c = _config()
    assert c["use_mtp"] and c["num_mtp_modules"] == 3  # announced, but MiniMaxM2Model exports no MTP tensors
    arch = from_hf_config(c)
    specs = gguf_tensors(arch)
    assert {s.name: s.shape for s in specs} == _tensors_by_hand(c)
    assert len(specs) == 3 + 62 * 13 == 809
    assert arch.nextn_layers == 0 and not any("nextn" in s.name or "blk.62." in s.name for s in specs)
    assert count_params(arch) == sum(int(np.prod(shape)) for shape in _tensors_by_hand(c).values()) == 228_689_764_864
    w = weight_bytes(arch, FileType.Q4_K_M)
    assert w.gpu_bytes + w.host_bytes == w.tensor_bytes  # everything in the file is loaded
    assert len(w.expert_layer_bytes) == 62 and all(w.expert_layer_bytes)  # every block is MoE


def test_the_hand_count_is_what_llama_cpp_loaded_from_the_scaled_copy() -> None:
    rows = [r for r in llamacpp_rows() if r["llama_arch"] == "minimax-m2"]
    assert rows
    for row in rows:
        by_hand = _tensors_by_hand(row["config"])  # 4 layers and 16 experts, every other key as published
        assert row["gguf_tensor_facts"]["n_tensors"] == len(by_hand) == 3 + 4 * 13
        assert row["model_n_params_api"] == sum(int(np.prod(shape)) for shape in by_hand.values())
        assert row["kv_caches"][0]["layers"] == row["config"]["num_hidden_layers"]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"num_local_experts": 0}, "needs num_local_experts above 0"),
        ({"num_experts_per_tok": 0}, "needs num_experts_per_tok above 0"),
        ({"num_experts_per_tok": 257}, "num_experts_per_tok (257) is more than num_local_experts (256)"),
        ({"intermediate_size": 0}, "needs intermediate_size above 0"),
        ({"num_key_value_heads": 7}, "48 attention heads cannot share 7 KV heads"),
    ],
)
def test_a_config_llama_cpp_could_not_load_is_a_bad_config(change: dict[str, int], words: str, tmp_path: Path) -> None:
    error = refused_config({**_config(), **change}, tmp_path)
    assert error["code"] == "bad_config"
    assert words in error["message"]


TINY: dict[str, Any] = {
    "model_type": "minimax_m2", "hidden_size": 256, "intermediate_size": 128, "num_hidden_layers": 3,
    "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64, "rotary_dim": 32, "vocab_size": 1024,
    "num_local_experts": 8, "num_experts_per_tok": 2, "max_position_embeddings": 4096, "tie_word_embeddings": False,
    "use_mtp": True, "num_mtp_modules": 3,
}  # fmt: skip


def test_a_gguf_header_written_as_the_converter_does_gives_the_config_architecture(tmp_path: Path) -> None:
    path = tmp_path / "minimax-m2.gguf"
    writer = GGUFWriter(str(path), arch="minimax-m2")
    # TextModel.set_gguf_parameters plus MiniMaxM2Model's two keys (conversion/minimax.py).
    write_text_model_keys(writer, TINY, head_count_kv=TINY["num_key_value_heads"])
    writer.add_expert_count(TINY["num_local_experts"])
    writer.add_expert_used_count(TINY["num_experts_per_tok"])
    writer.add_key_length(TINY["head_dim"])
    writer.add_value_length(TINY["head_dim"])
    writer.add_file_type(LlamaFileType.MOSTLY_F16)
    writer.add_expert_feed_forward_length(TINY["intermediate_size"])
    writer.add_rope_dimension_count(TINY["rotary_dim"])
    writer.add_token_list([f"t{i}" for i in range(1024)])
    header = write_zero_tensors(writer, path, _tensors_by_hand(TINY))
    from_file, from_config = assert_read_as_predicted(header, TINY)
    assert from_file.model_copy(update={"context_length": 0}) == from_config.model_copy(update={"context_length": 0})
    assert from_file.arch == "minimax-m2" and from_file.n_experts == 8 and from_file.expert_ffn_size == 128
