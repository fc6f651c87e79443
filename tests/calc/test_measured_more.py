"""Calculator fixes found by measuring more families with llama.cpp itself (tests/data/groundtruth/LLAMACPP.md).

Each expected number is worked out by hand from the config.json and the llama.cpp rule named in the test.
"""

from __future__ import annotations

import json
from typing import Any

from tests.groundtruth import data_file
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.tensors import gguf_tensors


def _phi4_mini() -> dict[str, Any]:
    config: dict[str, Any] = json.loads(data_file("configs", "Phi-4-mini-instruct.json").read_text(encoding="utf-8"))
    return config


def test_phi4_mini_rope_factors_cover_the_rotated_pairs_only() -> None:
    # Phi3MiniModel.generate_extra_tensors (conversion/phi.py, llama.cpp 0c1e57098): rope_dims =
    # int(partial_rotary_factor * n_embd) // n_head = int(0.75 * 3072) // 24 = 96, so long and short factors hold
    # 96 / 2 = 48 entries each (the config's long_factor has 48), not head_dim / 2 = 64.
    config = _phi4_mini()
    assert len(config["rope_scaling"]["long_factor"]) == 48
    shapes = {t.name: t.shape for t in gguf_tensors(from_hf_config(config))}
    assert shapes["rope_factors_long.weight"] == (48,)
    assert shapes["rope_factors_short.weight"] == (48,)


def test_phi4_mini_parameters_as_llama_cpp_counts_them() -> None:
    # token_embd 200,064 × 3,072 = 614,596,608 (tied: no output), output_norm 3,072, two factor tensors of 48.
    # Per layer: attn_norm 3,072 + attn_qkv 3,072 × (3,072 + 2 × 8 × 128) = 15,728,640 + attn_output 3,072² =
    # 9,437,184 + ffn_norm 3,072 + ffn_up 3,072 × 2 × 8,192 = 50,331,648 + ffn_down 8,192 × 3,072 = 25,165,824,
    # i.e. 100,669,440; × 32 layers = 3,221,422,080. Total 3,836,021,856, llama.cpp's model_n_params for the file.
    tensors = gguf_tensors(from_hf_config(_phi4_mini()))
    assert len(tensors) == 3 + 1 + 32 * 6
    assert sum(t.n_elements for t in tensors) == 3_836_021_856


def test_full_rotary_longrope_keeps_half_the_head() -> None:
    # The same config without partial_rotary_factor rotates the whole head: rope_dims = 3072 // 24 = 128 = head_dim,
    # 64 factors each (Phi-3.5-mini's full rotary: 3072 // 32 = 96, 48 each, as before the fix).
    config = {key: value for key, value in _phi4_mini().items() if key != "partial_rotary_factor"}
    shapes = {t.name: t.shape for t in gguf_tensors(from_hf_config(config))}
    assert shapes["rope_factors_long.weight"] == shapes["rope_factors_short.weight"] == (64,)


def test_official_gemma3_config_takes_the_converters_defaults() -> None:
    # google/gemma-3-4b-it's config.json names six text_config keys. conversion/gemma.py Gemma3Model (llama.cpp
    # 0c1e57098) writes 8 heads, 4 KV heads, head size 256 and context 131,072 for the missing ones, and with no
    # vocab_size its vocabulary is the tokenizer's 262,144 pieces, to which token_embd is cut.
    config = json.loads(data_file("configs", "gemma-3-4b-it.trimmed.json").read_text(encoding="utf-8"))
    arch = from_hf_config(config)
    assert (arch.n_heads[0], arch.n_kv_heads[0], arch.head_dim_k) == (8, 4, 256)
    assert (arch.vocab_size, arch.context_length, arch.tied_embeddings) == (262_144, 131_072, True)
    tensors = gguf_tensors(arch)
    # token_embd + output_norm, 13 per layer (4 norms, q/k norms, q, k, v, o, gate, up, down).
    assert len(tensors) == 2 + 34 * 13
    # token_embd 262,144 × 2,560 = 671,088,640; output_norm 2,560. Per layer: norms 4 × 2,560 + 2 × 256 = 10,752;
    # q 2,560 × 8 × 256 = 5,242,880; k and v 2,560 × 4 × 256 = 2,621,440 each; o 5,242,880; gate, up and down
    # 3 × 2,560 × 10,240 = 78,643,200; i.e. 94,382,592, × 34 = 3,209,008,128. Total 3,880,099,328.
    assert sum(t.n_elements for t in tensors) == 3_880_099_328


def test_a_gemma3_config_that_names_its_vocabulary_keeps_it() -> None:
    # A text-only re-export writes vocab_size 262,208: _create_vocab_sentencepiece pads the vocabulary to it and
    # token_embd keeps all rows.
    config = json.loads(data_file("configs", "gemma-3-12b-it.json").read_text(encoding="utf-8"))
    config["text_config"] = dict(config["text_config"], vocab_size=262_208, head_dim=256)
    assert from_hf_config(config).vocab_size == 262_208
