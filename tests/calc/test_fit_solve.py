"""Verdicts and solvers, checked against numbers worked out by hand in the comments."""

from __future__ import annotations

import pytest

from vramfit.calc.estimate import answer, estimate, fit_gpu
from vramfit.calc.fit import Verdict, layers_that_fit, tight_margin, whole_verdict
from vramfit.calc.gpu import GIB, Gpu, Vendor
from vramfit.calc.presets import load_catalog
from vramfit.calc.request import Engine, GpuChoice, Request
from vramfit.calc.solve import best_quant, max_context, max_users, smallest_gpus

MIB = 1 << 20
CATALOG = load_catalog()


def card(memory_gib: int, **extra: object) -> GpuChoice:
    return GpuChoice(
        gpu=Gpu(id=f"test-{memory_gib}gb", name=f"{memory_gib} GB", memory_bytes=memory_gib * GIB, **extra)
    )  # type: ignore[arg-type]


def llama3_8b(**fields: object) -> Request:
    return Request(model=CATALOG.models["llama-3.1-8b"].ref(), **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("total", "usable", "verdict"),
    [
        (10 * GIB, 12 * GIB, Verdict.FITS),  # 2 GiB left ≥ max(512 MiB, 5 %)
        (12 * GIB - 600 * MIB, 12 * GIB, Verdict.TIGHT),  # 600 MiB < 5 % of 12 GiB (614.4 MiB)
        (12 * GIB, 12 * GIB, Verdict.TIGHT),  # exactly full
        (12 * GIB + 1, 12 * GIB, None),  # over: count layers
        (7 * GIB, 8 * GIB - 100 * MIB, Verdict.FITS),  # small card: the 512 MiB floor applies
        (int(7.6 * GIB), 8 * GIB, Verdict.TIGHT),
    ],
)
def test_whole_verdict_thresholds(total: int, usable: int, verdict: Verdict | None) -> None:
    assert whole_verdict(total, usable) == verdict


def test_margin() -> None:
    assert tight_margin(8 * GIB) == 512 * MIB
    assert tight_margin(80 * GIB) == 4 * GIB


def test_layers_fill_from_the_last() -> None:
    assert layers_that_fit((5, 5, 5, 1), 7) == 2  # 1 + 5 fit, the next 5 does not
    assert layers_that_fit((5, 5), 4) == 0


def test_llama3_8b_fits_a_3060_at_8k() -> None:
    # GPU weights 4,617,396,224 B: the published Q4_K_M file (4,920,733,984 B) minus its 7,835,936-byte header
    # minus token_embd in system RAM (128,256 × 4,096 Q4_K = 295,501,824 B). KV 1 GiB. Compute: llama-server b11434
    # reserves one output a slot, so the feed-forward stage is the largest: gate, up and their product 3 × 14,336
    # values a token and five hidden states (the input embeddings and four activations), 4 × 512 × (3 × 14,336 +
    # 5 × 4,096) B, beside the f16 mask 2 × 512 × 8,192 B (Llama 3.2 1B under b11434: 76.02 MiB, the same terms,
    # llamaserver_b11434.jsonl). CUDA runtime 457 MiB = 479,199,232 B.
    total = 4_617_396_224 + GIB + 4 * 512 * (3 * 14336 + 5 * 4096) + 2 * 512 * 8192 + 479_199_232
    fit = fit_gpu(llama3_8b(context=8192), GpuChoice(gpu=CATALOG.gpu("3060")))
    assert fit.total_bytes == total
    assert fit.verdict == Verdict.FITS
    assert (fit.gpu_layers, fit.layers) == (33, 33)
    assert fit.headroom_bytes == 12 * GIB - total


def test_max_context_on_a_3060() -> None:
    # Every layer stays on the GPU while total ≤ 12 GiB = 12,884,901,888 B. The feed-forward stage (121,634,816 B
    # and the f16 mask's 1,024 B a token) is the largest compute stage, so 12,884,901,888 − 4,617,396,224 −
    # 121,634,816 − 479,199,232 = 7,666,671,616 B go at 131,072 B of KV and 1,024 B of mask a token: 58,038.9
    # tokens → 57,856 (a multiple of 256). At that context the card is "tight".
    choice = GpuChoice(gpu=CATALOG.gpu("3060"))
    assert (12 * GIB - 4_617_396_224 - 4 * 512 * (3 * 14336 + 4 * 4096) - 479_199_232) // (131_072 + 1_024) == 58_038
    assert max_context(llama3_8b(), choice) == 57_856
    assert fit_gpu(llama3_8b(context=57_856), choice, with_max_context=False).verdict == Verdict.TIGHT
    assert fit_gpu(llama3_8b(context=58_112), choice, with_max_context=False).verdict == Verdict.PARTIAL


