"""Falcon-H1 (falcon_h1, llama.cpp's falcon-h1) end to end: attention and a Mamba2 mixer side by side in every layer,
so every layer holds a KV cache and a recurrent state; both worked out here from the committed configs and checked
against what llama.cpp allocated; the tensors listed by hand from llama.cpp's loader (src/models/falcon-h1.cpp at
0c1e57098) are the ones llama.cpp loaded; a GGUF header written with the converter's keys gives the architecture
back; configs llama.cpp could not load are refused."""

from __future__ import annotations

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

# Every measured row is also checked with the others: KV and recurrent state (tests/calc/test_kv.py), the files
# (tests/calc/test_quant.py).
ROWS = [row for row in llamacpp_rows() if row["llama_arch"] == "falcon-h1"]


def _config(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / "configs" / f"{name}.json").read_text(encoding="utf-8"))
    return data


def _kv_by_hand(c: dict[str, Any], context: int) -> int:
    """Every layer caches K and V of num_key_value_heads × head_dim, f16."""
    return c["num_hidden_layers"] * context * 2 * c["num_key_value_heads"] * c["head_dim"] * 2


def _state_by_hand(c: dict[str, Any]) -> int:
    """Every layer, one sequence, f32: the conv state (d_conv − 1) × (d_ssm + 2 × groups × d_state) and the SSM state
    d_state × d_ssm (llama_hparams::n_embd_r / n_embd_s)."""
    d, n, g, k = c["mamba_d_ssm"], c["mamba_d_state"], c["mamba_n_groups"], c["mamba_d_conv"]
    return c["num_hidden_layers"] * 4 * ((k - 1) * (d + 2 * g * n) + n * d)


@pytest.mark.parametrize(
    ("question", "lang", "preset", "config", "context"),
    [
        ("falcon h1 7b 32k on a 3060", "en", "falcon-h1-7b", "Falcon-H1-7B-Instruct", 32768),
        ("팔콘 h1 7b 32k 3060에서 돌아가?", "ko", "falcon-h1-7b", "Falcon-H1-7B-Instruct", 32768),
        ("falcon-h1-0.5b-instruct 16k", "en", "falcon-h1-0.5b", "Falcon-H1-0.5B-Instruct", 16384),
        ("팔콘 h1 0.5b 4k", "ko", "falcon-h1-0.5b", "Falcon-H1-0.5B-Instruct", 4096),
        ("falcon h1 3b 32k on a 4060", "en", "falcon-h1-3b", "Falcon-H1-3B-Base", 32768),
        ("팔콘 h1 3b 32k 4060에서 돌아가?", "ko", "falcon-h1-3b", "Falcon-H1-3B-Base", 32768),
        ("falcon h1 1.5b 32k on a 3060", "en", "falcon-h1-1.5b", "Falcon-H1-1.5B-Instruct", 32768),
        ("팔콘 h1 1.5b 8k 3060에서 돌아가?", "ko", "falcon-h1-1.5b", "Falcon-H1-1.5B-Instruct", 8192),
    ],
)
def test_every_layer_holds_kv_and_state(question: str, lang: str, preset: str, config: str, context: int) -> None:
    c = _config(config)
    answer = ask(question, lang)
    assert answer["request"]["model"]["id"] == preset
    assert answer["request"]["context"] == context
    assert answer["estimate"]["kv_cache_bytes"] == _kv_by_hand(c, context)
    assert answer["estimate"]["recurrent_state_bytes"] == _state_by_hand(c)


def test_the_hand_counts_are_llama_cpps() -> None:
    # 7B at 32,768 tokens: 44 × 32,768 × 2 × 2 × 128 × 2 B = 1,408 MiB; state 133.80 MiB (llama.cpp's log lines).
    assert _kv_by_hand(_config("Falcon-H1-7B-Instruct"), 32768) == 1408 * MIB
    assert round(_state_by_hand(_config("Falcon-H1-7B-Instruct")) / MIB, 2) == 133.80
    # 3B at 32,768 tokens: 32 × 32,768 × 2 × 2 × 128 × 2 B = 1,024 MiB; state 32 × 4 × (3 × 4,608 + 256 × 4,096) B
    assert _kv_by_hand(_config("Falcon-H1-3B-Base"), 32768) == 1024 * MIB
    assert _state_by_hand(_config("Falcon-H1-3B-Base")) == 135_987_200
    # 1.5B at 4,096 tokens: 24 × 4,096 × 2 × 2 × 128 × 2 B = 96 MiB; state 72.98 MiB (llama.cpp's log lines)
    assert _kv_by_hand(_config("Falcon-H1-1.5B-Instruct"), 4096) == 96 * MIB
    assert round(_state_by_hand(_config("Falcon-H1-1.5B-Instruct")) / MIB, 2) == 72.98


