"""Decode speed: how many tokens per second one sequence generates, with the band the measurements allow.

Generating a token at batch 1 reads every weight the token uses once, and the KV cache of the tokens already in
the context: for a mixture of experts only the ``experts_used / experts`` share of the routed-expert tensors
(:attr:`calc.weight_bytes.WeightBytes.expert_layer_bytes`); the token embeddings are looked up, not read whole.
What sits on the GPU is read at the GPU's memory bandwidth, what stays on the host (layers left on the CPU,
experts kept there by ``--n-cpu-moe``) at the system RAM's, one after the other:

    seconds per token = gpu_bytes / (gpu_bandwidth × e_gpu) + host_bytes / (ram_bandwidth × e_host)

No engine reaches the bandwidth. ``e`` is calibrated, per backend, on the published llama-bench results of
tests/data/groundtruth/speed.jsonl: :data:`DECODE_EFFICIENCY` holds the median of measured ÷ bandwidth bound over
the rows fitted (every other row, by id), and the band the 10th and 90th percentiles of measured ÷ estimate over
them; ``benchmarks/speed_accuracy.py`` prints the fit and the check on the rows not fitted. Mixture-of-experts
models reach less of the bandwidth than dense ones (smaller, scattered reads; the router), so they have their own
factor, fitted the same way. The host side is fitted on the few offloaded rows (layers or experts in system RAM:
five rows, so its figure is the least certain). Builds differ a lot (Metal rows of 2023 run at two thirds of 2025's
speed on the same Mac), which is most of the band.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DecodeCalibration:
    """The constants of the decode model, fitted by ``benchmarks/speed_accuracy.py --fit``."""

    efficiency: dict[str, float]  # backend → share of the bandwidth bound a dense model reaches on the GPU
    moe_factor: float  # mixture-of-experts models reach this share of a dense model's efficiency
    host_efficiency: float  # share of the system RAM's bandwidth reached by what stays on the host
    band: tuple[float, float]  # measured ÷ estimate at the 10th and 90th percentile of the fitted rows
    default_efficiency: float = 0.55  # a backend without fitted rows


# Fitted on the 39 decode rows benchmarks/speed_accuracy.py can place (its --fit output); the benchmark also fits on
# each half of the rows and checks on the other half (out of sample: median 0.99, 64 % of rows within ±30 %).
CALIBRATION = DecodeCalibration(
    efficiency={"cuda": 0.647, "metal": 0.553, "vulkan": 0.65, "rocm": 0.417, "sycl": 0.292},
    moe_factor=0.756,
    host_efficiency=0.792,
    band=(0.61, 1.18),
    default_efficiency=0.641,
)

# When the question names no RAM speed: two channels of DDR5-5600, 2 × 8 B × 5600 MT/s (a 2026 desktop).
ASSUMED_RAM_BANDWIDTH_GBS = 89.6


@dataclass(frozen=True, slots=True)
class DecodeSpeed:
    """Tokens per second of one sequence, with the band of the calibration."""

    tokens_per_second: float
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class BytesPerToken:
    """What one generated token reads on the GPU and on the host."""

    gpu: int
    host: int


def active_bytes(layer_bytes: int, expert_bytes: int, experts: int, experts_used: int) -> int:
    """A layer's bytes one token reads: the whole layer less the routed experts it does not use."""
    if not experts or not expert_bytes:
        return layer_bytes
    return layer_bytes - expert_bytes + expert_bytes * experts_used // experts


def decode_speed(
    read: BytesPerToken,
    *,
    gpu_bandwidth_gbs: float,
    backend: str,
    moe: bool,
    ram_bandwidth_gbs: float = ASSUMED_RAM_BANDWIDTH_GBS,
    calibration: DecodeCalibration = CALIBRATION,
    bound: bool = False,
) -> DecodeSpeed | None:
    """The decode speed for ``read``, or None when the GPU's bandwidth is unknown (``bound``: every byte at full
    bandwidth, the ceiling no engine reaches)."""
    if gpu_bandwidth_gbs <= 0 or (read.host and ram_bandwidth_gbs <= 0) or read.gpu + read.host <= 0:
        return None
    e_gpu = e_host = 1.0
    if not bound:
        e_gpu = calibration.efficiency.get(backend, calibration.default_efficiency)
        e_host = calibration.host_efficiency
        if moe:
            e_gpu *= calibration.moe_factor
            e_host *= calibration.moe_factor
    seconds = read.gpu / (gpu_bandwidth_gbs * 1e9 * e_gpu)
    if read.host:
        seconds += read.host / (ram_bandwidth_gbs * 1e9 * e_host)
    speed = 1 / seconds
    low, high = (1.0, 1.0) if bound else calibration.band
    return DecodeSpeed(round(speed, 1), round(speed * low, 1), round(speed * high, 1))


# Prefill: a prompt of N tokens costs about 2 FLOPs per active parameter per token (one multiply-add), run as large
# matrix products, so it is bound by the GPU's tensor throughput, not its bandwidth: tokens/s = e × FLOPS / (2 ×
# active parameters). ``e`` per backend is fitted like the decode one (benchmarks/speed_accuracy.py, the pp rows of
# GPUs whose FP16 throughput the presets carry), and the band likewise.
@dataclass(frozen=True, slots=True)
class PrefillCalibration:
    efficiency: dict[str, float]
    band: tuple[float, float]
    default_efficiency: float = 0.3


# Fitted on the 18 pp rows benchmarks/speed_accuracy.py can place (out of sample: median 0.85, 44 % within ±30 %):
# rough, and the band says so. Quantized models run their matrix products on INT8 paths (llama.cpp's MMQ), up to
# twice the FP16 rate on NVIDIA cards, and builds differ a lot; the FP16 figure is the one the presets can source.
PREFILL_CALIBRATION = PrefillCalibration(
    efficiency={"cuda": 0.392, "metal": 0.673, "vulkan": 0.933, "rocm": 0.352},
    band=(0.68, 2.03),
    default_efficiency=0.67,
)


def prefill_speed(
    active_params: int,
    *,
    fp16_tflops: float,
    backend: str,
    calibration: PrefillCalibration = PREFILL_CALIBRATION,
    bound: bool = False,
) -> DecodeSpeed | None:
    """Prompt tokens per second, or None when the GPU's throughput is unknown (``bound``: every FLOP at peak)."""
    if fp16_tflops <= 0 or active_params <= 0:
        return None
    e = 1.0 if bound else calibration.efficiency.get(backend, calibration.default_efficiency)
    speed = e * fp16_tflops * 1e12 / (2 * active_params)
    low, high = (1.0, 1.0) if bound else calibration.band
    return DecodeSpeed(round(speed, 1), round(speed * low, 1), round(speed * high, 1))
