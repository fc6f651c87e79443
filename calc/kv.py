"""KV cache: the bytes llama.cpp allocates for keys and values, and the naive formula people quote.

llama.cpp rules mirrored here (src/llama-kv-cache.cpp, src/llama-kv-cache-iswa.cpp, src/llama-context.cpp):

* The context is shared by all sequences: ``n_ctx = context × users``, padded up to a multiple of 256; with one
  stream per sequence (``--no-kv-unified``) each stream holds ``pad(n_ctx / users, 256)`` cells.
* Each layer with KV heads stores ``K = row(type_k, head_dim_k × kv_heads) × cells`` and likewise V.
* Sliding-window layers (iSWA cache) hold ``pad256(min(n_ctx, window × users + n_ubatch))`` cells with the unified
  cache llama-server uses, or ``users × pad256(min(n_ctx / users, window + n_ubatch))`` with one stream per
  sequence; ``--swa-full`` gives them the full size.
* MLA models (DeepSeek V2/V3) cache one latent of ``kv_lora_rank + rope`` values per token and layer, K only.
* A quantized V cache needs flash attention; without it llama.cpp keeps V in f16 (as Ollama and gguf-parser do).
* Without flash attention V is stored transposed, and when layers differ in V width (Gemma 4: 16 × 256 on sliding
  layers, 4 × 512 on global ones) every layer's V is padded to the widest (``n_embd_v_gqa_max``,
  [TAG_V_CACHE_VARIABLE] in llama-kv-cache.cpp).
* Block types carry their scales: q8_0 is 34 bytes per 32 values (1.0625 B), q4_0 18 bytes per 32 (0.5625 B).
* DeepSeek V4 (llama_kv_cache_dsv4, src/llama-kv-cache-dsv4.cpp): a window cache plus compressed caches that grow
  with the context by 1/4 and 1/128 (:func:`_dsv4_cache`); its compressor state is in :mod:`calc.recurrent`.
* With flash attention, a K or V cache in any type but f16 is copied to f16 for the tile and tensor-core kernels of
  CUDA and ROCm, into memory the attention's output reserves beside itself (ggml-cuda fattn-common.cuh
  ``ggml_cuda_flash_attn_ext_get_f16_extra_data``, since llama.cpp PR #23907; 0c1e57098): the whole layer as the
  graph views it, every cell (``KvCache.f16_copy_layer_bytes``, the largest layer's; V is K's view in an MLA cache).
  Metal reserves that f16 copy whatever the cache's type, f16 too ("always reserve the temp buffer to avoid graph
  reallocations", ggml-metal-ops.cpp ``ggml_metal_op_flash_attn_ext_extra_kv_f16``): ``KvCache.f16_layer_bytes``.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from vramfit.calc.architecture import DSV4_CSA_RATIO, DSV4_HCA_RATIO, Architecture
from vramfit.calc.ggml import GgmlType, row_bytes
from vramfit.calc.request import KvType

KV_PAD = 256  # llama.cpp pads n_ctx and sliding-window cache sizes to 256 cells
F16_BYTES = 2  # one f16 value

# KV element types → ggml storage; fp8 (vLLM's fp8_e4m3) is one byte per value.
KV_GGML_TYPE: dict[KvType, GgmlType] = {
    KvType.F32: GgmlType.F32,
    KvType.F16: GgmlType.F16,
    KvType.BF16: GgmlType.BF16,
    KvType.Q8_0: GgmlType.Q8_0,
    KvType.Q5_1: GgmlType.Q5_1,
    KvType.Q5_0: GgmlType.Q5_0,
    KvType.Q4_1: GgmlType.Q4_1,
    KvType.Q4_0: GgmlType.Q4_0,
    KvType.IQ4_NL: GgmlType.IQ4_NL,
}


def pad(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


@lru_cache(maxsize=1024)
def kv_row_bytes(kv_type: KvType, n_values: int) -> int:
    """Bytes for ``n_values`` cached values of one token in one layer."""
    if kv_type == KvType.FP8:
        return n_values
    return row_bytes(KV_GGML_TYPE[kv_type], n_values)


def kv_value_bytes(kv_type: KvType) -> float:
    """Average bytes per cached value (for formulas shown to people)."""
    return kv_row_bytes(kv_type, 1024) / 1024


class KvCache(BaseModel):
    """KV cache of one configuration, split the way llama.cpp logs it."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    k_bytes: int
    v_bytes: int
    full_cells: int
    swa_cells: int
    layer_bytes: tuple[int, ...]
    streams: int = 1  # KV streams the cells are split into (one per sequence without a unified cache)
    swa_bytes: int = 0  # the part in sliding-window layers (llama.cpp's second cache of an iSWA model)
    indexer_bytes: int = 0  # DeepSeek V3.2's / GLM-5's indexer keys (llama_kv_cache_dsa's second cache, logged apart)
    # Every buffer in llama.cpp's order where the cache is not one cache plus a window or indexer cache (DeepSeek V4:
    # window, CSA, HCA, indexer); empty otherwise.
    buffers: tuple[int, ...] = ()
    type_k: KvType
    type_v: KvType
    # With flash attention: the f16 copy of the largest layer's K and V where their type is not f16, which CUDA's and
    # ROCm's flash attention reserves in the compute buffer (module docstring); 0 with an f16 cache or without it.
    f16_copy_layer_bytes: int = 0
    # With flash attention: the largest layer's K and V views in f16 whatever their type (Metal's reservation).
    f16_layer_bytes: int = 0

    @property
    def total_bytes(self) -> int:
        return self.k_bytes + self.v_bytes


