"""Decode speed: the bytes one token reads, worked out by hand, and published llama-bench results inside the band."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vramfit.calc.architecture import from_hf_config
from vramfit.calc.engines import fit_gpu
from vramfit.calc.presets import load_catalog
from vramfit.calc.request import GpuChoice, ModelRef, Request
from vramfit.calc.speed import CALIBRATION, PREFILL_CALIBRATION, BytesPerToken, decode_speed

SPEED = Path(__file__).parents[1] / "data" / "groundtruth" / "speed.jsonl"
GIB = 1 << 30

# meta-llama/Llama-2-7b-hf config.json (https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json)
LLAMA_2_7B = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
              "intermediate_size": 11008, "num_attention_heads": 32, "num_hidden_layers": 32,
              "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096,
              "tie_word_embeddings": False}  # fmt: skip


def _published(row_id: str) -> float:
    for line in SPEED.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["id"] == row_id:
            return float(row["tokens_per_second"])
    raise KeyError(row_id)


def test_a_dense_token_reads_every_layer_the_output_and_the_kv_cache() -> None:
    """Llama 2 7B Q4_0 on an RTX 3090, llama-bench tg128 (spd-05aaad159c: 167.3 t/s). Q4_0 stores 18 bytes per 32
    values; llama.cpp's Q4_0 mix keeps the output in Q6_K (210 bytes per 256) and the norms in f32. The KV cache of
    256 cells (128 tokens, padded) is f16. The estimate reads those bytes at the CUDA share of the bandwidth and adds
    the fixed cost of each of the 32 layers."""
    layer = (4 * 4096 * 4096 + 3 * 4096 * 11008) * 18 // 32 + 2 * 4096 * 4
    output = 32000 * 4096 * 210 // 256
    kv = 32 * 256 * 2 * 4096 * 2
    read = 32 * layer + output + kv
    catalog = load_catalog()
    model = ModelRef(id="llama-2-7b", name="Llama 2 7B", architecture=from_hf_config(LLAMA_2_7B))
    request = Request(model=model, quant="Q4_0", context=256, gpus=(GpuChoice(gpu=catalog.gpus["rtx-3090"]),))
    fit = fit_gpu(request, request.gpus[0], with_max_context=False)
    assert fit.tokens_per_second == round(936e9 / read, 1)  # the bound: the 3090's 936 GB/s, every byte once
    assert fit.decode is not None
    seconds = read / (936e9 * CALIBRATION.efficiency["cuda"]) + 32 * CALIBRATION.layer_overhead_us * 1e-6
    assert fit.decode.tokens_per_second == round(1 / seconds, 1)
    assert fit.decode.low <= _published("spd-05aaad159c") <= fit.decode.high


def test_a_mixture_of_experts_reads_only_the_experts_it_uses() -> None:
    """gpt-oss-20b: 24 blocks of 32 experts, 4 used per token; the rest of each block is read whole."""
    catalog = load_catalog()
    request = Request(model=catalog.models["gpt-oss-20b"].ref(), quant="MXFP4", context=256,
                      gpus=(GpuChoice(gpu=catalog.gpus["rtx-4090"]),))  # fmt: skip
    from vramfit.calc.engines import llama_cpp
    from vramfit.calc.weights import model_weights

    weights = model_weights(request.model, "MXFP4")
    parts = llama_cpp._parts(request)
    dense_part = sum(weights.layer_bytes) - sum(weights.expert_layer_bytes)
    experts_read = sum(e * 4 // 32 for e in weights.expert_layer_bytes)
    expected = dense_part + experts_read + weights.output_bytes + sum(parts.kv.layer_bytes)
    assert llama_cpp.bytes_per_token(parts, 1) == BytesPerToken(gpu=expected, host=0)


def test_each_layer_adds_a_fixed_cost_that_bounds_small_models() -> None:
    """The fixed cost per layer is added to the bandwidth time: with 100 µs per layer, 1 GiB at 1000 GB/s (1.07 ms)
    by 16 layers takes 2.67 ms a token; the bound ignores it; a model of no layers reads at the bandwidth only."""
    from vramfit.calc.speed import DecodeCalibration

    calibration = DecodeCalibration(efficiency={"cuda": 1.0}, moe_factor=1.0, host_efficiency=1.0, band=(1.0, 1.0),
                                    layer_overhead_us=100.0)  # fmt: skip
    read = BytesPerToken(gpu=GIB, host=0)
    small = decode_speed(read, gpu_bandwidth_gbs=1000, backend="cuda", moe=False, calibration=calibration, layers=16)
    bound = decode_speed(read, gpu_bandwidth_gbs=1000, backend="cuda", moe=False, calibration=calibration, layers=16,
                         bound=True)  # fmt: skip
    flat = decode_speed(read, gpu_bandwidth_gbs=1000, backend="cuda", moe=False, calibration=calibration)
    assert small is not None and bound is not None and flat is not None
    assert small.tokens_per_second == round(1 / (GIB / 1000e9 + 16 * 100e-6), 1) == 374.0
    assert bound.tokens_per_second == flat.tokens_per_second == round(1000e9 / GIB, 1) == 931.3


def test_what_stays_on_the_host_is_read_at_the_ram_speed() -> None:
    gpu_only = decode_speed(BytesPerToken(gpu=10 * GIB, host=0), gpu_bandwidth_gbs=1000, backend="cuda", moe=False,
                            bound=True)  # fmt: skip
    split = decode_speed(BytesPerToken(gpu=5 * GIB, host=5 * GIB), gpu_bandwidth_gbs=1000, backend="cuda",
                         moe=False, ram_bandwidth_gbs=100, bound=True)  # fmt: skip
    assert gpu_only is not None and split is not None
    assert gpu_only.tokens_per_second == round(1000e9 / (10 * GIB), 1)
    assert split.tokens_per_second == round(1 / (5 * GIB / 1000e9 + 5 * GIB / 100e9), 1)


@pytest.mark.parametrize(
    ("row_id", "model", "quant", "gpu", "offload"),
    [("spd-fa3c70ac98", "gemma-3-12b", "Q4_K_M", "rtx-2080", 44),  # -ngl 44 of 48 layers: 4 and the output on the CPU
     ("spd-161b62ca79", "qwen2.5-14b", "Q4_K_M", "rtx-2080", 42)],
)  # fmt: skip
def test_a_partial_offload_reads_its_cpu_layers_from_ram(
    row_id: str, model: str, quant: str, gpu: str, offload: int
) -> None:
    """llmfit's RTX 2080 runs (an i9-10900X, four channels of DDR4-2933: 93.9 GB/s), at context 4096."""
    from vramfit.calc.engines import llama_cpp

    catalog = load_catalog()
    request = Request(model=catalog.models[model].ref(), quant=quant, context=4096,
                      gpus=(GpuChoice(gpu=catalog.gpus[gpu]),))  # fmt: skip
    parts = llama_cpp._parts(request)
    read = llama_cpp.bytes_per_token(parts, 1, cpu_layers=parts.arch.n_layers - offload, output_on_cpu=True)
    speed = decode_speed(read, gpu_bandwidth_gbs=448, backend="cuda", moe=False, ram_bandwidth_gbs=93.9,
                         layers=parts.arch.n_layers)  # fmt: skip
    ceiling = decode_speed(read, gpu_bandwidth_gbs=448, backend="cuda", moe=False, ram_bandwidth_gbs=93.9, bound=True)
    everything_on_the_gpu = llama_cpp.bytes_per_token(parts, 1)
    assert speed is not None and ceiling is not None
    assert everything_on_the_gpu.host == 0 and read.host > 0 and read.gpu < everything_on_the_gpu.gpu
    # Below the ceiling of its bytes at full bandwidth; near the estimate (these llmfit runs sit at the top of the
    # calibration's band, 1.25 and 1.33: benchmarks/speed_accuracy.py prints them).
    assert _published(row_id) < ceiling.tokens_per_second
    assert 0.7 <= _published(row_id) / speed.tokens_per_second <= 1.4


