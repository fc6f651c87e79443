"""Every intent, table-driven, in Korean and English: the parser's intent and the answer's numbers.

Questions go through ``bot.parser.parse`` and ``bot.answering.resolve.resolve`` (what the CLI and the bot do), and
through the CLI's JSON contract. Expected numbers are computed here, independently of the code under test:

* KV cache per token from the config.json numbers written below: ``2 × layers × kv_heads × head_dim × bytes``
  (f16 2 bytes, q8_0 34 bytes per 32 values); sliding-window layers hold ``pad256(min(n_ctx, window × users + 512))``
  cells (the rule in the README), the other layers ``pad256(context × users)``.
* Verdicts and "fits with room to spare" from a total against the GPU memory written below, with the tight margin
  ``max(512 MiB, 5 %)`` (calc/fit.py's documented rule).
* Solvers from the hand formula: the largest context is what the memory left after weights, compute and runtime
  holds at KV-per-token, in steps of 256, capped at the training context; the most users likewise per user; the
  best quant is the first rung of the ladder, most faithful first, whose total fits with the margin. Each is also
  checked at the boundary (the answer fits, one step more does not) with totals from the estimate's components,
  never by calling the solver again.
* What fits: every preset model's best rung (as above), ranked by parameters, two per family, ten at most.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest

from tests.bot.cli_json import run_json
from vramfit.bot.answering.resolve import CompareResult, FitResult, SolveResult, WhatFitsResult, resolve
from vramfit.bot.parser import parse
from vramfit.calc.estimate import estimate
from vramfit.calc.gpu import generic_gpu
from vramfit.calc.presets import Catalog, load_catalog
from vramfit.calc.request import Engine, GpuChoice, KvType, Request
from vramfit.calc.results import Estimate

GIB = 1 << 30
MIB = 1 << 20
UBATCH = 512


@dataclass(frozen=True)
class Arch:
    """config.json numbers (presets/models.toml): layers, KV heads, head size, training context, sliding window
    (tokens; 0: none) and how many layers use it, vocabulary."""

    name: str
    layers: int
    kv_heads: int
    head_dim: int
    context_length: int
    window: int = 0
    swa_layers: int = 0
    vocab: int = 0


ARCH: dict[str, Arch] = {
    "llama-3-8b": Arch("Llama 3 8B", 32, 8, 128, 8192, vocab=128256),
    "llama-3.1-8b": Arch("Llama 3.1 8B", 32, 8, 128, 131072, vocab=128256),
    "llama-3.1-70b": Arch("Llama 3.1 70B", 80, 8, 128, 131072),
    "llama-3.3-70b": Arch("Llama 3.3 70B", 80, 8, 128, 131072),
    "gemma-2-9b": Arch("Gemma 2 9B", 42, 8, 256, 8192, window=4096, swa_layers=21),
    "gemma-2-27b": Arch("Gemma 2 27B", 46, 16, 128, 8192, window=4096, swa_layers=23),
    "gemma-3-12b": Arch("Gemma 3 12B", 48, 8, 256, 131072, window=1024, swa_layers=40),
    "qwen2.5-7b": Arch("Qwen2.5 7B", 28, 4, 128, 32768, vocab=152064),
    "qwen2.5-14b": Arch("Qwen2.5 14B", 48, 8, 128, 32768),
    "qwen2.5-32b": Arch("Qwen2.5 32B", 64, 8, 128, 32768),
    "qwen3-8b": Arch("Qwen3 8B", 36, 8, 128, 40960, vocab=151936),
    "qwen3-14b": Arch("Qwen3 14B", 40, 8, 128, 40960),
    "qwen3-32b": Arch("Qwen3 32B", 64, 8, 128, 40960),
    "mistral-7b-v0.3": Arch("Mistral 7B v0.3", 32, 8, 128, 32768, vocab=32768),
    "mistral-nemo-12b": Arch("Mistral Nemo 12B", 40, 8, 128, 1024000),
    "phi-4": Arch("Phi-4", 40, 10, 128, 16384),
    "exaone-3.5-7.8b": Arch("EXAONE 3.5 7.8B", 32, 8, 128, 32768),
    "deepseek-r1-distill-qwen-7b": Arch("DeepSeek-R1-Distill-Qwen 7B", 28, 4, 128, 131072),
}

# Memory of one device, from the spec sheets (presets/gpus.toml); Apple: the ⅔ of unified memory Metal may wire.
GPU_MEMORY: dict[str, int] = {
    "rtx-3060-12gb": 12 * GIB,
    "rtx-3070": 8 * GIB,
    "rtx-3080-10gb": 10 * GIB,
    "rtx-3090": 24 * GIB,
    "rtx-4060": 8 * GIB,
    "rtx-4060-ti-16gb": 16 * GIB,
    "rtx-4070": 12 * GIB,
    "rtx-4070-ti-super": 16 * GIB,
    "rtx-4080": 16 * GIB,
    "rtx-4090": 24 * GIB,
    "a100-80gb": 80 * GIB,
    "h100-sxm": 80 * GIB,
    "generic-24gb": 24 * GIB,
    "apple-m2-16gb": 16 * GIB,
}
USABLE_SHARE = {"apple-m2-16gb": (2, 3)}

KV_BYTES_PER_VALUE = {"f16": (2, 1), "q8_0": (34, 32)}  # (bytes, per values)

# Weight formats, most faithful first: the best-quant ladder, and the what-fits ladder (Q3_K_M at the bottom).
QUANT_LADDER = ("F16", "Q8_0", "Q6_K", "Q5_K_M", "Q5_K_S", "Q4_K_M", "Q4_K_S", "IQ4_XS", "Q3_K_L", "Q3_K_M", "Q3_K_S",
                "Q2_K")  # fmt: skip
WHAT_FITS_LADDER = ("F16", "Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q3_K_M")
PER_FAMILY, LIST_LIMIT = 2, 10


@dataclass(frozen=True)
class Row:
    q: str
    model: str | None = None
    gpu: str | None = None
    count: int = 1
    context: int = 8192
    users: int = 1
    quant: str = "Q4_K_M"
    kv: str = "f16"
    other: str | None = None  # compare: the second model; what fits: the family's id prefix

    @property
    def lang(self) -> str:
        return "ko" if re.search("[가-힣]", self.q) else "en"


# -- the tables -------------------------------------------------------------------------------------------------------

FIT = [
    Row("llama3-8b 32k 3060", "llama-3-8b", "rtx-3060-12gb", context=32768),
    Row("will llama 3.1 8b run on my 3060?", "llama-3.1-8b", "rtx-3060-12gb"),
    Row("qwen2.5 14b q8 on a 4090", "qwen2.5-14b", "rtx-4090", quant="Q8_0"),
    Row("can I run mistral 7b on an rtx 3070 with 16k context", "mistral-7b-v0.3", "rtx-3070", context=16384),
    Row("gemma 2 9b q4_k_m 8192 ctx on a 4060 ti 16gb", "gemma-2-9b", "rtx-4060-ti-16gb"),
    Row("does qwen3 32b fit on two 3090s at 32k", "qwen3-32b", "rtx-3090", 2, context=32768),
    Row("phi-4 on a 4080 with q8_0 kv cache", "phi-4", "rtx-4080", kv="q8_0"),
    Row("llama 3.3 70b q4 on an h100", "llama-3.3-70b", "h100-sxm"),
    Row("라마3 8B 32k 3060에서 돌아가?", "llama-3-8b", "rtx-3060-12gb", context=32768),
    Row("큐웬2.5 14b q8로 4090에서 될까?", "qwen2.5-14b", "rtx-4090", quant="Q8_0"),
    Row("젬마2 9b 3060에서 돌릴 수 있어?", "gemma-2-9b", "rtx-3060-12gb"),
    Row("미스트랄 7b 16k 컨텍스트 3070 가능?", "mistral-7b-v0.3", "rtx-3070", context=16384),
    Row("qwen3 32b 3090 두 장으로 32k 돌아가나요?", "qwen3-32b", "rtx-3090", 2, context=32768),
    Row("라마 3.1 8b 4060 8기가에서 실행돼?", "llama-3.1-8b", "rtx-4060"),
    Row("엑사원 3.5 7.8b 4070에서 돌아갈까", "exaone-3.5-7.8b", "rtx-4070"),
    Row("phi-4 4080에서 kv 캐시 q8_0으로 돌려도 돼?", "phi-4", "rtx-4080", kv="q8_0"),
]

WHAT_FITS = [
    Row("what can I run on a 3060 at 32k", gpu="rtx-3060-12gb", context=32768),
    Row("what can I run on a 4090?", gpu="rtx-4090"),
    Row("which models fit on a 3090", gpu="rtx-3090"),
    Row("what fits in 24gb of vram", gpu="generic-24gb"),
    Row("best model for a 4060 ti 16gb", gpu="rtx-4060-ti-16gb"),
    Row("what models can I run on an rtx 3080 at 16k", gpu="rtx-3080-10gb", context=16384),
    Row("biggest model that fits a 4070 with 8k context", gpu="rtx-4070"),
    Row("which qwen models fit on a 3060", gpu="rtx-3060-12gb", other="qwen"),
    Row("what llms can i run on 2x 3090", gpu="rtx-3090", count=2),
    Row("4090으로 돌릴 수 있는 제일 큰 모델?", gpu="rtx-4090"),
    Row("M2 맥북 16기가에서 쓸만한 모델 추천", gpu="apple-m2-16gb"),
    Row("3060에서 뭐 돌릴 수 있어?", gpu="rtx-3060-12gb"),
    Row("3090으로 돌릴 수 있는 모델 추천해줘", gpu="rtx-3090"),
    Row("4060 8기가로 32k 컨텍스트 쓸 수 있는 모델?", gpu="rtx-4060", context=32768),
    Row("3080에서 어떤 모델 돌아가?", gpu="rtx-3080-10gb"),
    Row("24기가 그래픽카드에 맞는 제일 큰 모델", gpu="generic-24gb"),
    Row("4070 12기가로 돌릴 수 있는 모델 뭐야", gpu="rtx-4070"),
    Row("qwen 모델 중 3060에 맞는 거", gpu="rtx-3060-12gb", other="qwen"),
]

COMPARE = [
    Row("llama3 8b vs gemma2 9b at 8k", "llama-3-8b", other="gemma-2-9b"),
    Row("compare qwen2.5 7b and llama 3.1 8b", "qwen2.5-7b", other="llama-3.1-8b"),
    Row("mistral 7b vs qwen2.5 7b 32k", "mistral-7b-v0.3", other="qwen2.5-7b", context=32768),
    Row("gemma 2 27b vs qwen2.5 32b on a 4090", "gemma-2-27b", "rtx-4090", other="qwen2.5-32b"),
    Row("llama 3.1 8b versus qwen3 8b at 16k", "llama-3.1-8b", other="qwen3-8b", context=16384),
    Row("phi-4 or qwen2.5 14b q8", "phi-4", other="qwen2.5-14b", quant="Q8_0"),
    Row("compare gemma 3 12b with mistral nemo 12b", "gemma-3-12b", other="mistral-nemo-12b"),
    Row("deepseek-r1-distill-qwen-7b vs llama 3.1 8b", "deepseek-r1-distill-qwen-7b", other="llama-3.1-8b"),
    Row("라마3 8B랑 젬마2 9B 비교", "llama-3-8b", other="gemma-2-9b"),
    Row("큐웬2.5 7b랑 라마3.1 8b 비교해줘", "qwen2.5-7b", other="llama-3.1-8b"),
    Row("미스트랄 7b vs 큐웬2.5 7b 32k 비교", "mistral-7b-v0.3", other="qwen2.5-7b", context=32768),
    Row("젬마2 27b하고 큐웬2.5 32b 4090에서 비교", "gemma-2-27b", "rtx-4090", other="qwen2.5-32b"),
    Row("라마3.1 8b랑 qwen3 8b 16k 비교", "llama-3.1-8b", other="qwen3-8b", context=16384),
    Row("phi-4랑 큐웬2.5 14b 뭐가 나아?", "phi-4", other="qwen2.5-14b"),
    Row("젬마3 12b랑 미스트랄 네모 12b 비교", "gemma-3-12b", other="mistral-nemo-12b"),
    Row("엑사원 3.5 7.8b vs 라마3.1 8b", "exaone-3.5-7.8b", other="llama-3.1-8b"),
]

MAX_CONTEXT = [
    Row("how much context can llama 3.1 8b take on a 3060?", "llama-3.1-8b", "rtx-3060-12gb"),
    Row("max context for qwen2.5 14b on a 4090", "qwen2.5-14b", "rtx-4090"),
    Row("how long a context can mistral 7b handle on a 3080", "mistral-7b-v0.3", "rtx-3080-10gb"),
    Row("largest context for llama 3.1 70b q4 on two 3090s", "llama-3.1-70b", "rtx-3090", 2),
    Row("what's the maximum context for qwen3 8b on a 4060 ti 16gb", "qwen3-8b", "rtx-4060-ti-16gb"),
    Row("how many tokens of context fit for phi-4 on a 3090", "phi-4", "rtx-3090"),
    Row("max ctx llama 3.1 8b q8 4090", "llama-3.1-8b", "rtx-4090", quant="Q8_0"),
    Row("longest context for qwen2.5 7b on a 3060 with q8_0 kv", "qwen2.5-7b", "rtx-3060-12gb", kv="q8_0"),
    Row("3060에서 라마3.1 8b 컨텍스트 최대 얼마까지 돼?", "llama-3.1-8b", "rtx-3060-12gb"),
    Row("4090에서 큐웬2.5 14b 최대 컨텍스트는?", "qwen2.5-14b", "rtx-4090"),
    Row("3080으로 미스트랄 7b 몇 k까지 돼?", "mistral-7b-v0.3", "rtx-3080-10gb"),
    Row("3090 두 장으로 라마3.1 70b 컨텍스트 최대 몇 토큰?", "llama-3.1-70b", "rtx-3090", 2),
    Row("4060ti 16기가에서 qwen3 8b 컨텍스트 길이 최대", "qwen3-8b", "rtx-4060-ti-16gb"),
    Row("phi-4 3090에서 최대 몇 토큰까지 가능?", "phi-4", "rtx-3090"),
    Row("라마3.1 8b q8 4090 최대 컨텍스트", "llama-3.1-8b", "rtx-4090", quant="Q8_0"),
    Row("큐웬2.5 7b 3060 kv 캐시 q8_0으로 컨텍스트 얼마까지?", "qwen2.5-7b", "rtx-3060-12gb", kv="q8_0"),
]

MAX_USERS = [
    Row("how many users can qwen2.5 14b serve on a 3090?", "qwen2.5-14b", "rtx-3090"),
    Row("how many concurrent users for llama 3.1 8b on a 4090 at 8k", "llama-3.1-8b", "rtx-4090"),
    Row("max users for mistral 7b on an a100 80gb at 32k", "mistral-7b-v0.3", "a100-80gb", context=32768),
    Row("how many parallel requests can qwen3 8b handle on a 3090 at 16k", "qwen3-8b", "rtx-3090", context=16384),
    Row("how many people can use llama 3.1 8b q8 on a 4090 at once", "llama-3.1-8b", "rtx-4090", quant="Q8_0"),
    Row("max concurrent users qwen2.5 7b on an h100 at 32k", "qwen2.5-7b", "h100-sxm", context=32768),
    Row("how many sessions can gemma 2 9b handle on a 4090", "gemma-2-9b", "rtx-4090"),
    Row("how many users can llama 3.3 70b serve on two h100s at 8k", "llama-3.3-70b", "h100-sxm", 2),
    Row("3090에서 qwen2.5 14b 동시 사용자 몇 명까지?", "qwen2.5-14b", "rtx-3090"),
    Row("4090에서 라마3.1 8b 8k로 몇 명까지 동시에 쓸 수 있어?", "llama-3.1-8b", "rtx-4090"),
    Row("a100 80기가로 미스트랄 7b 32k 최대 동시 사용자", "mistral-7b-v0.3", "a100-80gb", context=32768),
    Row("3090에서 qwen3 8b 16k 동시 접속 몇 명?", "qwen3-8b", "rtx-3090", context=16384),
    Row("4090으로 라마3.1 8b q8 몇 명이 같이 쓸 수 있어?", "llama-3.1-8b", "rtx-4090", quant="Q8_0"),
    Row("h100에서 큐웬2.5 7b 32k 최대 사용자 수", "qwen2.5-7b", "h100-sxm", context=32768),
    Row("젬마2 9b 4090 동시 사용자 몇명", "gemma-2-9b", "rtx-4090"),
    Row("h100 두 장으로 라마3.3 70b 8k 동시 사용자 몇 명까지?", "llama-3.3-70b", "h100-sxm", 2),
]

BEST_QUANT = [
    Row("which quant for gemma 2 27b on a 4090 at 16k?", "gemma-2-27b", "rtx-4090", context=16384),
    Row("what quant should I use for qwen2.5 32b on a 3090", "qwen2.5-32b", "rtx-3090"),
    Row("best quant for llama 3.1 70b on two 3090s", "llama-3.1-70b", "rtx-3090", 2),
    Row("which quantization for mistral nemo 12b on a 3060 at 32k", "mistral-nemo-12b", "rtx-3060-12gb", context=32768),
    Row("highest quant of qwen2.5 14b that fits a 4070 ti super", "qwen2.5-14b", "rtx-4070-ti-super"),
    Row("what bits for llama 3.1 8b on a 4060 8gb at 16k", "llama-3.1-8b", "rtx-4060", context=16384),
    Row("which quant of phi-4 fits a 3080 10gb", "phi-4", "rtx-3080-10gb"),
    Row("recommended quant for qwen3 14b on a 4080 at 32k", "qwen3-14b", "rtx-4080", context=32768),
    Row("4090에서 젬마2 27b 16k면 어떤 양자화?", "gemma-2-27b", "rtx-4090", context=16384),
    Row("3090으로 큐웬2.5 32b 양자화 뭐 써야 돼?", "qwen2.5-32b", "rtx-3090"),
    Row("3090 두 장에 라마3.1 70b 최적 양자화", "llama-3.1-70b", "rtx-3090", 2),
    Row("3060에서 미스트랄 네모 12b 32k 어느 양자화가 좋아?", "mistral-nemo-12b", "rtx-3060-12gb", context=32768),
    Row("4070 ti super에서 qwen2.5 14b 몇 비트까지 돼?", "qwen2.5-14b", "rtx-4070-ti-super"),
    Row("4060 8기가 라마3.1 8b 16k 양자화 추천", "llama-3.1-8b", "rtx-4060", context=16384),
    Row("3080 10기가에 phi-4 어떤 양자화로 돌려?", "phi-4", "rtx-3080-10gb"),
    Row("4080에서 qwen3 14b 32k 무슨 양자화?", "qwen3-14b", "rtx-4080", context=32768),
]

ENGINES = [
    Row("llama 3.1 8b on a 4090, llama.cpp vs vllm", "llama-3.1-8b", "rtx-4090"),
    Row("qwen2.5 7b 32k on an a100 80gb: vllm or llama.cpp?", "qwen2.5-7b", "a100-80gb", context=32768),
    Row("mistral 7b on an h100 vllm vs ollama", "mistral-7b-v0.3", "h100-sxm"),
    Row("llama 3.1 8b llama.cpp vs vllm", "llama-3.1-8b"),
    Row("qwen3 8b on a 3090 16k, vllm vs llama.cpp", "qwen3-8b", "rtx-3090", context=16384),
    Row("라마3.1 8b 4090에서 llama.cpp vs vllm", "llama-3.1-8b", "rtx-4090"),
    Row("큐웬2.5 7b 32k a100 80기가 vllm이랑 llama.cpp 비교", "qwen2.5-7b", "a100-80gb", context=32768),
    Row("미스트랄 7b h100 vllm vs 올라마", "mistral-7b-v0.3", "h100-sxm"),
    Row("qwen3 8b 3090 16k vllm하고 llama.cpp 비교", "qwen3-8b", "rtx-3090", context=16384),
    Row("라마3.1 8b llama.cpp랑 vllm 비교", "llama-3.1-8b"),
]

# How many GPUs a model needs: read as the min_gpus intent, answered with the fewest of the named card that hold it
# with the margin (test_min_gpus_is_answered); rows without a GPU check the parse only (the answer asks which GPU).
MIN_GPUS = [
    Row("how many 3090s do i need for deepseek v3", "deepseek-v3", "rtx-3090"),
    Row("deepseek v3 needs how many 4090s", "deepseek-v3", "rtx-4090"),
    Row("how many gpus for llama 3.1 405b", "llama-3.1-405b"),
    Row("how many rtx 4090 for llama 3.1 70b at 32k", "llama-3.1-70b", "rtx-4090", context=32768),
    Row("minimum number of gpus for qwen3 235b a22b", "qwen3-235b-a22b"),
    Row("how many a100 80gb cards do I need for llama 3.1 405b q8", "llama-3.1-405b", "a100-80gb", quant="Q8_0"),
    Row("how many 3090s to serve qwen2.5 72b to 8 users", "qwen2.5-72b", "rtx-3090", users=8),
    Row("딥시크 v3 돌리려면 3090 몇 장 필요해?", "deepseek-v3", "rtx-3090"),
    Row("4090 몇 개면 라마 405b 돌아가?", "llama-3.1-405b", "rtx-4090"),
    Row("h100 몇 대 있어야 딥시크 r1 돌려?", "deepseek-r1", "h100-sxm"),
    Row("그래픽카드 몇 장 있어야 라마3.1 70b 돌아가?", "llama-3.1-70b"),
    Row("라마3.1 70b 32k 3090 최소 몇 장?", "llama-3.1-70b", "rtx-3090", context=32768),
    Row("큐웬2.5 72b 4090 몇 장이면 돼?", "qwen2.5-72b", "rtx-4090"),
    Row("gpu 몇 개 있어야 큐웬3 235b a22b 돌려", "qwen3-235b-a22b"),
]
# Counts of something else are not a GPU count.
NOT_MIN_GPUS = [
    ("how many users can a 4090 serve with qwen2.5 7b", "max_users"),
    ("how many tokens of context fit for phi-4 on a 3090", "max_context"),
    ("큐웬2.5 7b 4090 동시 사용자 몇 명까지?", "max_users"),
    ("라마3.1 8b 3090 두 장", "fit"),
    ("llama 3.1 70b on two 3090s", "fit"),
]

TABLES = {
    "fit": FIT,
    "what_fits": WHAT_FITS,
    "compare": COMPARE,
    "max_context": MAX_CONTEXT,
    "max_users": MAX_USERS,
    "best_quant": BEST_QUANT,
}


def rows(table: list[Row]) -> list[Any]:
    return [pytest.param(row, id=f"{row.lang}-{i}") for i, row in enumerate(table)]


# -- independent arithmetic -------------------------------------------------------------------------------------------


def pad(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def kv_value_bytes(kv: str, values: int) -> int:
    num, per = KV_BYTES_PER_VALUE[kv]
    return values * num // per


def kv_per_token(model: str, kv: str = "f16") -> int:
    """2 (K and V) × layers × KV heads × head size × bytes per value."""
    a = ARCH[model]
    return 2 * a.layers * kv_value_bytes(kv, a.kv_heads * a.head_dim)


def kv_cache_bytes(model: str, context: int, users: int = 1, kv: str = "f16") -> int:
    a = ARCH[model]
    per_cell_layer = 2 * kv_value_bytes(kv, a.kv_heads * a.head_dim)
    full = pad(context * users, 256)
    swa = pad(min(full, a.window * users + UBATCH), 256) if a.window else full
    return per_cell_layer * ((a.layers - a.swa_layers) * full + a.swa_layers * swa)


def usable(gpu: str, count: int = 1) -> int:
    num, den = USABLE_SHARE.get(gpu, (1, 1))
    return GPU_MEMORY[gpu] * num // den * count


def margin(budget: int) -> int:
    return max(512 * MIB, budget // 20)


def expected_verdict(total: int, budget: int) -> str | None:
    """fits / tight, or None when it does not fit whole (partial or no)."""
    left = budget - total
    return "fits" if left >= margin(budget) else "tight" if left >= 0 else None


def components_total(e: Estimate) -> int:
    return e.weights_bytes + e.kv_cache_bytes + e.recurrent_state_bytes + e.compute_bytes + e.runtime_bytes


@cache
def catalog() -> Catalog:
    return load_catalog()


def choice(gpu: str, count: int = 1) -> GpuChoice:
    device = generic_gpu(int(gpu.split("-")[1].removesuffix("gb"))) if gpu.startswith("generic-") else None
    return GpuChoice(gpu=device or catalog().gpu(gpu), count=count)


def request(row: Row, **changes: Any) -> Request:
    fields: dict[str, Any] = {
        "model": catalog().model(row.model or "").ref(),
        "quant": row.quant,
        "context": row.context,
        "users": row.users,
        "kv_cache": KvType(row.kv),
        "gpus": (choice(row.gpu, row.count),) if row.gpu else (),
    }
    fields.update(changes)
    return Request(**fields)


@cache
def total_at(row: Row, **changes: Any) -> int:
    """GPU memory by the estimate's components (weights + KV + compute + runtime)."""
    return components_total(estimate(request(row, **changes)))


