"""llama-server b11434's compute buffer on one device: the stages of the graph it reserves, as ggml-alloc lays them out.

llama-server reserves its compute buffer once, for a micro-batch of ``n_ubatch`` tokens against the whole KV cache
with at most ``n_outputs`` outputs (one a slot, :func:`calc.compute.server_outputs`). ggml's graph allocator
(ggml/src/ggml-alloc.c at b11434, ``ggml_dyn_tallocr_alloc``: best fit over free blocks, in graph order) places each
tensor when it is made and frees it after its last use; the buffer is the highest address it reached. Built with
``GGML_ALLOCATOR_DEBUG`` the allocator prints, each time that address grows, every tensor live at that moment
(tools/llamacpp_truth/trace_compute.py). On the CPU backend those prints show one pattern for every architecture:

* **Graph inputs stay live** (ggml-backend.cpp ``ggml_backend_sched_split_graph`` pass 6 keeps every input of the
  graph): the input embeddings (``inp_embd``, ``n_ubatch × n_embd`` f32), one KQ mask per cache kind (the full
  cache's and the sliding window's; f16 with flash attention, f32 without; ``n_ubatch`` rows of one stream's cells),
  and without flash attention the V cache's row indices (``attn_inp_v_idxs``: one int64 a value of a token's V row,
  per cache kind), and with a quantized cache its rotation matrices (:func:`rotation_bytes`). Gemma 3n and 4 add
  their per-layer embeddings (``n_layer × n_embd_per_layer`` values a token), and Gemma 3n its AltUp streams
  (:func:`altup_bytes`).
* **Four more hidden-size activations** sit below the stage: the residual stream, the layer's normed input and two
  blocks freed earlier that a larger tensor could not reuse. With the input embeddings, five hidden states in all.
* **The stage**, the largest of:

  - a dense feed-forward block: gate, up and their product, ``3 · n_ff`` values a token (an ungated relu² block, up
    only: its activation runs in place);
  - routed experts: gate, up and their product of the used experts (``A = n_used · n_ff_exp`` values a token each),
    then the down projection of every used expert (``D = n_used · n_embd``), which goes into the gate and up's freed
    block when it fits (``D ≤ 2A``) and above it otherwise: ``3A`` or ``3A + D``; ungated experts ``A + D``;
  - attention without flash attention: the queries (``Family.query_tensors`` of them: three with a gated query, whose
    projection carries the output gate, the queries and their norm; two where the norm is not done in place, Gemma 4)
    and the f32 KQ product of every head against the layer's cells;
  - attention with flash attention: the queries;
  - absorbed latent attention (MLA): the queries (``n_head · (qk_nope + rope)``), the absorbed queries
    (``n_head · kv_lora_rank``), their rope part and the concatenated query (``n_head · (kv_lora_rank + rope)``),
    plus the KQ product without flash attention;
  - a recurrent mixer (:data:`MIXER_STAGES`, ``Family.recurrent_mixer``): Mamba2's projection, its convolution's
    input and output and the scan's output with the states; Gated DeltaNet's raw convolution output, its queries and
    keys, and its output with the states;
  - the output: the final hidden state and the logits of the outputs.

Measured with llama-server b11434 on the CPU backend (llamaserver_b11434_replay.jsonl, every setting of the committed
rows; benchmarks/server_compute.py prints each family against it), e.g. at 4,096 tokens, one slot, flash attention:
EXAONE 3.5 7.8B 128.02 MiB (5 hidden states 40, mask 4, three 28 MiB feed-forward tensors), Qwen3-Coder-30B-A3B
92.02 (20 + 4 + 3 × 12 + 32), GLM-4.5-Air 174.02 (40 + 4 + 3 × 22 + 64), DeepSeek V3.1 410.01 (70 + 4 + 48 + 128 +
16 + 144), Falcon-H1 0.5B 31.34 (10 + 4 + 6.55 + 3.52 + 3.5 + 3.75), Qwen3.5 0.8B 39.02 (10 + 4 + 12 + 4 + 4 + 5).
DeepSeek V3.2 and GLM-5's sparse attention adds its indexer's inputs and a mask stage
(:func:`indexer_inputs_bytes`, :func:`indexer_stage`). Not sized yet, so left to the estimate of :mod:`calc.compute`
and marked in the benchmark: DeepSeek V4's compressed attention.
"""

from __future__ import annotations

from collections.abc import Callable

