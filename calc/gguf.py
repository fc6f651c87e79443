"""GGUF headers: exact tensor sizes and the architecture, read without loading any weights.

A GGUF file starts with a header (magic, version, tensor count, metadata key/values, tensor infos) followed by
aligned tensor data; the header alone gives every tensor's shape and ggml type, so vramfit reads the first
megabytes of the file with the standard library (the ``gguf`` package is only needed to write test files).
Split files (``-00001-of-00003.gguf``) are read part by part and added up.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import BaseModel, ConfigDict

from vramfit.calc.architecture import Architecture
from vramfit.calc.errors import BadFileError, VramfitError
from vramfit.calc.families import family_of
from vramfit.calc.files import open_regular_file
from vramfit.calc.ggml import GgmlType, tensor_bytes
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.limits import (
    GGML_MAX_DIMS,
    MAX_GGUF_ARRAY,
    MAX_GGUF_HEADER_BYTES,
    MAX_GGUF_KEYS,
    MAX_GGUF_STRING,
    MAX_GGUF_TENSORS,
    MAX_KEPT_ARRAY,
    MAX_TENSOR_ELEMENTS,
)
from vramfit.calc.tensors import loaded_past_layers
from vramfit.calc.weight_bytes import WeightBytes, layer_of, sum_by_role

GGUF_MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32
MAX_ALIGNMENT = 1 << 16
GGUF_ARRAY = 9
GGUF_STRING = 8

# gguf value types (gguf-py GGUFValueType) → struct format; 8 = string, 9 = array.
_SCALAR_FORMATS: dict[int, str] = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?",
                                   10: "Q", 11: "q", 12: "d"}  # fmt: skip
_GGML_BY_ID: dict[int, GgmlType] = {t.ggml_id: t for t in GgmlType}
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")


class GgufTensor(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    name: str
    ggml_type: GgmlType
    shape: tuple[int, ...]
    n_elements: int
    n_bytes: int


class GgufHeader(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    metadata: dict[str, Any]
    tensors: tuple[GgufTensor, ...]
    metadata_bytes: int
    file_bytes: int


class _Skipped(int):
    """An array whose items were skipped; its value is the item count."""


class _Reader:
    """A GGUF header read from a growing in-memory buffer, never past :data:`calc.limits.MAX_GGUF_HEADER_BYTES`.

    Reading into one buffer and walking it with ``struct.unpack_from`` lets arrays be skipped in bulk (one
    ``unpack_from`` for a numeric array, one length read per string), so a header of millions of items costs
    milliseconds rather than a Python object per item.
    """

    def __init__(self, stream: BinaryIO, name: str, size: int) -> None:
        self.stream = stream
        self.name = name
        self.limit = min(size, MAX_GGUF_HEADER_BYTES)
        self.buffer = bytearray()
        self.pos = 0

    def _need(self, n: int) -> None:
        end = self.pos + n
        if end <= len(self.buffer):
            return
        if end > self.limit:
            if self.limit >= MAX_GGUF_HEADER_BYTES:
                raise BadFileError(f"{self.name}: the GGUF header is larger than {MAX_GGUF_HEADER_BYTES >> 20} MiB")
            raise BadFileError(f"{self.name}: truncated GGUF header")
        want = min(self.limit, max(end, 2 * len(self.buffer), 1 << 20)) - len(self.buffer)
        chunk = self.stream.read(want)
        self.buffer += chunk
        if len(self.buffer) < end:
            raise BadFileError(f"{self.name}: truncated GGUF header")

    def read(self, n: int) -> bytes:
        self._need(n)
        data = bytes(self.buffer[self.pos : self.pos + n])
        self.pos += n
        return data

    def u32(self) -> int:
        self._need(4)
        value: int = _U32.unpack_from(self.buffer, self.pos)[0]
        self.pos += 4
        return value

    def u64(self) -> int:
        self._need(8)
        value: int = _U64.unpack_from(self.buffer, self.pos)[0]
        self.pos += 8
        return value

    def string(self, what: str = "string") -> str:
        length = self.u64()
        if length > MAX_GGUF_STRING:
            raise BadFileError(f"{self.name}: implausible {what} length {length}")
        return self.read(length).decode("utf-8", errors="replace")

    def skip_strings(self, count: int) -> None:
        # The hot loop of a header: one length read per token, with the buffer checks hoisted out of the common path.
        unpack = _U64.unpack_from
        buffer, pos = self.buffer, self.pos
        for _ in range(count):
            if pos + 8 > len(buffer):
                self.pos = pos
                self._need(8)
            length = unpack(buffer, pos)[0]
            pos += 8
            if length > MAX_GGUF_STRING:
                raise BadFileError(f"{self.name}: implausible string length {length}")
            if pos + length > len(buffer):
                self.pos = pos
                self._need(length)
            pos += length
        self.pos = pos

    def value(self, value_type: int, key: str) -> Any:
        fmt = _SCALAR_FORMATS.get(value_type)
        if fmt is not None:
            size = struct.calcsize(fmt)
            self._need(size)
            value = struct.unpack_from("<" + fmt, self.buffer, self.pos)[0]
            self.pos += size
            return value
        if value_type == GGUF_STRING:
            return self.string()
        if value_type == GGUF_ARRAY:
            return self.array(key)
        raise BadFileError(f"{self.name}: {key} has unknown GGUF value type {value_type}", field=key)

    def array(self, key: str) -> Any:
        item_type = self.u32()
        count = self.u64()
        if count > MAX_GGUF_ARRAY:
            raise BadFileError(f"{self.name}: {key} has an implausible array length {count}", field=key)
        if item_type == GGUF_ARRAY:
            # llama.cpp's gguf.cpp refuses nested arrays too (gguf_init_from_file_impl: "nested arrays").
            raise BadFileError(f"{self.name}: {key} is a nested array, which GGUF readers do not accept", field=key)
        if item_type == GGUF_STRING:
            # Token lists and merges: only their length matters for memory.
            self.skip_strings(count)
            return _Skipped(count)
        fmt = _SCALAR_FORMATS.get(item_type)
        if fmt is None:
            raise BadFileError(f"{self.name}: {key} has unknown GGUF array type {item_type}", field=key)
        size = struct.calcsize(fmt) * count
        self._need(size)
        if count > MAX_KEPT_ARRAY:  # token scores and types: counted, not kept
            self.pos += size
            return _Skipped(count)
        items = list(struct.unpack_from(f"<{count}{fmt}", self.buffer, self.pos))
        self.pos += size
        return items


def _alignment(metadata: Mapping[str, Any], name: str) -> int:
    value = metadata.get("general.alignment", DEFAULT_ALIGNMENT)
    # gguf.cpp: "alignment ... is not a power of 2" is refused at load.
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_ALIGNMENT or value & (value - 1):
        raise BadFileError(
            f"{name}: general.alignment must be a power of two, not {str(value)[:40]}", field="general.alignment"
        )
    return value


def _read_one(path: Path) -> GgufHeader:
    stream, size = open_regular_file(path)
    with stream:
        return read_gguf_stream(stream, path.name, size)


def read_gguf_stream(stream: BinaryIO, name: str, size: int, *, max_tensors: int = MAX_GGUF_TENSORS) -> GgufHeader:
    """The header of a GGUF file of ``size`` bytes read from ``stream`` (a local file, or a caller's ranged reader of
    a remote one): at most :data:`calc.limits.MAX_GGUF_HEADER_BYTES` are read; BadFileError when unreadable, and
    (its ``field`` "tensors") when the header lists more than ``max_tensors``, before any of them is read."""
    try:
        reader = _Reader(stream, name, size)
        if reader.read(4) != GGUF_MAGIC:
            raise BadFileError(f"{name} is not a GGUF file")
        version = reader.u32()
        if version not in (2, 3):
            raise BadFileError(f"{name}: unsupported GGUF version {version}")
        n_tensors = reader.u64()
        n_kv = reader.u64()
        if n_tensors > MAX_GGUF_TENSORS or n_kv > MAX_GGUF_KEYS:
            raise BadFileError(f"{name}: implausible GGUF counts ({n_tensors} tensors, {n_kv} keys)")
        if n_tensors > max_tensors:
            raise BadFileError(f"{name} lists {n_tensors:,} tensors, more than {max_tensors:,}", field="tensors")
        metadata: dict[str, Any] = {}
        for _ in range(n_kv):
            key = reader.string("key")
            metadata[key] = reader.value(reader.u32(), key)
        tensors: list[GgufTensor] = []
        for _ in range(n_tensors):
            tensor_name = reader.string("tensor name")
            n_dims = reader.u32()
            if n_dims > GGML_MAX_DIMS:
                raise BadFileError(f"{name}: tensor {tensor_name[:80]} has {n_dims} dimensions")
            shape = tuple(reader.u64() for _ in range(n_dims))
            type_id = reader.u32()
            reader.u64()  # data offset
            ggml_type = _GGML_BY_ID.get(type_id)
            if ggml_type is None:
                raise BadFileError(f"{name}: tensor {tensor_name[:80]} has unknown ggml type {type_id}")
            n_elements = 1
            for dim in shape:
                n_elements *= dim
            if n_elements > MAX_TENSOR_ELEMENTS:
                raise BadFileError(f"{name}: tensor {tensor_name[:80]} has an implausible shape {shape}")
            tensors.append(
                GgufTensor(
                    name=tensor_name,
                    ggml_type=ggml_type,
                    shape=shape,
                    n_elements=n_elements,
                    n_bytes=tensor_bytes(ggml_type, shape or (1,)),
                )
            )
        alignment = _alignment(metadata, name)
        header_end = reader.pos
    except OSError as exc:
        raise BadFileError(f"cannot read {name}: {exc.strerror or exc}") from exc
    except (struct.error, UnicodeDecodeError, ValueError, OverflowError) as exc:
        if isinstance(exc, VramfitError):  # the reader's own errors, and a remote stream's, pass through
            raise
        raise BadFileError(f"{name}: malformed GGUF header ({str(exc)[:120]})") from exc
    data_offset = -(-header_end // alignment) * alignment
    return GgufHeader(metadata=metadata, tensors=tuple(tensors), metadata_bytes=data_offset, file_bytes=size)


_SPLIT = re.compile(r"^(?P<stem>.*)-(?P<index>\d{5})-of-(?P<count>\d{5})\.gguf$")


def read_gguf(path: str | Path) -> GgufHeader:
    """Read a GGUF file's header (all parts of a split file), raising BadFileError when unreadable."""
    first = Path(path)
    match = _SPLIT.match(first.name)
    parts = [first]
    if match:
        count = int(match["count"])
        parts = [first.with_name(f"{match['stem']}-{i:05d}-of-{count:05d}.gguf") for i in range(1, count + 1)]
    return merge_gguf_headers([_read_one(p) for p in parts])