def check_parse(row: Row, intent: str) -> None:
    parsed = parse(row.q)
    assert parsed.intent == intent, (row.q, parsed.intent)
    assert parsed.lang == row.lang
    if intent != "what_fits":
        assert parsed.model == row.model
    if intent == "compare":
        assert parsed.compare_model == row.other
    if row.gpu:
        assert [(c.gpu.id, c.count) for c in parsed.gpus] == [(row.gpu, row.count)]
    assert (parsed.context or 8192) == row.context
    assert (parsed.quant or "Q4_K_M") == row.quant
    assert (parsed.kv_cache or KvType.F16).value == row.kv


# -- the tests --------------------------------------------------------------------------------------------------------


def test_tables_are_big_enough_and_half_korean() -> None:
    for intent, table in TABLES.items():
        en = sum(row.lang == "en" for row in table)
        ko = sum(row.lang == "ko" for row in table)
        assert en + ko >= 15 and en >= 7 and ko >= 7, intent
    every = [row for table in TABLES.values() for row in table]
    assert len(every) >= 90
    assert sum(row.lang == "ko" for row in every) * 2 >= len(every)
    for intent, table in TABLES.items():
        for row in table:
            for model in (row.model, row.other if intent == "compare" else None):
                assert model is None or model in ARCH, model
            assert row.gpu is None or row.gpu in GPU_MEMORY