from vramfit.calc.architecture import Architecture
from vramfit.calc.families import family_of
from vramfit.calc.kv import KvCache
from vramfit.calc.request import KvType

F32 = 4
F16 = 2
INDEX = 8  # int64 row indices (llm_graph_input_attn_kv: self_v_idxs without flash attention)
UNROTATED = frozenset({KvType.F32, KvType.F16, KvType.BF16, KvType.FP8})  # ggml_is_quantized is false for these
ROTATION_BLOCK = 64  # llama-kv-cache.cpp: Hadamard rotations of 64 × 64 and up (PR #21038)
HIDDEN_STATES = 5  # inp_embd and four hidden-size activations below every stage (module docstring)


def graph_input_bytes(arch: Architecture, cache: KvCache, n_ubatch: int, flash_attn: bool) -> int:
    """What stays live through the whole graph: the input embeddings, one KQ mask per cache kind, the V row indices
    without flash attention, and the per-layer embeddings of Gemma 3n and 4."""
    mask_value = F16 if flash_attn else F32
    streams = max(cache.streams, 1)
    total = F32 * n_ubatch * arch.hidden_size
    for sliding, layers in _attention_kinds(arch).items():
        cells = (cache.swa_cells if sliding else cache.full_cells) // streams
        total += mask_value * n_ubatch * cells
        if not flash_attn and not arch.is_mla:
            total += INDEX * n_ubatch * max(arch.n_kv_heads[il] * arch.layer_head_dims(il)[1] for il in layers)
        total += rotation_bytes(arch, cache, layers)
    if arch.per_layer_input_size:
        total += F32 * n_ubatch * arch.per_layer_input_size * arch.n_layers
    return total


def rotation_bytes(arch: Architecture, cache: KvCache, layers: list[int]) -> int:
    """The Hadamard matrices a quantized cache's attention reads (llama-kv-cache.cpp at b11434, PR #21038): K's
    ``n_rot_k²`` f32, ``n_rot_k`` the largest power of two from 64 that divides the head size; V's 64 × 64. Command
    R7B with q8_0 K and V: 0.06 + 0.02 MiB a cache."""
    total = 0
    head_k = max(arch.layer_head_dims(il)[0] for il in layers)
    head_v = max(arch.layer_head_dims(il)[1] for il in layers)
    if cache.type_k not in UNROTATED and head_k % ROTATION_BLOCK == 0:
        rotation = ROTATION_BLOCK
        while head_k % (2 * rotation) == 0:
            rotation *= 2
        total += F32 * rotation * rotation
    if cache.type_v not in UNROTATED and head_v % ROTATION_BLOCK == 0 and not arch.is_mla:
        total += F32 * ROTATION_BLOCK * ROTATION_BLOCK
    return total


def feed_forward_stage(arch: Architecture, n_ubatch: int) -> int:
    """A dense block: gate, up and their product (up alone for an ungated relu² block). The last layer's feed-forward
    runs on the outputs' rows only (the graph keeps ``inp_out_ids`` rows before it), so it never sets the buffer."""
    widest = max(arch.ffn_size[:-1], default=0)
    width = 3 * widest if family_of(arch.arch).gated_ffn else widest
    return F32 * n_ubatch * width


def expert_stage(arch: Architecture, n_ubatch: int) -> int:
    """Routed experts: ``3A`` or ``3A + D`` (gated), ``A + D`` (ungated); module docstring. Not where the last layer
    is the only one with experts (it runs on the outputs' rows: a four-layer copy of GLM-5 whose three first layers
    are dense)."""
    if not arch.n_experts or not any(arch.layer_is_moe(il) for il in range(arch.n_layers - 1)):
        return 0
    activations = F32 * n_ubatch * arch.n_experts_used * arch.expert_ffn_size
    down = F32 * n_ubatch * arch.n_experts_used * arch.hidden_size
    if not family_of(arch.arch).gated_ffn:
        return activations + down
    return 3 * activations + (down if down > 2 * activations else 0)


