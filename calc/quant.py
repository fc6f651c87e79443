"""Per-tensor quantization types and the resulting weight bytes, as llama.cpp's quantizer chooses them.

:func:`tensor_types` is a port of ``src/llama-quant.cpp`` (``llama_tensor_get_type`` and
``llama_tensor_get_type_impl``, ``tensor_allows_quantization``, ``tensor_type_fallback``,
``init_quantize_state_counters``) for ``llama_model_quantize`` with default parameters and no importance matrix:
which tensors are quantized at all, the output/token_embd rules (a tied token_embd takes the output rule),
the extra-bits layers picked by the running counters in the loader's order, the 8-expert and 70B (GQA) bumps,
and the fallback when a row is not a whole number of blocks. :func:`weight_bytes` sums the result into the
numbers the memory model needs: file size, bytes per layer and per expert block, and the GPU / host split llama.cpp
makes when every layer is offloaded (token_embd stays in system RAM; a tied model gets a GPU copy of it as the
output head).

The vLLM-side formats (FP8, INT8, INT4 = AWQ/GPTQ, and BF16/F16 safetensors) are sized as vLLM holds them on the
GPU: quantized linear weights, everything else in the 16-bit model dtype, embeddings on the GPU, one shared matrix
for tied embeddings.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from calc.architecture import Architecture
from calc.errors import UnknownQuantError
from calc.ggml import GgmlType, tensor_bytes
from calc.tensors import TensorSpec, gguf_tensors, has_output_tensor, loader_order

GGUF_ALIGNMENT = 32  # GGUF_DEFAULT_ALIGNMENT: the data section and every tensor start on a 32-byte boundary


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

    @property
    def is_gguf(self) -> bool:
        return self not in (FileType.FP8, FileType.INT8, FileType.INT4)

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


def parse_file_type(name: str) -> FileType:
    """The file type for a user's spelling (case and '-' / '_' insensitive); UnknownQuantError with suggestions."""
    key = name.strip().upper().replace("-", "_").replace(" ", "_")
    if key in FileType.__members__:
        return FileType[key]
    if key in _ALIASES:
        return _ALIASES[key]
    known = [*FileType.__members__, *_ALIASES]
    close = difflib.get_close_matches(key, known, n=3, cutoff=0.6)
    suggestions = [_ALIASES[c].value if c in _ALIASES else c for c in close]
    raise UnknownQuantError(f"unknown quantization {name!r}", list(dict.fromkeys(suggestions)), quant=name)


# --- the quantizer port ---------------------------------------------------------------------------------------


class _Category(StrEnum):
    """llama-quant.cpp ``tensor_category``: broad roles found by substring, in this order."""

    TOKEN_EMBD = "token_embd"
    ATTENTION_Q = "attn_q"
    ATTENTION_V = "attn_v"
    ATTENTION_K = "attn_k"
    ATTENTION_QKV = "attn_qkv"
    ATTENTION_KV_B = "attn_kv_b"
    ATTENTION_OUTPUT = "attn_output"
    FFN_UP = "ffn_up"
    FFN_GATE = "ffn_gate"
    FFN_DOWN = "ffn_down"
    OUTPUT = "output"
    OTHER = "other"


def _category(name: str) -> _Category:
    """``tensor_get_category``."""
    if name == "output.weight":
        return _Category.OUTPUT
    if name in ("token_embd.weight", "per_layer_token_embd.weight"):
        return _Category.TOKEN_EMBD
    for needle, cat in (
        ("attn_qkv.weight", _Category.ATTENTION_QKV),
        ("attn_kv_b.weight", _Category.ATTENTION_KV_B),
        ("attn_v.weight", _Category.ATTENTION_V),
        ("attn_k.weight", _Category.ATTENTION_K),
        ("attn_q.weight", _Category.ATTENTION_Q),
        ("attn_output.weight", _Category.ATTENTION_OUTPUT),
        ("ffn_up", _Category.FFN_UP),
        ("ffn_gate", _Category.FFN_GATE),
        ("ffn_down", _Category.FFN_DOWN),
    ):
        if needle in name:
            return cat
    return _Category.OTHER


