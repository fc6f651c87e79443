"""A safetensors checkpoint as its headers describe it: the bytes and parameters of every tensor, per dtype, per layer
and per role, and the weight format its config.json's ``quantization_config`` declares.

What a reader gives (``bot.sources.huggingface`` reads the headers of a Hub repo with range requests) is a list of
:class:`SafetensorsTensor`, one per tensor: its name, dtype, shape and the byte length its ``data_offsets`` give.
:func:`checkpoint_from_safetensors` adds them up into a :class:`Checkpoint`, which :class:`calc.request.ModelRef`
carries and :func:`calc.checkpoints.measured_checkpoint_weights` turns into the weights vLLM holds.

Parameters are the model's weights, not the storage: a packed INT4 ``qweight`` / ``weight_packed`` (I32) holds
32 / bits of them per element, an MXFP4 ``*_blocks`` tensor (U8) two per byte; scales, zero points, ``g_idx`` and
the like are bytes but no parameters.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from vramfit.calc.errors import BadConfigError, BadFileError, UnknownQuantError

MAX_TENSORS = 1_000_000  # DeepSeek V3's checkpoint has 91k; more is not a model
DTYPE_BYTES: dict[str, float] = {
    "F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "F16": 2, "BF16": 2, "I16": 2, "U16": 2,
    "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1, "I8": 1, "U8": 1, "BOOL": 1, "F4": 0.5, "F6_E2M3": 0.75,
    "F6_E3M2": 0.75,
}  # fmt: skip  # safetensors' dtypes (safetensors/src/tensor.rs, Dtype)
# Tensors that are bytes of a quantized checkpoint but no weights: scales, zero points, group indices, shapes.
_NOT_PARAMS = re.compile(
    r"(?:\.|_)(?:qzeros|scales|g_idx|weight_scale|weight_scale_inv|input_scale|output_scale|weight_zero_point|"
    r"weight_shape|weight_global_scale|input_global_scale|k_scale|v_scale|q_scale|zeros)$"
)
_PACKED_INT = re.compile(r"(?:\.|_)(?:qweight|weight_packed)$")
_MXFP4_BLOCKS = re.compile(r"_blocks$")
_LAYER = re.compile(r"(?:^|\.)layers\.(\d+)\.")
_EXPERT = re.compile(r"\.experts\.")
_EMBED = re.compile(r"(?:^|\.)(?:embed_tokens|wte|word_embeddings|tok_embeddings)\.weight$")
_HEAD = re.compile(r"(?:^|\.)lm_head\.weight$")
_TORCH_DTYPES = {"bfloat16": "BF16", "float16": "F16", "half": "F16", "float32": "F32", "float": "F32"}


class SafetensorsTensor(BaseModel):
    """One tensor as a safetensors header lists it; ``nbytes`` is its ``data_offsets`` end minus start."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    name: str
    dtype: str
    shape: tuple[int, ...]
    nbytes: int = Field(ge=0)


class Checkpoint(BaseModel):
    """A safetensors checkpoint measured from its headers (:func:`checkpoint_from_safetensors`).

    ``file_type`` is the weight format the calculator names it by (FP8, INT8, INT4, MXFP4_MOE, BF16, F16, F32), from
    ``quantization_config.quant_method`` (and, for compressed-tensors, its weight bits and type) or, unquantized,
    from the config's ``torch_dtype``. Bytes are the tensors' own, exactly as stored; ``layer_bytes`` and
    ``expert_layer_bytes`` map the index of ``*.layers.N.*`` to the bytes of its tensors (of its ``.experts.`` ones).
    """

    model_config = ConfigDict(defer_build=True, frozen=True)

    file_type: str
    quant_method: str = Field(default="", description="config.json quantization_config.quant_method, '' if none")
    params: int = Field(description="weights: packed INT4 and MXFP4 unpacked; scales and zero points not counted")
    tensor_bytes: int = Field(description="every tensor's bytes, as stored")
    tensor_count: int
    dtype_bytes: dict[str, int] = Field(description="bytes per safetensors dtype")
    dtype_params: dict[str, int] = Field(description="parameters per safetensors dtype")
    embd_bytes: int = 0
    embd_dtype: str = ""
    out_bytes: int = Field(default=0, description="lm_head.weight; 0 when the embeddings are tied")
    out_dtype: str = ""
    layer_bytes: dict[int, int] = Field(default_factory=dict)
    expert_layer_bytes: dict[int, int] = Field(default_factory=dict)
    mxfp4_expert_bytes: int = Field(default=0, description="bytes of the MXFP4 expert tensors (blocks and scales)")


