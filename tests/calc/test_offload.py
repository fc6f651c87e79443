"""When a model does not fit the GPU whole: the --n-cpu-moe plan for MoE models and the system RAM of each placement.

Expected figures are worked out here from the models' shapes (config.json keys in presets/models.toml) and from
llama.cpp's own logs (measured.jsonl), not read back from the planner.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vramfit.calc.compute import offloaded_compute_bytes
from vramfit.calc.engines import estimate, fit_gpu, llama_cpp
from vramfit.calc.fit import Verdict, tight_margin
from vramfit.calc.host_memory import ASSUMED_RAM_BYTES, usable_ram
from vramfit.calc.presets import load_catalog
from vramfit.calc.request import GpuChoice, KvType, Request

GIB = 1 << 30
MIB = 1 << 20
MEASURED = Path(__file__).parents[1] / "data" / "groundtruth" / "measured.jsonl"

# gpt-oss-120b: 36 blocks, 128 experts of 2880 × 2880 in MXFP4 (17 bytes per 32 values) for gate, up and down, and
# an f32 bias of 2880 per expert for each of the three (llama.cpp's ffn_(up|down|gate)_exps pattern moves them too).
GPT_OSS_EXPERT_BLOCK = 3 * (2880 * 2880 * 128 * 17 // 32) + 3 * (2880 * 128 * 4)
# Qwen3-235B-A22B in Q8_0 (34 bytes per 32 values): 94 blocks of 128 experts, 4096 hidden, 1536 per expert.
QWEN3_235B_Q8_EXPERT_BLOCK = 3 * (128 * 4096 * 1536 * 34 // 32)
# GLM-4.5-Air in Q4_0 (18 bytes per 32 values): 45 expert blocks (its first block is dense) of 128 experts, 4096
# hidden, 1408 per expert.
GLM_45_AIR_Q4_0_EXPERT_BLOCK = 3 * (128 * 4096 * 1408 * 18 // 32)
# With experts on the CPU, llama.cpp copies one expert tensor at a time into the GPU's compute buffer, with the
# routed activations of a 512-token micro-batch (n_used × (expert width + hidden) f32 values per token), the f16
# KQ mask and two f32 hidden states: (largest expert tensor, experts used, expert width, hidden size).
EXPERT_STAGE = {"gpt-oss-120b": (2880 * 2880 * 128 * 17 // 32, 4, 2880, 2880),
                "qwen3-235b-a22b": (128 * 4096 * 1536 * 34 // 32, 8, 1536, 4096),
                "glm-4.5-air": (128 * 4096 * 1408 * 18 // 32, 8, 1408, 4096)}  # fmt: skip


def _request(model: str, quant: str, gpu: str, context: int, ram_gb: int | None = 64) -> Request:
    catalog = load_catalog()
    return Request(
        model=catalog.models[model].ref(),
        quant=quant,
        context=context,
        gpus=(GpuChoice(gpu=catalog.gpus[gpu]),),
        ram_bytes=ram_gb * GIB if ram_gb is not None else None,
    )


# Blocks before the first one with experts (GLM-4.5's first_k_dense_replace = 1): --n-cpu-moe counts them too.
DENSE_FIRST = {"glm-4.5-air": 1}


def _moved(n: int, per_block: int, dense: int) -> int:
    """Expert bytes that ``--n-cpu-moe n`` moves: blocks 0 … n - 1, of which the first ``dense`` have none."""
    return max(n - dense, 0) * per_block


def _expected_n(total: int, per_block: int, blocks: int, usable: int, dense: int) -> int:
    """The smallest N with the footprint less N blocks' experts within the usable memory and its margin."""
    for n in range(dense + 1, dense + blocks + 1):
        if total - _moved(n, per_block, dense) <= usable - tight_margin(usable):
            return n
    raise AssertionError("no plan")


