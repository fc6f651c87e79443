"""MoE expert offload: the smallest ``--n-cpu-moe N`` with which a mixture-of-experts model fits the GPU.

How people run gpt-oss-120b or Qwen3-235B on one consumer card: every layer on the GPU (``-ngl 99``) except the
routed experts of the first N blocks, which stay in system RAM. llama.cpp 0c1e57098, common/arg.cpp and
common/common.h: ``--n-cpu-moe N`` adds, for each block ``i < N``, the buffer override
``blk\\.i\\.ffn_(up|down|gate|gate_up)_(ch|)exps=CPU`` (``llm_add_n_cpu_ffn_overrides``); ``--cpu-moe`` overrides
the experts of every block (``LLM_FFN_EXPS_REGEX``). The attention, the shared experts, the router, the KV cache and
the output layer stay on the GPU, so the GPU needs the whole footprint less the experts moved: per block, the
``ffn_*_exps`` bytes (:attr:`calc.weight_bytes.WeightBytes.expert_layer_bytes`; dense blocks have none).

The plan is the smallest N that leaves the tight margin on the GPU (:func:`calc.fit.tight_margin`), else the smallest
that fits at all; none when even every expert on the CPU does not fit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from vramfit.calc.fit import Verdict, whole_verdict


@dataclass(frozen=True, slots=True)
class ExpertSplit:
    """One ``--n-cpu-moe`` setting: the experts of blocks ``0 … n_cpu_moe - 1`` on the CPU."""

    n_cpu_moe: int
    cpu_expert_bytes: int
    gpu_bytes: int
    verdict: Verdict


def expert_layers(expert_layer_bytes: tuple[int, ...]) -> int:
    """Blocks with routed experts (DeepSeek's and GLM's first dense blocks have none)."""
    return sum(1 for size in expert_layer_bytes if size)


def smallest_expert_split(
    expert_layer_bytes: tuple[int, ...],
    gpu_bytes_with_experts: Callable[[int], int],
    usable_bytes: int,
) -> ExpertSplit | None:
    """The smallest N whose GPU footprint fits ``usable_bytes`` with the margin (else the smallest that fits tight),
    or None. ``gpu_bytes_with_experts(moved)`` is the GPU footprint with ``moved`` expert bytes on the CPU (the
    compute buffer may change with them); N counts blocks from the first, as llama.cpp's override does, and stops at
    the last block with experts (``--n-cpu-moe`` beyond it changes nothing)."""
    last_expert_block = max((i for i, size in enumerate(expert_layer_bytes) if size), default=-1)
    moved = 0
    tight: ExpertSplit | None = None
    for n in range(1, last_expert_block + 2):
        moved += expert_layer_bytes[n - 1]
        if not expert_layer_bytes[n - 1]:
            continue  # a dense block: moving its (no) experts changes nothing
        gpu = gpu_bytes_with_experts(moved)
        verdict = whole_verdict(gpu, usable_bytes)
        if verdict == Verdict.FITS:
            return ExpertSplit(n, moved, gpu, verdict)
        if verdict == Verdict.TIGHT and tight is None:
            tight = ExpertSplit(n, moved, gpu, verdict)
    return tight