def _is_attn_v_like(cat: _Category) -> bool:
    """``category_is_attn_v``: attn_v, the fused attn_qkv (Phi-3, GLM) and MLA's attn_kv_b share the attn_v rules."""
    return cat in (_Category.ATTENTION_V, _Category.ATTENTION_QKV, _Category.ATTENTION_KV_B)


# Substrings tensor_allows_quantization() excludes (small or special tensors kept as converted).
_NEVER_QUANTIZED = (
    "_norm.weight",
    "ffn_gate_inp.weight",
    "ffn_gate_tid2eid.weight",
    "altup",
    "laurel",
    "per_layer_model_proj",
    "ssm_conv1d",
    "shortconv.conv.weight",
    "indexer.k_proj.weight",
    "indexer.q_proj.weight",
    "time_mix_first.weight",
    "time_mix_w0.weight",
    "time_mix_w1.weight",
    "time_mix_w2.weight",
    "time_mix_v0.weight",
    "time_mix_v1.weight",
    "time_mix_v2.weight",
    "time_mix_a0.weight",
    "time_mix_a1.weight",
    "time_mix_a2.weight",
    "time_mix_g1.weight",
    "time_mix_g2.weight",
    "time_mix_decay_w1.weight",
    "time_mix_decay_w2.weight",
    "time_mix_lerp_fused.weight",
    "attn_rel_b.weight",
)


def _allows_quantization(spec: TensorSpec) -> bool:
    """``tensor_allows_quantization`` with default params (quantize_output_tensor = true, not only_copy)."""
    if spec.n_dims < 2:  # only 2-D and 3-D (expert) tensors
        return False
    name = spec.name
    if not name.endswith("weight"):
        return False
    if any(needle in name for needle in _NEVER_QUANTIZED):
        return False
    return name not in ("position_embd.weight", "token_types.weight")


@dataclass
class _QuantState:
    """``quantize_state_impl``: model facts plus the running counters, mutated in the loader's tensor order."""

    arch: str
    n_expert: int
    n_gqa: int
    is_70b: bool
    has_imatrix: bool
    has_tied_embeddings: bool
    n_attention_wv: int
    n_layer: int
    i_attention_wv: int = 0
    i_ffn_down: int = 0
    i_ffn_gate: int = 0
    i_ffn_up: int = 0


def _use_more_bits(i_layer: int, n_layers: int) -> bool:
    # C++ `%` truncates toward zero; the first clause already covers every i_layer that would make the operand
    # negative, so Python's `%` gives the same answer.
    return i_layer < n_layers // 8 or i_layer >= 7 * n_layers // 8 or (i_layer - n_layers // 8) % 3 == 2


def _is_70b(arch: Architecture) -> bool:
    """``model.type == LLM_TYPE_70B`` as load_hparams sets it: 80-layer Llama with GQA, 80-layer Qwen2, Deci 80."""
    if arch.n_layers != 80:
        return False
    if arch.arch == "llama":
        return arch.n_heads[0] != arch.n_kv_heads[0]
    return arch.arch in ("qwen2", "deci")


_IQ1_IQ2 = frozenset(
    {FileType.IQ2_XXS, FileType.IQ2_XS, FileType.IQ1_S, FileType.IQ2_S, FileType.IQ2_M, FileType.IQ1_M}
)
_Q5K_OUTPUT = frozenset({*_IQ1_IQ2, FileType.IQ3_XXS})
_MOE8_ATTN_OUTPUT_Q5K = frozenset(
    {
        FileType.Q2_K,
        FileType.IQ3_XS,
        FileType.IQ3_XXS,
        FileType.Q3_K_S,
        FileType.Q3_K_M,
        FileType.IQ4_NL,
        FileType.Q4_K_S,
        FileType.Q4_K_M,
        FileType.IQ3_S,
        FileType.IQ3_M,
        FileType.IQ4_XS,
    }
)


