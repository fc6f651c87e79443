"""GGUF headers: exact tensor sizes and the architecture, read without loading any weights.

A GGUF file starts with a header (magic, version, tensor count, metadata key/values, tensor infos) followed by
aligned tensor data; the header alone gives every tensor's shape and ggml type, so vramfit reads the first
megabytes of the file with the standard library (the ``gguf`` package is only needed to write test files).
Split files (``-00001-of-00003.gguf``) are read part by part and added up.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import BaseModel, ConfigDict

from calc.architecture import Architecture, from_hf_config
from calc.errors import BadFileError
from calc.ggml import GgmlType, tensor_bytes
from calc.quant import WeightBytes

GGUF_MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32
MAX_STRING = 1 << 24  # a sane bound: no key, value or tensor name is 16 MB
MAX_COUNT = 1 << 26

# gguf value types (gguf-py GGUFValueType) → struct format; 8 = string, 9 = array.
_SCALAR_FORMATS: dict[int, str] = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
                                   10: "<Q", 11: "<q", 12: "<d"}  # fmt: skip
_GGML_BY_ID: dict[int, GgmlType] = {t.ggml_id: t for t in GgmlType}


class GgufTensor(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    ggml_type: GgmlType
    shape: tuple[int, ...]
    n_elements: int
    n_bytes: int


class GgufHeader(BaseModel):
    model_config = ConfigDict(frozen=True)

    metadata: dict[str, Any]
    tensors: tuple[GgufTensor, ...]
    metadata_bytes: int
    file_bytes: int


class _Reader:
    def __init__(self, stream: BinaryIO, path: Path) -> None:
        self.stream = stream
        self.path = path

    def read(self, n: int) -> bytes:
        data = self.stream.read(n)
        if len(data) != n:
            raise BadFileError(f"{self.path.name}: truncated GGUF header")
        return data

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.read(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        length = self.unpack("<Q")
        if length > MAX_STRING:
            raise BadFileError(f"{self.path.name}: implausible string length {length}")
        return self.read(length).decode("utf-8", errors="replace")

    def value(self, value_type: int) -> Any:
        if value_type in _SCALAR_FORMATS:
            return self.unpack(_SCALAR_FORMATS[value_type])
        if value_type == 8:
            return self.string()
        if value_type == 9:
            item_type = self.unpack("<I")
            count = self.unpack("<Q")
            if count > MAX_COUNT:
                raise BadFileError(f"{self.path.name}: implausible array length {count}")
            if item_type == 8:
                # Token lists: keep their length only; the strings themselves do not matter for memory.
                for _ in range(count):
                    self.string()
                return _Skipped(count)
            return [self.value(item_type) for _ in range(count)]
        raise BadFileError(f"{self.path.name}: unknown GGUF value type {value_type}")


class _Skipped(int):
    """An array whose items were skipped; its value is the item count."""


def _read_one(path: Path) -> GgufHeader:
    try:
        size = path.stat().st_size
        with path.open("rb") as stream:
            reader = _Reader(stream, path)
            if reader.read(4) != GGUF_MAGIC:
                raise BadFileError(f"{path.name} is not a GGUF file")
            version = reader.unpack("<I")
            if version not in (2, 3):
                raise BadFileError(f"{path.name}: unsupported GGUF version {version}")
            n_tensors = reader.unpack("<Q")
            n_kv = reader.unpack("<Q")
            if n_tensors > MAX_COUNT or n_kv > MAX_COUNT:
                raise BadFileError(f"{path.name}: implausible GGUF counts")
            metadata: dict[str, Any] = {}
            for _ in range(n_kv):
                key = reader.string()
                metadata[key] = reader.value(reader.unpack("<I"))
            tensors: list[GgufTensor] = []
            for _ in range(n_tensors):
                name = reader.string()
                n_dims = reader.unpack("<I")
                shape = tuple(reader.unpack("<Q") for _ in range(n_dims))
                type_id = reader.unpack("<I")
                reader.unpack("<Q")  # data offset
                ggml_type = _GGML_BY_ID.get(type_id)
                if ggml_type is None:
                    raise BadFileError(f"{path.name}: tensor {name} has unknown ggml type {type_id}")
                n_elements = 1
                for dim in shape:
                    n_elements *= dim
                tensors.append(
                    GgufTensor(
                        name=name,
                        ggml_type=ggml_type,
                        shape=shape,
                        n_elements=n_elements,
                        n_bytes=tensor_bytes(ggml_type, shape or (1,)),
                    )
                )
            alignment = int(metadata.get("general.alignment", DEFAULT_ALIGNMENT)) or DEFAULT_ALIGNMENT
            header_end = stream.tell()
    except OSError as exc:
        raise BadFileError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except (struct.error, UnicodeDecodeError, ValueError) as exc:
        if isinstance(exc, BadFileError):
            raise
        raise BadFileError(f"{path.name}: malformed GGUF header ({exc})") from exc
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
    headers = [_read_one(p) for p in parts]
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
        "vocab_size": int(vocab),
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
            config["qk_nope_head_dim"] = mla_key - rope
            config["v_head_dim"] = _meta(md, arch, "attention.value_length_mla", 128)
    layer_pattern = _meta(md, arch, "attention.sliding_window_pattern")
    if isinstance(layer_pattern, list):
        config["layer_types"] = ["sliding_attention" if v else "full_attention" for v in layer_pattern]
    elif isinstance(layer_pattern, int):
        config["sliding_window_pattern"] = layer_pattern
    return config


def architecture_from_gguf(header: GgufHeader) -> Architecture:
    return from_hf_config(hf_config_from_gguf(header))


_LAYER = re.compile(r"^blk\.(\d+)\.")


def weights_from_gguf(arch: Architecture, header: GgufHeader) -> WeightBytes:
    """Exact weight bytes from a GGUF header, split as llama.cpp places them (token_embd in system RAM)."""
    layers = [0] * arch.n_layers
    experts = [0] * arch.n_layers
    embd_bytes, embd_type, out_bytes, out_type = 0, "", 0, ""
    for tensor in header.tensors:
        match = _LAYER.match(tensor.name)
        if match and int(match[1]) < arch.n_layers:
            layers[int(match[1])] += tensor.n_bytes
            if "_exps" in tensor.name:
                experts[int(match[1])] += tensor.n_bytes
        elif tensor.name == "token_embd.weight":
            embd_bytes, embd_type = tensor.n_bytes, tensor.ggml_type.value
        elif tensor.name == "output.weight":
            out_bytes, out_type = tensor.n_bytes, tensor.ggml_type.value
    tied = not out_bytes
    if tied:
        out_bytes, out_type = embd_bytes, embd_type  # the output head is a GPU copy of token_embd
    total = sum(t.n_bytes for t in header.tensors)
    file_type = header.metadata.get("general.file_type")
    return WeightBytes(
        file_type=str(file_type) if file_type is not None else "",
        params=sum(t.n_elements for t in header.tensors),
        tensor_bytes=total,
        metadata_bytes=header.metadata_bytes,
        file_bytes=header.file_bytes,
        token_embd_bytes=embd_bytes,
        token_embd_type=embd_type,
        output_bytes=out_bytes,
        output_type=out_type,
        layer_bytes=tuple(layers),
        expert_layer_bytes=tuple(experts),
        gpu_bytes=total - embd_bytes + (out_bytes if tied else 0),
        host_bytes=embd_bytes,
    )
