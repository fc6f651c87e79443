"""LFM2-8B-A1B (lfm2_moe, llama.cpp's lfm2moe) end to end: questions in both languages reach the preset; the KV cache
of the six attention layers and the short-convolution state of the other eighteen are what llama.cpp allocated; the
tensors are listed by hand from llama.cpp's loader (src/models/lfm2moe.cpp at 0c1e57098) and are the ones llama.cpp
loaded; a GGUF header written with the converter's keys gives the architecture back; configs llama.cpp could not load
are refused."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gguf import GGUFWriter, LlamaFileType

from tests.bot.cli_json import answer as ask
from tests.bot.cli_json import refused_config
from tests.gguf_by_hand import assert_read_as_predicted, write_keys, write_text_model_keys, write_zero_tensors
from tests.groundtruth import DATA, MIB, llamacpp_rows
from vramfit.bot.cli import run
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.tensors import gguf_tensors

CONFIG = DATA / "configs" / "LFM2-8B-A1B.json"
# Every measured row is also checked with the others: KV and recurrent state (tests/calc/test_kv.py), the files
# (tests/calc/test_quant.py).
ROWS = [row for row in llamacpp_rows() if row["llama_arch"] == "lfm2moe"]


def _config() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(CONFIG.read_text(encoding="utf-8"))
    return data


# question → (language, context, KV MiB): 6 attention layers × 2 (K, V) × 8 KV heads × 64 × 2 bytes = 12 KiB a token
# (measured: 384 MiB at 32,768)
QUESTIONS = {
    "lfm2 8b a1b 32k on a 3060": ("en", 32768, 384),
    "LFM2-8B-A1B 4k": ("en", 4096, 48),
    "리퀴드 lfm2 8b 32k 3060에서 돌아가?": ("ko", 32768, 384),
}


@pytest.mark.parametrize("question", QUESTIONS)
def test_lfm2_8b_a1b_caches_six_layers_and_keeps_conv_state(question: str) -> None:
    lang, context, kv_mib = QUESTIONS[question]
    answer = ask(question, lang)
    model = answer["request"]["model"]
    assert (model["id"], model["layers"], model["kv_heads"], model["head_dim"]) == ("lfm2-8b-a1b", 24, 8, 64)
    assert answer["request"]["context"] == context
    assert answer["estimate"]["kv_cache_bytes"] == kv_mib * MIB
    # 18 conv layers × 2,048 × (L_cache 3 − 1) f32 values, one sequence: 288 KiB (llama.cpp logs 0.28 MiB)
    assert answer["estimate"]["recurrent_state_bytes"] == 18 * 2048 * 2 * 4


def _tensors_by_hand(c: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """llama_model_lfm2moe::load_arch_tensors, in ggml order (row length first), read off the source."""
    e, v, ff, fe, ne = (
        c["hidden_size"],
        c["vocab_size"],
        c["intermediate_size"],
        c["moe_intermediate_size"],
        c["num_experts"],
    )
    hd = e // c["num_attention_heads"]
    kv = c["num_key_value_heads"] * hd
    out: dict[str, tuple[int, ...]] = {"token_embd.weight": (e, v), "token_embd_norm.weight": (e,)}  # tied: no output
    for il, kind in enumerate(c["layer_types"]):
        out |= {f"blk.{il}.ffn_norm.weight": (e,), f"blk.{il}.attn_norm.weight": (e,)}
        if il < c["num_dense_layers"]:
            out |= {
                f"blk.{il}.ffn_gate.weight": (e, ff),
                f"blk.{il}.ffn_up.weight": (e, ff),
                f"blk.{il}.ffn_down.weight": (ff, e),
            }
        else:
            out |= {
                f"blk.{il}.ffn_gate_inp.weight": (e, ne), f"blk.{il}.ffn_gate_exps.weight": (e, fe, ne),
                f"blk.{il}.ffn_up_exps.weight": (e, fe, ne), f"blk.{il}.ffn_down_exps.weight": (fe, e, ne),
                f"blk.{il}.exp_probs_b.bias": (ne,),
            }  # fmt: skip
        if kind == "conv":
            out |= {
                f"blk.{il}.shortconv.conv.weight": (c["conv_L_cache"], e),
                f"blk.{il}.shortconv.in_proj.weight": (e, 3 * e),
                f"blk.{il}.shortconv.out_proj.weight": (e, e),
            }
        else:
            out |= {
                f"blk.{il}.attn_q.weight": (e, e), f"blk.{il}.attn_k.weight": (e, kv),
                f"blk.{il}.attn_v.weight": (e, kv), f"blk.{il}.attn_output.weight": (e, e),
                f"blk.{il}.attn_q_norm.weight": (hd,), f"blk.{il}.attn_k_norm.weight": (hd,),
            }  # fmt: skip
    return out


def test_the_tensors_are_the_loaders_and_llama_cpp_loaded_as_many() -> None:
    c = _config()
    by_hand = _tensors_by_hand(c)
    assert {s.name: s.shape for s in gguf_tensors(from_hf_config(c))} == by_hand
    # 2 global + 2 dense conv layers × 8 + 16 MoE conv layers × 10 + 6 MoE attention layers × 13
    assert len(by_hand) == 2 + 2 * 8 + 16 * 10 + 6 * 13 == 256
    assert len(ROWS) == 13
    for row in ROWS:
        assert row["gguf_tensor_facts"]["n_tensors"] == len(by_hand)
        assert row["model_n_params_api"] == sum(int(np.prod(shape)) for shape in by_hand.values())


@pytest.mark.parametrize(
    ("change", "code", "words"),
    [
        ({"num_experts": 0}, "bad_config", "needs num_experts above 0"),
        ({"num_experts_per_tok": 33}, "bad_config", "num_experts_per_tok (33) is more than num_experts (32)"),
        ({"moe_intermediate_size": 0}, "bad_config", "needs moe_intermediate_size above 0"),
        ({"num_dense_layers": None}, "bad_config", "lacks num_dense_layers"),
        ({"layer_types": ["conv"] * 24}, "bad_config", "needs both attention and recurrent layers"),
    ],
)
def test_a_config_llama_cpp_could_not_load_is_refused(
    change: dict[str, Any], code: str, words: str, tmp_path: Path
) -> None:
    error = refused_config({**_config(), **change}, tmp_path)
    assert error["code"] == code
    assert words in error["message"]


def test_dense_lfm2_with_experts_stays_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**_config(), "model_type": "lfm2"}), encoding="utf-8")
    out = io.StringIO()
    assert run(["--json", "--config", str(path)], out) != 0
    assert json.loads(out.getvalue())["error"]["code"] == "unsupported_architecture"


TINY: dict[str, Any] = {
    "model_type": "lfm2_moe", "hidden_size": 256, "intermediate_size": 512, "moe_intermediate_size": 64,
    "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1024,
    "num_experts": 8, "num_experts_per_tok": 2, "num_dense_layers": 1, "conv_L_cache": 3,
    "max_position_embeddings": 4096, "tie_word_embeddings": True,
    "layer_types": ["conv", "full_attention", "conv", "full_attention"],
}  # fmt: skip


def test_a_gguf_header_written_as_the_converter_does_gives_the_config_architecture(tmp_path: Path) -> None:
    path = tmp_path / "lfm2moe.gguf"
    writer = GGUFWriter(str(path), arch="lfm2moe")
    # TextModel.set_gguf_parameters with per-layer KV heads, then LFM2MoeModel's keys (conversion/lfm2.py).
    kv = [TINY["num_key_value_heads"] if kind == "full_attention" else 0 for kind in TINY["layer_types"]]
    write_text_model_keys(writer, TINY, head_count_kv=kv)
    write_keys(
        writer,
        {
            "expert_count": TINY["num_experts"],
            "expert_used_count": TINY["num_experts_per_tok"],
            "file_type": LlamaFileType.MOSTLY_F16,
            "expert_feed_forward_length": TINY["moe_intermediate_size"],
            "leading_dense_block_count": TINY["num_dense_layers"],
            "vocab_size": TINY["vocab_size"],
            "shortconv_l_cache": TINY["conv_L_cache"],
        },
    )
    writer.add_token_list([f"t{i}" for i in range(1024)])
    header = write_zero_tensors(writer, path, _tensors_by_hand(TINY))
    from_file, from_config = assert_read_as_predicted(header, TINY)
    assert from_file.model_copy(update={"context_length": 0}) == from_config.model_copy(update={"context_length": 0})
    assert from_file.arch == "lfm2moe" and from_file.moe_layers == (False, True, True, True)
    assert from_file.recurrent_layers == (True, False, True, False)