def test_prefill_is_bound_by_the_tensor_throughput() -> None:
    """Two FLOPs per parameter per prompt token: Llama 3.1 8B (8,030,261,248 parameters) on an RTX 4090, whose dense
    FP16 tensor peak is 165.2 TFLOPS with FP32 accumulate (NVIDIA's Ada whitepaper, in presets/gpus.toml) and twice
    that, 330.4, with the FP16 accumulate llama.cpp's matrix products use (GeForce halves only the former). An RTX
    A6000 (workstation) runs both at its 154.8."""
    catalog = load_catalog()
    request = Request(model=catalog.models["llama-3.1-8b"].ref(), context=4096,
                      gpus=(GpuChoice(gpu=catalog.gpus["rtx-4090"]),))  # fmt: skip
    fit = fit_gpu(request, request.gpus[0], with_max_context=False)
    assert fit.prefill is not None
    params = 8_030_261_248
    expected = PREFILL_CALIBRATION.efficiency["cuda"] * 330.4e12 / (2 * params)
    assert fit.prefill.tokens_per_second == round(expected, 1)
    low, high = PREFILL_CALIBRATION.band
    assert (fit.prefill.low, fit.prefill.high) == (round(expected * low, 1), round(expected * high, 1))
    pro = Request(model=request.model, context=4096, gpus=(GpuChoice(gpu=catalog.gpus["rtx-a6000"]),))
    pro_fit = fit_gpu(pro, pro.gpus[0], with_max_context=False)
    assert pro_fit.prefill is not None
    pro_expected = PREFILL_CALIBRATION.efficiency["cuda"] * 154.8e12 / (2 * params)
    assert pro_fit.prefill.tokens_per_second == round(pro_expected, 1)
    unknown = Request(model=request.model, gpus=(GpuChoice(gpu=catalog.gpus["rtx-3060-12gb"]),))
    assert fit_gpu(unknown, unknown.gpus[0], with_max_context=False).prefill is None  # no sourced FP16 figure
