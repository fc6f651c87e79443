"""GGUF headers: files written by the reference writer (gguf-py) read back to exact sizes and architecture."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from gguf import GGMLQuantizationType, GGUFWriter

from vramfit.calc.architecture import from_hf_config
from vramfit.calc.errors import BadFileError
from vramfit.calc.file_types import FileType
from vramfit.calc.gguf import architecture_from_gguf, read_gguf, weights_from_gguf
from vramfit.calc.llama_quant import tensor_types
from vramfit.calc.tensors import gguf_tensors
from vramfit.calc.weights import weight_bytes

TINY_LLAMA = {"model_type": "llama", "hidden_size": 512, "intermediate_size": 1024, "num_hidden_layers": 3,
              "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 2048,
              "max_position_embeddings": 4096, "tie_word_embeddings": False}


def write_gguf(path: Path, config: dict[str, object], ftype: FileType) -> None:
    """A GGUF with the architecture's tensors in llama.cpp's quant mix and zero weights."""
    arch = from_hf_config(config)
    writer = GGUFWriter(str(path), arch="llama")
    writer.add_block_count(arch.n_layers)
    writer.add_embedding_length(arch.hidden_size)
    writer.add_head_count(arch.n_heads[0])
    writer.add_head_count_kv(arch.n_kv_heads[0])
    writer.add_feed_forward_length(arch.ffn_size[0])
    writer.add_context_length(arch.context_length)
    writer.add_key_length(arch.head_dim_k)
    writer.add_value_length(arch.head_dim_v)
    writer.add_vocab_size(arch.vocab_size)
    writer.add_token_list([f"t{i}" for i in range(arch.vocab_size)])
    for spec, ggml_type in tensor_types(arch, ftype):
        outer = tuple(reversed(spec.shape[1:]))
        if ggml_type.is_quantized:  # gguf-py takes quantized data as bytes, one row of blocks per array row
            row = ggml_type.type_size * spec.shape[0] // ggml_type.block_size
            data = np.zeros((*outer, row), dtype=np.uint8)
            writer.add_tensor(spec.name, data, raw_dtype=GGMLQuantizationType[ggml_type.value])
        else:
            dtype = np.float32 if ggml_type.value == "F32" else np.float16
            writer.add_tensor(spec.name, np.zeros((*outer, spec.shape[0]), dtype=dtype))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


@pytest.mark.parametrize("ftype", [FileType.Q4_K_M, FileType.Q8_0, FileType.F16])
def test_header_gives_exact_sizes_and_shape(tmp_path: Path, ftype: FileType) -> None:
    path = tmp_path / "tiny.gguf"
    write_gguf(path, TINY_LLAMA, ftype)
    header = read_gguf(path)
    arch = architecture_from_gguf(header)
    expected_arch = from_hf_config(TINY_LLAMA)
    assert (arch.n_layers, arch.hidden_size, arch.n_kv_heads, arch.head_dim_k, arch.vocab_size) == (
        3, 512, (2, 2, 2), 64, 2048)
    assert arch.tied_embeddings is False
    weights = weights_from_gguf(arch, header)
    predicted = weight_bytes(expected_arch, ftype)
    assert weights.tensor_bytes == predicted.tensor_bytes
    assert weights.gpu_bytes == predicted.gpu_bytes
    assert weights.host_bytes == predicted.host_bytes
    assert weights.params == predicted.params == sum(t.n_elements for t in gguf_tensors(expected_arch))
    assert weights.file_bytes == path.stat().st_size


def test_tied_model_puts_a_copy_of_the_embeddings_on_the_gpu(tmp_path: Path) -> None:
    path = tmp_path / "tied.gguf"
    write_gguf(path, {**TINY_LLAMA, "tie_word_embeddings": True}, FileType.Q8_0)
    header = read_gguf(path)
    weights = weights_from_gguf(architecture_from_gguf(header), header)
    assert weights.gpu_bytes == weights.tensor_bytes
    assert weights.host_bytes == weights.output_bytes > 0


@pytest.mark.parametrize("content", [b"", b"GGML" + b"\0" * 40, b"GGUF\x03\0\0\0" + b"\xff" * 16, b"GGUF\x03\0\0"])
def test_bad_files_are_bad_file_errors(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(content)
    with pytest.raises(BadFileError):
        read_gguf(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(BadFileError):
        read_gguf(tmp_path / "nope.gguf")


def test_config_json_shape_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(TINY_LLAMA), encoding="utf-8")
    assert from_hf_config(json.loads(path.read_text())) == from_hf_config(TINY_LLAMA)
