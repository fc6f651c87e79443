"""Decode speed bound: generating one token reads every active weight and the sequence's KV cache once.

Token generation at batch 1 is limited by memory bandwidth, so ``tokens/s ≤ bandwidth / bytes read per token``.
Bytes read = the weights on the GPU (for a mixture of experts, only the ``experts_used / experts`` share of the
expert tensors) + the KV cache of one sequence at the asked context. Real engines reach roughly 60–85 % of this
bound; the card calls it an upper bound.
"""

from __future__ import annotations

from vramfit.calc.architecture import Architecture
from vramfit.calc.gpu import Gpu
from vramfit.calc.weight_bytes import WeightBytes


def bytes_read_per_token(weights: WeightBytes, arch: Architecture, kv_bytes_one_sequence: int) -> int:
    expert_bytes = sum(weights.expert_layer_bytes)
    active = weights.gpu_bytes
    if arch.n_experts and expert_bytes:
        active -= expert_bytes - expert_bytes * arch.n_experts_used // arch.n_experts
    return active + kv_bytes_one_sequence


def decode_tokens_per_second(
    gpu: Gpu, weights: WeightBytes, arch: Architecture, kv_bytes_one_sequence: int
) -> float | None:
    """Upper bound on single-stream decode speed, or None when the GPU's bandwidth is unknown."""
    if gpu.bandwidth_gbs <= 0:
        return None
    per_token = bytes_read_per_token(weights, arch, kv_bytes_one_sequence)
    return round(gpu.bandwidth_gbs * 1e9 / per_token, 1)
