"""System RAM speed (calc.ram_speed): channels × 8 bytes × MT/s, and the decode of weights kept in RAM read at it."""

from __future__ import annotations

import pytest

from vramfit.calc.engines import fit_gpu, llama_cpp
from vramfit.calc.presets import load_catalog
from vramfit.calc.ram_speed import ASSUMED_RAM_SPEED, RamSpeed, typical
from vramfit.calc.request import GpuChoice, Request
from vramfit.calc.results import Fit
from vramfit.calc.speed import CALIBRATION

GIB = 1 << 30


@pytest.mark.parametrize(
    ("speed", "gbs"),
    [
        # "DDR4-3200 ... 25.6 GB/s per channel. In dual-channel configuration, the data rate increases to 51.2 GB/s"
        (RamSpeed(kind="ddr4", mts=3200), 51.2),
        (RamSpeed(kind="ddr5", mts=5600), 89.6),  # the assumed desktop: 2 × 8 B × 5600 MT/s
        (RamSpeed(kind="ddr4", mts=2933, channels=4), 93.856),  # an i9-10900X (Intel ARK: four channels, DDR4-2933)
        (RamSpeed(kind="ddr5", mts=4800, channels=12), 460.8),  # a 12-channel EPYC 9004 socket at DDR5-4800
    ],
)
def test_bandwidth_is_channels_times_8_bytes_times_the_rate(speed: RamSpeed, gbs: float) -> None:
    assert speed.bandwidth_gbs == pytest.approx(gbs)


def test_a_kind_named_without_a_rate_is_the_rate_desktops_run_it_at() -> None:
    assert typical("ddr4") == RamSpeed(kind="ddr4", mts=3200, channels=2)
    assert typical("ddr5", channels=4) == RamSpeed(kind="ddr5", mts=5600, channels=4)
    assert ASSUMED_RAM_SPEED.name == "DDR5-5600"


def _offloaded(ram_speed: RamSpeed | None) -> tuple[float, int, Fit]:
    catalog = load_catalog()
    gpus = (GpuChoice(gpu=catalog.gpus["rtx-5090"]),)
    request = Request(model=catalog.models["gpt-oss-120b"].ref(), quant="MXFP4_MOE", context=8192,
                      ram_bytes=64 * GIB, ram_speed=ram_speed, gpus=gpus)  # fmt: skip
    fit = fit_gpu(request, request.gpus[0], with_max_context=False)
    plan = fit.expert_offload
    assert plan is not None and plan.n_cpu_moe == 19 and plan.decode is not None
    read = llama_cpp.bytes_per_token(llama_cpp._parts(request), 1, cpu_expert_blocks=19)
    return plan.decode.tokens_per_second, read.host, fit


@pytest.mark.parametrize(("ram_speed", "gbs"), [(None, 89.6), (typical("ddr4"), 51.2), (typical("ddr5", 4), 179.2)])
def test_the_experts_in_ram_are_read_at_the_ram_speed_asked(ram_speed: RamSpeed | None, gbs: float) -> None:
    """gpt-oss-120b on an RTX 5090 with 64 GB, --n-cpu-moe 19: the routed experts of 19 blocks sit in RAM. A token's
    time there is their active bytes over the RAM's bandwidth at the fitted host share (MoE factor included), so
    between two RAM speeds only that term changes: 1/speed - host/(gbs × e_host) is the same GPU-side time."""
    speed, host, fit = _offloaded(ram_speed)
    e_host = CALIBRATION.host_efficiency * CALIBRATION.moe_factor
    reference, _, _ = _offloaded(RamSpeed(kind="ddr5", mts=5600))
    gpu_side = 1 / reference - host / (89.6e9 * e_host)
    assert speed == pytest.approx(1 / (gpu_side + host / (gbs * 1e9 * e_host)), rel=2e-3)  # rounding to 0.1 tok/s
    assert fit.ram_speed == (ram_speed or ASSUMED_RAM_SPEED)
    assert fit.ram_speed_assumed is (ram_speed is None)


def test_a_model_held_whole_reads_nothing_from_ram() -> None:
    catalog = load_catalog()
    request = Request(model=catalog.models["llama-3.1-8b"].ref(), ram_speed=typical("ddr4"),
                      gpus=(GpuChoice(gpu=catalog.gpus["rtx-4090"]),))  # fmt: skip
    fit = fit_gpu(request, request.gpus[0], with_max_context=False)
    assert fit.ram_speed is None and not fit.ram_speed_assumed
