"""llama-server's --fit for the plain `llama-server -m MODEL` (calc/fit_params.py, common/fit.cpp at b11434)."""

from __future__ import annotations

import pytest

from vramfit.calc.estimate import fit_gpu
from vramfit.calc.fit_params import FIT_TARGET_BYTES, fitted_context
from vramfit.calc.presets import load_catalog
from vramfit.calc.request import GpuChoice, Request

MIB = 1 << 20
GIB = 1 << 30
CATALOG = load_catalog()


@pytest.mark.parametrize(
    ("total_at_max", "total_at_min", "usable", "context_max", "expected"),
    [
        # halfway between the projections: 4,096 + 126,976 / 2 = 67,584, a multiple of 256
        (10 * GIB, 6 * GIB, 9 * GIB, 131072, 67584),
        # a third of the way: 4,096 + 36,864 / 3 = 16,384; 0.7 of 3 GiB: 4,096 + 36,864 × 0.7 / 3 = 12,697, rounded
        # down to a multiple of 256: 12,544
        (9 * GIB, 6 * GIB, 8 * GIB, 40960, 16384),
        (10 * GIB, 7 * GIB, 9 * GIB - 3 * GIB // 10, 40960, 12544),
        # tools/fit-params/README.md at b11434: Qwen3 30B-A3B F16 on a 4090, 61,807 MiB projected against 24,077 free;
        # at 4,096 tokens 3,456 MiB less, still over the 23,053 the target allows: the context alone cannot do it
        (61807 * MIB, (61807 - 3456) * MIB, 24077 * MIB, 40960, None),
    ],
)
def test_the_context_is_interpolated_between_the_two_projections(
    total_at_max: int, total_at_min: int, usable: int, context_max: int, expected: int | None
) -> None:
    got = fitted_context(total_at_max=total_at_max, total_at_min=total_at_min, usable=usable, context_max=context_max)
    assert got == expected


def _plain(model: str, gpu: str) -> object:
    request = Request(model=CATALOG.models[model].ref(), gpus=(GpuChoice(gpu=CATALOG.gpu(gpu)),))
    return fit_gpu(request, request.gpus[0]).fit_default


def test_a_dense_model_gets_the_context_that_leaves_the_target_free() -> None:
    """Llama 3.1 8B Q4_K_M on a 12 GB 3060: its trained 131,072 tokens do not fit; --fit cuts the context so that
    1 GiB stays free, within one step of 256 tokens (KV 32 layers × 8 heads × 128 × 2 × 2 B = 128 KiB a token, and
    the f16 mask's 1 KiB a token)."""
    choice = _plain("llama-3.1-8b", "3060")
    assert choice is not None and choice.trained_context == 131072
    assert 4096 < choice.context < 131072 and choice.context % 256 == 0
    assert choice.gpu_layers is None and choice.n_cpu_moe is None and choice.changed
    assert choice.free_bytes is not None
    assert FIT_TARGET_BYTES <= choice.free_bytes < FIT_TARGET_BYTES + 256 * (128 * 1024 + 1024)


def test_what_fits_with_room_to_spare_is_left_as_is() -> None:
    choice = _plain("qwen3-8b", "4090")
    assert choice is not None and not choice.changed and choice.context == choice.trained_context == 40960
    assert choice.free_bytes is not None and choice.free_bytes >= FIT_TARGET_BYTES


def test_past_the_smallest_context_it_moves_layers_or_experts() -> None:
    dense = _plain("llama-3.3-70b", "4090")
    assert dense is not None and dense.context == 4096 and dense.gpu_layers is not None
    assert 0 < dense.gpu_layers < 80 and dense.n_cpu_moe is None
    moe = _plain("gpt-oss-20b", "4060")
    assert moe is not None and moe.context == 4096 and moe.gpu_layers is None
    assert moe.n_cpu_moe is not None and 0 < moe.n_cpu_moe < 24


def test_several_gpus_and_ollama_get_no_fit_line() -> None:
    model = CATALOG.models["llama-3.1-8b"].ref()
    two = Request(model=model, gpus=(GpuChoice(gpu=CATALOG.gpu("3060"), count=2),))
    assert fit_gpu(two, two.gpus[0]).fit_default is None
    ollama = Request(model=model, runner="ollama", gpus=(GpuChoice(gpu=CATALOG.gpu("3060")),))
    assert fit_gpu(ollama, ollama.gpus[0]).fit_default is None
    quick = Request(model=model, gpus=(GpuChoice(gpu=CATALOG.gpu("3060")),))
    assert fit_gpu(quick, quick.gpus[0], with_max_context=False).fit_default is None
