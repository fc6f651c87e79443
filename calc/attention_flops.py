"""The attention arithmetic of a prompt: FLOPs per prompt token beyond the weights' 2 per parameter.

A prompt's matrix products with the weights cost 2 FLOPs per active parameter and token (:mod:`calc.speed`); its
attention costs more the longer the cache it reads. llama.cpp (0c1e57098) processes a prompt in micro-batches of
``n_ubatch`` tokens (llama_context::decode splits the batch, src/llama-context.cpp); each micro-batch's attention runs
over the KV cells in use up to its last token (``n_kv``; the causal mask hides the later cells of the same micro-batch,
which the matrix products still compute), so a token of micro-batch ``u`` of a prompt that starts ``depth`` tokens into
the cache multiplies with ``depth + (u + 1) * n_ubatch`` cells (the last micro-batch: up to the prompt's end). Per
attention layer that is, for every query head, one product with the keys (``head_dim_k`` multiply-adds a cell) and one
with the values (``head_dim_v``): ``2 * n_head * (head_dim_k + head_dim_v) * cells`` FLOPs a token.

Which cells a layer reads:

* full attention: all of them;
* a sliding-window layer (llama_kv_cache_iswa): at most the window plus one micro-batch, the cells that cache holds;
* DeepSeek V4 (llama_kv_cache_dsv4): its sliding window plus the compressed rows of the layer's ratio (one row per
  ``ratio`` tokens), none for a layer without one;
* latent attention (DeepSeek's MLA): the cached latent, ``head_dim_k`` = kv_lora_rank + rope dims and ``head_dim_v`` =
  kv_lora_rank per head, as llama.cpp multiplies it;
* recurrent layers (no query heads): none; their state update is counted with the weights.

Not modelled: the indexers of sparse attention (GLM-5's DSA, DeepSeek V4's compressed layers) pick the cells a query
reads; the count here is dense over every cell the layer holds, an upper bound. The rounding of ``n_kv`` up to 256
cells is left out (a fraction of one micro-batch).
"""

from __future__ import annotations

from vramfit.calc.architecture import Architecture


def layer_cells(arch: Architecture, layer: int, n_kv: int, n_ubatch: int) -> int:
    """KV cells layer ``layer`` reads for a micro-batch whose last token is cell ``n_kv`` of the cache."""
    if arch.compress_ratios:
        ratio = arch.compress_ratios[layer]
        return min(n_kv, arch.sliding_window + n_ubatch) + (-(-n_kv // ratio) if ratio else 0)
    if arch.layer_is_swa(layer):
        return min(n_kv, arch.sliding_window + n_ubatch)
    return n_kv


def flops_per_cell_row(arch: Architecture) -> tuple[int, ...]:
    """Per layer, the FLOPs one token spends on one KV cell: ``2 * n_head * (head_dim_k + head_dim_v)``."""
    rows = []
    for il, heads in enumerate(arch.n_heads):
        head_k, head_v = arch.layer_head_dims(il)
        rows.append(2 * heads * (head_k + head_v) if heads and arch.n_kv_heads[il] else 0)
    return tuple(rows)


def attention_flops_per_token(arch: Architecture, prompt: int, *, depth: int = 0, n_ubatch: int = 512) -> float:
    """Attention FLOPs per token, averaged over a prompt of ``prompt`` tokens that starts ``depth`` tokens into the
    cache (llama-bench's ``pp512 @ d32768``: prompt 512, depth 32768; the first answer to a new prompt: depth 0)."""
    if prompt <= 0 or n_ubatch <= 0:
        return 0.0
    rows = flops_per_cell_row(arch)
    full = sum(row for il, row in enumerate(rows) if not arch.compress_ratios and not arch.layer_is_swa(il))
    windowed = sum(row for il, row in enumerate(rows) if not arch.compress_ratios and arch.layer_is_swa(il))
    total = full * _sum_of_cells(prompt, depth, n_ubatch, cap=None)
    total += windowed * _sum_of_cells(prompt, depth, n_ubatch, cap=arch.sliding_window + n_ubatch)
    if arch.compress_ratios:  # few layer kinds, long contexts rare: micro-batch by micro-batch
        for start in range(0, prompt, n_ubatch):
            tokens = min(n_ubatch, prompt - start)
            n_kv = depth + start + tokens
            total += tokens * sum(row * layer_cells(arch, il, n_kv, n_ubatch) for il, row in enumerate(rows) if row)
    return total / prompt


def _sum_of_cells(prompt: int, depth: int, n_ubatch: int, cap: int | None) -> int:
    """Sum over the prompt's tokens of the cells their micro-batch reads, ``min(n_kv, cap)`` (no cap: ``n_kv``),
    in closed form (a 10M-token prompt is 20,000 micro-batches)."""
    batches, rest = divmod(prompt, n_ubatch)
    if cap is None:
        total = n_ubatch * (batches * depth + n_ubatch * batches * (batches + 1) // 2)
    else:
        # micro-batches whose end stays below the cap: u + 1 <= (cap - depth) / n_ubatch
        under = min(batches, max(0, (cap - depth) // n_ubatch))
        total = n_ubatch * (under * depth + n_ubatch * under * (under + 1) // 2) + n_ubatch * (batches - under) * cap
    if rest:
        last = depth + prompt
        total += rest * (last if cap is None else min(last, cap))
    return total