def test_the_3b_has_the_published_parameter_count() -> None:
    """Falcon-H1-3B-Base's safetensors hold 3,149,387,264 parameters (6,298,774,528 bytes of bf16, the copy's
    'published_total_params', presets' falcon-h1-3b source): the tensors by hand from the reconstructed config count
    the same, and so did llama.cpp when it loaded them."""
    by_hand = _tensors_by_hand(_config("Falcon-H1-3B-Base"))
    assert sum(int(np.prod(shape)) for shape in by_hand.values()) == 3_149_387_264
    assert {row["model_n_params_api"] for row in ROWS if row["arch_model"] == "Falcon-H1-3B-Base"} == {3_149_387_264}


def test_the_1_5b_agrees_with_the_base_models_parameter_count() -> None:
    """An MLX copy of Falcon-H1-1.5B-Base (huggingface.co/sdkv2/falcon-h1-1.5b-mlx-bf16, presets' falcon-h1-1.5b
    source note) holds 1,554,859,392 parameters: the reconstructed Instruct config's tensors by hand, less one token's
    row of token_embd and of the head (2 × 2,048; the Base's vocabulary is 65,536), count the same. An
    intermediate_size one off would move the count by 3 × 2,048 × 24 = 147,456."""
    c = _config("Falcon-H1-1.5B-Instruct")
    by_hand = _tensors_by_hand(c)
    instruct = sum(int(np.prod(shape)) for shape in by_hand.values())
    assert instruct - 2 * c["hidden_size"] == 1_554_859_392
    assert {row["model_n_params_api"] for row in ROWS if row["arch_model"] == "Falcon-H1-1.5B-Instruct"} == {instruct}


def _tensors_by_hand(c: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """llama_model_falcon_h1::load_arch_tensors, in ggml order (row length first), read off the source."""
    e, v, ff, hd = c["hidden_size"], c["vocab_size"], c["intermediate_size"], c["head_dim"]
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    d, n, g, k = c["mamba_d_ssm"], c["mamba_d_state"], c["mamba_n_groups"], c["mamba_d_conv"]
    nh, conv = d // c["mamba_d_head"], d + 2 * g * n
    out: dict[str, tuple[int, ...]] = {"token_embd.weight": (e, v), "output_norm.weight": (e,), "output.weight": (e, v)}
    for il in range(c["num_hidden_layers"]):
        out |= {
            f"blk.{il}.attn_norm.weight": (e,), f"blk.{il}.attn_q.weight": (e, q), f"blk.{il}.attn_k.weight": (e, kv),
            f"blk.{il}.attn_v.weight": (e, kv), f"blk.{il}.attn_output.weight": (q, e),
            f"blk.{il}.ssm_in.weight": (e, 2 * d + 2 * g * n + nh), f"blk.{il}.ssm_conv1d.weight": (k, conv),
            f"blk.{il}.ssm_conv1d.bias": (conv,), f"blk.{il}.ssm_dt.bias": (nh,), f"blk.{il}.ssm_a": (1, nh),
            f"blk.{il}.ssm_d": (1, nh), f"blk.{il}.ssm_out.weight": (d, e), f"blk.{il}.ffn_norm": (e,),
            f"blk.{il}.ffn_gate.weight": (e, ff), f"blk.{il}.ffn_up.weight": (e, ff),
            f"blk.{il}.ffn_down.weight": (ff, e),
        }  # fmt: skip
        if c.get("mamba_rms_norm"):
            out[f"blk.{il}.ssm_norm.weight"] = (d // g, g)
    return out


@pytest.mark.parametrize(
    "name", ["Falcon-H1-0.5B-Instruct", "Falcon-H1-1.5B-Instruct", "Falcon-H1-7B-Instruct", "Falcon-H1-3B-Base"]
)
def test_the_tensors_are_the_loaders_and_llama_cpp_loaded_as_many(name: str) -> None:
    c = _config(name)
    by_hand = _tensors_by_hand(c)
    rows = [row for row in ROWS if row["arch_model"] == name]
    assert len(rows) == (8 if name == "Falcon-H1-0.5B-Instruct" else 13)
    for row in rows:
        assert row["gguf_tensor_facts"]["n_tensors"] == len(by_hand)
        assert row["model_n_params_api"] == sum(int(np.prod(shape)) for shape in by_hand.values())


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"mamba_d_ssm": None}, "lacks mamba_d_ssm"),
        ({"mamba_n_groups": None}, "lacks mamba_n_groups"),
        ({"mamba_d_ssm": 1000}, "cannot form heads of 64"),
        ({"num_key_value_heads": 3}, "8 attention heads cannot share 3 KV heads"),
    ],
)
def test_a_config_llama_cpp_could_not_load_is_a_bad_config(change: dict[str, Any], words: str, tmp_path: Path) -> None:
    error = refused_config({**_config("Falcon-H1-0.5B-Instruct"), **change}, tmp_path)
    assert error["code"] == "bad_config"
    assert words in error["message"]