def test_written_numbers_match_the_presets() -> None:
    """The config numbers above are the presets' (so a changed preset shows here, not as a wrong answer)."""
    for model, a in ARCH.items():
        arch = catalog().model(model).ref().architecture
        assert (arch.n_layers, arch.typical_kv_heads, arch.head_dim_k) == (a.layers, a.kv_heads, a.head_dim), model
        assert arch.context_length == a.context_length and arch.sliding_window == a.window, model
        assert sum(1 for s in arch.swa_layers if s) == a.swa_layers, model
        if a.vocab:
            assert arch.vocab_size == a.vocab
    for gpu, memory in GPU_MEMORY.items():
        assert choice(gpu).gpu.memory_bytes == memory, gpu


@pytest.mark.parametrize("row", rows(FIT))
def test_fit(row: Row) -> None:
    check_parse(row, "fit")
    result = resolve(parse(row.q))
    assert isinstance(result, FitResult) and not result.engines
    e = result.answer.estimate
    assert e.kv_cache_bytes == kv_cache_bytes(row.model or "", row.context, row.users, row.kv)
    assert e.total_bytes == components_total(e)
    assert row.gpu is not None
    (fit,) = result.answer.fits
    budget = usable(row.gpu, row.count)
    assert fit.usable_bytes == budget
    assert fit.headroom_bytes == budget - e.total_bytes
    whole = expected_verdict(e.total_bytes, budget)
    assert fit.verdict.value == whole if whole else fit.verdict.value in ("partial", "no")

    data = run_json(row.q)
    assert data["lang"] == row.lang and data["request"]["intent"] == "fit"
    assert data["estimate"]["kv_cache_bytes"] == e.kv_cache_bytes
    assert data["fits"][0]["verdict"] == fit.verdict.value


