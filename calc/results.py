"""What the calculator answers: memory by component (:class:`Estimate`), the fit on one GPU choice (:class:`Fit`),
and both for a request (:class:`Answer`). Data only: the engine profiles in :mod:`calc.engines` fill them in; the JSON
contract of ``vram --json`` uses these field names."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from vramfit.calc.fit import Verdict
from vramfit.calc.fit_params import FitDefault
from vramfit.calc.ram_speed import RamSpeed
from vramfit.calc.request import Request
from vramfit.calc.server_caches import ServerCaches


class Estimate(BaseModel):
    """Bytes by component; ``total_bytes`` is what the GPU(s) must hold (JSON contract field names)."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    file_bytes: int = Field(description="the quantized model file (the download)")
    weights_bytes: int = Field(description="weights in GPU memory with every layer offloaded")
    host_bytes: int = Field(description="weights the engine keeps in system RAM (llama.cpp: token embeddings)")
    kv_cache_bytes: int
    kv_cache_naive_bytes: int
    compute_bytes: int
    runtime_bytes: int
    total_bytes: int
    params: int
    bits_per_weight: float
    kv_k_bytes: int
    kv_v_bytes: int
    kv_cells: int
    kv_swa_cells: int
    kv_type_v: str
    gpu_count: int = 1
    recurrent_state_bytes: int = Field(
        default=0,
        description=(
            "hybrid models' recurrent state, DeepSeek V4's compressor state (f32, per sequence; does not grow with "
            "context)"
        ),
    )
    effective_params: int | None = Field(
        default=None,
        description="models with per-layer embeddings (Gemma 3n/4 E): parameters without the embedding tables that "
        "stay in system RAM",
    )
    vision_bytes: int = Field(
        default=0,
        description="images asked (llama.cpp): the vision projector's weights and its measured warmup compute buffer "
        "on the first GPU, in total_bytes",
    )
    vision_compute_bytes: int = Field(
        default=0, description="the compute buffer part of vision_bytes (0: not measured)"
    )
    flash_attn_copy_bytes: int = Field(
        default=0,
        description="llama.cpp with flash attention on CUDA or ROCm and a K or V cache not in f16: what the f16 copy "
        "of one layer's cache, which flash attention reserves, adds to compute_bytes (in it)",
    )
    draft_bytes: int = Field(
        default=0,
        description="llama.cpp with a draft model: its weights, KV cache, recurrent state and compute buffer on the "
        "GPUs, in total_bytes",
    )
    mtp_bytes: int = Field(
        default=0,
        description="llama.cpp with the model's own MTP head (request.mtp): its block, the MTP context's cache and "
        "compute buffer, and the recurrent-state snapshots rollback keeps, in total_bytes",
    )
    mtp_head_bytes: int = Field(
        default=0,
        description="what drafting with the file's own MTP head would add (0: the file has none llama.cpp can use)",
    )
    draft_weights_bytes: int = 0
    draft_kv_bytes: int = Field(default=0, description="the draft's KV cache and recurrent state")
    draft_compute_bytes: int = 0
    vllm_reserved_bytes: int | None = None
    vllm_kv_pool_tokens: int | None = None


class DecodeEstimate(BaseModel):
    """Decode tokens per second of one sequence (calibrated on published llama-bench results, calc.speed), with its
    band."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    tokens_per_second: float
    low: float
    high: float


class ExpertOffload(BaseModel):
    """A mixture-of-experts model on the GPU with the routed experts of its first ``n_cpu_moe`` blocks in system RAM
    (llama.cpp ``-ngl 99 --n-cpu-moe N``; ``all_experts``: ``--cpu-moe``)."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    n_cpu_moe: int = Field(description="blocks whose routed experts stay on the CPU, counted from the first")
    expert_blocks: int = Field(description="blocks that have routed experts")
    expert_blocks_moved: int = Field(
        default=0, description="of those, the ones whose experts the plan keeps in RAM (the first blocks may be dense)"
    )
    all_experts: bool = Field(description="every block's experts on the CPU (--cpu-moe)")
    verdict: Verdict = Field(description="fits or tight: the GPU side with these experts moved")
    gpu_bytes: int = Field(description="what the GPU(s) hold with these experts moved")
    cpu_expert_bytes: int = Field(description="the expert tensors kept in system RAM")
    host_bytes: int = Field(description="everything in system RAM with this plan")
    ram_fits: bool = Field(description="host_bytes within the usable RAM")
    server_caches: ServerCaches | None = Field(
        default=None, description="llama-server's checkpoints and prompt cache with this plan, in host_bytes"
    )
    decode: DecodeEstimate | None = Field(default=None, description="decode speed with this plan")
    prefill: DecodeEstimate | None = Field(
        default=None, description="prompt tokens per second with this plan: the experts in RAM cross PCIe per batch"
    )


class Fit(BaseModel):
    """How the request fits one GPU model, ``count`` of them."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    gpu: str
    name: str
    count: int
    memory_bytes: int = Field(description="nominal memory of one device")
    usable_bytes: int = Field(description="memory a model may use on all devices (Apple: Metal's share)")
    verdict: Verdict
    gpu_layers: int
    layers: int
    headroom_bytes: int
    total_bytes: int
    max_context: int | None = None
    tokens_per_second: float | None = Field(
        default=None, description="the decode bandwidth bound (every weight and the KV read at full bandwidth)"
    )
    decode: DecodeEstimate | None = Field(default=None, description="calibrated decode speed and its band")
    prefill: DecodeEstimate | None = Field(
        default=None,
        description="prompt tokens per second and its band: every layer on the GPU(s), or with the layers left on the "
        "CPU copied over PCIe once per micro-batch (calc.speed.streamed_prefill_speed)",
    )
    pcie_gbs: float | None = Field(
        default=None, description="the GPU's host link in GB/s, where a prefill estimate moves weights over it"
    )
    pcie_assumed: bool = Field(
        default=False, description="pcie_gbs is the assumed PCIe 4.0 x16: the GPU's preset states no link"
    )
    host_bytes: int = Field(
        default=0,
        description="system RAM this placement needs (weights, KV, buffers on the host, llama-server's caches)",
    )
    server_caches: ServerCaches | None = Field(
        default=None,
        description="llama-server's context checkpoints and prompt cache (calc.server_caches), in host_bytes; None "
        "where llama-server does not run the model (Ollama's runner, vLLM)",
    )
    fit_default: FitDefault | None = Field(
        default=None,
        description="what llama-server's --fit picks for `llama-server -m MODEL` with its defaults on this GPU "
        "(calc.fit_params); None for several GPUs, other engines and the quick fits of lists",
    )
    ram_bytes: int = Field(default=0, description="the system RAM asked about, or the assumed size")
    ram_usable_bytes: int = Field(default=0, description="the part of the RAM a model may use")
    ram_fits: bool = Field(default=True, description="host_bytes within ram_usable_bytes")
    ram_speed: RamSpeed | None = Field(
        default=None, description="the system RAM the decode estimate reads weights from (None: it reads none)"
    )
    ram_speed_assumed: bool = Field(
        default=False, description="ram_speed is calc.ram_speed.ASSUMED_RAM_SPEED: the question named none"
    )
    expert_offload: ExpertOffload | None = Field(
        default=None, description="MoE models that do not fit whole: the smallest --n-cpu-moe plan"
    )


class Answer(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    request: Request
    estimate: Estimate
    fits: tuple[Fit, ...]
