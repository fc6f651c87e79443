"""Decode speed: the bytes one token reads, worked out by hand, and published llama-bench results inside the band."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vramfit.calc.engines import fit_gpu
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.presets import load_catalog
from vramfit.calc.request import GpuChoice, ModelRef, Request
from vramfit.calc.speed import CALIBRATION, PREFILL_CALIBRATION, BytesPerToken, decode_speed, prefill_speed

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
    # One fixed cost per layer for every backend, fitted with Metal's larger one, makes this small fast model on CUDA
    # run faster than estimated: 167.3 against 123.6 t/s, past the general band (1.14×) but inside the band of the
    # Ampere class, whose machines each left out spread to 1.36× (CALIBRATION.class_bands)
    published = _published("spd-05aaad159c")
    assert CALIBRATION.band[1] * fit.decode.tokens_per_second < published < fit.decode.high
    assert fit.decode.high == round(CALIBRATION.class_bands["NVIDIA Ampere"][1] / seconds, 1)


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


@pytest.mark.parametrize(
    ("gpu_id", "key", "geforce", "band_class"),
    [("rtx-4090", "cuda/NVIDIA Ada", True, "NVIDIA Ada"),  # a class measured on two machines or more: its own share
     ("apple-m2-8gb", "metal/Apple base", False, ""),  # and its own band where five machines or more spread wider
     ("rtx-2080", "cuda", True, ""),  # Turing: no class share, CUDA's
     ("rx-9070-xt", "rocm", False, "")],  # RDNA 4 on ROCm: one machine measured, so ROCm's
)  # fmt: skip
def test_prefill_takes_the_chip_class_share_where_one_was_measured(
    gpu_id: str, key: str, geforce: bool, band_class: str
) -> None:
    """A 7B model's 2 FLOPs per parameter at the share of the GPU's FP16 peak its class reached (else its backend's):
    tokens/s = share × TFLOPS (× 2 on a GeForce) ÷ (2 × parameters); the band, its class's where it has one."""
    gpu = load_catalog().gpus[gpu_id]
    assert gpu.chip_class and key.split("/")[0] == gpu.backend
    if "/" in key:
        share = PREFILL_CALIBRATION.class_efficiency[key]
    else:
        assert f"{gpu.backend}/{gpu.chip_class}" not in PREFILL_CALIBRATION.class_efficiency
        share = PREFILL_CALIBRATION.efficiency[key]
    assert gpu.fp16_tflops is not None
    expected = share * gpu.fp16_tflops * (2 if geforce else 1) * 1e12 / (2 * 7_000_000_000)
    speed = prefill_speed(7_000_000_000, fp16_tflops=gpu.fp16_tflops, backend=gpu.backend, geforce=geforce,
                          chip_class=gpu.chip_class)  # fmt: skip
    assert speed is not None and speed.tokens_per_second == round(expected, 1)
    if band_class:
        low, high = PREFILL_CALIBRATION.class_bands[band_class]
    else:
        assert gpu.chip_class not in PREFILL_CALIBRATION.class_bands
        low, high = PREFILL_CALIBRATION.band
    assert (speed.low, speed.high) == (round(expected * low, 1), round(expected * high, 1))


@pytest.mark.parametrize(
    ("tokens_per_expert", "flops"),
    [(16, 2 * 3e9 + 2 * 2e9 * (48 / 16 - 1)),  # 512 × 4 ÷ 128 (gpt-oss-120b): each expert's tile a third full
     (32, 2 * 3e9 + 2 * 2e9 * (48 / 32 - 1)),
     (64, 2 * 3e9),  # 512 × 4 ÷ 32 (gpt-oss-20b): more than the least work, nothing added
     (48, 2 * 3e9)],
)  # fmt: skip
def test_routed_experts_given_few_tokens_cost_the_least_work(tokens_per_expert: float, flops: float) -> None:
    """3 B active parameters, 2 B of them routed experts: an expert given fewer than expert_min_tokens (48) tokens of
    a micro-batch costs as many; CUDA's share of an RTX 2080's peak (Turing: no class share), twice its 40.27 TFLOPS."""
    from vramfit.calc.speed import RoutedExperts

    assert PREFILL_CALIBRATION.expert_min_tokens == 48
    experts = RoutedExperts(params=2_000_000_000, tokens_per_expert=tokens_per_expert)
    speed = prefill_speed(3_000_000_000, fp16_tflops=40.27, backend="cuda", geforce=True, experts=experts)
    expected = PREFILL_CALIBRATION.efficiency["cuda"] * 2 * 40.27e12 / flops
    assert speed is not None and speed.tokens_per_second == round(expected, 1)


def test_prefill_is_bound_by_the_tensor_throughput() -> None:
    """Two FLOPs per parameter per prompt token: Llama 3.1 8B (8,030,261,248 parameters) on an RTX 4090, whose dense
    FP16 tensor peak is 165.2 TFLOPS with FP32 accumulate (NVIDIA's Ada whitepaper, in presets/gpus.toml) and twice
    that, 330.4, with the FP16 accumulate llama.cpp's matrix products use (GeForce halves only the former). An RTX
    A6000 (workstation) runs both at its 154.8. Each at the share of its chip class (Ada, Ampere). Plus the prompt's
    attention: a 4,096-token prompt is 8 micro-batches
    of 512 whose tokens read 512, 1,024, ... 4,096 cells, 2,304 on average, in 32 layers of 32 heads of 128 (2 × 32 ×
    (128 + 128) FLOPs a cell)."""
    catalog = load_catalog()
    request = Request(model=catalog.models["llama-3.1-8b"].ref(), context=4096,
                      gpus=(GpuChoice(gpu=catalog.gpus["rtx-4090"]),))  # fmt: skip
    fit = fit_gpu(request, request.gpus[0], with_max_context=False)
    assert fit.prefill is not None
    params = 8_030_261_248
    attention = 32 * (2 * 32 * 256) * 2304
    expected = PREFILL_CALIBRATION.class_efficiency["cuda/NVIDIA Ada"] * 330.4e12 / (2 * params + attention)
    assert fit.prefill.tokens_per_second == round(expected, 1)
    low, high = PREFILL_CALIBRATION.class_bands["NVIDIA Ada"]  # Ada's machines spread wider than the general band
    assert (fit.prefill.low, fit.prefill.high) == (round(expected * low, 1), round(expected * high, 1))
    pro = Request(model=request.model, context=4096, gpus=(GpuChoice(gpu=catalog.gpus["rtx-a6000"]),))
    pro_fit = fit_gpu(pro, pro.gpus[0], with_max_context=False)
    assert pro_fit.prefill is not None
    pro_expected = PREFILL_CALIBRATION.class_efficiency["cuda/NVIDIA Ampere"] * 154.8e12 / (2 * params + attention)
    assert pro_fit.prefill.tokens_per_second == round(pro_expected, 1)
    unknown = Request(model=request.model, gpus=(GpuChoice(gpu=catalog.gpus["gtx-1080"]),))
    assert fit_gpu(unknown, unknown.gpus[0], with_max_context=False).prefill is None  # no tensor cores: no figure


# Prefill with weights in system RAM: each micro-batch of n_ubatch tokens copies them to the GPU over PCIe once
# (llama.cpp's op offload, calc.speed.streamed_prefill_speed). A PCIe 5.0 lane runs 32 GT/s and a 4.0 lane 16, both
# coding 128 bits in 130: 5.0 x16 = 32 × 16 × 128/130 / 8 = 63.015 GB/s, 4.0 x16 = 31.508 GB/s.
PCIE_5_X16 = 32 * 16 * 128 / 130 / 8 * 1e9
PCIE_4_X16 = 16 * 16 * 128 / 130 / 8 * 1e9


@pytest.mark.parametrize(
    ("gen", "lanes", "gbs"),
    [(3, 16, 15.754), (4, 16, 31.508), (4, 8, 15.754), (5, 16, 63.015), (5, 8, 31.508), (6, 16, 0.0)],
)
def test_a_pcie_link_moves_its_lanes_times_their_rate_less_the_line_code(gen: int, lanes: int, gbs: float) -> None:
    from vramfit.calc.pcie import link_gbs

    assert round(link_gbs(gen, lanes), 3) == gbs  # gen 6: not a link the presets carry (0: unknown)


def _streamed(compute_tps: float, moved: int, link: float, e: float = 0.812, ubatch: int = 512) -> float:
    """The rule by hand: seconds per micro-batch = its compute + the moved weights over the link at its share."""
    return ubatch / (ubatch / compute_tps + moved / (link * e))


def test_the_expert_offload_plan_pays_the_pcie_copy_of_its_experts_each_micro_batch() -> None:
    """gpt-oss-120b MXFP4 on an RTX 5090 at 8,192 tokens (the CLI's "gpt-oss-120b on a 5090 with 64GB RAM"): the plan
    is --n-cpu-moe 19, and its 19 blocks' expert tensors (1,696,481,280 bytes each, 32,233,144,320 in all) cross the
    5090's PCIe 5.0 x16 once per 512-token micro-batch at the fitted 0.812 of it; the compute is the whole-GPU rule
    (the share of CUDA's Blackwell cards of twice the 5090's 209.5 TFLOPS, two FLOPs per active parameter and the
    attention's: 18 full layers read 4,352 cells on average over 16 micro-batches, 18 layers of a 128-token window
    512 cells in the first micro-batch and 640 in the others, 632 on average, all 64 heads of 64, 2 × 64 × 128 FLOPs
    a cell); and its 128 experts, 4 a token, get 512 × 4 ÷ 128 = 16 tokens each from a micro-batch, so each costs the
    work of PREFILL_CALIBRATION.expert_min_tokens (48): twice its 2 FLOPs per active routed parameter once more."""
    from vramfit.calc.engines import llama_cpp
    from vramfit.calc.speed import PCIE_CALIBRATION

    catalog = load_catalog()
    request = Request(model=catalog.models["gpt-oss-120b"].ref(), quant="MXFP4_MOE", context=8192,
                      ram_bytes=64 * GIB, gpus=(GpuChoice(gpu=catalog.gpus["rtx-5090"]),))  # fmt: skip
    fit = fit_gpu(request, request.gpus[0], with_max_context=False)
    plan = fit.expert_offload
    assert plan is not None and plan.n_cpu_moe == 19 and plan.prefill is not None
    assert plan.cpu_expert_bytes == 19 * 1_696_481_280 == 32_233_144_320
    assert PCIE_CALIBRATION.efficiency == 0.812
    parts = llama_cpp._parts(request)
    active, experts = llama_cpp.active_params(parts), llama_cpp.routed_experts(parts)
    assert experts is not None and experts.tokens_per_expert == 512 * 4 / 128 == 16
    assert PREFILL_CALIBRATION.expert_min_tokens == 48
    attention = (2 * 64 * 128) * (18 * 4352 + 18 * 632)
    share = PREFILL_CALIBRATION.class_efficiency["cuda/NVIDIA Blackwell"]
    flops = 2 * active + 2 * experts.params * (48 / 16 - 1) + attention
    compute = share * 2 * 209.5e12 / flops  # ≈ 5,000 tokens/s
    expected = _streamed(compute, 32_233_144_320, PCIE_5_X16)  # 512 / (0.10 s + 0.63 s) ≈ 694
    assert plan.prefill.tokens_per_second == round(expected, 1)
    (c_low, c_high), (p_low, p_high) = PREFILL_CALIBRATION.band, PCIE_CALIBRATION.band
    assert plan.prefill.low == round(_streamed(compute * c_low, 32_233_144_320, PCIE_5_X16 * p_low), 1)
    assert plan.prefill.high == round(_streamed(compute * c_high, 32_233_144_320, PCIE_5_X16 * p_high), 1)
    assert (fit.pcie_gbs, fit.pcie_assumed) == (63.0, False)  # the 5090's preset states its link


@pytest.mark.parametrize(
    ("row_id", "model", "quant", "gpu", "count", "n_cpu_moe", "blocks"),
    [("spd-558c6aa591", "gpt-oss-120b", "MXFP4", "rtx-5090", 1, 32, 32),  # weiso131/schedcp, pp512 260.14 t/s
     ("spd-c7b2a992c4", "gpt-oss-120b", "MXFP4", "rtx-5090", 1, 64, 36),  # 64 > 36 blocks: every expert, 245.63 t/s
     ("spd-1bfcb42d9c", "gpt-oss-120b", "MXFP4", "rtx-4070", 1, 31, 31),  # carteakey.dev, pp 429.90 t/s
     ("spd-68619ef90d", "glm-4.5-air", "Q4_K_S", "rtx-3060-12gb", 2, 99, 45),  # reynardo-tjhin, pp512 98.54 t/s
     ("spd-d229834058", "qwen3-30b-a3b", "BF16", "rtx-3060-12gb", 2, 99, 48)],  # Qwen3-Coder-30B-A3B, 130.28 t/s
)  # fmt: skip
def test_the_published_expert_offload_prefill_rows_sit_in_the_band(
    row_id: str, model: str, quant: str, gpu: str, count: int, n_cpu_moe: int, blocks: int
) -> None:
    """Rows the PCIe share is fitted on (benchmarks/speed_accuracy.py --fit), one machine's row or two each: the
    routed experts of the blocks kept in RAM cross the link (each block's own tensors, counted here from the expert
    layer sizes), and the measured rate lies in the estimate's band. The 4070's is faster than every expert at the
    link's full rate would allow: llama.cpp copies only the experts a micro-batch uses."""
    from vramfit.calc.engines import llama_cpp
    from vramfit.calc.speed import streamed_prefill_speed
    from vramfit.calc.weights import model_weights

    catalog = load_catalog()
    card = catalog.gpus[gpu]
    request = Request(
        model=catalog.models[model].ref(), quant=quant, context=512, gpus=(GpuChoice(gpu=card, count=count),)
    )
    parts = llama_cpp._parts(request)
    experts = [b for b in model_weights(request.model, quant).expert_layer_bytes if b]
    assert len(experts) >= blocks
    moved = llama_cpp.host_weight_bytes(parts, cpu_expert_blocks=n_cpu_moe)
    layer_bytes = model_weights(request.model, quant).expert_layer_bytes
    assert moved == sum(layer_bytes[:n_cpu_moe]) and sum(1 for b in layer_bytes[:n_cpu_moe] if b) == blocks
    args = {"fp16_tflops": card.fp16_tflops, "backend": "cuda", "pcie_gbs": card.pcie_gbs, "geforce": True}
    estimate = streamed_prefill_speed(llama_cpp.active_params(parts), moved, **args)  # type: ignore[arg-type]
    bound = streamed_prefill_speed(llama_cpp.active_params(parts), moved, bound=True, **args)  # type: ignore[arg-type]
    assert estimate is not None and bound is not None
    measured = _published(row_id)
    assert estimate.low <= measured <= estimate.high
    if gpu == "rtx-4070":
        assert measured > bound.tokens_per_second  # fewer bytes crossed than every expert
    else:
        assert measured < bound.tokens_per_second / 1.5


def test_layers_left_on_the_cpu_cross_pcie_whole_each_micro_batch_on_an_assumed_link() -> None:
    """Llama 3.3 70B Q8_0 at 8,192 tokens with 128 GB of RAM on two 48 GB cards: partial fits, 52 of 81 layers on
    the GPU. Every weight of the 28 layers left on the CPU crosses the link per micro-batch (not the output layer: its
    one-token product stays on the CPU). The RTX A6000's preset states PCIe 4.0 x16; the A40's states no link, so the
    4.0 x16 of calc.pcie.ASSUMED_LINK stands in, the same figure, and the fit says it assumed it. The attention: 80
    layers of 64 heads of 128 (2 × 64 × 256 FLOPs a cell), 4,352 cells on average over 16 micro-batches."""
    from vramfit.calc.engines import llama_cpp
    from vramfit.calc.weights import model_weights

    catalog = load_catalog()
    for gpu, tflops, link, assumed in (("rtx-a6000", 154.8, PCIE_4_X16, False), ("a40", 149.67, PCIE_4_X16, True)):
        req = Request(model=catalog.models["llama-3.3-70b"].ref(), quant="Q8_0", context=8192, ram_bytes=128 * GIB,
                      gpus=(GpuChoice(gpu=catalog.gpus[gpu]),))  # fmt: skip
        fit = fit_gpu(req, req.gpus[0], with_max_context=False)
        assert fit.verdict.value == "partial" and fit.gpu_layers == 52 and fit.prefill is not None
        cpu_layers = 80 - fit.gpu_layers
        moved = sum(model_weights(req.model, req.quant).layer_bytes[:cpu_layers])
        active = llama_cpp.active_params(llama_cpp._parts(req))
        attention = 80 * (2 * 64 * 256) * 4352
        share = PREFILL_CALIBRATION.class_efficiency["cuda/NVIDIA Ampere"]  # both Ampere workstation cards
        compute = share * tflops * 1e12 / (2 * active + attention)
        assert fit.prefill.tokens_per_second == round(_streamed(compute, moved, link), 1)
        assert (fit.pcie_gbs, fit.pcie_assumed) == (31.5, assumed)


def test_prefill_with_weights_in_ram_is_slower_than_with_every_layer_on_the_gpu() -> None:
    """Llama 3.3 70B Q4_K_M at 8,192 tokens: on one RTX 4090 half its layers stay on the CPU; on two the layers split
    and a micro-batch runs through one GPU's throughput at a time, with nothing to copy (no link to assume)."""
    catalog = load_catalog()
    one = Request(model=catalog.models["llama-3.3-70b"].ref(), context=8192, ram_bytes=64 * GIB,
                  gpus=(GpuChoice(gpu=catalog.gpus["rtx-4090"]),))  # fmt: skip
    two = Request(model=one.model, context=8192, gpus=(GpuChoice(gpu=catalog.gpus["rtx-4090"], count=2),))
    partial = fit_gpu(one, one.gpus[0], with_max_context=False)
    whole = fit_gpu(two, two.gpus[0], with_max_context=False)
    assert partial.verdict.value == "partial" and whole.verdict.value in ("fits", "tight")
    assert partial.prefill is not None and whole.prefill is not None
    assert partial.prefill.tokens_per_second < whole.prefill.tokens_per_second * 0.6  # 351 against 693
    assert (whole.pcie_gbs, whole.pcie_assumed) == (None, False)
    from vramfit.calc.speed import streamed_prefill_speed

    args = {"fp16_tflops": 165.2, "backend": "cuda", "pcie_gbs": 31.5, "geforce": True}
    speeds = [streamed_prefill_speed(8_000_000_000, moved, **args) for moved in (0, GIB, 8 * GIB, 32 * GIB)]  # type: ignore[arg-type]
    rates = [s.tokens_per_second for s in speeds if s is not None]
    assert len(rates) == 4 and rates == sorted(rates, reverse=True) and len(set(rates)) == 4
    assert rates[0] == prefill_speed(8_000_000_000, fp16_tflops=165.2, backend="cuda", geforce=True).tokens_per_second  # type: ignore[union-attr]


def test_a_chip_class_with_a_band_of_its_own_gets_it() -> None:
    """CALIBRATION.class_bands: a class's band replaces the general one for its GPUs only (calc.gpu.chip_class)."""
    from vramfit.calc.speed import DecodeCalibration

    calibration = DecodeCalibration(efficiency={"metal": 1.0}, moe_factor=1.0, host_efficiency=1.0, band=(0.8, 1.2),
                                    class_bands={"Apple Max": (0.9, 1.1)})  # fmt: skip
    read = BytesPerToken(gpu=GIB, host=0)
    args = {"gpu_bandwidth_gbs": 400, "backend": "metal", "moe": False, "calibration": calibration}
    own = decode_speed(read, chip_class="Apple Max", **args)  # type: ignore[arg-type]
    other = decode_speed(read, chip_class="Apple Pro", **args)  # type: ignore[arg-type]
    assert own is not None and other is not None and own.tokens_per_second == other.tokens_per_second
    assert own.low / own.tokens_per_second == pytest.approx(0.9, abs=1e-3)
    assert own.high / own.tokens_per_second == pytest.approx(1.1, abs=1e-3)
    assert other.low / other.tokens_per_second == pytest.approx(0.8, abs=1e-3)
    assert other.high / other.tokens_per_second == pytest.approx(1.2, abs=1e-3)


@pytest.mark.parametrize(
    ("gpu", "chip"),
    [("apple-m2-8gb", "Apple base"), ("apple-m4-pro-24gb", "Apple Pro"), ("apple-m3-ultra-96gb", "Apple Ultra"),
     ("rtx-3090", "NVIDIA Ampere"), ("rtx-4090", "NVIDIA Ada"), ("rtx-5090", "NVIDIA Blackwell"),
     ("rx-7900-xtx", "AMD RDNA3"), ("radeon-780m-32gb", "AMD RDNA3"), ("mi50-32gb", "AMD GCN/CDNA"),
     ("arc-a770-16gb", "Intel Arc")],
)  # fmt: skip
def test_chip_classes(gpu: str, chip: str) -> None:
    assert load_catalog().gpus[gpu].chip_class == chip