def expected_what_fits(row: Row) -> list[tuple[str, str]]:
    """Each preset model's most faithful rung that fits with the margin; largest first, two per family."""
    assert row.gpu is not None
    budget = usable(row.gpu, row.count)
    found: list[tuple[int, int, str, str, str]] = []
    for preset in catalog().models.values():
        if row.other and not preset.id.startswith(row.other):
            continue
        config = preset.config.get("text_config") or preset.config
        if config.get("max_position_embeddings", 4096) < row.context:
            continue  # trained for a shorter context than asked (config.json's max_position_embeddings)
        for rung, quant in enumerate(WHAT_FITS_LADDER):
            e = estimate(
                Request(model=preset.ref(), quant=quant, context=row.context, users=row.users,
                        gpus=(choice(row.gpu, row.count),))
            )  # fmt: skip
            if budget - components_total(e) >= margin(budget):
                found.append((-e.params, rung, preset.id, preset.family, quant))
                break
    chosen: list[tuple[str, str]] = []
    per_family: dict[str, int] = {}
    for _params, _rung, model, family, quant in sorted(found):
        if per_family.get(family, 0) < PER_FAMILY and len(chosen) < LIST_LIMIT:
            per_family[family] = per_family.get(family, 0) + 1
            chosen.append((model, quant))
    return chosen


