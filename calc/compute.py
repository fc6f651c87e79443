"""Compute buffers: the scratch memory llama.cpp's graph allocator reserves on each GPU.

llama.cpp sizes the buffer by reserving its worst-case graph (one micro-batch of ``n_ubatch`` tokens against the
whole KV cache). A few stages dominate, and the buffer is the largest of them (ggml-alloc reuses memory between them):

* attention, flash attention off: the f32 KQ matrix of every head, ``4 · n_ubatch · n_ctx · n_head``, plus the
  input mask and a few hidden-size activations: ``4 · ub · (1 + 4·h + n_ctx · (1 + n_head))``. This is Ollama's
  ``GraphSize`` for llama and reproduces llama.cpp's CUDA logs to the MiB: Llama 3 8B at 8192 → 560.00 MiB,
  Llama 3.3 70B at 15360 → 2014.00 MiB, Qwen2.5-32B at 4096 → 368.0 MiB, Llama 2 13B at 40960 → 3320 MiB.
* attention, flash attention on: no KQ matrix; the mask, built in f16 (llama-graph.cpp build_attn_inp_kq_mask at
  0c1e57098; older builds built it in f32 and copied it to f16), and four hidden-size activations:
  ``4 · ub · 4·h + 2 · ub · n_ctx``. On the CPU backend at 0c1e57098 Llama 3.2 1B at 131,072 tokens logs 258.5 MiB,
  its output stage: an f32 mask and its copy would make this stage 400 MiB. On CUDA and ROCm, a K or V cache in any
  type but f16 adds the f16 copy of one layer's K and V, every cell (``flash_attn_copy_bytes``,
  :func:`flash_attn_reserved_bytes`; Metal reserves that copy for every type, f16 too;
  :attr:`calc.kv.KvCache.f16_copy_layer_bytes`; ggml-cuda's flash attention reserves it beside its output since PR
  #23907): unsloth measured Qwen3.5-4B at 262,144 tokens with q8_0 K and V at 1.30 GiB of compute on CUDA (unsloth
  PR #6718), this stage 1.27 GiB (20 MiB of activations, the 256 MiB mask, 1 GiB of f16 K and V).
* attention of an absorbed-MLA model (DeepSeek V3, Kimi K2, GLM-4.7-Flash, GLM-5; src/models/deepseek2.cpp): in
  place of the four hidden states, three latent-wide f32 tensors a head (Qcur, ``kv_lora_rank + rope`` wide;
  q_nope_absorbed and the attention's output, ``kv_lora_rank`` each), ``4 · ub · n_head · (3 · kv_lora_rank +
  rope)``: DeepSeek V3.1 on the CPU backend at 0c1e57098 logs 410.01 MiB at 2,048 tokens (this rule 402) and 924.01
  without flash attention (916), where four hidden states made 35–40 % less.
* feed-forward of a dense layer (:func:`feed_forward_stage_bytes`): gate, up and their product at the widest dense
  layer and four hidden states beside the mask, ``4 · ub · (3 · n_ff + 4 · h)`` plus the mask; exact on every dense
  model of llamacpp_outputs.jsonl, and the largest stage of a wide model with a small vocabulary at long contexts (OLMo
  2 32B and EXAONE 4.0 32B at 32,768 tokens, 234 MiB, where the logits take 206).
* output: the f32 logits of the micro-batch and the final hidden state, ``4 · ub · (h + n_vocab)``: Llama 3 8B at
  2048 → 258.50 MiB, Gemma 2 2B → 504.5 MiB, Gemma 3 27B → 522.5 MiB (all as logged on CUDA).

Apart from that f16 copy a quantized KV cache (q8_0, q4_0: llama.cpp needs flash attention for a quantized V) leaves
these buffers as they are. Measured on CUDA: Gemma 3 27B with q8_0 K and V, flash attention, two sequences of 16,384
tokens, logs 522.5 MiB, the f16 cache's output stage, which stays the larger (lcpp-14097 in measured.jsonl). On the CPU
backend (llamacpp_cpu.jsonl, llama.cpp 0c1e57098, 118 pairs of loads) q8_0 or q4_0 K and V with flash attention hold
from 29 MiB less to 46 MiB more than f16 at the same settings (Llama 3.2 1B +4.0 MiB from 8,192 to 131,072 tokens,
Gemma 4 31B +24.3 MiB at 32,768, Gemma 4 E4B +45.8 MiB at 4,096, Nemotron 3 Nano −29.2 MiB at 32,768), a q8_0 K cache
without it from 4 MiB less to 4.5 MiB more (10 pairs); the graph allocator's reuse, not modelled. An MLA model (DeepSeek
V3.1, 4 layers) holds exactly f16's buffer with q8_0 and q4_0 caches. What users
report as gigabytes more with a quantized cache on CUDA is that f16 copy at long contexts; with flash attention off
the K·Q product dequantizes K into CUDA's memory pool instead, outside the compute buffer, which was not measured here.

The output stage of llama.cpp's library default keeps every token's logits (``n_outputs_max`` 0: n_batch; the CPU
rows, within 16 % for all 54 measured architectures at 4,096 tokens: tests/calc/test_output_limit.py). llama-server
at 0c1e57098 reserves one output a slot, times one plus the draft length (:func:`server_outputs`; llama.cpp PR
#23861), and its buffer is smaller where the logits were the largest stage: Llama 3.2 1B at 4,096 tokens 68.01 MiB
against 258.50 (llamacpp_outputs.jsonl). llama-server's buffer at b11434 is sized by :mod:`calc.server_graph` (its
graph inputs, hidden states and the largest stage of each family, read from ggml-alloc's own trace: 577 of the 593
replayed settings within 5 %, benchmarks/server_compute.py); DeepSeek V4, which it does not size, keeps the library
default's stages here. A log of a build before that PR (no ``n_outputs_max`` line) is compared with every token's
outputs (``Request.n_outputs_max`` 0).

With several GPUs llama.cpp splits layers and runs a pipeline with 4 copies of the graph inputs
(GGML_SCHED_MAX_COPIES): every GPU holds its own buffer plus three extra copies of the mask and hidden state; the
output stage sits on the last GPU only.

When weights or KV stay on the CPU (``-ngl`` below the layer count, ``--n-cpu-moe``, ``-ot exps=CPU``) the GPU's
buffer grows, because llama.cpp runs the CPU-side work on the GPU and copies its inputs in
(:func:`offloaded_compute_bytes`; llama.cpp 0c1e57098, ggml-backend.cpp ``ggml_backend_sched_backend_id_from_cur``
and its split inputs, ggml-cuda.cu ``ggml_backend_cuda_device_offload_op``): an op whose weight is in host memory
moves to the GPU when its batch is at least 32 tokens (``GGML_OP_OFFLOAD_MIN_BATCH``; the reserved graph has
``min(n_ctx, n_ubatch)`` of them), and every host tensor it reads is copied whole into the compute buffer, one
weight at a time. The buffer is the largest of the stages that apply:

* attention of a layer whose KV is on the GPU: the stage above;
* attention of a layer whose KV is on the CPU: that layer's whole K and V (all cells), the f32 KQ mask and, with
  flash attention, its f16 copy, three hidden states, and without flash attention the f32 KQ matrix;
* the output layer on the CPU: the output matrix (token_embd when tied) plus the output stage;
* a routed-expert tensor on the CPU: that tensor, the routed activations of the micro-batch
  (``4 · ub · n_used · (n_ff_exp + h)``), the mask that stays live (f16 with flash attention, else f32) and two
  hidden states.

These terms reproduce the CUDA0 compute buffer of the partial-offload logs of measured.jsonl: lcpp-12213
(Llama 3.1 8B, 10/33 layers, 131072 tokens: 920.00 MiB), lcpp-10080 (Mistral 7B, 31/33, no flash attention:
2264 against 2266 MiB), lcpp-10050 (Llama 3.2 3B, no layers on the GPU: 914 against 908), lcpp-9587 (Gemma 2 27B,
tied output: 1704.31), lcpp-9949 (Llama 3.1 405B: 1660.25). Expert rows are explained in part (Qwen3-235B with
81 blocks' experts on the CPU: 952 against 1024 MiB); tests/calc/test_offload.py checks them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from vramfit.calc.architecture import Architecture
from vramfit.calc.kv import KvCache
from vramfit.calc.server_graph import F16, F32, server_compute_bytes, sized

# The backends whose flash attention copies a quantized cache to f16 (ggml-cuda; ROCm builds compile the same code)
CUDA_COPY_BACKENDS = frozenset({"cuda", "rocm"})
METAL_FA_GROUPS = 32  # ggml-metal-ops.cpp ggml_metal_op_flash_attn_ext_extra_tmp: nwg, and at most 32 query rows
PIPELINE_COPIES = 4  # GGML_SCHED_MAX_COPIES: llama.cpp's pipeline parallelism across GPUs


class ComputeBuffers(BaseModel):
    """Compute buffers on the GPUs (summed) and the larger single buffer, in bytes."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    gpu_bytes: int
    per_gpu_bytes: tuple[int, ...]
    attention_bytes: int
    output_bytes: int
    flash_attn_copy_bytes: int = 0  # what flash attention's reservation added to gpu_bytes (CUDA, ROCm, Metal)