def _quant_bits(config: Mapping[str, Any]) -> tuple[str, str, int]:
    """(quant_method, file type, weight bits) from config.json; bits 0 for an unquantized checkpoint."""
    quant = config.get("quantization_config")
    if quant is None:
        text = config.get("text_config")
        quant = text.get("quantization_config") if isinstance(text, Mapping) else None
    if quant is None:
        dtype = str(config.get("torch_dtype") or config.get("dtype") or "bfloat16").lower()
        return "", _TORCH_DTYPES.get(dtype, "BF16"), 0
    if not isinstance(quant, Mapping):
        raise BadConfigError("config.json: quantization_config is not an object", field="quantization_config")
    method = str(quant.get("quant_method") or "").lower()
    if method == "fp8":
        return method, "FP8", 8
    if method == "mxfp4":
        return method, "MXFP4_MOE", 4
    if method in ("awq", "gptq"):
        bits = quant.get("bits", quant.get("w_bit", 4))
        if bits in (4, 8) and not isinstance(bits, bool):
            return method, "INT4" if bits == 4 else "INT8", int(bits)
        raise UnknownQuantError(f"vramfit does not model {bits}-bit {method} checkpoints", quant=f"{method} {bits}-bit")
    if method == "compressed-tensors":
        groups = quant.get("config_groups")
        values = groups.values() if isinstance(groups, Mapping) else ()
        weights = [g.get("weights") for g in values if isinstance(g, Mapping)]
        first = weights[0] if weights and isinstance(weights[0], Mapping) else {}
        bits, kind = first.get("num_bits"), str(first.get("type") or "")
        if bits == 8:
            return method, "FP8" if kind == "float" else "INT8", 8
        if bits == 4 and kind == "int":
            return method, "INT4", 4
        raise UnknownQuantError(
            f"vramfit does not model compressed-tensors {kind} {bits}-bit checkpoints", quant=f"{method} {kind}{bits}"
        )
    raise UnknownQuantError(f"vramfit does not model {method or 'this'} quantization", quant=method or "?")


def _params(tensor: SafetensorsTensor, elements: int, bits: int) -> int:
    name = tensor.name
    if _NOT_PARAMS.search(name):
        return 0
    if tensor.dtype in ("I32", "U32") and _PACKED_INT.search(name):
        return elements * (32 // max(bits, 1))
    if tensor.dtype == "U8" and _MXFP4_BLOCKS.search(name):
        return elements * 2
    return elements


def checkpoint_from_safetensors(tensors: Iterable[SafetensorsTensor], config: Mapping[str, Any]) -> Checkpoint:
    """Add up a checkpoint's tensors (every shard's header together) under its config.json's quantization."""
    method, file_type, bits = _quant_bits(config)
    dtype_bytes: dict[str, int] = {}
    dtype_params: dict[str, int] = {}
    layers: dict[int, int] = {}
    experts: dict[int, int] = {}
    embd = out = mxfp4 = count = params = total = 0
    embd_dtype = out_dtype = ""
    for tensor in tensors:
        count += 1
        if count > MAX_TENSORS:
            raise BadFileError(f"more than {MAX_TENSORS} tensors: not a model checkpoint")
        size = DTYPE_BYTES.get(tensor.dtype)
        if size is None:
            raise BadFileError(f"{tensor.name}: unknown safetensors dtype {tensor.dtype!r}")
        if any(d < 0 for d in tensor.shape):
            raise BadFileError(f"{tensor.name}: negative dimension in {list(tensor.shape)}")
        elements = math.prod(tensor.shape)
        if tensor.nbytes != math.ceil(elements * size):
            raise BadFileError(f"{tensor.name}: {tensor.nbytes} bytes for {list(tensor.shape)} of {tensor.dtype}")
        n = _params(tensor, elements, bits)
        params += n
        total += tensor.nbytes
        dtype_bytes[tensor.dtype] = dtype_bytes.get(tensor.dtype, 0) + tensor.nbytes
        dtype_params[tensor.dtype] = dtype_params.get(tensor.dtype, 0) + n
        if found := _LAYER.search(tensor.name):
            layer = int(found[1])
            layers[layer] = layers.get(layer, 0) + tensor.nbytes
            if _EXPERT.search(tensor.name):
                experts[layer] = experts.get(layer, 0) + tensor.nbytes
                if file_type == "MXFP4_MOE" and tensor.dtype == "U8":
                    mxfp4 += tensor.nbytes
        elif _EMBED.search(tensor.name) and not embd:
            embd, embd_dtype = tensor.nbytes, tensor.dtype
        elif _HEAD.search(tensor.name):
            out, out_dtype = tensor.nbytes, tensor.dtype
    if not count:
        raise BadFileError("the safetensors headers list no tensors")
    return Checkpoint(
        file_type=file_type,
        quant_method=method,
        params=params,
        tensor_bytes=total,
        tensor_count=count,
        dtype_bytes=dtype_bytes,
        dtype_params=dtype_params,
        embd_bytes=embd,
        embd_dtype=embd_dtype,
        out_bytes=out,
        out_dtype=out_dtype,
        layer_bytes=layers,
        expert_layer_bytes=experts,
        mxfp4_expert_bytes=mxfp4,
    )
