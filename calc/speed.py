"""Decode and prefill speed: how many tokens per second one sequence generates, and how fast a prompt is read (on
the GPU alone, or with the weights kept in system RAM copied over PCIe per micro-batch), with the band the
measurements allow.

Generating a token at batch 1 reads every weight the token uses once, and the KV cache of the tokens already in
the context: for a mixture of experts only the ``experts_used / experts`` share of the routed-expert tensors
(:attr:`calc.weight_bytes.WeightBytes.expert_layer_bytes`); the token embeddings are looked up, not read whole.
What sits on the GPU is read at the GPU's memory bandwidth, what stays on the host (layers left on the CPU,
experts kept there by ``--n-cpu-moe``) at the system RAM's, one after the other:

    seconds per token = gpu_bytes / (gpu_bandwidth × e_gpu) + host_bytes / (ram_bandwidth × e_host)
                        + layers × layer_overhead

No engine reaches the bandwidth: ``e`` is the share its reads reach, per backend. And a token is not one read:
each layer is a dozen kernels or more (norms, projections, attention, the feed-forward), and each costs a fixed time
however few bytes it reads (the launch and the host's graph work, the ramp-up and tail of a kernel too small to keep
every memory channel busy, the sync between them). ``layer_overhead`` is that fixed cost per layer, about 100 µs:
next to a 70B layer's milliseconds it is little, but a small model on a fast card spends most of its token on it
(with an 8B model an A100 reaches a third of its bandwidth, an RTX 4070 Ti four fifths): small models are bound by
latency, not bandwidth. Mixture-of-experts models reach less of the bandwidth than dense ones (smaller, scattered
reads; the router), so they have their own factor.

The constants (:data:`CALIBRATION`) are fitted together on the published llama-bench results of
tests/data/groundtruth/speed.jsonl by ``benchmarks/speed_accuracy.py --fit``: the least squares of
log(measured ÷ estimate), each ``e`` at most 1, the overhead at least 0; the band is the 10th and 90th percentiles of
measured ÷ estimate (each GPU counted once). The benchmark also fits on each half of the rows and checks on the
other half (out of sample).
The host side rests on the few offloaded rows (layers or experts in system RAM: five decode rows, so its figure is the
least certain). Builds differ a lot (Metal rows of 2023 run at two thirds of 2025's speed on the same Mac; the
fixed cost of 2024's CUDA builds is larger than that of 2025's Vulkan), which is most of the band.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vramfit.calc.ram_speed import ASSUMED_RAM_SPEED


@dataclass(frozen=True, slots=True)
class DecodeCalibration:
    """The constants of the decode model, fitted by ``benchmarks/speed_accuracy.py --fit``."""

    efficiency: dict[str, float]  # backend → share of the GPU's bandwidth a dense model's reads reach
    moe_factor: float  # mixture-of-experts models reach this share of a dense model's efficiency
    host_efficiency: float  # share of the system RAM's bandwidth reached by what stays on the host
    band: tuple[float, float]  # measured ÷ estimate at the 10th and 90th percentile of the fitted rows
    default_efficiency: float = 0.55  # a backend without fitted rows
    layer_overhead_us: float = 0.0  # fixed time per layer per token (kernel launches, syncs), in µs
    # measured ÷ estimate at the 10th and 90th percentile of one chip class's machines, each estimated with the
    # constants fitted without it (calc.gpu.chip_class; classes with enough machines); others take ``band``
    class_bands: dict[str, tuple[float, float]] = field(default_factory=dict)


# Fitted on the 264 decode rows benchmarks/speed_accuracy.py can place (its --fit output), 79 of them llama.cpp
# discussion #4167's Apple Silicon table (every M1–M4 chip and core count, Llama 2 7B F16/Q8_0/Q4_0): before them
# the Metal rows were mostly Ultra chips and the Metal share (0.644) underestimated the base and Pro chips by a
# quarter. The number to quote leaves one machine out at a time (a device, its backend, the publication of its
# results), each estimated with the constants fitted on the others: 83 % of 82 machines within ±30 %, median 1.03
# (CUDA 89 % of 28, Metal 97 % of 35, ROCm 4 of 4, Vulkan 36 % of 14). A fixed cost per layer of Metal's own fits the
# M-series table better, but leaves CUDA's machines at 81 %; one cost for every backend is what ships. The band counts
# each GPU once, so it is a machine's, not a results file's. A chip class with five machines or more whose machines,
# each left out, spread wider than that band gets its own (the 10th and 90th percentile, the --fit output's
# class_bands): NVIDIA Ada up to 1.48×, Ampere 1.36×, RDNA 3 1.39×, Blackwell down to 0.72×. A class's band widens the
# general one and never narrows it: the Apple classes' machines are mostly one table's rows on one build (Apple Pro
# 1.05–1.09), and Macs on other builds run up to a third slower. The host share rests on the 11 rows with weights in
# system RAM, 9 of them with the host's RAM stated.
CALIBRATION = DecodeCalibration(
    efficiency={"cuda": 1.0, "metal": 0.828, "rocm": 0.768, "sycl": 0.35, "vulkan": 0.799},
    moe_factor=0.991,
    host_efficiency=0.517,
    band=(0.77, 1.14),
    default_efficiency=0.799,
    layer_overhead_us=123.2,
    class_bands={
        "AMD RDNA3": (0.77, 1.39),
        "NVIDIA Ada": (0.77, 1.48),
        "NVIDIA Ampere": (0.77, 1.36),
        "NVIDIA Blackwell": (0.72, 1.14),
    },
)

# When the question names no RAM speed: two channels of DDR5-5600, 2 × 8 B × 5600 MT/s = 89.6 GB/s (calc.ram_speed).
ASSUMED_RAM_BANDWIDTH_GBS = ASSUMED_RAM_SPEED.bandwidth_gbs


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
    layers: int = 0,
    chip_class: str = "",
) -> DecodeSpeed | None:
    """The decode speed for ``read`` by a model of ``layers`` layers, or None when the GPU's bandwidth is unknown
    (``bound``: every byte at full bandwidth and no fixed cost, the ceiling no engine reaches)."""
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
    if not bound:
        seconds += layers * calibration.layer_overhead_us * 1e-6
    speed = 1 / seconds
    low, high = (1.0, 1.0) if bound else calibration.class_bands.get(chip_class, calibration.band)
    return DecodeSpeed(round(speed, 1), round(speed * low, 1), round(speed * high, 1))


# Prefill: a prompt of N tokens costs about 2 FLOPs per active parameter per token (one multiply-add), run as large
# matrix products, so it is bound by the GPU's tensor throughput, not its bandwidth: tokens/s = e × FLOPS / (2 ×
# active parameters). ``e`` per backend is fitted like the decode one (benchmarks/speed_accuracy.py, the pp rows of
# GPUs whose FP16 throughput the presets carry), and the band likewise.
@dataclass(frozen=True, slots=True)
class PrefillCalibration:
    efficiency: dict[str, float]  # backend → share of the FP16 peak a prompt's products reach
    band: tuple[float, float]
    default_efficiency: float = 0.3
    # "backend/chip class" (calc.gpu.chip_class) → its own share, where at least two machines of that class on that
    # backend were measured; the others take the backend's
    class_efficiency: dict[str, float] = field(default_factory=dict)
    # chip class → measured ÷ estimate at the 10th and 90th percentile of its machines, each left out, where that is
    # wider than ``band`` (as DecodeCalibration.class_bands)
    class_bands: dict[str, tuple[float, float]] = field(default_factory=dict)
    # a routed expert's matrix products cost at least this many tokens' work (RoutedExperts)
    expert_min_tokens: float = 0.0

    def share(self, backend: str, chip_class: str = "") -> float:
        """The share of the peak for a GPU of ``chip_class`` on ``backend``."""
        fallback = self.efficiency.get(backend, self.default_efficiency)
        return self.class_efficiency.get(f"{backend}/{chip_class}", fallback)


# Fitted on the 258 pp rows benchmarks/speed_accuracy.py can place, 79 of them the prefill (pp512) columns of llama.cpp
# discussion #4167's Apple Silicon table (every M1–M4 chip and GPU-core count; benchmarks/speed_rows.py derives each
# one's throughput from its cores and clock). Each share is the median of measured ÷ peak with every machine counted
# once; a chip class measured on at least two machines of a backend gets its own share (Intel Arc on Vulkan reaches
# 2 % of its peak where an RDNA 3 card reaches 29 %), the others take their backend's. A routed expert costs at least
# 48 tokens' work (RoutedExperts; the fit tries 0 to 192 and keeps the least-missing): without it Qwen3.5-35B-A3B's
# 256 experts prefilled at half the estimate on an RTX 4090. Left out one machine at a time (a device, its backend,
# its publication), 75 % of 83 machines are within ±30 %, median 0.98 (Metal 95 % of 40, CUDA 71 % of 21, Vulkan
# 38 % of 16): rough, and the band says so. The FLOPs are 2 per active parameter plus the attention's
# (calc.attention_flops), every one at the one share. Quantized models run their matrix products on INT8 paths
# (llama.cpp's MMQ), faster than the FP16 rate on NVIDIA cards, and builds differ a lot; the FP16 figure is the one
# the presets can source. Datacenter NVIDIA cards reach a smaller share than GeForce ones (an H100 PCIe half the
# estimate, an RTX 4090 up to twice it), which one share per class cannot hold; so a chip class with five machines or
# more whose machines, each left out, spread wider than the band gets its own (the --fit output's class_bands: NVIDIA
# Ada 0.77–1.78×, Ampere 0.77–1.59×, RDNA 3 0.66–1.56×, Intel Arc 0.35–2.81×), widening the general one only.
PREFILL_CALIBRATION = PrefillCalibration(
    efficiency={"cuda": 0.377, "metal": 0.714, "vulkan": 0.231, "rocm": 0.279, "sycl": 0.092},
    band=(0.77, 1.45),
    default_efficiency=0.279,
    class_efficiency={
        "cuda/NVIDIA Ada": 0.272, "cuda/NVIDIA Ampere": 0.405, "cuda/NVIDIA Blackwell": 0.353,
        "metal/Apple base": 0.696, "metal/Apple Pro": 0.739, "metal/Apple Max": 0.725, "metal/Apple Ultra": 0.695,
        "rocm/AMD RDNA3": 0.31, "sycl/Intel Arc": 0.092, "vulkan/AMD RDNA1": 0.228, "vulkan/AMD RDNA2": 0.221,
        "vulkan/AMD RDNA3": 0.285, "vulkan/Intel Arc": 0.02,
    },
    class_bands={"AMD RDNA3": (0.66, 1.56), "Intel Arc": (0.35, 2.81), "NVIDIA Ada": (0.77, 1.78),
                 "NVIDIA Ampere": (0.77, 1.59)},
    expert_min_tokens=48,
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class RoutedExperts:
    """The routed experts of a micro-batch: their active parameters (part of the active ones) and how many tokens each
    expert gets, ``n_ubatch × experts_used ÷ experts`` with even routing (Qwen3.5-35B-A3B: 512 × 8 ÷ 256 = 16).

    llama.cpp runs each expert's product over its own tokens (MUL_MAT_ID), in kernels tiled for a batch of many, and a
    tile costs the same work however few of its rows are filled. Fitted on the published rows, an expert given fewer
    than :attr:`PrefillCalibration.expert_min_tokens` tokens costs as many as that many would. Models of many small
    experts prefill at half the dense rate (Qwen3.5-35B-A3B on an RTX 4090, gpt-oss-120b on Strix Halo)."""

    params: int
    tokens_per_expert: float


def _flops_per_token(
    active_params: int, attention_flops: float, experts: RoutedExperts | None, calibration: PrefillCalibration
) -> float:
    """2 per active parameter, the attention's, and the work of the experts' part-filled tiles."""
    flops = 2 * active_params + max(attention_flops, 0.0)
    if experts is not None and experts.tokens_per_expert > 0 and calibration.expert_min_tokens > 0:
        waste = max(1.0, calibration.expert_min_tokens / experts.tokens_per_expert) - 1
        flops += 2 * experts.params * waste
    return flops


def prefill_speed(
    active_params: int,
    *,
    fp16_tflops: float,
    backend: str,
    calibration: PrefillCalibration = PREFILL_CALIBRATION,
    bound: bool = False,
    geforce: bool = False,
    attention_flops: float = 0.0,
    chip_class: str = "",
    experts: RoutedExperts | None = None,
) -> DecodeSpeed | None:
    """Prompt tokens per second, or None when the GPU's throughput is unknown (``bound``: every FLOP at peak).

    ``geforce``: the card is an NVIDIA GeForce, whose sourced FP16 figure (NVIDIA's "FP16 Tensor with FP32
    Accumulate") is half its FP16-accumulate rate; llama.cpp's matrix products accumulate in FP16 (cuBLAS) or in
    INT32 on the INT8 path (MMQ), which GeForce runs at full rate, so its peak here is twice the figure. Workstation
    and datacenter cards run both at one rate. ``attention_flops``: the prompt's attention FLOPs per token
    (:func:`calc.attention_flops.attention_flops_per_token`), on top of the 2 per active parameter. ``experts``: a
    mixture of experts' routed part (:class:`RoutedExperts`)."""
    speed = _prefill_rate(
        active_params, attention_flops, fp16_tflops, backend, calibration, bound, geforce, chip_class, experts
    )
    if speed is None:
        return None
    low, high = (1.0, 1.0) if bound else calibration.class_bands.get(chip_class, calibration.band)
    return DecodeSpeed(round(speed, 1), round(speed * low, 1), round(speed * high, 1))


def _prefill_rate(
    active_params: int,
    attention_flops: float,
    fp16_tflops: float,
    backend: str,
    calibration: PrefillCalibration,
    bound: bool,
    geforce: bool,
    chip_class: str = "",
    experts: RoutedExperts | None = None,
) -> float | None:
    """Prompt tokens per second from the GPU's compute alone, unrounded (None: its throughput is unknown): 2 FLOPs per
    active parameter, the prompt's attention FLOPs per token (:mod:`calc.attention_flops`) and the experts' tiles."""
    if fp16_tflops <= 0 or active_params <= 0:
        return None
    e = 1.0 if bound else calibration.share(backend, chip_class)
    flops = _flops_per_token(active_params, attention_flops, experts, calibration)
    return e * fp16_tflops * (2 if geforce else 1) * 1e12 / flops


# Prefill with weights in system RAM. llama.cpp 0c1e57098 runs a prompt's matrix products on the GPU even where their
# weights stay on the host: ggml_backend_sched_backend_id_from_cur (ggml/src/ggml-backend.cpp) hands an op whose
# weight sits in a host buffer of the CPU backend to a GPU backend when ``sched->op_offload`` is on (the default;
# ``--no-op-offload`` in common/arg.cpp, ``cparams.op_offload`` in src/llama-context.cpp) and that backend's
# ``offload_op`` wants it; ggml_backend_cuda_device_offload_op (ggml/src/ggml-cuda/ggml-cuda.cu) wants every op whose
# batch is at least ``op_offload_min_batch_size``, 32 tokens unless GGML_OP_OFFLOAD_MIN_BATCH says otherwise
# (get_op_batch_size: a MUL_MAT's ne[1], a MUL_MAT_ID's ne[2]; never GET_ROWS, so the token embeddings stay). The
# scheduler then copies the weight to the GPU for that graph: every micro-batch (``n_ubatch``, 512 by default) moves
# the host weights over PCIe once. Of a routed-expert tensor it copies only the experts the micro-batch's tokens use
# (ggml_backend_sched_compute_splits: "when offloading MoE weights, we can reduce the amount of data copied by copying
# only the experts that are used"); 512 tokens spread over all of them if routing were even (gpt-oss-120b: 2,048
# picks of 128 experts), so the bytes are counted whole and the measured share below takes in what routing leaves.
# The output layer's product is the last token's logits only (llama-bench's and llama-server's prompt batches ask
# for one output: ne[1] = 1 < 32), so it stays on the CPU and moves nothing. So
#
#     seconds per micro-batch = n_ubatch / compute tokens/s + host weight bytes / (PCIe bandwidth × e_pcie)
#     prompt tokens/s = n_ubatch / seconds per micro-batch
#
# ``e_pcie`` is fitted by ``benchmarks/speed_accuracy.py --fit`` on the published rows that place it, 8 pp512 rows
# of three machines: an RTX 5090 with gpt-oss-120b at --n-cpu-moe 32 and 64 (weiso131/schedcp), an RTX 4070 with 31
# of its 36 expert blocks in RAM (carteakey.dev, three KV cache types) and two RTX 3060 with every expert in RAM
# (reynardo-tjhin/localllm-commands: GLM-4.5-Air, gpt-oss-120b, Qwen3-Coder-30B-A3B): 0.812, the least squares of
# log(measured ÷ estimate). The machines disagree by 3×: the 5090's and two of the 3060 rows sit at 0.57-0.67 of the
# estimate, the 4070's at 1.8-1.9, faster than every expert at the full link rate allows, so fewer experts crossed
# (the copy above; that run also used --no-mmap, and pinned host memory copies faster than the pageable or
# memory-mapped pages the "CPU" buffer type otherwise holds). The band covers that spread, and says how rough this is.
# Not modelled: the attention of layers left on the CPU reads its KV cache there (long prompts add time).
@dataclass(frozen=True, slots=True)
class PcieCalibration:
    efficiency: float  # share of the link's data rate a micro-batch's weight copies reach
    band: tuple[float, float]  # the transfer's rate may be this many times the estimate's, low and high


PCIE_CALIBRATION = PcieCalibration(efficiency=0.812, band=(0.5, 2.0))


def streamed_prefill_speed(
    active_params: int,
    host_weight_bytes: int,
    *,
    fp16_tflops: float,
    backend: str,
    pcie_gbs: float,
    n_ubatch: int = 512,
    geforce: bool = False,
    calibration: PrefillCalibration = PREFILL_CALIBRATION,
    pcie: PcieCalibration = PCIE_CALIBRATION,
    bound: bool = False,
    attention_flops: float = 0.0,
    chip_class: str = "",
    experts: RoutedExperts | None = None,
) -> DecodeSpeed | None:
    """Prompt tokens per second with ``host_weight_bytes`` of weights in system RAM, copied to the GPU once per
    micro-batch of ``n_ubatch`` tokens (the rule above), or None when the GPU's throughput or its link is unknown.
    The band puts the compute and the transfer each at its own band's end (``bound``: both at their peaks)."""
    compute = _prefill_rate(
        active_params, attention_flops, fp16_tflops, backend, calibration, bound, geforce, chip_class, experts
    )
    if compute is None or n_ubatch <= 0 or (host_weight_bytes and pcie_gbs <= 0):
        return None
    e = 1.0 if bound else pcie.efficiency
    compute_band = calibration.class_bands.get(chip_class, calibration.band)
    (c_low, c_high), (p_low, p_high) = ((1.0, 1.0), (1.0, 1.0)) if bound else (compute_band, pcie.band)

    def rate(compute_share: float, link_share: float) -> float:
        seconds = n_ubatch / (compute * compute_share)
        if host_weight_bytes:
            seconds += host_weight_bytes / (pcie_gbs * 1e9 * e * link_share)
        return n_ubatch / seconds

    return DecodeSpeed(round(rate(1, 1), 1), round(rate(c_low, p_low), 1), round(rate(c_high, p_high), 1))
