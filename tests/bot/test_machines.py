"""Machines people name instead of a GPU: a Mac by its product and memory ("mac studio 512gb", "맥미니 64기가"), the
unified-memory boxes of 2025-26 (DGX Spark, Jetson AGX Thor, Strix Halo). Expected chips come from Apple's spec
pages (which chip a product came with at which memory), usable memory from Apple's Metal share (three quarters
above 36 GB), AMD's 96 GB Variable Graphics Memory and the 121.69 GiB CUDA reports on a DGX Spark."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from tests.bot.cli_json import answer as ask
from tests.groundtruth import GIB
from vramfit.bot.cli import run


def _error(question: str) -> dict[str, Any]:
    out = io.StringIO()
    assert run(["--json", question], out) != 0
    error: dict[str, Any] = json.loads(out.getvalue())["error"]
    return error


@pytest.mark.parametrize(
    ("question", "lang", "gpu_id"),
    [
        # Mac Studio (2025) came with M3 Ultra at 96/256/512 GB and M4 Max at 36/48/64/128 GB.
        ("mac studio 512gb deepseek r1", "en", "apple-m3-ultra-512gb"),
        ("맥스튜디오 512기가 딥시크 r1 돌아가?", "ko", "apple-m3-ultra-512gb"),
        ("맥 스튜디오 256gb qwen3 235b", "ko", "apple-m3-ultra-256gb"),
        ("mac studio 96gb llama 3.3 70b", "en", "apple-m3-ultra-96gb"),
        ("mac studio 128gb llama 3.3 70b", "en", "apple-m4-max-128gb"),
        ("mac studio 192gb llama 3.1 405b", "en", "apple-m2-ultra-192gb"),  # only the 2023 M2 Ultra had 192 GB
        # Mac mini (2024): M4 at 16/24/32 GB, M4 Pro at 24/48/64 GB.
        ("mac mini 64gb qwen3 32b", "en", "apple-m4-pro-64gb"),
        ("맥미니 16기가 qwen3 8b", "ko", "apple-m4-16gb"),
        ("mac mini 48gb qwen3 32b", "en", "apple-m4-pro-48gb"),
        # MacBook Pro (2024): only the M4 Max came with 64 or 128 GB; a screen size is not memory.
        ('macbook pro 16" 128gb llama 3.3 70b', "en", "apple-m4-max-128gb"),
        ("맥북 프로 64기가 qwen3 32b", "ko", "apple-m4-max-64gb"),
        ("mbp 36gb qwen3 14b", "en", "apple-m4-max-36gb"),
        ("macbook pro 18gb qwen3 8b", "en", "apple-m3-pro-18gb"),  # 18 GB: the M3 Pro of 2023 only
        ("맥북에어 16기가 qwen3 8b", "ko", "apple-m4-16gb"),
        ("imac 8gb llama 3.2 3b", "en", "apple-m3-8gb"),  # the M4 iMac starts at 16 GB
        ("mac pro 192gb llama 3.1 405b", "en", "apple-m2-ultra-192gb"),
    ],
)
def test_a_mac_named_by_product_and_memory_is_the_chip_it_came_with(question: str, lang: str, gpu_id: str) -> None:
    answer = ask(question, lang)
    assert answer["fits"][0]["gpu"] == gpu_id
    assert "gpu_chip" in answer["request"]["assumed"]
    assert "gpu_generic" not in answer["request"]["assumed"]


def test_a_chip_named_is_read_as_named_and_not_assumed() -> None:
    answer = ask("mac studio m3 ultra 512gb deepseek r1")
    assert answer["fits"][0]["gpu"] == "apple-m3-ultra-512gb"
    assert "gpu_chip" not in answer["request"]["assumed"]


def test_mac_studio_m3_ultra_512gb_runs_deepseek_r1_with_metal_s_share() -> None:
    answer = ask("mac studio m3 ultra 512gb deepseek r1")
    fit = answer["fits"][0]
    # macOS wires three quarters of a Mac above 36 GB for Metal: 384 GiB of 512.
    assert fit["usable_bytes"] == 512 * GIB * 3 // 4 == 384 * GIB
    # DeepSeek-R1's MLA cache (config.json: 61 layers, kv_lora_rank 512, qk_rope_head_dim 64): one latent and one
    # rope key per token and layer, f16, at the default 8,192 tokens.
    assert answer["estimate"]["kv_cache_bytes"] == 61 * 8192 * (512 + 64) * 2
    assert fit["verdict"] in ("fits", "tight")


def test_a_size_the_mac_never_came_with_is_an_error_with_the_sizes_it_did() -> None:
    error = _error("mac studio 100gb llama 3 8b")
    assert error["code"] == "unknown_gpu"
    assert error["suggestions"][0] == "apple-m3-ultra-96gb"  # the nearest size a Mac Studio came with


def test_ryzen_ai_max_395_128gb_gives_llama_33_70b_its_96_gb_share() -> None:
    answer = ask("Ryzen AI Max+ 395 128gb llama 3.3 70b")
    fit = answer["fits"][0]
    assert (fit["gpu"], fit["usable_bytes"]) == ("ryzen-ai-max-395-128gb", 96 * GIB)
    # Llama 3.3 70B (config.json: 80 layers, 8 KV heads of 128): K and V in f16 at 8,192 tokens = 2.5 GiB.
    assert answer["estimate"]["kv_cache_bytes"] == 80 * 8192 * 2 * 8 * 128 * 2 == int(2.5 * GIB)
    assert fit["verdict"] == "fits"


@pytest.mark.parametrize(
    ("question", "gpu_id", "usable"),
    [
        ("DGX Spark gpt-oss 120b", "dgx-spark", int(121.69 * GIB)),  # what CUDA reports on a GB10
        ("디지엑스 스파크 qwen3 32b 32k", "dgx-spark", int(121.69 * GIB)),
        ("jetson agx thor llama 3.1 8b", "jetson-agx-thor", 128 * GIB),
    ],
)
def test_unified_memory_boxes(question: str, gpu_id: str, usable: int) -> None:
    fit = ask(question, "ko" if "스파크" in question else "en")["fits"][0]
    assert (fit["gpu"], fit["usable_bytes"]) == (gpu_id, usable)


def _card(question: str) -> str:
    out = io.StringIO()
    assert run(["--lang", "en", question], out) == 0
    return out.getvalue()


def test_the_sysctl_advice_appears_only_where_it_raises_the_limit() -> None:
    # 64 GB: Metal's 48 GiB, and leaving macOS 8 GiB gives 56 GiB = 57,344 MiB.
    assert "iogpu.wired_limit_mb=57344" in _card("mac mini 64gb qwen3 32b")
    # 16 GB: Metal already gives two thirds (10.7 GiB), more than 16 - 8 GiB; no advice that would lower it.
    card = _card("macbook air 16gb qwen3 8b")
    assert "10.7 GiB of this Mac's 16.0 GiB" in card
    assert "wired_limit_mb" not in card