def stream_cells(context: int, users: int, unified: bool = True) -> int:
    """Cells of one KV stream (llama_context: ``n_ctx = pad(n_ctx, 256)``; with one stream per sequence each gets
    ``pad(n_ctx / n_seq, 256)``)."""
    n_ctx = pad(context * users, KV_PAD)
    return n_ctx if unified else pad(n_ctx // users, KV_PAD)


def context_cells(context: int, users: int, unified: bool = True) -> int:
    """llama.cpp's n_ctx (all streams) for ``users`` sequences of ``context`` tokens each."""
    return stream_cells(context, users, unified) * (1 if unified else users)


def swa_cells(arch: Architecture, context: int, users: int, n_ubatch: int, unified: bool) -> int:
    """Cells of one sliding-window layer, summed over streams (llama_kv_cache_iswa: the window of every sequence a
    stream holds plus one micro-batch, padded, never more than the stream)."""
    size_base = stream_cells(context, users, unified)
    window = arch.sliding_window * (users if unified else 1) + n_ubatch
    return min(size_base, pad(window, KV_PAD)) * (1 if unified else users)


def kv_cache(
    arch: Architecture,
    context: int,
    users: int = 1,
    type_k: KvType = KvType.F16,
    type_v: KvType | None = None,
    *,
    flash_attn: bool = True,
    n_ubatch: int = 512,
    unified: bool = True,
    swa_full: bool = False,
) -> KvCache:
    """The KV cache llama.cpp allocates for ``users`` sequences of ``context`` tokens."""
    type_v = type_k if type_v is None else type_v
    if not flash_attn and type_v not in (KvType.F32, KvType.F16, KvType.BF16):
        type_v = KvType.F16  # quantized V needs flash attention (llama.cpp refuses; front-ends fall back to f16)
    if arch.compress_ratios:
        return _dsv4_cache(arch, context, users, type_k, n_ubatch=n_ubatch, unified=unified, swa_full=swa_full)
    full = context_cells(context, users, unified)
    window_cells = full if swa_full or not arch.sliding_window else swa_cells(arch, context, users, n_ubatch, unified)
    k_total = v_total = window_total = indexer_total = dequant = f16_layer = 0
    per_layer: list[int] = []
    v_widths = [arch.layer_head_dims(il)[1] * h for il, h in enumerate(arch.n_kv_heads) if h]
    v_max = max(v_widths, default=0) if not flash_attn else 0  # the transposed V cache is padded to the widest
    owners = arch.n_layers - arch.kv_shared_layers  # llama.cpp's n_layer_kv_from_start: the rest reuse a cache
    for il, heads in enumerate(arch.n_kv_heads):
        if heads == 0 or il >= owners:
            per_layer.append(0)  # attention-free (recurrent) layers and KV-sharing layers hold no KV
            continue
        cells = window_cells if arch.layer_is_swa(il) else full
        head_k, head_v = arch.layer_head_dims(il)
        k = kv_row_bytes(type_k, head_k * heads) * cells
        if arch.layer_has_indexer(il):  # llama_kv_cache_dsa: the indexer's one key head per token, type_k, K only
            indexer = kv_row_bytes(type_k, arch.indexer_head_dim) * cells
            k += indexer
            indexer_total += indexer
        v = 0 if arch.is_mla else kv_row_bytes(type_v, max(head_v * heads, v_max)) * cells
        if flash_attn:  # the f16 copy of this layer's K and V (V: K's own view in an MLA cache)
            k_f16 = F16_BYTES * head_k * heads * cells
            v_f16 = 0 if arch.is_mla else F16_BYTES * head_v * heads * cells
            f16_layer = max(f16_layer, k_f16 + v_f16)
            copied = (k_f16 if type_k != KvType.F16 else 0) + (v_f16 if type_v != KvType.F16 else 0)
            dequant = max(dequant, copied)
        k_total += k
        v_total += v
        if arch.layer_is_swa(il):
            window_total += k + v
        per_layer.append(k + v)
    return KvCache(
        k_bytes=k_total,
        v_bytes=v_total,
        full_cells=full,
        swa_cells=window_cells if arch.sliding_window else 0,
        layer_bytes=tuple(per_layer),
        streams=1 if unified else max(users, 1),
        swa_bytes=window_total,
        indexer_bytes=indexer_total,
        type_k=type_k,
        type_v=type_v,
        f16_copy_layer_bytes=dequant,
        f16_layer_bytes=f16_layer,
    )


def dsv4_compressed_cells(kv_size: int, ratio: int) -> int:
    """Cells of one stream of a DeepSeek V4 compressed cache: ``GGML_PAD(dsv4_comp_size(kv_size, ratio), 256)``,
    one row per ``ratio`` tokens (``max(1, ceil(kv_size / ratio))``)."""
    return pad(max(1, -(-kv_size // ratio)), KV_PAD)


def _dsv4_cache(
    arch: Architecture,
    context: int,
    users: int,
    type_k: KvType,
    *,
    n_ubatch: int,
    unified: bool,
    swa_full: bool,
) -> KvCache:
    """DeepSeek V4's caches as llama_kv_cache_dsv4's constructor builds them (src/llama-kv-cache-dsv4.cpp, llama.cpp
    0c1e57098), every one K-only in type_k (dsv4_make_k_only) with one stream per sequence whatever --kv-unified says
    (``unified_raw`` and ``unified_compressed`` are false), each stream ``kv_size = n_ctx_seq`` cells long:

    * raw: a llama_kv_cache_iswa whose every layer slides (set_swa_pattern(0)): per stream
      ``pad(min(kv_size, n_swa + n_ubatch), 256)`` cells (kv_size with --swa-full) of head_dim in all layers; its
      non-SWA half holds no layer and allocates nothing;
    * CSA: layers with ratio 4, ``dsv4_compressed_cells(kv_size, 4)`` cells of head_dim;
    * HCA: layers with ratio 128, ``dsv4_compressed_cells(kv_size, 128)`` cells of head_dim;
    * lightning indexer: the CSA layers again, same cells, one head of index_head_dim.
    """
    kv_size = stream_cells(context, users, unified)
    streams = max(1, users)
    window = kv_size if swa_full else min(kv_size, pad(arch.sliding_window + n_ubatch, KV_PAD))
    csa_cells = dsv4_compressed_cells(kv_size, DSV4_CSA_RATIO)
    hca_cells = dsv4_compressed_cells(kv_size, DSV4_HCA_RATIO)
    head_row = kv_row_bytes(type_k, arch.head_dim_k)
    index_row = kv_row_bytes(type_k, arch.indexer_head_dim)
    raw = csa = hca = lid = 0
    per_layer: list[int] = []
    for il in range(arch.n_layers):
        layer = head_row * window * streams
        raw += layer
        ratio = arch.compress_ratios[il]
        if ratio == DSV4_CSA_RATIO:
            csa += head_row * csa_cells * streams
            lid += index_row * csa_cells * streams
            layer += (head_row + index_row) * csa_cells * streams
        elif ratio == DSV4_HCA_RATIO:
            hca += head_row * hca_cells * streams
            layer += head_row * hca_cells * streams
        per_layer.append(layer)
    return KvCache(
        k_bytes=raw + csa + hca + lid,
        v_bytes=0,
        full_cells=context_cells(context, users, unified),
        swa_cells=window * streams,
        layer_bytes=tuple(per_layer),
        streams=streams,
        swa_bytes=raw,
        indexer_bytes=lid,
        buffers=tuple(b for b in (raw, csa, hca, lid) if b),
        type_k=type_k,
        type_v=type_k,
    )


def naive_heads_and_dim(arch: Architecture) -> tuple[int, int]:
    """KV heads and head size as people plug them into the textbook formula (config.json values, no MLA)."""
    if arch.is_mla:
        return arch.max_heads, arch.qk_nope_head_dim + arch.qk_rope_head_dim
    if arch.swa_head_dim:  # Gemma 4: config.json's num_key_value_heads and head_dim are the sliding layers'
        return arch.typical_kv_heads, arch.swa_head_dim
    return arch.typical_kv_heads, arch.head_dim_k


def naive_kv_bytes(arch: Architecture, context: int, users: int = 1, kv_type: KvType = KvType.F16) -> int:
    """``2 × layers × kv_heads × head_dim × tokens × users × bytes``: ignores windows, MLA and padding."""
    heads, dim = naive_heads_and_dim(arch)
    return kv_row_bytes(kv_type, 2 * heads * dim) * arch.n_layers * context * users


def kv_bytes_per_token(arch: Architecture, kv_type: KvType = KvType.F16) -> int:
    """Bytes one more token of context costs in a full-attention cache (all layers)."""
    if arch.compress_ratios:
        # DeepSeek V4: the window does not grow; a CSA row (head_dim + the indexer's key) per 4 tokens, an HCA row
        # per 128 (rounded down here; llama.cpp allocates whole 256-row blocks of them).
        head, index = kv_row_bytes(kv_type, arch.head_dim_k), kv_row_bytes(kv_type, arch.indexer_head_dim)
        csa = sum(r == DSV4_CSA_RATIO for r in arch.compress_ratios)
        hca = sum(r == DSV4_HCA_RATIO for r in arch.compress_ratios)
        return (csa * (head + index)) // DSV4_CSA_RATIO + (hca * head) // DSV4_HCA_RATIO
    total = 0
    for il, heads in enumerate(arch.n_kv_heads):
        if heads:
            head_k, head_v = arch.layer_head_dims(il)
            total += kv_row_bytes(kv_type, head_k * heads)
            if arch.layer_has_indexer(il):
                total += kv_row_bytes(kv_type, arch.indexer_head_dim)
            if not arch.is_mla:
                total += kv_row_bytes(kv_type, head_v * heads)
    return total
