"""GPU presets people benchmark that vramfit lacked (issue 29): Radeon PRO W7800 (32 and 48 GB), Apple M5, M5 Pro and
M5 Max, and the Radeon 780M, 890M and Intel Iris Xe integrated GPUs under their own names. The numbers are the
sources' (presets/gpus.toml gives each with its quote): bandwidth, FP16 throughput, memory, the share an iGPU maps."""

from __future__ import annotations

import pytest

from tests.bot.cli_json import answer as ask
from tests.groundtruth import GIB
from vramfit.calc.presets import load_catalog


@pytest.mark.parametrize(
    ("question", "lang", "gpu", "memory_gib", "bandwidth", "fp16"),
    [
        ("llama 3 8b on a w7800", "en", "radeon-pro-w7800", 32, 576, 90.5),  # 256-bit × 18 Gbps; AMD 2 × 45.2
        ("llama 3 8b on a w7800 48gb", "en", "radeon-pro-w7800-48gb", 48, 864, 90.4),
        ("라마3 8b m5 맥북에서 돌아가?", "ko", "apple-m5-16gb", 16, 153, 5.7),  # "153GB/s" (Apple)
        ("llama 3 8b on an m5 pro", "en", "apple-m5-pro-24gb", 24, 307, 11.4),
        ("llama 3 70b m5 max 128gb", "en", "apple-m5-max-128gb", 128, 614, 22.8),
        ("llama 3 8b on a radeon 780m", "en", "radeon-780m-32gb", 32, 89.6, 16.59),  # dual-channel DDR5-5600
        ("라마3 8b 890m에서 돼?", "ko", "radeon-890m-32gb", 32, 120, 23.76),  # LPDDR5X-7500, 16 CU × 512 × 2.9 GHz
        ("llama 3.2 3b on iris xe", "en", "intel-iris-xe-16gb", 16, 68.3, None),  # LPDDR4x-4267 × 128 bit; no XMX
        ("라마 3.2 3b 아이리스 xe 노트북에서 돼?", "ko", "intel-iris-xe-16gb", 16, 68.3, None),
    ],
)
def test_the_new_gpus_are_read_and_carry_their_sources_numbers(
    question: str, lang: str, gpu: str, memory_gib: int, bandwidth: float, fp16: float | None
) -> None:
    answer = ask(question, lang)
    (fit,) = answer["fits"]
    assert fit["gpu"] == gpu
    preset = load_catalog().gpus[gpu]
    figures = (preset.memory_bytes, preset.bandwidth_gbs, preset.fp16_tflops or None)
    assert figures == (memory_gib * GIB, bandwidth, fp16)
    assert preset.source.startswith("https://")


@pytest.mark.parametrize(
    ("question", "share_gib"),
    [("llama 3 8b on a radeon 780m", 16),  # amdgpu's default GTT: half of system RAM, 16 of 32 GB
     ("llama 3 8b on iris xe", 8)],  # Windows' limit for Intel's 11th-gen graphics: half of system memory
)  # fmt: skip
def test_an_igpu_may_map_half_of_the_ram(question: str, share_gib: int) -> None:
    answer = ask(question)
    assert answer["fits"][0]["usable_bytes"] <= share_gib * GIB < answer["fits"][0]["memory_bytes"]
