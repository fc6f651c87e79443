"""GPU presets people benchmark that vramfit lacked (issue 29): Radeon PRO W7800 (32 and 48 GB), Apple M5, M5 Pro and
M5 Max, and the Radeon 780M and 890M integrated GPUs under their own names. The numbers are the sources' (presets/
gpus.toml gives each with its quote): bandwidth, FP16 throughput, memory, the share an APU's GPU may map."""

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
    ],
)
def test_the_new_gpus_are_read_and_carry_their_sources_numbers(
    question: str, lang: str, gpu: str, memory_gib: int, bandwidth: float, fp16: float
) -> None:
    answer = ask(question, lang)
    (fit,) = answer["fits"]
    assert fit["gpu"] == gpu
    preset = load_catalog().gpus[gpu]
    assert (preset.memory_bytes, preset.bandwidth_gbs, preset.fp16_tflops) == (memory_gib * GIB, bandwidth, fp16)
    assert preset.source.startswith("https://")


def test_an_apus_gpu_may_map_half_of_the_ram() -> None:
    """amdgpu's default GTT: half of system RAM, 16 of the 780M machine's 32 GB."""
    answer = ask("llama 3 8b on a radeon 780m")
    assert answer["fits"][0]["usable_bytes"] <= 16 * GIB < answer["fits"][0]["memory_bytes"]
