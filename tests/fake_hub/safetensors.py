"""Safetensors files written by hand for the fake Hub (the ``safetensors`` package is not installed): an 8-byte
little-endian header length, the JSON header (every tensor's dtype, shape and ``data_offsets``, in order, and an
optional ``__metadata__``), padded with spaces to 8 bytes as the safetensors writer does, then the data (zeros).

:func:`llama_tensors` names a Transformers Llama checkpoint's tensors in BF16, FP8 (F8_E4M3 weights with an F32
scale each, as llm-compressor's FP8-dynamic writes them) or AWQ (I32 ``qweight`` with 8 four-bit weights per
element, ``qzeros`` and F16 ``scales`` per group of 128 inputs), and :func:`shard` splits one into files with the
``model.safetensors.index.json`` that lists them."""

from __future__ import annotations

import json
import math
import struct
from typing import Any

SIZES = {"F32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1, "I32": 4, "U8": 1}
Tensor = tuple[str, str, tuple[int, ...]]  # name, dtype, shape


def nbytes(dtype: str, shape: tuple[int, ...]) -> int:
    return SIZES[dtype] * math.prod(shape)


def safetensors_file(tensors: list[Tensor], metadata: dict[str, str] | None = None) -> bytes:
    header: dict[str, Any] = {"__metadata__": metadata} if metadata else {}
    offset = 0
    for name, dtype, shape in tensors:
        size = nbytes(dtype, shape)
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw + bytes(offset)


def llama_tensors(config: dict[str, Any], form: str = "bf16") -> list[Tensor]:
    """A Llama checkpoint's tensors: ``form`` is "bf16", "fp8" or "awq"."""
    hidden, ff, vocab = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    heads, kv_heads = config["num_attention_heads"], config["num_key_value_heads"]
    head_dim = hidden // heads
    out: list[Tensor] = [("model.embed_tokens.weight", "BF16", (vocab, hidden))]
    for il in range(config["num_hidden_layers"]):
        p = f"model.layers.{il}."
        out += [(p + "input_layernorm.weight", "BF16", (hidden,))]
        out += [(p + "post_attention_layernorm.weight", "BF16", (hidden,))]
        linears = {
            "self_attn.q_proj": (heads * head_dim, hidden),
            "self_attn.k_proj": (kv_heads * head_dim, hidden),
            "self_attn.v_proj": (kv_heads * head_dim, hidden),
            "self_attn.o_proj": (hidden, heads * head_dim),
            "mlp.gate_proj": (ff, hidden),
            "mlp.up_proj": (ff, hidden),
            "mlp.down_proj": (hidden, ff),
        }
        for name, (rows, cols) in linears.items():
            if form == "bf16":
                out.append((f"{p}{name}.weight", "BF16", (rows, cols)))
            elif form == "fp8":
                out += [(f"{p}{name}.weight", "F8_E4M3", (rows, cols)), (f"{p}{name}.weight_scale", "F32", ())]
            else:  # AWQ (GEMM): qweight [in, out / 8], qzeros [in / 128, out / 8], scales [in / 128, out]
                out += [(f"{p}{name}.qweight", "I32", (cols, rows // 8)),
                        (f"{p}{name}.qzeros", "I32", (cols // 128, rows // 8)),
                        (f"{p}{name}.scales", "F16", (cols // 128, rows))]  # fmt: skip
    out.append(("model.norm.weight", "BF16", (hidden,)))
    if not config.get("tie_word_embeddings"):
        out.append(("lm_head.weight", "BF16", (vocab, hidden)))
    return out


def shard(tensors: list[Tensor], parts: int) -> dict[str, bytes]:
    """``model-0000i-of-0000n.safetensors`` files holding ``tensors`` in order, and their index."""
    names = [f"model-{i:05d}-of-{parts:05d}.safetensors" for i in range(1, parts + 1)]
    per = -(-len(tensors) // parts)
    files: dict[str, bytes] = {}
    weight_map: dict[str, str] = {}
    for name, start in zip(names, range(0, len(tensors), per), strict=False):
        chunk = tensors[start : start + per]
        files[name] = safetensors_file(chunk, {"format": "pt"})
        weight_map.update({t[0]: name for t in chunk})
    total = sum(nbytes(dtype, shape) for _, dtype, shape in tensors)
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    files["model.safetensors.index.json"] = json.dumps(index).encode()
    return files