TINY: dict[str, Any] = {
    "model_type": "falcon_h1", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 3,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 1024, "mamba_d_ssm": 256,
    "mamba_d_head": 32, "mamba_d_state": 16, "mamba_n_groups": 1, "mamba_d_conv": 4, "mamba_rms_norm": True,
    "max_position_embeddings": 4096, "tie_word_embeddings": False,
}  # fmt: skip


def test_a_gguf_header_written_as_the_converter_does_gives_the_config_architecture(tmp_path: Path) -> None:
    path = tmp_path / "falcon-h1.gguf"
    writer = GGUFWriter(str(path), arch="falcon-h1")
    # TextModel / Mamba2Model / FalconH1Model.set_gguf_parameters (conversion/falcon_h1.py, mamba.py).
    write_text_model_keys(writer, TINY, head_count_kv=TINY["num_key_value_heads"])
    write_keys(
        writer,
        {
            "key_length": TINY["head_dim"],
            "value_length": TINY["head_dim"],
            "ssm_conv_kernel": TINY["mamba_d_conv"],
            "ssm_inner_size": TINY["mamba_d_ssm"],
            "ssm_state_size": TINY["mamba_d_state"],
            "ssm_time_step_rank": TINY["mamba_d_ssm"] // TINY["mamba_d_head"],
            "ssm_group_count": TINY["mamba_n_groups"],
            "file_type": LlamaFileType.MOSTLY_F16,
        },
    )
    writer.add_token_list([f"t{i}" for i in range(1024)])
    header = write_zero_tensors(writer, path, _tensors_by_hand(TINY))
    from_file, from_config = assert_read_as_predicted(header, TINY)
    assert from_file.model_copy(update={"context_length": 0}) == from_config.model_copy(update={"context_length": 0})
    assert from_file.arch == "falcon-h1" and from_file.recurrent_layers == (True, True, True)
    assert from_file.kv_layers == 3 and from_file.ssm_group_norm


@pytest.mark.parametrize(
    ("question", "lang"), [("falcon h1 34b 32k on 2x 3090", "en"), ("팔콘 h1 34b 32k 3090 두 장", "ko")]
)
def test_falcon_h1_34b_from_its_sourced_numbers(question: str, lang: str) -> None:
    """Falcon-H1 34B, rebuilt from Megatron-Bridge's reading of its config.json: attention in all 72 layers (4 KV
    heads of 128) and a Mamba2 state beside it (32 heads of 128, state 256, 2 groups, kernel 4), worked out here."""
    answer = ask(question, lang)
    assert answer["request"]["model"]["id"] == "falcon-h1-34b"
    assert answer["estimate"]["kv_cache_bytes"] == 72 * 2 * 4 * 128 * 2 * 32768 == 4608 * MIB
    conv = (4 - 1) * (32 * 128 + 2 * 2 * 256) * 4  # conv state: (d_conv − 1) × (d_inner + 2 × groups × d_state), f32
    ssm = 256 * 128 * 32 * 4  # the state: d_state × head size × heads, f32
    assert answer["estimate"]["recurrent_state_bytes"] == 72 * (conv + ssm)