def attention_stage_bytes(
    arch: Architecture, n_ctx: int, n_ubatch: int, flash_attn: bool, flash_attn_copy_bytes: int = 0
) -> int:
    """The attention stage; ``flash_attn_copy_bytes``: what flash attention reserves beside its output on the GPU's
    backend (:func:`flash_attn_reserved_bytes`; 0 without flash attention)."""
    activations = 4 * arch.hidden_size
    if arch.is_mla and not arch.compress_ratios:  # absorbed MLA: three latent-wide tensors per head (docstring)
        activations = arch.max_heads * (3 * arch.kv_lora_rank + arch.qk_rope_head_dim)
    if flash_attn:
        return F32 * n_ubatch * activations + F16 * n_ubatch * n_ctx + flash_attn_copy_bytes
    return F32 * n_ubatch * (1 + activations + n_ctx * (1 + arch.max_heads))


def feed_forward_stage_bytes(arch: Architecture, n_ctx: int, n_ubatch: int, flash_attn: bool) -> int:
    """A dense feed-forward block's stage: gate, up and their product at the widest dense layer and four hidden-size
    activations, ``4 · ub · (3 · n_ff + 4 · h)``, beside the mask every layer reads (f16 with flash attention, f32
    without). llama.cpp 0c1e57098 on the CPU backend, 4,096 tokens, one output (llamacpp_outputs.jsonl): Qwen3 8B
    104.01 MiB besides the mask, OLMo 2 7B 96.51, Command R 35B 196.01, EXAONE 4.0 32B 200.51, as this gives. 0 for a
    model without dense layers (mixture-of-experts blocks are not sized here)."""
    widest = max(arch.ffn_size, default=0)
    if not widest:
        return 0
    mask = F16 * n_ubatch * n_ctx if flash_attn else F32 * n_ubatch * n_ctx
    return F32 * n_ubatch * (3 * widest + 4 * arch.hidden_size) + mask