@pytest.mark.parametrize("row", rows(WHAT_FITS))
def test_what_fits(row: Row) -> None:
    check_parse(row, "what_fits")
    result = resolve(parse(row.q))
    assert isinstance(result, WhatFitsResult)
    assert row.gpu is not None
    expected = expected_what_fits(row)
    assert [(m.model, m.quant) for m in result.models] == expected
    assert expected, "every GPU in the table fits something"
    budget = usable(row.gpu, row.count)
    for m in result.models:
        total = components_total(
            estimate(Request(model=catalog().model(m.model).ref(), quant=m.quant, context=row.context,
                             gpus=(choice(row.gpu, row.count),)))
        )  # fmt: skip
        assert m.fit.total_bytes == total and m.fit.headroom_bytes == budget - total
    params = [m.params for m in result.models]
    assert params == sorted(params, reverse=True)

    data = run_json(row.q)
    assert data["request"]["intent"] == "what_fits" and data["request"]["model"] is None
    assert data["request"]["context"] == row.context
    assert [(m["model"], m["quant"]) for m in data["what_fits"]] == expected


def expected_reasons(a: str, b: str) -> dict[str, tuple[int, int]]:
    x, y = ARCH[a], ARCH[b]
    out = {}
    for factor, va, vb in (("head_dim", x.head_dim, y.head_dim), ("kv_heads", x.kv_heads, y.kv_heads),
                           ("layers", x.layers, y.layers)):  # fmt: skip
        if va != vb:
            out[factor] = (va, vb)
    if bool(x.window) != bool(y.window):
        out["sliding_window"] = (x.window, y.window)
    return out