def _layer_of(qs: _QuantState, counter: int, spec: TensorSpec) -> tuple[int, int]:
    """``layer_info``: the running counter for dense models; MoE models parse the layer from the name instead."""
    if qs.n_expert > 1 and spec.layer is not None:
        return spec.layer, qs.n_layer
    return counter, qs.n_layer


def _get_type_impl(qs: _QuantState, new_type: GgmlType, spec: TensorSpec, ftype: FileType, cat: _Category) -> GgmlType:
    """``llama_tensor_get_type_impl``: the mix's choice for one tensor, before the row-length fallback.

    Mirrors the C++ branch by branch (same order, same early exits) so that it can be diffed against
    src/llama-quant.cpp; the running counters in ``qs`` advance exactly where llama.cpp's do.
    """
    F = FileType
    T = GgmlType
    arch = qs.arch
    if cat == _Category.OUTPUT or (qs.has_tied_embeddings and cat == _Category.TOKEN_EMBD):
        # Tied models quantize token_embd with the output tensor's rule, since it is the output head too.
        if ftype == F.MXFP4_MOE:
            return T.Q8_0
        if arch == "falcon" or spec.row_length % new_type.block_size:
            return T.Q8_0
        if ftype in _Q5K_OUTPUT:
            return T.Q5_K
        return T.Q6_K if new_type != T.Q8_0 else new_type
    if ftype == F.MXFP4_MOE:
        # MoE tensors (3-D) -> MXFP4, everything else -> Q8_0.
        return T.MXFP4 if len(spec.shape) > 2 and spec.shape[2] > 1 else T.Q8_0
    if cat == _Category.TOKEN_EMBD:
        if ftype in (F.IQ2_XXS, F.IQ2_XS, F.IQ1_S, F.IQ1_M):
            return T.Q2_K
        if ftype in (F.IQ2_S, F.IQ2_M, F.IQ3_XXS):
            return T.IQ3_S
        return new_type
    if ftype in _IQ1_IQ2:
        iq3 = ftype in (F.IQ2_S, F.IQ2_M)
        if _is_attn_v_like(cat):
            new_type = T.Q4_K if qs.n_gqa >= 4 or qs.n_expert >= 4 else T.IQ3_S if iq3 else T.Q2_K
            qs.i_attention_wv += 1
        elif qs.n_expert == 8 and cat == _Category.ATTENTION_K:
            new_type = T.Q4_K
        elif cat == _Category.FFN_DOWN:
            if qs.i_ffn_down < qs.n_layer // 8:
                new_type = T.IQ3_S if iq3 else T.Q2_K
            qs.i_ffn_down += 1
        elif cat == _Category.ATTENTION_OUTPUT:
            if qs.n_expert == 8:
                new_type = T.Q5_K
            elif ftype in (F.IQ1_S, F.IQ1_M):
                new_type = T.IQ2_XXS
            elif iq3:
                new_type = T.IQ3_S
        return new_type
    if _is_attn_v_like(cat):
        if ftype == F.Q2_K:
            new_type = T.Q4_K if qs.n_gqa >= 4 else T.Q3_K
        elif ftype == F.Q2_K_S and qs.n_gqa >= 4:
            new_type = T.Q4_K
        elif ftype == F.IQ3_XXS:
            new_type = T.Q4_K if qs.n_gqa >= 4 else (T.IQ3_S if not qs.has_imatrix else T.IQ3_XXS)
        elif ftype in (F.IQ3_XS, F.IQ3_S) and qs.n_gqa >= 4:  # noqa: SIM114 - kept branch for branch as in C++
            new_type = T.Q4_K
        elif ftype == F.IQ3_M:
            new_type = T.Q4_K
        elif ftype == F.Q3_K_M:
            new_type = T.Q5_K if qs.i_attention_wv < 2 else T.Q4_K
        elif ftype == F.Q3_K_L:  # noqa: SIM114 - kept branch for branch as in C++
            new_type = T.Q5_K
        elif ftype in (F.IQ4_NL, F.IQ4_XS) and qs.n_gqa >= 4:
            new_type = T.Q5_K
        elif ftype in (F.Q4_K_M, F.Q5_K_M) and _use_more_bits(qs.i_attention_wv, qs.n_attention_wv):
            new_type = T.Q6_K
        elif ftype == F.Q4_K_S and qs.i_attention_wv < 4:
            new_type = T.Q5_K
        if qs.is_70b and new_type in (T.Q3_K, T.Q4_K):
            # 70B: 8 heads share each attn_v row, so the tensor is 8x smaller than attn_q; more bits cost little.
            new_type = T.Q5_K
        if qs.n_expert == 8:
            new_type = T.Q8_0  # "for the 8-expert model, bumping this to Q8_0 trades just ~128MB"
        qs.i_attention_wv += 1
        return new_type
    if cat == _Category.ATTENTION_K:
        if qs.n_expert == 8:
            return T.Q8_0
        if ftype == F.IQ3_XS:
            return T.IQ3_XXS
        if ftype == F.IQ3_XXS:
            return T.IQ2_S
        return new_type
    if cat == _Category.ATTENTION_Q:
        if ftype == F.IQ3_XS:
            return T.IQ3_XXS
        if ftype == F.IQ3_XXS:
            return T.IQ2_S
        return new_type
    if cat == _Category.FFN_DOWN:
        i_layer, n_layer = _layer_of(qs, qs.i_ffn_down, spec)
        if ftype == F.Q2_K:
            new_type = T.Q3_K
        elif ftype == F.Q2_K_S:
            if i_layer < n_layer // 8:
                new_type = T.Q4_K
        elif ftype == F.IQ3_XXS and not qs.has_imatrix:
            new_type = T.Q4_K if i_layer < n_layer // 8 else T.Q3_K
        elif ftype == F.Q3_K_M:
            if i_layer < n_layer // 16:
                new_type = T.Q5_K
            elif arch != "falcon" or _use_more_bits(i_layer, n_layer):
                new_type = T.Q4_K
            else:
                new_type = T.Q3_K
        elif ftype == F.IQ3_M and (i_layer < n_layer // 8 or (qs.n_expert == 8 and _use_more_bits(i_layer, n_layer))):
            new_type = T.Q4_K
        elif ftype == F.Q3_K_L:
            new_type = T.Q4_K if arch == "falcon" else T.Q5_K
        elif ftype == F.Q4_K_M:
            if arch == "falcon":
                if i_layer < n_layer // 16:
                    new_type = T.Q6_K
                elif _use_more_bits(i_layer, n_layer):
                    new_type = T.Q5_K
                else:
                    new_type = T.Q4_K
            elif _use_more_bits(i_layer, n_layer):
                new_type = T.Q6_K
        elif i_layer < n_layer // 8 and ftype in (F.IQ4_NL, F.IQ4_XS) and not qs.has_imatrix:
            new_type = T.Q5_K
        elif ftype == F.Q5_K_M and _use_more_bits(i_layer, n_layer):
            new_type = T.Q6_K
        elif ftype == F.Q4_K_S and arch != "falcon" and i_layer < n_layer // 8:
            new_type = T.Q5_K
        elif ftype in (F.Q4_0, F.Q5_0) and qs.has_imatrix and i_layer < n_layer // 8:
            # Only with an imatrix, so files made without one stay as they always were.
            new_type = T.Q4_1 if ftype == F.Q4_0 else T.Q5_1
        qs.i_ffn_down += 1
        return new_type
    if cat == _Category.ATTENTION_OUTPUT:
        if arch != "falcon":
            if qs.n_expert == 8:
                if ftype in _MOE8_ATTN_OUTPUT_Q5K:
                    new_type = T.Q5_K
            elif ftype == F.Q2_K:
                new_type = T.Q3_K
            elif ftype == F.IQ3_XXS:
                new_type = T.IQ3_S
            elif ftype in (F.Q3_K_M, F.IQ3_M):
                new_type = T.Q4_K
            elif ftype == F.Q3_K_L:
                new_type = T.Q5_K
        elif ftype == F.Q3_K_L:
            new_type = T.Q4_K
        return new_type
    # llama.cpp has an ATTENTION_QKV branch here (Q4_K_M -> Q5_K ...) that current sources never reach: the
    # attn_v-like test above catches attn_qkv first, so Phi-3's fused QKV follows the attn_v rules.
    if cat in (_Category.FFN_GATE, _Category.FFN_UP):
        counter = qs.i_ffn_gate if cat == _Category.FFN_GATE else qs.i_ffn_up
        i_layer, n_layer = _layer_of(qs, counter, spec)
        if ftype == F.IQ3_XS and n_layer // 8 <= i_layer < 7 * n_layer // 8:
            new_type = T.IQ3_XXS
        if cat == _Category.FFN_GATE:
            qs.i_ffn_gate += 1
        else:
            qs.i_ffn_up += 1
    return new_type


_FALLBACK: dict[GgmlType, GgmlType] = {
    # block size 256 on the left, 32 on the right (tensor_type_fallback)
    GgmlType.IQ1_S: GgmlType.IQ4_NL,
    GgmlType.IQ1_M: GgmlType.IQ4_NL,
    GgmlType.IQ2_XXS: GgmlType.IQ4_NL,
    GgmlType.IQ2_XS: GgmlType.IQ4_NL,
    GgmlType.IQ2_S: GgmlType.IQ4_NL,
    GgmlType.IQ3_XXS: GgmlType.IQ4_NL,
    GgmlType.IQ3_S: GgmlType.IQ4_NL,
    GgmlType.IQ4_XS: GgmlType.IQ4_NL,
    GgmlType.Q2_K: GgmlType.Q4_0,
    GgmlType.Q3_K: GgmlType.Q4_0,
    GgmlType.Q4_K: GgmlType.Q5_0,
    GgmlType.Q5_K: GgmlType.Q5_1,
    GgmlType.Q6_K: GgmlType.Q8_0,
}


def _fallback(spec: TensorSpec, target: GgmlType) -> GgmlType:
    """``tensor_type_fallback``: a row that is not a whole number of blocks takes a 32-block type, else F16."""
    ncols = spec.row_length
    if ncols % target.block_size == 0:
        return target
    # llama.cpp throws for a type without a fallback (e.g. Q8_0 on a row not divisible by 32); F16 keeps the
    # estimate defined for such odd shapes, as llama.cpp does when the fallback itself does not fit.
    chosen = _FALLBACK.get(target, GgmlType.F16)
    return chosen if ncols % chosen.block_size == 0 else GgmlType.F16


def _n_gqa(arch: Architecture) -> int:
    """``hparams.n_gqa()`` of layer 0 (integer division; 0 without KV heads)."""
    return arch.n_heads[0] // arch.n_kv_heads[0] if arch.n_kv_heads[0] else 0


def tensor_types(
    arch: Architecture, ftype: FileType, *, has_imatrix: bool = False
) -> list[tuple[TensorSpec, GgmlType]]:
    """Every tensor with the ggml type llama-quantize gives it, in the quantized file's (loader) order."""
    if not ftype.is_gguf:
        raise UnknownQuantError(f"{ftype.value} is a vLLM checkpoint format, not a GGUF file type", [], quant=ftype)
    tensors = loader_order(gguf_tensors(arch))
    cats = [_category(t.name) for t in tensors]
    qs = _QuantState(
        arch=arch.arch,
        n_expert=arch.n_experts,
        n_gqa=_n_gqa(arch),
        is_70b=_is_70b(arch),
        has_imatrix=has_imatrix,
        has_tied_embeddings=_Category.OUTPUT not in cats,
        n_attention_wv=sum(1 for c in cats if _is_attn_v_like(c)),
        n_layer=arch.n_layers,
    )
    default = ftype.default_type
    result: list[tuple[TensorSpec, GgmlType]] = []
    for spec, cat in zip(tensors, cats, strict=True):
        if not _allows_quantization(spec):
            result.append((spec, spec.source_type))
            continue
        new_type = default
        if default.is_quantized:
            new_type = _fallback(spec, _get_type_impl(qs, default, spec, ftype, cat))
        if spec.source_type.is_quantized:
            # gpt-oss experts arrive as MXFP4; llama-quantize will not requantize them without --allow-requantize
            # and published gpt-oss GGUFs of every mix keep them in MXFP4, so they stay (the counters still moved).
            new_type = spec.source_type
        result.append((spec, new_type))
    return result


# --- bytes ---------------------------------------------------------------------------------------------------


def _pad(n: int, align: int = GGUF_ALIGNMENT) -> int:
    return (n + align - 1) // align * align


# GGUF metadata for a real file (header + key/values + tokenizer + tensor infos). The converter's tokenizer arrays
# dominate: every token is a length-prefixed string plus a 4-byte type (and a 4-byte score for SentencePiece);
# BPE vocabularies add their merges. Fitted to real headers: Llama 3 8B's 7,835,936 bytes for 128,256 BPE tokens
# (280k merges) give ~61 bytes per token; SentencePiece vocabularies without merges (Gemma, Mistral v0.3 32768,
# Phi-3 32064) come to ~30 bytes per token. The llamacpp_cpu.jsonl files carry a synthetic ~25 B/token tokenizer.
_GGUF_HEADER_BYTES = 24  # magic, version, tensor count, key/value count
_GGUF_KV_BYTES = 8 * 1024  # general.*, hyper-parameters and a typical chat template
_BPE_BYTES_PER_TOKEN = 61
_SPM_BYTES_PER_TOKEN = 30
_SPM_ARCHS = frozenset({"gemma", "gemma2", "gemma3"})


def _uses_sentencepiece(arch: Architecture) -> bool:
    # Gemma's 256k SentencePiece vocabulary has no merges; the small (<= 64k) vocabularies of Llama 2, Mistral and
    # Phi-3 are SentencePiece too. Larger ones (Llama 3, Qwen, DeepSeek, gpt-oss, Command-R) are BPE with merges.
    return arch.arch in _SPM_ARCHS or arch.vocab_size <= 65536


def metadata_bytes(arch: Architecture, tensors: tuple[TensorSpec, ...] | None = None) -> int:
    """Estimated size of a real GGUF file's metadata (everything before the tensor data), padded to alignment."""
    specs = tensors if tensors is not None else gguf_tensors(arch)
    # gguf tensor info: name (u64 length + bytes), n_dims (u32), ne (u64 each), type (u32), offset (u64).
    infos = sum(8 + len(t.name) + 4 + 8 * t.n_dims + 4 + 8 for t in specs)
    per_token = _SPM_BYTES_PER_TOKEN if _uses_sentencepiece(arch) else _BPE_BYTES_PER_TOKEN
    return _pad(_GGUF_HEADER_BYTES + _GGUF_KV_BYTES + infos + arch.vocab_size * per_token)


class WeightBytes(BaseModel):
    """The weights of one model in one format, split the ways the memory model needs."""

    model_config = ConfigDict(frozen=True)

    file_type: str
    params: int = Field(description="llama_model_n_params: elements of all tensors (tied head counted once)")
    tensor_bytes: int = Field(description="sum of tensor sizes (llama_model_size; vLLM: its weight memory)")
    metadata_bytes: int = Field(description="estimated GGUF header + tokenizer (0 for vLLM formats)")
    file_bytes: int = Field(description="metadata + every tensor padded to the GGUF alignment")
    token_embd_bytes: int
    token_embd_type: str
    output_bytes: int = Field(description="output.weight, or the GPU copy of token_embd when the model is tied")
    output_type: str
    layer_bytes: tuple[int, ...] = Field(description="all tensors of blk.N, per layer")
    expert_layer_bytes: tuple[int, ...] = Field(description="the routed-expert (ffn_*_exps) part of each layer")
    gpu_bytes: int = Field(description="on the GPU with every layer offloaded")
    host_bytes: int = Field(description="kept in system RAM with every layer offloaded (llama.cpp: token_embd)")

    @property
    def bits_per_weight(self) -> float:
        return self.tensor_bytes * 8 / self.params if self.params else 0.0


def _gguf_weight_bytes(arch: Architecture, ftype: FileType, has_imatrix: bool) -> WeightBytes:
    typed = tensor_types(arch, ftype, has_imatrix=has_imatrix)
    specs = tuple(spec for spec, _ in typed)
    sizes = [(spec, t, tensor_bytes(t, spec.shape)) for spec, t in typed]
    total = sum(n for _, _, n in sizes)
    layers = [0] * arch.n_layers
    experts = [0] * arch.n_layers
    embd_bytes, embd_type = 0, ""
    out_bytes, out_type = 0, ""
    for spec, t, n in sizes:
        if spec.layer is not None:
            layers[spec.layer] += n
            if spec.is_expert:
                experts[spec.layer] += n
        elif spec.name == "token_embd.weight":
            embd_bytes, embd_type = n, t.value
        elif spec.name == "output.weight":
            out_bytes, out_type = n, t.value
    tied = not has_output_tensor(arch)
    if tied:
        # llama.cpp loads token_embd twice: the input copy stays on the CPU, the output head (same data, same
        # type) goes to the GPU with the output layer.
        out_bytes, out_type = embd_bytes, embd_type
    meta = metadata_bytes(arch, specs)
    return WeightBytes(
        file_type=ftype.value,
        params=sum(spec.n_elements for spec in specs),
        tensor_bytes=total,
        metadata_bytes=meta,
        file_bytes=meta + sum(_pad(n) for _, _, n in sizes),
        token_embd_bytes=embd_bytes,
        token_embd_type=embd_type,
        output_bytes=out_bytes,
        output_type=out_type,
        layer_bytes=tuple(layers),
        expert_layer_bytes=tuple(experts),
        gpu_bytes=total - embd_bytes + (out_bytes if tied else 0),
        host_bytes=embd_bytes,
    )


_VLLM_GROUP = 128  # AWQ / GPTQ group size


def _is_linear(spec: TensorSpec) -> bool:
    """A projection matrix an FP8/INT8/AWQ/GPTQ checkpoint quantizes (not embeddings, head, router or norms)."""
    if spec.n_dims < 2 or not spec.name.endswith(".weight") or spec.name.endswith("_norm.weight"):
        return False
    return spec.name not in ("token_embd.weight", "output.weight") and ".ffn_gate_inp." not in spec.name


def _vllm_mxfp4_bytes(spec: TensorSpec, arch: Architecture) -> int:
    """gpt-oss experts as vLLM's MXFP4 MoE holds them: the expert width rounded up to 256 (2880 -> 3072 on an H100,
    which matches the 13.47 / 64.38 GiB vLLM reports for gpt-oss-20b / -120b)."""
    n_ff = arch.expert_ffn_size
    padded = -(-n_ff // 256) * 256
    shape = list(spec.shape)
    dim = 0 if "ffn_down_exps" in spec.name else 1
    if shape[dim] == n_ff:
        shape[dim] = padded
    return tensor_bytes(GgmlType.MXFP4, shape)


def _vllm_tensor_bytes(spec: TensorSpec, ftype: FileType, arch: Architecture) -> int:
    if spec.source_type == GgmlType.MXFP4:
        return _vllm_mxfp4_bytes(spec, arch)  # gpt-oss: vLLM runs the MXFP4 checkpoint as is
    n = spec.n_elements
    if ftype == FileType.F32:
        return 4 * n
    if not _is_linear(spec) or ftype in (FileType.F16, FileType.BF16):
        return 2 * n  # the 16-bit model dtype (norms, biases, embeddings, lm_head, router)
    rows = n // spec.row_length
    if ftype in (FileType.FP8, FileType.INT8):
        return n + 4 * rows  # 1 byte per weight + an fp32 scale per output channel (FP8-dynamic, W8A8)
    # INT4 (AWQ/GPTQ): packed 4-bit weights + per group of 128 inputs an fp16 scale and a packed 4-bit zero point.
    groups = rows * -(-spec.row_length // _VLLM_GROUP)
    return -(-n // 2) + 2 * groups + -(-groups // 2)


def _rotary_cache_bytes(arch: Architecture, ftype: FileType) -> int:
    """vLLM's RotaryEmbedding cos/sin cache, counted in its weight memory: max positions x rotary dim x dtype.
    (Llama-3.1-8B: 14.96 GiB of weights + 32 MiB = the 14.99 GiB vLLM reports; Qwen3-0.6B 1.11 + 0.01.)"""
    rot_dim = arch.qk_rope_head_dim if arch.is_mla else arch.head_dim_k
    return arch.context_length * rot_dim * (4 if ftype == FileType.F32 else 2)


def _vllm_weight_bytes(arch: Architecture, ftype: FileType) -> WeightBytes:
    specs = gguf_tensors(arch)
    sizes = [(spec, _vllm_tensor_bytes(spec, ftype, arch)) for spec in specs]
    checkpoint = sum(n for _, n in sizes)
    total = checkpoint + _rotary_cache_bytes(arch, ftype)
    layers = [0] * arch.n_layers
    experts = [0] * arch.n_layers
    embd = out = 0
    for spec, n in sizes:
        if spec.layer is not None:
            layers[spec.layer] += n
            if spec.is_expert:
                experts[spec.layer] += n
        elif spec.name == "token_embd.weight":
            embd = n
        elif spec.name == "output.weight":
            out = n
    dtype = "F32" if ftype == FileType.F32 else "BF16" if ftype != FileType.F16 else "F16"
    return WeightBytes(
        file_type=ftype.value,
        params=sum(spec.n_elements for spec in specs),
        tensor_bytes=total,
        metadata_bytes=0,
        file_bytes=checkpoint,  # safetensors: the tensors (headers are a few KiB), without the rotary cache
        token_embd_bytes=embd,
        token_embd_type=dtype,
        output_bytes=out,  # tied: vLLM shares one matrix, so no separate head
        output_type=dtype if out else "",
        layer_bytes=tuple(layers),
        expert_layer_bytes=tuple(experts),
        gpu_bytes=total,  # vLLM keeps the embeddings on the GPU too
        host_bytes=0,
    )


def weight_bytes(
    arch: Architecture, ftype: FileType, *, engine: str = "llama.cpp", has_imatrix: bool = False
) -> WeightBytes:
    """Weight sizes of ``arch`` in ``ftype``: a GGUF as llama.cpp loads it (quantized without an importance matrix
    unless ``has_imatrix``), or (FP8/INT8/INT4, or a 16/32-bit type with ``engine="vllm"``) a safetensors
    checkpoint as vLLM holds it on the GPU."""
    if not ftype.is_gguf or (engine == "vllm" and ftype in (FileType.F16, FileType.BF16, FileType.F32)):
        return _vllm_weight_bytes(arch, ftype)
    return _gguf_weight_bytes(arch, ftype, has_imatrix)