@pytest.mark.parametrize(
    ("model", "quant", "per_block", "blocks", "gpu", "context", "ram_fits"),
    [("gpt-oss-120b", "MXFP4", GPT_OSS_EXPERT_BLOCK, 36, "rtx-4090", 32768, True),
     ("gpt-oss-120b", "MXFP4", GPT_OSS_EXPERT_BLOCK, 36, "rtx-5090", 32768, True),
     ("gpt-oss-120b", "MXFP4", GPT_OSS_EXPERT_BLOCK, 36, "rtx-5090", 131072, True),
     ("glm-4.5-air", "Q4_0", GLM_45_AIR_Q4_0_EXPERT_BLOCK, 45, "rtx-4090", 32768, True),
     ("glm-4.5-air", "Q4_0", GLM_45_AIR_Q4_0_EXPERT_BLOCK, 45, "rtx-5090", 32768, True),
     ("qwen3-235b-a22b", "Q8_0", QWEN3_235B_Q8_EXPERT_BLOCK, 94, "rtx-4090", 32768, False),
     ("qwen3-235b-a22b", "Q8_0", QWEN3_235B_Q8_EXPERT_BLOCK, 94, "rtx-5090", 32768, False)],
)  # fmt: skip
def test_the_smallest_n_cpu_moe_leaves_the_margin_on_the_gpu(
    model: str, quant: str, per_block: int, blocks: int, gpu: str, context: int, ram_fits: bool
) -> None:
    request = _request(model, quant, gpu, context)
    fit = fit_gpu(request, request.gpus[0], with_max_context=False)
    assert fit.verdict in (Verdict.PARTIAL, Verdict.NO)  # it does not fit whole: that is why there is a plan
    plan = fit.expert_offload
    assert plan is not None
    whole = estimate(request)
    tensor, used, width, hidden = EXPERT_STAGE[model]
    expert_stage = tensor + 4 * 512 * used * (width + hidden) + 2 * whole.kv_cells * 512 + 2 * 4 * 512 * hidden
    total = whole.total_bytes - whole.compute_bytes + max(whole.compute_bytes, expert_stage)
    dense = DENSE_FIRST.get(model, 0)
    n = _expected_n(total, per_block, blocks, fit.usable_bytes, dense)
    moved = _moved(n, per_block, dense)
    assert (plan.n_cpu_moe, plan.expert_blocks) == (n, blocks)
    assert plan.cpu_expert_bytes == moved
    assert plan.gpu_bytes == total - moved
    assert plan.verdict == Verdict.FITS
    token_embd = estimate(request).host_bytes
    usable_ram = 64 * GIB - max(4 * GIB, 64 * GIB // 10)
    # llama-server b11434's host caches (calc.server_caches): gpt-oss keeps a checkpoint of its 128-token window, 18
    # sliding layers × (8 KV heads × 64 × 2 B for K and for V + 12 B of cell metadata) × 128 cells, 32 a slot; GLM-4.5
    # Air and Qwen3 (full attention) keep none. The prompt cache is 8,192 MiB where it fits, cut to the room left.
    checkpoint = (18 * 2 * 8 * 64 * 2 + 12) * 128 if model.startswith("gpt-oss") else 0
    caches = plan.server_caches
    assert caches is not None and caches.checkpoint_bytes == checkpoint
    room = usable_ram - token_embd - moved
    if room >= 32 * checkpoint + 8192 * MIB:
        assert (caches.ctx_checkpoints, caches.cache_ram_bytes) == (32, 8192 * MIB)
    elif room >= 32 * checkpoint:
        assert (caches.ctx_checkpoints, caches.cache_ram_bytes) == (32, (room - 32 * checkpoint) // MIB * MIB)
    else:
        assert caches.cache_ram_bytes == 0 and caches.ctx_checkpoints == (max(room, 0) // checkpoint if checkpoint
                                                                          else 32)  # fmt: skip
    assert plan.host_bytes == token_embd + moved + caches.total_bytes
    assert plan.ram_fits is ram_fits
    assert plan.ram_fits is (token_embd + moved <= usable_ram)


def test_a_dense_model_has_no_expert_plan_and_a_model_that_fits_needs_none() -> None:
    dense = _request("llama-3.3-70b", "Q4_K_M", "rtx-4090", 8192)
    assert fit_gpu(dense, dense.gpus[0], with_max_context=False).expert_offload is None
    small = _request("gpt-oss-20b", "MXFP4", "rtx-4090", 8192)
    fit = fit_gpu(small, small.gpus[0], with_max_context=False)
    assert fit.verdict == Verdict.FITS and fit.expert_offload is None


def _measured(row_id: str) -> dict[str, object]:
    for line in MEASURED.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["id"] == row_id:
            return dict(row)
    raise KeyError(row_id)


def test_host_memory_of_a_partial_offload_is_what_llama_cpp_logs() -> None:
    """lcpp-12213: Llama 3.1 8B Q4_K_M at 131072 tokens with 10 of 33 layers on an RTX 4070 Laptop GPU. With mmap,
    llama.cpp's CPU_Mapped buffer is the file's mapped range, which spans the GPU layers' tensors too (4685.3 MiB of
    a 4.58 GiB file): what stays in RAM is that range less the CUDA0 model buffer (the first 22 layers, token_embd and
    the output layer), the host KV of 22 layers and the CUDA_Host compute buffer."""
    row = _measured("lcpp-12213-llama31-8b-q4km-rtx4070laptop-c131072-ngl10")
    request = _request("llama-3.1-8b", "Q4_K_M", "rtx-4070-laptop", 131072)
    host = llama_cpp._host_bytes(llama_cpp._parts(request), 10)

    def mib(key: str) -> float:
        return float(str(row[key]))

    resident = mib("weights_cpu_mib") - mib("weights_gpu_mib") + mib("kv_host_mib") + mib("compute_host_mib")
    assert host / MIB == pytest.approx(resident, rel=0.005)


@pytest.mark.parametrize(
    ("ram_gb", "ram_fits"), [(16, False), (32, True), (None, True)]
)  # fmt: skip
def test_a_partial_offload_is_checked_against_the_ram(ram_gb: int | None, ram_fits: bool) -> None:
    """Llama 3.3 70B Q4_K_M at 8K on a 4090: about 40 of 81 layers stay on the CPU, some 19 GiB of RAM."""
    request = _request("llama-3.3-70b", "Q4_K_M", "rtx-4090", 8192, ram_gb)
    fit = fit_gpu(request, request.gpus[0], with_max_context=False)
    assert fit.verdict == Verdict.PARTIAL
    ram = ram_gb * GIB if ram_gb is not None else ASSUMED_RAM_BYTES
    assert (fit.ram_bytes, fit.ram_usable_bytes) == (ram, usable_ram(ram))
    caches = fit.server_caches
    assert caches is not None and caches.checkpoint_bytes == 0  # full attention: no checkpoints
    model_host = fit.host_bytes - caches.total_bytes
    assert 17 * GIB < model_host < 21 * GIB
    # the prompt cache (8,192 MiB by default) where the layers leave room for it, cut or off where they do not
    assert caches.cache_ram_bytes == min(8192 * MIB, max(fit.ram_usable_bytes - model_host, 0) // MIB * MIB)
    assert fit.ram_fits is ram_fits


def test_unified_memory_has_no_separate_ram_and_no_expert_plan() -> None:
    catalog = load_catalog()
    mac = next(g for g in catalog.gpus.values() if g.vendor == "apple" and g.memory_bytes == 64 * GIB)
    request = Request(model=catalog.models["gpt-oss-120b"].ref(), quant="MXFP4", gpus=(GpuChoice(gpu=mac),))
    fit = fit_gpu(request, request.gpus[0], with_max_context=False)
    assert fit.verdict in (Verdict.PARTIAL, Verdict.NO)
    assert (fit.ram_bytes, fit.expert_offload, fit.ram_fits) == (0, None, True)


def test_usable_ram_leaves_the_system_its_share() -> None:
    assert usable_ram(64 * GIB) == 64 * GIB - 64 * GIB // 10
    assert usable_ram(16 * GIB) == 12 * GIB  # at least 4 GiB for the system
    assert usable_ram(2 * GIB) == 0


# (row, preset, quant, flash attention, KV type, layers on the GPU (None: all, experts on the CPU), MiB allowed off)
PARTIAL_ROWS = [
    ("lcpp-12213-llama31-8b-q4km-rtx4070laptop-c131072-ngl10", "llama-3.1-8b", "Q4_K_M", True, KvType.F16, 10, 0),
    ("lcpp-10080-mistral7bv03-q4_1-rtx3060-c32768-ngl31", "mistral-7b-v0.3", "Q4_1", False, KvType.F16, 31, 2),
    ("lcpp-10050-llama32-3b-q3km-cpu-kv-c131072", "llama-3.2-3b", "Q3_K_M", True, KvType.F16, 0, 6),
    ("lcpp-9587-gemma2-27b-q8_0-cpu-weights-3060-c8192", "gemma-2-27b", "Q8_0", False, KvType.F16, 0, 0),
    ("lcpp-9949-llama31-405b-iq3xxs-cpu-c131072-kvq4", "llama-3.1-405b", "IQ3_XXS", True, KvType.Q4_0, 0, 0),
    # Qwen3-235B with the ffn tensors of blocks 13-93 on the CPU: 952 of the logged 1024 MiB are explained (the rest
    # is the allocator's fragmentation in that 2025 build); the plan's margin covers the difference.
    ("lcpp-ikdisc357-qwen3-235b-a22b-q8_0-a6000-c32768-ot-ffn-cpu", "qwen3-235b-a22b", "Q8_0", True, KvType.F16,
     None, 72),
]  # fmt: skip


@pytest.mark.parametrize(("row_id", "model", "quant", "flash", "kv", "gpu_layers", "slack_mib"), PARTIAL_ROWS)
def test_the_gpu_compute_buffer_with_work_left_on_the_cpu_is_what_llama_cpp_logs(
    row_id: str, model: str, quant: str, flash: bool, kv: KvType, gpu_layers: int | None, slack_mib: int
) -> None:
    """llama.cpp runs the CPU side's matmuls on the GPU and copies their inputs in: the largest CPU layer's K and V
    with the KQ mask, the output matrix, an expert tensor (calc.compute.offloaded_compute_bytes)."""
    row = _measured(row_id)
    assert row["n_ctx"] == {"llama-3.1-8b": 131072, "mistral-7b-v0.3": 32768, "llama-3.2-3b": 131072,
                            "gemma-2-27b": 8192, "llama-3.1-405b": 131072, "qwen3-235b-a22b": 32768}[model]  # fmt: skip
    catalog = load_catalog()
    request = Request(model=catalog.models[model].ref(), quant=quant, context=int(str(row["n_ctx"])),
                      flash_attn=flash, kv_cache=kv)  # fmt: skip
    parts = llama_cpp._parts(request)
    if gpu_layers is None:
        buffer = parts.offloaded_compute(cpu_layers=False, cpu_experts=True)
    elif gpu_layers == 0:
        buffer = offloaded_compute_bytes(
            parts.arch, parts.kv.full_cells, flash_attn=flash, gpu_kv=False,
            cpu_kv_layer_bytes=max(parts.kv.layer_bytes), output_on_gpu=False,
            output_weight_bytes=parts.weights.output_bytes,
        )  # fmt: skip
    else:
        buffer = parts.offloaded_compute(cpu_layers=True, cpu_experts=False)
    measured = float(str(row["compute_mib"]))
    assert abs(buffer / MIB - measured) <= max(slack_mib, 0.01)
    assert buffer / MIB <= measured + 6  # never much above the log, and never more than slack below it


def test_the_partial_offload_puts_as_many_layers_on_the_gpu_as_llama_cpp_did() -> None:
    """lcpp-12213: with 8 GiB, llama.cpp's own log shows 10 of 33 layers (and a 920 MiB compute buffer); counting the
    full-offload buffer would have put 11 there."""
    request = _request("llama-3.1-8b", "Q4_K_M", "rtx-4070-laptop", 131072)
    fit = fit_gpu(request, request.gpus[0], with_max_context=False)
    assert (fit.verdict, fit.gpu_layers, fit.layers) == (Verdict.PARTIAL, 10, 33)