def flash_attn_reserved_bytes(arch: Architecture, cache: KvCache, backend: str, n_ubatch: int = 512) -> int:
    """What a backend's flash attention reserves beside its output for the largest layer (llama.cpp 0c1e57098):

    * CUDA and ROCm: the f16 copy of a K or V cache that is not f16 (:attr:`calc.kv.KvCache.f16_copy_layer_bytes`);
    * Metal: the f16 copy of K and V whatever their type (:attr:`calc.kv.KvCache.f16_layer_bytes`) and the partial
      results of its workgroups, ``4 · min(ub, 32) · n_head · 32 · (v_head + 2)`` (ggml-metal.cpp
      ``ggml_backend_metal_buffer_type_get_alloc_size``: ``extra_kv_f16`` and ``extra_tmp``; its padding, block and
      index lists, a few MiB at most, are left out). Read from the source; no Mac log measured it here;
    * Vulkan and the rest: nothing.

    Without flash attention the cache has no such copy (``cache`` then holds zeros)."""
    if backend in CUDA_COPY_BACKENDS:
        return cache.f16_copy_layer_bytes
    if backend == "metal" and cache.f16_layer_bytes:
        v_head = arch.kv_lora_rank if arch.is_mla else arch.head_dim_v
        rows = min(n_ubatch, METAL_FA_GROUPS)
        return cache.f16_layer_bytes + F32 * rows * arch.max_heads * METAL_FA_GROUPS * (v_head + 2)
    return 0


def output_stage_bytes(arch: Architecture, n_ubatch: int, n_outputs: int | None = None) -> int:
    """The micro-batch's final hidden state and the logits of its outputs: every token's (``n_outputs`` None, the
    library default) or ``min(n_ubatch, n_outputs)`` (llama-server's limit, :func:`server_outputs`)."""
    rows = n_ubatch if n_outputs is None else min(n_ubatch, n_outputs)
    return F32 * (n_ubatch * arch.hidden_size + rows * arch.vocab_size)


SERVER_AUTO_SLOTS = 4  # tools/server/server.cpp: with no -np, "n_parallel = 4 and kv_unified = true"


def server_outputs(users: int, draft_max: int = 0) -> int:
    """llama-server's ``n_outputs_max`` at 0c1e57098 and b11434: one output a slot times one plus the draft length
    (server-context.cpp server_output_limits, common_speculative_get_output_limits); the slots are the users asked
    for, since the command always names them (``-np 1`` for one user; llama-server b11434 logged ``n_outputs_max =
    1`` and ``4`` for the cards' commands of 1 and 4 users: llamaserver_b11434.jsonl). A command with no ``-np`` gets
    :data:`SERVER_AUTO_SLOTS`."""
    return max(users, 1) * (1 + draft_max)


