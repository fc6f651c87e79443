"""A port of llama.cpp's quantizer type choice (``src/llama-quant.cpp``), and the GGUF file it writes.

:func:`tensor_types` ports ``llama_tensor_get_type`` and ``llama_tensor_get_type_impl``,
``tensor_allows_quantization``, ``tensor_type_fallback`` and ``init_quantize_state_counters`` for
``llama_model_quantize`` with default parameters and no importance matrix: which tensors are quantized at all, the
output/token_embd rules (a tied token_embd takes the output rule), the extra-bits layers picked by the running
counters in the loader's order, the 8-expert and 70B (GQA) bumps, and the fallback when a row is not a whole number
of blocks. It mirrors llama.cpp 0c1e57098 (the revision llama-cpp-python 0.3.36 vendors), against which
tests/data/groundtruth/llamacpp_cpu.jsonl was measured (every tensor type of 112 files matches).
:func:`gguf_file_weights` adds the result up as the file and as llama.cpp places it with every layer offloaded
(token_embd stays in system RAM; a tied model gets a GPU copy of it as the output head).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from vramfit.calc.architecture import Architecture
from vramfit.calc.errors import UnknownQuantError
from vramfit.calc.families import family_of
from vramfit.calc.file_types import FileType
from vramfit.calc.ggml import GgmlType, tensor_bytes
from vramfit.calc.tensor_specs import TensorSpec, loader_order
from vramfit.calc.tensors import gguf_tensors, has_output_tensor, loaded_past_layers
from vramfit.calc.weight_bytes import WeightBytes, sum_by_role

GGUF_ALIGNMENT = 32  # GGUF_DEFAULT_ALIGNMENT: the data section and every tensor start on a 32-byte boundary


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

    falcon_rules: bool  # LLM_ARCH_FALCON's own branches (the family says; no modelled family has them)
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
    falcon = qs.falcon_rules
    if cat == _Category.OUTPUT or (qs.has_tied_embeddings and cat == _Category.TOKEN_EMBD):
        # Tied models quantize token_embd with the output tensor's rule, since it is the output head too.
        if ftype == F.MXFP4_MOE:
            return T.Q8_0
        if falcon or spec.row_length % new_type.block_size:
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
            elif not falcon or _use_more_bits(i_layer, n_layer):
                new_type = T.Q4_K
            else:
                new_type = T.Q3_K
        elif ftype == F.IQ3_M and (i_layer < n_layer // 8 or (qs.n_expert == 8 and _use_more_bits(i_layer, n_layer))):
            new_type = T.Q4_K
        elif ftype == F.Q3_K_L:
            new_type = T.Q4_K if falcon else T.Q5_K
        elif ftype == F.Q4_K_M:
            if falcon:
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
        elif ftype == F.Q4_K_S and not falcon and i_layer < n_layer // 8:
            new_type = T.Q5_K
        elif ftype in (F.Q4_0, F.Q5_0) and qs.has_imatrix and i_layer < n_layer // 8:
            # Only with an imatrix, so files made without one stay as they always were.
            new_type = T.Q4_1 if ftype == F.Q4_0 else T.Q5_1
        qs.i_ffn_down += 1
        return new_type
    if cat == _Category.ATTENTION_OUTPUT:
        if not falcon:
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
    """``hparams.n_gqa()`` of layer 0 (integer division; 0 without KV heads). Qwen3.5's converters write one
    head_count / head_count_kv for every layer, its recurrent ones too; Granite 4.0 H and LFM2 write per-layer
    lists with 0 in the recurrent layers."""
    if family_of(arch.arch).gqa_from_widest_layer:
        return max(arch.n_heads) // max(arch.n_kv_heads)
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
        falcon_rules=family_of(arch.arch).falcon_quant_rules,
        n_expert=arch.n_experts,
        n_gqa=_n_gqa(arch),
        is_70b=family_of(arch.arch).is_70b(arch),
        has_imatrix=has_imatrix,
        has_tied_embeddings=_Category.OUTPUT not in cats,
        n_attention_wv=sum(1 for c in cats if _is_attn_v_like(c)),
        n_layer=arch.n_layers + arch.nextn_layers,  # hparams.n_layer_all: multi-token-prediction blocks count
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


# --- the file ------------------------------------------------------------------------------------------------


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


def _uses_sentencepiece(arch: Architecture) -> bool:
    # Gemma's 256k SentencePiece vocabulary has no merges; the small (<= 64k) vocabularies of Llama 2, Mistral and
    # Phi-3 are SentencePiece too. Larger ones (Llama 3, Qwen, DeepSeek, gpt-oss, Command-R) are BPE with merges.
    return family_of(arch.arch).sentencepiece_vocab or arch.vocab_size <= 65536


def metadata_bytes(arch: Architecture, tensors: tuple[TensorSpec, ...] | None = None) -> int:
    """Estimated size of a real GGUF file's metadata (everything before the tensor data), padded to alignment."""
    specs = tensors if tensors is not None else gguf_tensors(arch)
    # gguf tensor info: name (u64 length + bytes), n_dims (u32), ne (u64 each), type (u32), offset (u64).
    infos = sum(8 + len(t.name) + 4 + 8 * t.n_dims + 4 + 8 for t in specs)
    per_token = _SPM_BYTES_PER_TOKEN if _uses_sentencepiece(arch) else _BPE_BYTES_PER_TOKEN
    return _pad(_GGUF_HEADER_BYTES + _GGUF_KV_BYTES + infos + arch.vocab_size * per_token)


def gguf_file_weights(arch: Architecture, ftype: FileType, has_imatrix: bool = False) -> WeightBytes:
    """The GGUF file llama-quantize writes for ``arch`` in ``ftype``, summed the ways the memory model needs."""
    typed = tensor_types(arch, ftype, has_imatrix=has_imatrix)
    specs = tuple(spec for spec, _ in typed)
    sizes = [(spec, t, tensor_bytes(t, spec.shape)) for spec, t in typed]
    total = sum(n for _, _, n in sizes)
    rows = ((spec.name, spec.layer, spec.is_expert, n, t.value) for spec, t, n in sizes)
    roles = sum_by_role(rows, arch.n_layers, loaded_past_layers(arch))
    meta = metadata_bytes(arch, specs)
    return WeightBytes.as_llama_cpp_places_them(
        file_type=ftype.value,
        params=sum(spec.n_elements for spec in specs),
        tensor_bytes=total,
        metadata_bytes=meta,
        file_bytes=meta + sum(_pad(n) for _, _, n in sizes),
        roles=roles,
        tied=not has_output_tensor(arch),
    )
