"""System RAM: what llama.cpp keeps in the host's memory for one placement, and how much of the RAM a model may use.

What llama.cpp holds on the host (``CPU`` / ``CPU_Mapped`` / ``CPU_REPACK`` and ``CUDA_Host`` buffers in its load
log), revision 0c1e57098:

* the token embeddings (``token_embd`` is always a CPU tensor: ``llama_model::load_tensors`` puts the input layer
  on the CPU), every layer that is not offloaded (``-ngl N`` offloads the last N) with its KV cache (the KV of a
  layer lives where the layer does, unless ``--no-kv-offload``), the output layer when it is not offloaded, and the
  expert tensors that ``--n-cpu-moe`` / ``-ot exps=CPU`` keep on the CPU;
* the host compute buffer: with the output layer on the CPU it holds the output stage (the f32 logits of one
  micro-batch and its hidden state, :func:`calc.compute.output_stage_bytes`: 264.01 MiB logged for Llama 3.1 8B at
  10/33 layers, lcpp-12213 in the measured data, against 258.5 MiB of logits and state); with every layer on the
  GPU it is a few tens of MiB, not counted.

Weights on the CPU are read from the memory-mapped file: they occupy RAM as page cache, and a model whose host part
exceeds the RAM pages from disk at every token, which is no way to run it, so vramfit counts them in full.

How much of the RAM a model may use is a policy, not an engine rule: the operating system, a desktop and a browser
keep some. vramfit leaves ``max(4 GiB, 10 %)`` of the RAM to them. When the question names no RAM size, 32 GB is
assumed (a common desktop in 2026) and the answer says so.
"""

from __future__ import annotations

GIB = 1 << 30

ASSUMED_RAM_BYTES = 32 * GIB
SYSTEM_RESERVE_MIN_BYTES = 4 * GIB
SYSTEM_RESERVE_SHARE = (1, 10)


def system_reserve(ram_bytes: int) -> int:
    """What the operating system and other programs keep of ``ram_bytes``."""
    num, den = SYSTEM_RESERVE_SHARE
    return max(SYSTEM_RESERVE_MIN_BYTES, ram_bytes * num // den)


def usable_ram(ram_bytes: int) -> int:
    """The RAM a model may occupy: ``ram_bytes`` less the system's reserve (never below zero)."""
    return max(0, ram_bytes - system_reserve(ram_bytes))


def host_bytes(
    *,
    token_embd_bytes: int,
    cpu_layer_bytes: int,
    cpu_output_bytes: int = 0,
    cpu_expert_bytes: int = 0,
    host_compute_bytes: int = 0,
) -> int:
    """Bytes in system RAM: the token embeddings, the layers left on the CPU (weights, KV cache and recurrent state),
    the output layer when it stays on the CPU, expert tensors kept on the CPU and the host compute buffer."""
    return token_embd_bytes + cpu_layer_bytes + cpu_output_bytes + cpu_expert_bytes + host_compute_bytes