def attention_stage(arch: Architecture, cache: KvCache, n_ubatch: int, flash_attn: bool, copy_bytes: int = 0) -> int:
    """The queries (and without flash attention the KQ product) of the largest attention layer; ``copy_bytes``: what
    a GPU backend's flash attention reserves beside it (:func:`calc.compute.flash_attn_reserved_bytes`)."""
    streams = max(cache.streams, 1)
    if arch.is_mla:
        heads = arch.max_heads
        queries = (
            F32
            * n_ubatch
            * heads
            * (arch.qk_nope_head_dim + arch.qk_rope_head_dim + 2 * arch.kv_lora_rank + 2 * arch.qk_rope_head_dim)
        )
        return queries + copy_bytes + (0 if flash_attn else F32 * n_ubatch * heads * cache.full_cells // streams)
    query_copies = family_of(arch.arch).query_tensors
    largest = 0
    for sliding, layers in _attention_kinds(arch).items():
        cells = (cache.swa_cells if sliding else cache.full_cells) // streams
        for il in layers:
            heads = arch.n_heads[il]
            stage = query_copies * F32 * n_ubatch * heads * arch.layer_head_dims(il)[0]
            if not flash_attn:
                stage += F32 * n_ubatch * heads * cells
            largest = max(largest, stage)
    return largest + copy_bytes


def mamba2_stage(arch: Architecture, n_ubatch: int, n_seqs: int) -> int:
    """Mamba2 (src/models/graph-context-mamba.cpp build_mamba2_layer): the in-projection (z, xBC, dt), the
    convolution's input (the states of every sequence before its tokens), freed once its output is made, and the
    scan's output with the new states, which goes into the input's block when it fits (Nemotron 3 Nano, one slot:
    10 MiB into 12.07) and on top otherwise (Falcon-H1 0.5B: 3.75 MiB over a 3.52 MiB block). With several sequences
    the scan then copies every state but the first, into what is left of that block when it fits and on top
    otherwise (Falcon-H1 1.5B, four slots: 9 MiB over 7.16)."""
    conv_channels = arch.ssm_inner_size + 2 * arch.ssm_groups * arch.ssm_state_size
    projection = n_ubatch * (arch.ssm_inner_size + conv_channels + arch.ssm_heads)
    conv_in = (n_ubatch + (arch.ssm_conv_kernel - 1) * n_seqs) * conv_channels
    scan = n_ubatch * arch.ssm_inner_size + n_seqs * arch.state_s_values
    copies = (n_seqs - 1) * arch.state_s_values
    stage = projection + conv_in + n_ubatch * conv_channels
    room = conv_in
    if scan > room:
        stage += scan
    else:
        room -= scan
    return F32 * (stage + (copies if copies > room else 0))


def gated_delta_net_stage(arch: Architecture, n_ubatch: int, n_seqs: int) -> int:
    """Gated DeltaNet (src/models/qwen35.cpp build_layer_attn_linear), the larger of two moments:

    * the convolution: the projected q, k and v and the convolution's input (the states of every sequence before its
      tokens); the projection is freed, and the sequences' delta-rule states are gathered into its block, so the
      convolution's output (as wide as the projection) reuses that block only when the states fit the hidden-size
      hole the input embeddings' mixing left (one slot), and goes above everything otherwise (Qwen3.5 0.8B, four
      slots: 14.02 + 12 + 12.28 + 12 = 50.30 MiB);
    * the delta rule: the convolution's output, the queries and keys, and its output with the new states."""
    key_values = arch.ssm_groups * arch.ssm_state_size
    conv_channels = 2 * key_values + arch.ssm_inner_size
    conv_out = n_ubatch * conv_channels
    conv_in = (n_ubatch + (arch.ssm_conv_kernel - 1) * n_seqs) * conv_channels
    states = n_seqs * arch.state_s_values
    convolution = conv_out + conv_in + (conv_out if states > n_ubatch * arch.hidden_size else 0)
    delta_rule = conv_out + 2 * n_ubatch * key_values + n_ubatch * arch.ssm_inner_size + states
    return F32 * max(convolution, delta_rule)


# Family.recurrent_mixer → its stage; LFM2's short convolutions stay below its feed-forward stage (measured).
MIXER_STAGES: dict[str, Callable[[Architecture, int, int], int]] = {
    "mamba2": mamba2_stage,
    "gated_delta_net": gated_delta_net_stage,
}


def altup_bytes(arch: Architecture, n_ubatch: int) -> int:
    """Gemma 3n (src/models/gemma3n-iswa.cpp): below the stage, its AltUp streams (``altup_inputs`` hidden states
    stacked) and one hidden state beside the freed block of the per-layer projection (as large as the per-layer
    inputs); the streams go into that block when they fit it, the hidden state when the rest of it holds one. E2B:
    15 MiB block, 16 MiB of streams above it (31); E4B: 17.5 MiB block holding the streams, the hidden state above
    (21.5)."""
    streams = family_of(arch.arch).altup_inputs
    if not streams:
        return 0
    hidden = F32 * n_ubatch * arch.hidden_size
    stacked = streams * hidden
    freed = F32 * n_ubatch * arch.per_layer_input_size * arch.n_layers
    if stacked > freed:
        return freed + stacked
    return freed + (hidden if hidden > freed - stacked else 0)


def indexer_inputs_bytes(arch: Architecture, cache: KvCache, n_ubatch: int, flash_attn: bool) -> int:
    """DeepSeek V3.2 and GLM-5's sparse attention (src/llama-graph.cpp build_attn with top_k at b11434): the
    indexer's own KQ mask and Hadamard matrix (created for an indexer whatever the cache type), and every layer's
    block of zeros that unmasks its top-k cells (``ggml_new_tensor_4d(F32, 1, n_top_k, n_batch, n_stream)``), a leaf
    the allocator places at the start: 4 · 512 · 2,048 B = 4 MiB a layer at the default micro-batch."""
    if not arch.indexer_heads:
        return 0
    cells = cache.full_cells // max(cache.streams, 1)
    mask = (F16 if flash_attn else F32) * n_ubatch * cells
    rotation = F32 * arch.indexer_head_dim * arch.indexer_head_dim
    zeros = F32 * n_ubatch * min(arch.indexer_top_k, cells) * arch.kv_layers
    return mask + rotation + zeros


def indexer_stage(arch: Architecture, cache: KvCache, n_ubatch: int, flash_attn: bool) -> int:
    """The sparse attention's mask: the latent query (``n_head · (kv_lora_rank + rope)``), the indexer's f32 scores
    of every cell, and three mask-sized tensors (the mask filled with −inf, its top-k cells set, the sum with the
    causal mask). GLM-5 at 32,768 tokens: 72 + 64 + 3 × 32 MiB."""
    if not arch.indexer_heads:
        return 0
    cells = cache.full_cells // max(cache.streams, 1)
    query = F32 * n_ubatch * arch.max_heads * (arch.kv_lora_rank + arch.qk_rope_head_dim)
    return query + F32 * n_ubatch * cells + 3 * (F16 if flash_attn else F32) * n_ubatch * cells


def sized(arch: Architecture) -> bool:
    """Whether this module sizes the architecture's buffer (module docstring: not DeepSeek V4's compression)."""
    return not arch.compress_ratios


def server_compute_bytes(
    arch: Architecture,
    cache: KvCache,
    *,
    n_ubatch: int,
    flash_attn: bool,
    n_outputs: int,
    n_seqs: int,
    flash_attn_copy_bytes: int = 0,
) -> int:
    """One device's compute buffer for llama-server b11434 with every layer on it: the graph's inputs, four hidden
    states and the largest stage (module docstring). ``n_seqs``: the slots (the reserved graph splits its micro-batch
    among them); ``flash_attn_copy_bytes``: a GPU backend's flash-attention reservation, added to the attention
    stage as :mod:`calc.compute` does (measured on CUDA at 0c1e57098; the CPU rows here have none)."""
    hidden = F32 * n_ubatch * arch.hidden_size
    rows = min(n_ubatch, max(n_outputs, 1))
    stages = [
        feed_forward_stage(arch, n_ubatch),
        expert_stage(arch, n_ubatch),
        attention_stage(arch, cache, n_ubatch, flash_attn, flash_attn_copy_bytes),
        F32 * rows * arch.vocab_size + hidden,
        indexer_stage(arch, cache, n_ubatch, flash_attn),
    ]
    mixer = MIXER_STAGES.get(family_of(arch.arch).recurrent_mixer)
    if mixer is not None and any(arch.recurrent_layers):
        stages.append(mixer(arch, n_ubatch, max(n_seqs, 1)))
    below = graph_input_bytes(arch, cache, n_ubatch, flash_attn) + (HIDDEN_STATES - 1) * hidden
    below += indexer_inputs_bytes(arch, cache, n_ubatch, flash_attn)
    return below + altup_bytes(arch, n_ubatch) + max(stages)


def _attention_kinds(arch: Architecture) -> dict[bool, list[int]]:
    """The layers that hold KV, by whether they slide (one mask, one index list each)."""
    kinds: dict[bool, list[int]] = {}
    for il, heads in enumerate(arch.n_kv_heads):
        if heads:
            kinds.setdefault(arch.layer_is_swa(il), []).append(il)
    return kinds