def test_partial_offload_counts_layers() -> None:
    # Llama 3.1 8B in F16 at 8k on an 8 GiB card. One layer: 218,103,808 weights × 2 B + two f32 norms
    # (32,768 B) + KV 8,192 × 1,024 × 2 × 2 B = 469,794,816 B. Beside them the GPU holds the 479,199,232 B runtime
    # and the compute buffer of a partial offload, whose largest stage is the output layer run on the GPU from the
    # CPU: a copy of the F16 output matrix (128,256 × 4,096 × 2 B = 1,050,673,152 B) and the logits and hidden
    # state of a 512-token micro-batch (4 × 512 × (4,096 + 128,256) = 266,960,896 B):
    # (8 GiB − 1,317,634,048 − 479,199,232) / 469,794,816 = 14.5 → 14 of 33 layers.
    fit = fit_gpu(llama3_8b(quant="F16"), card(8))
    assert fit.verdict == Verdict.PARTIAL
    assert (fit.gpu_layers, fit.layers) == (14, 33)
    assert fit.headroom_bytes < 0


def test_nothing_fits_a_tiny_card() -> None:
    # 512 MiB: the runtime alone (457 MiB) and the compute stage (56 MiB) leave no room for a 448 MiB layer.
    tiny = GpuChoice(gpu=Gpu(id="tiny", name="512 MB", memory_bytes=512 * MIB))
    assert fit_gpu(llama3_8b(quant="F16"), tiny).verdict == Verdict.NO


def test_best_quant_for_an_8gb_card() -> None:
    # At 8k on 8 GiB (7.5 GiB with the 512 MiB margin), beside 1 GiB of KV and ~0.70 GiB of compute and runtime:
    # Q8_0's 7.96 GiB file minus its 0.52 GiB token_embd = 7.44 GiB of GPU weights does not fit;
    # Q6_K's 6.14 GiB minus 0.40 GiB = 5.74 GiB, 7.44 GiB in all, does.
    assert best_quant(llama3_8b(), card(8)) == "Q6_K"
    # At 32k the KV cache is 4 GiB: Q4_K_M (4.58 − 0.28 = 4.30 GiB) + 4 + 0.70 = 9.0 GiB is too much, and so is
    # Q3_K_S (3.41 − 0.21 = 3.20 GiB → 7.9 GiB); Q2_K (2.96 − 0.16 = 2.80 GiB → 7.5 GiB) is the largest that fits.
    assert best_quant(llama3_8b(context=32768), card(8)) == "Q2_K"


def test_solvers_agree_with_the_estimate() -> None:
    choice = GpuChoice(gpu=CATALOG.gpu("4090"))
    request = Request(model=CATALOG.models["qwen2.5-7b"].ref(), context=8192)
    users = max_users(request, choice)
    assert users is not None and users > 1
    at_most = fit_gpu(request.model_copy(update={"users": users}), choice, with_max_context=False)
    assert at_most.verdict in (Verdict.FITS, Verdict.TIGHT)
    over = fit_gpu(request.model_copy(update={"users": users + 1}), choice, with_max_context=False)
    assert over.verdict == Verdict.PARTIAL


def test_apple_unified_memory_share() -> None:
    small = Gpu(id="m", name="M2 16GB", vendor=Vendor.APPLE, memory_bytes=16 * GIB, backend="metal")
    large = Gpu(id="m", name="M2 Max 64GB", vendor=Vendor.APPLE, memory_bytes=64 * GIB, backend="metal")
    assert small.usable_bytes == 16 * GIB * 2 // 3
    assert large.usable_bytes == 48 * GIB


def test_smallest_gpus_are_sorted_and_fit() -> None:
    fits = smallest_gpus(llama3_8b(context=32768), CATALOG.gpus.values())
    assert fits and all(f.verdict == Verdict.FITS for f in fits)
    usable = [f.usable_bytes for f in fits]
    assert usable == sorted(usable)


def test_answer_without_gpus_lists_catalog_gpus() -> None:
    result = answer(llama3_8b(), tuple(CATALOG.gpus.values()))
    assert result.fits and result.fits[0].verdict == Verdict.FITS


def test_multi_gpu_split_adds_runtime_and_compute_per_gpu() -> None:
    request = Request(model=CATALOG.models["llama-3.1-70b"].ref(), context=8192)
    one, two = estimate(request, gpu_count=1), estimate(request, gpu_count=2)
    assert two.runtime_bytes == 2 * one.runtime_bytes
    assert two.compute_bytes > one.compute_bytes
    assert fit_gpu(request, GpuChoice(gpu=CATALOG.gpu("3090"), count=2)).verdict == Verdict.FITS


def test_vllm_answer_has_a_kv_pool() -> None:
    request = Request(
        model=CATALOG.models["llama-3.1-8b"].ref(),
        quant="BF16",
        engine=Engine.VLLM,
        gpus=(GpuChoice(gpu=CATALOG.gpu("h100")),),
    )
    result = answer(request)
    assert result.estimate.vllm_kv_pool_tokens and result.estimate.vllm_kv_pool_tokens > 100_000
    assert result.fits[0].verdict == Verdict.FITS