@pytest.mark.parametrize("row", rows(COMPARE))
def test_compare(row: Row) -> None:
    check_parse(row, "compare")
    result = resolve(parse(row.q))
    assert isinstance(result, CompareResult)
    a, b = row.model or "", row.other or ""
    cmp = result.comparison
    assert (cmp.kv_per_token_a, cmp.kv_per_token_b) == (kv_per_token(a), kv_per_token(b))
    assert cmp.a.kv_cache_bytes == kv_cache_bytes(a, row.context)
    assert cmp.b.kv_cache_bytes == kv_cache_bytes(b, row.context)
    assert {r.factor.value: (r.a, r.b) for r in cmp.reasons} == expected_reasons(a, b)
    assert result.a.quant == result.b.quant == row.quant
    assert result.a.context == result.b.context == row.context
    if row.gpu:
        assert cmp.fit_a is not None and cmp.fit_b is not None
        for fit, e in ((cmp.fit_a, cmp.a), (cmp.fit_b, cmp.b)):
            whole = expected_verdict(e.total_bytes, usable(row.gpu))
            assert fit.verdict.value == whole if whole else fit.verdict.value in ("partial", "no")

    data = run_json(row.q)
    assert data["request"]["intent"] == "compare"
    assert data["request"]["model"]["id"] == a and data["compare"]["request"]["model"]["id"] == b
    assert data["compare"]["kv_bytes_per_token"] == [kv_per_token(a), kv_per_token(b)]
    if row.gpu:
        assert data["fits"][0]["verdict"] == cmp.fit_a.verdict.value  # type: ignore[union-attr]
        assert data["compare"]["fits"][0]["verdict"] == cmp.fit_b.verdict.value  # type: ignore[union-attr]


