"""Weight formats: llama.cpp's ``llama_ftype`` names (GGUF) and the vLLM checkpoint formats, with the spellings people
use for them. One alias table for the calculator; the parser maps chat words ("4비트", "awq") onto these names."""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum

from vramfit.calc.errors import UnknownQuantError
from vramfit.calc.ggml import GgmlType


class FileType(StrEnum):
    """A model file format: llama.cpp's ``llama_ftype`` names (GGUF) and the vLLM checkpoint formats."""

    F32 = "F32"
    F16 = "F16"
    BF16 = "BF16"
    Q8_0 = "Q8_0"
    Q6_K = "Q6_K"
    Q5_K_M = "Q5_K_M"
    Q5_K_S = "Q5_K_S"
    Q5_1 = "Q5_1"
    Q5_0 = "Q5_0"
    Q4_K_M = "Q4_K_M"
    Q4_K_S = "Q4_K_S"
    Q4_1 = "Q4_1"
    Q4_0 = "Q4_0"
    IQ4_XS = "IQ4_XS"
    IQ4_NL = "IQ4_NL"
    Q3_K_L = "Q3_K_L"
    Q3_K_M = "Q3_K_M"
    Q3_K_S = "Q3_K_S"
    IQ3_M = "IQ3_M"
    IQ3_S = "IQ3_S"
    IQ3_XS = "IQ3_XS"
    IQ3_XXS = "IQ3_XXS"
    Q2_K = "Q2_K"
    Q2_K_S = "Q2_K_S"
    IQ2_M = "IQ2_M"
    IQ2_S = "IQ2_S"
    IQ2_XS = "IQ2_XS"
    IQ2_XXS = "IQ2_XXS"
    IQ1_M = "IQ1_M"
    IQ1_S = "IQ1_S"
    MXFP4_MOE = "MXFP4_MOE"
    # vLLM checkpoint formats (no GGUF equivalent).
    FP8 = "FP8"
    INT8 = "INT8"
    INT4 = "INT4"
    NVFP4 = "NVFP4"  # NVIDIA's FP4: E2M1 weights, an FP8 scale per 16, an FP32 scale per tensor (Blackwell)

    @property
    def is_gguf(self) -> bool:
        return self not in (FileType.FP8, FileType.INT8, FileType.INT4, FileType.NVFP4)

    @property
    def default_type(self) -> GgmlType:
        """``llama_ftype_get_default_type``: the type every quantizable tensor starts from."""
        return _DEFAULT_TYPE[self]


_DEFAULT_TYPE: dict[FileType, GgmlType] = {
    FileType.F32: GgmlType.F32,
    FileType.F16: GgmlType.F16,
    FileType.BF16: GgmlType.BF16,
    FileType.Q8_0: GgmlType.Q8_0,
    FileType.Q6_K: GgmlType.Q6_K,
    FileType.Q5_K_M: GgmlType.Q5_K,
    FileType.Q5_K_S: GgmlType.Q5_K,
    FileType.Q5_1: GgmlType.Q5_1,
    FileType.Q5_0: GgmlType.Q5_0,
    FileType.Q4_K_M: GgmlType.Q4_K,
    FileType.Q4_K_S: GgmlType.Q4_K,
    FileType.Q4_1: GgmlType.Q4_1,
    FileType.Q4_0: GgmlType.Q4_0,
    FileType.IQ4_XS: GgmlType.IQ4_XS,
    FileType.IQ4_NL: GgmlType.IQ4_NL,
    FileType.Q3_K_L: GgmlType.Q3_K,
    FileType.Q3_K_M: GgmlType.Q3_K,
    FileType.Q3_K_S: GgmlType.Q3_K,
    FileType.IQ3_M: GgmlType.IQ3_S,
    FileType.IQ3_S: GgmlType.IQ3_S,
    FileType.IQ3_XS: GgmlType.IQ3_S,
    FileType.IQ3_XXS: GgmlType.IQ3_XXS,
    FileType.Q2_K: GgmlType.Q2_K,
    FileType.Q2_K_S: GgmlType.Q2_K,
    FileType.IQ2_M: GgmlType.IQ2_S,
    FileType.IQ2_S: GgmlType.IQ2_XS,  # sic: llama.cpp's IQ2_S mix starts from IQ2_XS
    FileType.IQ2_XS: GgmlType.IQ2_XS,
    FileType.IQ2_XXS: GgmlType.IQ2_XXS,
    FileType.IQ1_M: GgmlType.IQ1_M,
    FileType.IQ1_S: GgmlType.IQ1_S,
    FileType.MXFP4_MOE: GgmlType.MXFP4,
    # vLLM formats: the dtype of everything that is not a quantized linear weight.
    FileType.FP8: GgmlType.BF16,
    FileType.INT8: GgmlType.BF16,
    FileType.INT4: GgmlType.BF16,
    FileType.NVFP4: GgmlType.BF16,
}

