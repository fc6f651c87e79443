"""Attention FLOPs of a prompt (calc.attention_flops), worked out by hand from each model's config.json.

Per attention layer a token spends 2 * n_head * (head_dim_k + head_dim_v) FLOPs on each KV cell its micro-batch reads
(llama.cpp's ``n_kv``: the cells up to the micro-batch's last token); sliding-window layers read at most the window
plus one micro-batch.
"""

from __future__ import annotations

import pytest

from vramfit.calc.attention_flops import attention_flops_per_token, layer_cells
from vramfit.calc.engines import fit_gpu
from vramfit.calc.presets import load_catalog
from vramfit.calc.request import GpuChoice, Request

# Llama 3.1 8B: 32 layers, 32 query heads of 128 (hidden 4096 / 32) -> 2 * 32 * 256 = 16,384 FLOPs a cell and layer.
LLAMA_ROW = 2 * 32 * (128 + 128)
# Gemma 3 27B: 62 layers, every sixth global (sliding_window_pattern 6: layers 5, 11, ..., 59), window 1024,
# 32 heads of head_dim 128.
GEMMA_ROW = 2 * 32 * (128 + 128)
# gpt-oss-120b: 36 layers alternating a 128-token window and full attention, 64 heads of 64.
GPT_OSS_ROW = 2 * 64 * (64 + 64)
# Qwen3-Next-80B-A3B: 48 layers, every fourth full attention (12), 16 heads of 256; the other 36 are Gated DeltaNet.
QWEN_NEXT_ROW = 2 * 16 * (256 + 256)

CASES = [
    # model, prompt, depth, expected FLOPs per token
    ("llama-3.1-8b", 512, 0, 32 * LLAMA_ROW * 512),
    # two micro-batches: 512 tokens read 512 cells, 512 read 1,024
    ("llama-3.1-8b", 1024, 0, 32 * LLAMA_ROW * (512 + 1024) / 2),
    # a short last micro-batch: 512 tokens read 512 cells, 100 read 612
    ("llama-3.1-8b", 612, 0, 32 * LLAMA_ROW * (512 * 512 + 100 * 612) / 612),
    # llama-bench pp512 @ d32768: every token reads 32,768 + 512 cells
    ("llama-3.1-8b", 512, 32768, 32 * LLAMA_ROW * 33280),
    ("gemma-3-27b", 512, 32768, GEMMA_ROW * (10 * 33280 + 52 * (1024 + 512))),
    # below the window the sliding layers read every cell too
    ("gemma-3-27b", 512, 0, GEMMA_ROW * 62 * 512),
    ("gpt-oss-120b", 512, 4096, GPT_OSS_ROW * (18 * 4608 + 18 * (128 + 512))),
    ("qwen3-next-80b-a3b", 512, 8192, QWEN_NEXT_ROW * 12 * 8704),
]


@pytest.mark.parametrize(("model", "prompt", "depth", "expected"), CASES)
def test_attention_flops_per_prompt_token(model: str, prompt: int, depth: int, expected: float) -> None:
    arch = load_catalog().models[model].architecture
    assert attention_flops_per_token(arch, prompt, depth=depth) == pytest.approx(expected, rel=1e-12)


def test_deepseek_v4_layers_read_their_window_and_compressed_rows() -> None:
    """DeepSeek V4 Flash (config.json compress_ratios): every layer slides over 128 tokens; a ratio-4 layer adds one
    compressed row per 4 tokens, a ratio-128 layer one per 128, a ratio-0 layer none."""
    arch = load_catalog().models["deepseek-v4-flash"].architecture
    ratios = arch.compress_ratios
    n_kv = 8192
    assert layer_cells(arch, ratios.index(0), n_kv, 512) == 128 + 512
    assert layer_cells(arch, ratios.index(4), n_kv, 512) == 128 + 512 + 8192 // 4
    assert layer_cells(arch, ratios.index(128), n_kv, 512) == 128 + 512 + 8192 // 128
    # one micro-batch at the start of the cache: the window is the 512 cells there are, plus ceil(512 / ratio) rows
    assert layer_cells(arch, ratios.index(128), 512, 512) == 512 + 4


def test_a_long_prompt_is_read_slower_than_a_short_one() -> None:
    """The answer's prefill is averaged over the prompt asked for: Llama 3.1 8B on an RTX 4090 at 32K against 512.
    The weights cost 2 FLOPs a parameter (8.03 B parameters); at 32K the attention adds 32 * 16,384 * 16,640 (the
    mean cells over 64 micro-batches, (512 + 32768) / 2) per token, so the rate falls by that share."""
    catalog = load_catalog()

    def prefill(context: int) -> float:
        request = Request(
            model=catalog.models["llama-3.1-8b"].ref(),
            context=context,
            gpus=(GpuChoice(gpu=catalog.gpus["rtx-4090"]),),
        )
        fit = fit_gpu(request, request.gpus[0])
        assert fit.prefill is not None
        return fit.prefill.tokens_per_second

    params = 8_030_261_248
    short = 2 * params + 32 * LLAMA_ROW * 512
    long = 2 * params + 32 * LLAMA_ROW * (512 + 32768) / 2
    assert prefill(32768) / prefill(512) == pytest.approx(short / long, rel=0.01)
