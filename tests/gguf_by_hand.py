"""GGUF files written the way a converter does, with tensors listed by hand, and the checks that calc reads them back
as it predicts them from config.json (for the per-architecture tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from gguf import GGUFWriter

from vramfit.calc.architecture import Architecture
from vramfit.calc.file_types import FileType
from vramfit.calc.gguf import GgufHeader, architecture_from_gguf, read_gguf, weights_from_gguf
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.tensors import count_params
from vramfit.calc.weights import weight_bytes


def write_keys(writer: GGUFWriter, keys: dict[str, Any]) -> None:
    """Each ``{name: value}`` through the writer's own ``add_<name>`` (gguf-py's GGUFWriter), in order."""
    for name, value in keys.items():
        getattr(writer, f"add_{name}")(value)


# TextModel.set_gguf_parameters's keys for every architecture (conversion/base.py at 0c1e57098) and the config.json
# keys they come from.
TEXT_MODEL_KEYS = {
    "block_count": "num_hidden_layers",
    "context_length": "max_position_embeddings",
    "embedding_length": "hidden_size",
    "feed_forward_length": "intermediate_size",
    "head_count": "num_attention_heads",
}


def write_text_model_keys(writer: GGUFWriter, config: dict[str, Any], *, head_count_kv: int | list[int]) -> None:
    """The keys TextModel.set_gguf_parameters writes for every architecture, the KV heads as the model gives them."""
    write_keys(writer, {name: config[key] for name, key in TEXT_MODEL_KEYS.items()} | {"head_count_kv": head_count_kv})


def write_zero_tensors(writer: GGUFWriter, path: Path, tensors: dict[str, tuple[int, ...]]) -> GgufHeader:
    """Add ``tensors`` (ggml order, row length first) as zeros, F32 where the converter forces it (1-D tensors, norms,
    the router, the short and Mamba convolutions, names not ending in .weight: conversion/base.py at 0c1e57098) and
    F16 elsewhere; write the file and read its header back."""
    for name, shape in tensors.items():
        forced = (".ffn_gate_inp.", ".shortconv.conv.", ".ssm_conv1d.")
        f32 = len(shape) == 1 or any(part in name for part in forced) or not name.endswith(".weight")
        f32 = f32 or name.endswith("_norm.weight")
        writer.add_tensor(name, np.zeros(tuple(reversed(shape)), dtype=np.float32 if f32 else np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return read_gguf(path)


def assert_read_as_predicted(header: GgufHeader, config: dict[str, Any]) -> tuple[Architecture, Architecture]:
    """The F16 file's weights, as placed, parameters included, are what calc predicts from ``config``; returns the
    architecture read from the header and the one from the config for the caller's own checks."""
    from_file, from_config = architecture_from_gguf(header), from_hf_config(config)
    weights = weights_from_gguf(from_file, header)
    predicted = weight_bytes(from_config, FileType.F16)
    assert weights.tensor_bytes == predicted.tensor_bytes
    assert (weights.gpu_bytes, weights.host_bytes) == (predicted.gpu_bytes, predicted.host_bytes)
    assert weights.params == count_params(from_config)
    return from_file, from_config