# Other spellings people use; llama-quantize itself accepts Q3_K / Q4_K / Q5_K for the _M mixes.
_ALIASES: dict[str, FileType] = {
    "FP16": FileType.F16,
    "FP32": FileType.F32,
    "Q3_K": FileType.Q3_K_M,
    "Q4_K": FileType.Q4_K_M,
    "Q5_K": FileType.Q5_K_M,
    "MXFP4": FileType.MXFP4_MOE,
    "F8": FileType.FP8,
    "FP8_DYNAMIC": FileType.FP8,
    "W8A8_FP8": FileType.FP8,
    "W8A8": FileType.INT8,
    "INT8_W8A8": FileType.INT8,
    "AWQ": FileType.INT4,
    "GPTQ": FileType.INT4,
    "W4A16": FileType.INT4,
    "INT4_AWQ": FileType.INT4,
    "INT4_GPTQ": FileType.INT4,
}


# Uploaders' own mixes, each named after the standard type it starts from: unsloth's dynamic quants ("UD-Q4_K_XL",
# "UD-IQ2_XXS": some tensors kept at higher precision) and bartowski's "_L" ("Q6_K_L": token embeddings and output at
# Q8_0). Without the file their size is approximated by that standard type, and the answer says so; with the file
# (a Hub repo, a local GGUF) its header gives every tensor's own type. mradermacher's "i1-" (imatrix) quants are the
# standard types themselves.
UPLOADER_MIXES: dict[str, FileType] = {
    "Q2_K_XL": FileType.Q2_K, "Q3_K_XL": FileType.Q3_K_M, "Q4_K_XL": FileType.Q4_K_M, "Q5_K_XL": FileType.Q5_K_M,
    "Q6_K_XL": FileType.Q6_K, "Q8_K_XL": FileType.Q8_0, "Q2_K_L": FileType.Q2_K, "Q4_K_L": FileType.Q4_K_M,
    "Q5_K_L": FileType.Q5_K_M, "Q6_K_L": FileType.Q6_K,
}  # fmt: skip
_MIX_PREFIX = re.compile(r"^(UD|I1)_")


def uploader_mix(name: str) -> tuple[FileType, str] | None:
    """(the standard type an uploader's mix is sized as, the mix as written) for "UD-Q4_K_XL", "Q6_K_L",
    "UD-IQ2_XXS"; None for a standard type ("Q4_K_M", "i1-Q4_K_M") or a name that is no quant."""
    written = name.strip().upper()
    key = written.replace("-", "_").replace(" ", "_")
    prefix = _MIX_PREFIX.match(key)
    key = key[prefix.end() :] if prefix else key
    if key in UPLOADER_MIXES:
        return UPLOADER_MIXES[key], written
    if prefix is not None and prefix[1] == "UD" and (key in FileType.__members__ or key in _ALIASES):
        return (FileType[key] if key in FileType.__members__ else _ALIASES[key]), written
    return None