@pytest.mark.parametrize("row", rows(MAX_CONTEXT))
def test_max_context(row: Row) -> None:
    check_parse(row, "max_context")
    result = resolve(parse(row.q))
    assert isinstance(result, SolveResult) and result.intent == "max_context"
    assert row.model is not None and row.gpu is not None
    value = result.value
    assert isinstance(value, int) and value % 256 == 0
    budget = usable(row.gpu, row.count)
    cap = ARCH[row.model].context_length
    per_token = kv_per_token(row.model, row.kv)
    # Hand formula: what is left after weights, compute and runtime, in whole 256-token steps of KV.
    at_value = estimate(request(row, context=value))
    fixed = at_value.total_bytes - at_value.kv_cache_bytes
    hand = min(cap, (budget - fixed) // per_token // 256 * 256)
    assert value in (hand, hand - 256)  # compute grows a little with the context, so one step less may be all
    # At the boundary, by the estimate's components: the answer fits whole, one more step does not (or the cap).
    assert at_value.kv_cache_bytes == per_token * value
    assert components_total(at_value) <= budget
    assert value == cap or total_at(row, context=value + 256) > budget
    assert result.answer.request.context == value
    assert result.answer.fits[0].verdict.value in ("fits", "tight")

    data = run_json(row.q)
    assert data["request"]["intent"] == "max_context" and data["request"]["context"] == value
    assert data["solution"] == {"kind": "max_context", "value": value, "gpu": row.gpu, "count": row.count}


@pytest.mark.parametrize("row", rows(MAX_USERS))
def test_max_users(row: Row) -> None:
    check_parse(row, "max_users")
    result = resolve(parse(row.q))
    assert isinstance(result, SolveResult) and result.intent == "max_users"
    assert row.model is not None and row.gpu is not None
    users = result.value
    assert isinstance(users, int) and users >= 1
    budget = usable(row.gpu, row.count)
    at_value = estimate(request(row, users=users))
    assert at_value.kv_cache_bytes == kv_cache_bytes(row.model, row.context, users, row.kv)
    if not ARCH[row.model].window:
        # Hand formula: the memory left after weights, compute and runtime, in whole users of KV.
        per_user = kv_per_token(row.model, row.kv) * row.context
        hand = (budget - (at_value.total_bytes - at_value.kv_cache_bytes)) // per_user
        assert users in (hand, hand - 1)
    assert components_total(at_value) <= budget
    assert total_at(row, users=users + 1) > budget
    assert result.answer.request.users == users

    data = run_json(row.q)
    assert data["request"]["intent"] == "max_users" and data["request"]["users"] == users
    assert data["solution"]["value"] == users


@pytest.mark.parametrize("row", rows(BEST_QUANT))
def test_best_quant(row: Row) -> None:
    check_parse(row, "best_quant")
    result = resolve(parse(row.q))
    assert isinstance(result, SolveResult) and result.intent == "best_quant"
    assert row.gpu is not None
    budget = usable(row.gpu, row.count)
    expected = next((q for q in QUANT_LADDER if budget - total_at(row, quant=q) >= margin(budget)), None)
    assert result.value == expected
    assert expected is not None, "every row in the table has an answer"
    assert result.answer.request.quant == expected
    assert result.answer.fits[0].verdict.value == "fits"

    data = run_json(row.q)
    assert data["request"]["intent"] == "best_quant" and data["request"]["quant"] == expected
    assert data["solution"]["value"] == expected


@pytest.mark.parametrize("row", rows(ENGINES))
def test_engines_side_by_side(row: Row) -> None:
    parsed = parse(row.q)
    assert parsed.intent == "fit" and parsed.compare_engines and parsed.model == row.model
    result = resolve(parsed)
    assert isinstance(result, FitResult)
    llama, vllm = result.engines
    assert (llama.request.engine, vllm.request.engine) == (Engine.LLAMA_CPP, Engine.VLLM)
    assert row.model is not None
    assert llama.estimate.kv_cache_bytes == kv_cache_bytes(row.model, row.context)
    per_token = kv_per_token(row.model)
    assert vllm.estimate.kv_cache_bytes == pad(row.context, 16) * per_token  # vLLM: 16-token blocks
    if row.gpu:
        # vLLM takes 90% of the card; weights, the activation peak (4.8 B × 8192 tokens × vocabulary) and 133 MiB
        # of non-torch memory come off it, and the rest is the KV pool, in 16-token blocks.
        reserved = GPU_MEMORY[row.gpu] * 9 // 10
        activation = int(4.8 * 8192 * ARCH[row.model].vocab)
        pool = reserved - vllm.estimate.weights_bytes - activation - 133 * MIB
        assert vllm.estimate.vllm_kv_pool_tokens == pool // per_token // 16 * 16
        assert vllm.fits[0].usable_bytes == reserved
        assert vllm.fits[0].headroom_bytes == reserved - vllm.estimate.total_bytes

    data = run_json(row.q)
    assert [e["request"]["engine"] for e in data["engines"]] == ["llama.cpp", "vllm"]
    assert data["engines"][1]["estimate"]["kv_cache_bytes"] == vllm.estimate.kv_cache_bytes


@pytest.mark.parametrize("row", rows(MIN_GPUS))
def test_min_gpus_is_read(row: Row) -> None:
    check_parse(row, "min_gpus")


@pytest.mark.parametrize(("question", "intent"), NOT_MIN_GPUS)
def test_other_counts_are_not_min_gpus(question: str, intent: str) -> None:
    assert parse(question).intent == intent


@pytest.mark.parametrize("row", rows([r for r in MIN_GPUS if r.gpu]))
def test_min_gpus_is_answered(row: Row) -> None:
    """The fewest devices whose usable memory, less the tight margin (max(512 MiB, 5 %)), holds the footprint that
    llama.cpp allocates on that many (its compute buffers and runtime grow with the count), worked out here device
    count by device count."""
    parsed = parse(row.q)
    result = resolve(parsed)
    assert isinstance(result, SolveResult) and result.intent == "min_gpus"
    gpu = catalog().gpus[str(row.gpu)]
    request = parsed.to_request()
    expected = None
    for n in range(1, 65):
        usable = gpu.usable_bytes * n
        total = estimate(request.model_copy(update={"gpus": (GpuChoice(gpu=gpu, count=n),)}), n).total_bytes
        if usable - total >= max(512 << 20, usable // 20):
            expected = n
            break
    assert result.value == expected
    if expected is not None:
        assert result.gpu.count == expected and result.answer.fits[0].verdict == "fits"
        assert result.answer.fits[0].count == expected
