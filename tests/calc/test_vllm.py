"""The vLLM profile against llm-d's H100 measurements (tests/data/groundtruth/measured.jsonl, vLLM 0.11)."""

from __future__ import annotations

import pytest

from tests.groundtruth import MIB, measured_rows
from vramfit.calc.engines.vllm import fit as vllm_fit
from vramfit.calc.engines.vllm import kv_bytes_per_token_per_gpu, kv_pool_tokens
from vramfit.calc.fit import Verdict
from vramfit.calc.gpu import GIB, Gpu
from vramfit.calc.presets import load_catalog
from vramfit.calc.request import Engine, GpuChoice, Request
from vramfit.calc.weights import model_weights

# "NVIDIA H100 80GB (79.18 GiB total)" as vLLM reported it in these runs.
H100 = Gpu(id="h100-llmd", name="H100 80GB", memory_bytes=int(79.18 * GIB), bandwidth_gbs=3350)

# record id → (preset, weight format, tensor-parallel size)
CASES = {
    "vllm-llmd-llama31-8b-h100": ("llama-3.1-8b", "BF16", 1),
    "vllm-llmd-qwen3-0.6b-h100": ("qwen3-0.6b", "BF16", 1),
    "vllm-llmd-qwen3-32b-tp1-h100": ("qwen3-32b", "BF16", 1),
    "vllm-llmd-qwen3-32b-tp2-h100": ("qwen3-32b", "BF16", 2),
    "vllm-llmd-llama33-70b-fp8-tp2-h100": ("llama-3.3-70b", "FP8", 2),
    "vllm-llmd-gpt-oss-20b-h100": ("gpt-oss-20b", "MXFP4", 1),
}


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_weights_and_kv_pool(case_id: str) -> None:
    row = next(r for r in measured_rows() if r["id"] == case_id)
    model_id, quant, tp = CASES[case_id]
    request = Request(model=load_catalog().models[model_id].ref(), quant=quant, engine=Engine.VLLM, context=16000)
    weights = model_weights(request.model, quant, Engine.VLLM)
    assert weights.tensor_bytes / tp == pytest.approx(row["weights_gpu_mib"] * MIB, rel=0.01)
    pool = kv_pool_tokens(request, H100.memory_bytes, tp)
    pool_bytes = pool * kv_bytes_per_token_per_gpu(request.model.architecture, request.kv_cache, tp)
    assert pool_bytes == pytest.approx(row["kv_mib"] * MIB, rel=0.03)


def test_llama_70b_fp8_on_one_h100_fails_like_vllm() -> None:
    """vllm-llmd-llama33-70b-fp8-tp1-h100-fail: "No available memory for the cache blocks"."""
    request = Request(
        model=load_catalog().models["llama-3.3-70b"].ref(), quant="FP8", engine=Engine.VLLM, context=16000
    )
    assert vllm_fit(request, GpuChoice(gpu=H100)).verdict == Verdict.NO
    assert kv_pool_tokens(request, H100.memory_bytes, 1) == 0