def parse_file_type(name: str) -> FileType:
    """The file type for a user's spelling (case and '-' / '_' insensitive; an uploader's mix as the standard type it
    is sized as, :func:`uploader_mix`); UnknownQuantError with suggestions."""
    key = name.strip().upper().replace("-", "_").replace(" ", "_")
    key = key[3:] if key.startswith("I1_") else key  # imatrix quants: the standard type
    if key in FileType.__members__:
        return FileType[key]
    if key in _ALIASES:
        return _ALIASES[key]
    if (mix := uploader_mix(name)) is not None:
        return mix[0]
    known = [*FileType.__members__, *_ALIASES]
    import difflib  # only for an unknown name: not on the start-up path

    close = difflib.get_close_matches(key, known, n=3, cutoff=0.6)
    suggestions = [_ALIASES[c].value if c in _ALIASES else c for c in close]
    raise UnknownQuantError(f"unknown quantization {name!r}", list(dict.fromkeys(suggestions)), quant=name)


_NAME_QUANT = re.compile(r"(?<![A-Za-z0-9])(I?Q\d[A-Za-z0-9_]*?|F16|BF16|F32|MXFP4(?:_MOE)?)(?=[-.])", re.IGNORECASE)


def file_type_in_name(file_name: str) -> str:
    """The quant a GGUF file name carries, as uploaders write it ("gemma-2-9b-it-Q5_K_M.gguf" → "Q5_K_M",
    "x-UD-Q4_K_XL-00001-of-00002.gguf" → "Q4_K_XL"), or "" when it names none. A label, not a :class:`FileType`:
    names such as Q4_K_XL are uploaders' own mixes."""
    found = _NAME_QUANT.search(file_name.rsplit("/", 1)[-1])
    return found[1].upper() if found else ""


# llama.cpp's ``enum llama_ftype`` (include/llama.h), the number a GGUF's ``general.file_type`` holds: the format the
# file was quantized to, which names it when the file's name does not (an Ollama blob is named by its digest).
# 4-6 and 33-35 were removed from llama.cpp; TQ1_0, TQ2_0, NVFP4 and Q1_0 are labels the calculator has no mix for.
LLAMA_FTYPE_LABELS: dict[int, str] = {
    0: FileType.F32, 1: FileType.F16, 2: FileType.Q4_0, 3: FileType.Q4_1, 7: FileType.Q8_0, 8: FileType.Q5_0,
    9: FileType.Q5_1, 10: FileType.Q2_K, 11: FileType.Q3_K_S, 12: FileType.Q3_K_M, 13: FileType.Q3_K_L,
    14: FileType.Q4_K_S, 15: FileType.Q4_K_M, 16: FileType.Q5_K_S, 17: FileType.Q5_K_M, 18: FileType.Q6_K,
    19: FileType.IQ2_XXS, 20: FileType.IQ2_XS, 21: FileType.Q2_K_S, 22: FileType.IQ3_XS, 23: FileType.IQ3_XXS,
    24: FileType.IQ1_S, 25: FileType.IQ4_NL, 26: FileType.IQ3_S, 27: FileType.IQ3_M, 28: FileType.IQ2_S,
    29: FileType.IQ2_M, 30: FileType.IQ4_XS, 31: FileType.IQ1_M, 32: FileType.BF16, 36: "TQ1_0", 37: "TQ2_0",
    38: FileType.MXFP4_MOE, 39: "NVFP4", 40: "Q1_0",
}  # fmt: skip
LLAMA_FTYPE_GUESSED = 1024  # llama.cpp ORs this in when it guessed the type from the tensors; never a file's own


def file_type_in_header(metadata: Mapping[str, object]) -> str:
    """The quant a GGUF header declares (``general.file_type``: 15 → "Q4_K_M"), or "" when it declares none the
    table knows."""
    value = metadata.get("general.file_type")
    if isinstance(value, bool) or not isinstance(value, int):
        return ""
    return str(LLAMA_FTYPE_LABELS.get(value & ~LLAMA_FTYPE_GUESSED, ""))
