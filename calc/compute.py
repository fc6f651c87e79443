"""Compute buffers: the scratch memory llama.cpp's graph allocator reserves on each GPU.

llama.cpp sizes the buffer by reserving its worst-case graph (one micro-batch of ``n_ubatch`` tokens against the
whole KV cache). Two stages dominate, and the buffer is the larger of them (ggml-alloc reuses memory between them):

* attention, flash attention off: the f32 KQ matrix of every head, ``4 · n_ubatch · n_ctx · n_head``, plus the
  input mask and a few hidden-size activations: ``4 · ub · (1 + 4·h + n_ctx · (1 + n_head))``. This is Ollama's
  ``GraphSize`` for llama and reproduces llama.cpp's CUDA logs to the MiB: Llama 3 8B at 8192 → 560.00 MiB,
  Llama 3.3 70B at 15360 → 2014.00 MiB, Qwen2.5-32B at 4096 → 368.0 MiB, Llama 2 13B at 40960 → 3320 MiB.
* attention, flash attention on: no KQ matrix; the f32 mask and its f16 copy, ``4 · ub · (4·h + 1.5 · n_ctx)``.
* output: the f32 logits of the micro-batch and the final hidden state, ``4 · ub · (h + n_vocab)``: Llama 3 8B at
  2048 → 258.50 MiB, Gemma 2 2B → 504.5 MiB, Gemma 3 27B → 522.5 MiB (all as logged on CUDA).

With several GPUs llama.cpp splits layers and runs a pipeline with 4 copies of the graph inputs
(GGML_SCHED_MAX_COPIES): every GPU holds its own buffer plus three extra copies of the mask and hidden state; the
output stage sits on the last GPU only. With partial offload the output stage runs on the CPU.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from vramfit.calc.architecture import Architecture

F32 = 4
PIPELINE_COPIES = 4  # GGML_SCHED_MAX_COPIES: llama.cpp's pipeline parallelism across GPUs


class ComputeBuffers(BaseModel):
    """Compute buffers on the GPUs (summed) and the larger single buffer, in bytes."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    gpu_bytes: int
    per_gpu_bytes: tuple[int, ...]
    attention_bytes: int
    output_bytes: int


def attention_stage_bytes(arch: Architecture, n_ctx: int, n_ubatch: int, flash_attn: bool) -> int:
    hidden = arch.hidden_size
    if flash_attn:
        return F32 * n_ubatch * (4 * hidden + (3 * n_ctx) // 2)
    return F32 * n_ubatch * (1 + 4 * hidden + n_ctx * (1 + arch.max_heads))


def output_stage_bytes(arch: Architecture, n_ubatch: int) -> int:
    return F32 * n_ubatch * (arch.hidden_size + arch.vocab_size)


def compute_buffers(
    arch: Architecture,
    n_ctx: int,
    *,
    n_ubatch: int = 512,
    flash_attn: bool = True,
    gpu_count: int = 1,
    output_on_gpu: bool = True,
) -> ComputeBuffers:
    """Compute buffers for a KV cache of ``n_ctx`` cells (the largest layer's), on ``gpu_count`` GPUs."""
    attention = attention_stage_bytes(arch, n_ctx, n_ubatch, flash_attn)
    output = output_stage_bytes(arch, n_ubatch)
    per_gpu: list[int] = []
    for index in range(gpu_count):
        last = index == gpu_count - 1
        stage = max(attention, output) if (last and output_on_gpu) else attention
        if gpu_count > 1:
            # Extra pipeline copies of the graph inputs: the KQ mask and the hidden state entering the GPU.
            stage += (PIPELINE_COPIES - 1) * F32 * n_ubatch * (n_ctx + arch.hidden_size)
        per_gpu.append(stage)
    return ComputeBuffers(
        gpu_bytes=sum(per_gpu), per_gpu_bytes=tuple(per_gpu), attention_bytes=attention, output_bytes=output
    )
