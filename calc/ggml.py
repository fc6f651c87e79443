"""ggml tensor types and their storage size.

Each quantized ggml type packs a fixed number of weights (the block size) into a fixed number of bytes
(``ggml_type_size``); the table mirrors ``type_traits`` in ``ggml/src/ggml.c`` and the block structs in
``ggml/src/ggml-common.h``. :func:`row_bytes` is ``ggml_row_size`` and :func:`tensor_bytes` is ``ggml_nbytes`` for
a contiguous tensor, which is what llama.cpp's ``llama_model_size()`` sums.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum


@dataclass(frozen=True)
class _Traits:
    ggml_id: int
    block_size: int
    type_size: int


# ggml id, weights per block, bytes per block (ggml-common.h block_* structs).
_TRAITS: dict[str, _Traits] = {
    "F32": _Traits(0, 1, 4),
    "F16": _Traits(1, 1, 2),
    "Q4_0": _Traits(2, 32, 18),  # fp16 scale + 16 B of nibbles
    "Q4_1": _Traits(3, 32, 20),  # fp16 scale and min + 16 B
    "Q5_0": _Traits(6, 32, 22),
    "Q5_1": _Traits(7, 32, 24),
    "Q8_0": _Traits(8, 32, 34),  # fp16 scale + 32 int8
    "Q8_1": _Traits(9, 32, 36),
    "Q2_K": _Traits(10, 256, 84),
    "Q3_K": _Traits(11, 256, 110),
    "Q4_K": _Traits(12, 256, 144),
    "Q5_K": _Traits(13, 256, 176),
    "Q6_K": _Traits(14, 256, 210),
    "IQ2_XXS": _Traits(16, 256, 66),
    "IQ2_XS": _Traits(17, 256, 74),
    "IQ3_XXS": _Traits(18, 256, 98),
    "IQ1_S": _Traits(19, 256, 50),
    "IQ4_NL": _Traits(20, 32, 18),
    "IQ3_S": _Traits(21, 256, 110),
    "IQ2_S": _Traits(22, 256, 82),
    "IQ4_XS": _Traits(23, 256, 136),
    "IQ1_M": _Traits(29, 256, 56),
    "I32": _Traits(26, 1, 4),  # DeepSeek V4's token-to-expert hash routing table (ffn_gate_tid2eid)
    "BF16": _Traits(30, 1, 2),
    "MXFP4": _Traits(39, 32, 17),  # one E8M0 scale + 16 B of FP4 pairs
}


class GgmlType(StrEnum):
    """A ggml tensor type, named as gguf-py's ``GGMLQuantizationType`` spells it (upper case)."""

    F32 = "F32"
    F16 = "F16"
    I32 = "I32"
    BF16 = "BF16"
    Q8_0 = "Q8_0"
    Q8_1 = "Q8_1"
    Q6_K = "Q6_K"
    Q5_K = "Q5_K"
    Q5_0 = "Q5_0"
    Q5_1 = "Q5_1"
    Q4_K = "Q4_K"
    Q4_0 = "Q4_0"
    Q4_1 = "Q4_1"
    Q3_K = "Q3_K"
    Q2_K = "Q2_K"
    IQ4_XS = "IQ4_XS"
    IQ4_NL = "IQ4_NL"
    IQ3_S = "IQ3_S"
    IQ3_XXS = "IQ3_XXS"
    IQ2_S = "IQ2_S"
    IQ2_XS = "IQ2_XS"
    IQ2_XXS = "IQ2_XXS"
    IQ1_S = "IQ1_S"
    IQ1_M = "IQ1_M"
    MXFP4 = "MXFP4"

    @property
    def ggml_id(self) -> int:
        """The numeric ``ggml_type`` value stored in a GGUF tensor info."""
        return _TRAITS[self.value].ggml_id

    @property
    def block_size(self) -> int:
        """Weights per block (``ggml_blck_size``); a row length must be a multiple of it."""
        return _TRAITS[self.value].block_size

    @property
    def type_size(self) -> int:
        """Bytes per block (``ggml_type_size``)."""
        return _TRAITS[self.value].type_size

    @property
    def bits_per_weight(self) -> float:
        return 8.0 * self.type_size / self.block_size

    @property
    def is_quantized(self) -> bool:
        """``ggml_is_quantized``: everything but the plain float types."""
        return self not in (GgmlType.F32, GgmlType.F16, GgmlType.BF16)


def row_bytes(ggml_type: GgmlType, n_elements: int) -> int:
    """Bytes of one row of ``n_elements`` weights (``ggml_row_size``); the row must fill whole blocks."""
    if n_elements < 0:
        raise ValueError(f"negative row length {n_elements}")
    if n_elements % ggml_type.block_size:
        # ggml_row_size asserts this; llama.cpp's quantizer falls back to another type before it gets here.
        raise ValueError(
            f"row of {n_elements} weights is not a multiple of {ggml_type} blocks ({ggml_type.block_size})"
        )
    return ggml_type.type_size * (n_elements // ggml_type.block_size)


def tensor_bytes(ggml_type: GgmlType, shape: Sequence[int]) -> int:
    """Bytes of a contiguous tensor with ggml shape ``ne`` (``ne[0]`` is the row length), as ``ggml_nbytes``."""
    if not shape:
        raise ValueError("a tensor needs at least one dimension")
    return row_bytes(ggml_type, shape[0]) * math.prod(shape[1:])
