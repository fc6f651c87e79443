"""What the calculator answers: memory by component (:class:`Estimate`), the fit on one GPU choice (:class:`Fit`),
and both for a request (:class:`Answer`). Data only: the engine profiles in :mod:`calc.engines` fill them in; the JSON
contract of ``vram --json`` uses these field names."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from vramfit.calc.fit import Verdict
from vramfit.calc.request import Request


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
        default=0, description="hybrid models' recurrent state (f32, per sequence; does not grow with context)"
    )
    vllm_reserved_bytes: int | None = None
    vllm_kv_pool_tokens: int | None = None


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
    tokens_per_second: float | None = None


class Answer(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    request: Request
    estimate: Estimate
    fits: tuple[Fit, ...]