def merge_gguf_headers(headers: Sequence[GgufHeader]) -> GgufHeader:
    """One header for the parts of a split GGUF (``-00001-of-00003``): every tensor, the first part's metadata."""
    metadata: dict[str, Any] = {}
    for header in headers:
        metadata = {**header.metadata, **metadata}
    return GgufHeader(
        metadata=metadata,
        tensors=tuple(t for h in headers for t in h.tensors),
        metadata_bytes=sum(h.metadata_bytes for h in headers),
        file_bytes=sum(h.file_bytes for h in headers),
    )


def _meta(metadata: Mapping[str, Any], arch: str, key: str, default: Any = None) -> Any:
    return metadata.get(f"{arch}.{key}", default)


def hf_config_from_gguf(header: GgufHeader) -> dict[str, Any]:
    """The GGUF metadata as a Hugging Face-style config, so one rule (from_hf_config) builds every Architecture."""
    md = header.metadata
    arch = str(md.get("general.architecture", ""))
    if not arch or _meta(md, arch, "block_count") is None:
        raise BadFileError("GGUF metadata lacks general.architecture or block_count")
    family = family_of(arch)
    names = {t.name for t in header.tensors}
    vocab = _meta(md, arch, "vocab_size") or md.get("tokenizer.ggml.tokens")
    if vocab is None:
        embd = next((t for t in header.tensors if t.name == "token_embd.weight"), None)
        vocab = embd.shape[1] if embd and len(embd.shape) > 1 else 0
    config: dict[str, Any] = {
        "llama_arch": arch,
        "num_hidden_layers": _meta(md, arch, "block_count"),
        "hidden_size": _meta(md, arch, "embedding_length"),
        "num_attention_heads": _meta(md, arch, "attention.head_count"),
        "num_key_value_heads": _meta(md, arch, "attention.head_count_kv"),
        "intermediate_size": _meta(md, arch, "feed_forward_length", 0),
        "vocab_size": vocab,
        "max_position_embeddings": _meta(md, arch, "context_length", 4096),
        "tie_word_embeddings": "output.weight" not in names,
        "sliding_window": _meta(md, arch, "attention.sliding_window", 0),
        "num_experts": _meta(md, arch, "expert_count", 0),
        "num_experts_per_tok": _meta(md, arch, "expert_used_count", 0),
        "moe_intermediate_size": _meta(md, arch, "expert_feed_forward_length", 0),
        "n_shared_experts": _meta(md, arch, "expert_shared_count", 0),
        "first_k_dense_replace": _meta(md, arch, "leading_dense_block_count", 0),
    }
    key_length = _meta(md, arch, "attention.key_length")
    if key_length:
        config["head_dim"] = key_length
    value_length = _meta(md, arch, "attention.value_length")
    if value_length and value_length != key_length:
        config["v_head_dim"] = value_length
    kv_lora_rank = _meta(md, arch, "attention.kv_lora_rank", 0)
    if kv_lora_rank:
        rope = _meta(md, arch, "rope.dimension_count", 64)
        config.update(
            kv_lora_rank=kv_lora_rank, qk_rope_head_dim=rope, q_lora_rank=_meta(md, arch, "attention.q_lora_rank", 0)
        )
        mla_key = _meta(md, arch, "attention.key_length_mla")
        if mla_key:
            if not all(isinstance(v, int) for v in (mla_key, rope)):
                raise BadFileError(
                    f"GGUF metadata: {arch}.attention.key_length_mla must be a number",
                    field=f"{arch}.attention.key_length_mla",
                )
            config["qk_nope_head_dim"] = mla_key - rope
            config["v_head_dim"] = _meta(md, arch, "attention.value_length_mla", 128)
    if family.routing_bias and any(name.endswith(".exp_probs_b.bias") for name in names):
        config["topk_method"] = "noaux_tc"  # DeepSeek-V3's routing bias: the tensor is the only trace in a GGUF
    config.update(family.gguf_keys(partial(_meta, md, arch), config, names))
    if not family.gguf_reads_swa_pattern:
        return config
    layer_pattern = _meta(md, arch, "attention.sliding_window_pattern")
    if isinstance(layer_pattern, list):
        config["layer_types"] = ["sliding_attention" if v else "full_attention" for v in layer_pattern]
    elif isinstance(layer_pattern, int):
        config["sliding_window_pattern"] = layer_pattern
    return config


def architecture_from_gguf(header: GgufHeader) -> Architecture:
    return from_hf_config(hf_config_from_gguf(header))


def weights_from_gguf(arch: Architecture, header: GgufHeader) -> WeightBytes:
    """Exact weight bytes from a GGUF header, split as llama.cpp places them (token_embd in system RAM)."""
    rows = ((t.name, layer_of(t.name), "_exps" in t.name, t.n_bytes, t.ggml_type.value) for t in header.tensors)
    roles = sum_by_role(rows, arch.n_layers, loaded_past_layers(arch))
    file_type = header.metadata.get("general.file_type")
    return WeightBytes.as_llama_cpp_places_them(
        file_type=str(file_type) if file_type is not None else "",
        params=sum(t.n_elements for t in header.tensors),
        tensor_bytes=sum(t.n_bytes for t in header.tensors),
        metadata_bytes=header.metadata_bytes,
        file_bytes=header.file_bytes,
        roles=roles,
        tied=not roles.out_bytes,
    )