def compute_buffers(
    arch: Architecture,
    n_ctx: int,
    *,
    n_ubatch: int = 512,
    flash_attn: bool = True,
    gpu_count: int = 1,
    output_on_gpu: bool = True,
    flash_attn_copy_bytes: int = 0,
    n_outputs: int | None = None,
    cache: KvCache | None = None,
    n_seqs: int = 1,
) -> ComputeBuffers:
    """Compute buffers for a KV cache of ``n_ctx`` cells (the largest layer's), on ``gpu_count`` GPUs;
    ``flash_attn_copy_bytes``: what flash attention reserves beside its output (:func:`flash_attn_reserved_bytes`);
    ``n_outputs``: the outputs a micro-batch reserves (None: every token's, the library default). With ``n_outputs``
    and the ``cache`` of ``n_seqs`` slots, an architecture :mod:`calc.server_graph` sizes gets llama-server b11434's
    buffer from there (its graph inputs, hidden states and largest stage), the rest this module's stages."""
    output = output_stage_bytes(arch, n_ubatch, n_outputs)
    feed_forward = feed_forward_stage_bytes(arch, n_ctx, n_ubatch, flash_attn)
    server = n_outputs is not None and cache is not None and sized(arch)

    def per_gpu(dequant: int) -> list[int]:
        attention = max(attention_stage_bytes(arch, n_ctx, n_ubatch, flash_attn, dequant), feed_forward)
        if server and cache is not None and n_outputs is not None:
            attention = server_compute_bytes(
                arch,
                cache,
                n_ubatch=n_ubatch,
                flash_attn=flash_attn,
                n_outputs=n_outputs,
                n_seqs=n_seqs,
                flash_attn_copy_bytes=dequant,
            )
        stages: list[int] = []
        for index in range(gpu_count):
            last = index == gpu_count - 1
            stage = max(attention, output) if (last and output_on_gpu and not server) else attention
            if gpu_count > 1:
                # Extra pipeline copies of the graph inputs: the KQ mask and the hidden state entering the GPU.
                stage += (PIPELINE_COPIES - 1) * F32 * n_ubatch * (n_ctx + arch.hidden_size)
            stages.append(stage)
        return stages

    with_copy, without = per_gpu(flash_attn_copy_bytes), per_gpu(0)
    return ComputeBuffers(
        gpu_bytes=sum(with_copy),
        per_gpu_bytes=tuple(with_copy),
        attention_bytes=attention_stage_bytes(arch, n_ctx, n_ubatch, flash_attn, flash_attn_copy_bytes),
        output_bytes=output,
        flash_attn_copy_bytes=sum(with_copy) - sum(without),
    )


OP_OFFLOAD_MIN_BATCH = 32  # ggml-cuda.cu GGML_OP_OFFLOAD_MIN_BATCH: smaller batches run where the weight is


def offloaded_compute_bytes(
    arch: Architecture,
    n_ctx: int,
    *,
    n_ubatch: int = 512,
    flash_attn: bool = True,
    gpu_kv: bool = True,
    cpu_kv_layer_bytes: int = 0,
    output_on_gpu: bool = True,
    output_weight_bytes: int = 0,
    cpu_expert_tensor_bytes: int = 0,
    flash_attn_copy_bytes: int = 0,
) -> int:
    """One GPU's compute buffer when some layers (their KV: ``cpu_kv_layer_bytes``, the largest CPU layer's K + V),
    the output layer (``output_weight_bytes``) or routed-expert tensors (``cpu_expert_tensor_bytes``, the largest)
    stay on the CPU; ``gpu_kv``: some layer's KV is on the GPU; ``flash_attn_copy_bytes``: what flash attention
    reserves beside its output (:func:`flash_attn_reserved_bytes`), wherever the layer's cache is."""
    ub = min(n_ctx, n_ubatch)
    hidden = F32 * ub * arch.hidden_size
    mask_f32, mask_f16 = F32 * n_ctx * ub, 2 * n_ctx * ub
    offload = ub >= OP_OFFLOAD_MIN_BATCH
    stages = [attention_stage_bytes(arch, n_ctx, n_ubatch, flash_attn, flash_attn_copy_bytes)] if gpu_kv else []
    if cpu_kv_layer_bytes and offload:
        if flash_attn:  # the f32 mask and its f16 copy of the builds these logs came from (lcpp-12213)
            stages.append(cpu_kv_layer_bytes + mask_f32 + mask_f16 + 3 * hidden + flash_attn_copy_bytes)
        else:
            kq = F32 * n_ctx * ub * arch.max_heads
            stages.append(cpu_kv_layer_bytes + mask_f32 + kq + 3 * hidden)
    output = output_stage_bytes(arch, ub)
    if output_on_gpu:
        stages.append(output)
    elif offload:
        stages.append(output_weight_bytes + output)
    if cpu_expert_tensor_bytes and offload:
        routed = F32 * ub * arch.n_experts_used * (arch.expert_ffn_size + arch.hidden_size)
        live_mask = mask_f16 if flash_attn else mask_f32
        stages.append(cpu_expert_tensor_bytes + routed + live_mask + 2 * hidden)
    return max(stages, default=0)
