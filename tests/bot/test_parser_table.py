"""Table-driven parser tests: questions written the way people ask in Korean and English communities.

Each row gives the question and what it must parse to. Keys left out must be at their "not said" value (None, empty,
"fit"), so every row checks the whole parse. ``gpus`` is a list of (preset id, count); ``flags`` are the assumed keys
beyond the five plain defaults (gpu_variant, gpu_generic, model_fuzzy); ``unparsed`` the words reported as not
understood. Rows with ``error`` expect that error code and, with ``suggests``, those preset ids among the suggestions.
"""

from __future__ import annotations

from typing import Any

import pytest

from vramfit.bot.parser import parse
from vramfit.calc.errors import VramfitError
from vramfit.calc.presets import load_catalog

E = "en"
K = "ko"

# (question, expected)
TABLE: list[tuple[str, dict[str, Any]]] = [
    # --- English: models with spacing, hyphen, dot, case and version variants -------------------------------------
    ("llama-3.1-70b on 2x 3090", {"model": "llama-3.1-70b", "gpus": [("rtx-3090", 2)]}),
    ("Llama 3.3 70B q4_k_m 2x4090", {"model": "llama-3.3-70b", "quant": "Q4_K_M", "gpus": [("rtx-4090", 2)]}),
    ("LLAMA3.1 8B", {"model": "llama-3.1-8b"}),
    (
        "llama3.1:8b-instruct-q4_K_M on gtx 1080",
        {"model": "llama-3.1-8b", "quant": "Q4_K_M", "gpus": [("gtx-1080", 1)]},
    ),
    ("Meta-Llama-3-8B-Instruct 8k", {"model": "llama-3-8b", "context": 8192}),
    ("qwen 2.5 coder 32b on a 4090", {"model": "qwen2.5-coder-32b", "gpus": [("rtx-4090", 1)]}),
    ("Qwen2.5-Coder-7B-Instruct at q8", {"model": "qwen2.5-coder-7b", "quant": "Q8_0"}),
    ("Mistral-Nemo-Instruct-2407 q8_0", {"model": "mistral-nemo-12b", "quant": "Q8_0"}),
    (
        "mistral nemo 12b 128k context on a 3090",
        {"model": "mistral-nemo-12b", "context": 131072, "gpus": [("rtx-3090", 1)]},
    ),
    ("deepseek r1 distill qwen 14b 32k", {"model": "deepseek-r1-distill-qwen-14b", "context": 32768}),
    (
        "DeepSeek-R1-Distill-Llama-70B q4 on 2x 3090",
        {"model": "deepseek-r1-distill-llama-70b", "quant": "Q4_K_M", "gpus": [("rtx-3090", 2)]},
    ),
    ("gemma-2-9b-it on 3060 8GB", {"model": "gemma-2-9b", "gpus": [("rtx-3060-8gb", 1)]}),
    ("Gemma 3 27B QAT q4_0 on a 3090", {"model": "gemma-3-27b", "quant": "Q4_0", "gpus": [("rtx-3090", 1)]}),
    ("gemma3 4b on a gtx 1650", {"model": "gemma-3-4b", "gpus": [("gtx-1650", 1)]}),
    ("phi-4 on a 4060", {"model": "phi-4", "gpus": [("rtx-4060", 1)]}),
    ("phi 3.5 mini on a gtx 1650 4gb", {"model": "phi-3.5-mini", "gpus": [("gtx-1650", 1)]}),
    (
        "Phi-3-medium-4k-instruct fp16 on an a100",
        {"model": "phi-3-medium", "quant": "F16", "gpus": [("a100-40gb", 1)], "flags": ["gpu_variant"]},
    ),
    ("mixtral 8x22b on 4x a100 80gb", {"model": "mixtral-8x22b", "gpus": [("a100-80gb", 4)]}),
    (
        "Mixtral 8x7B EXL2? nah Q3_K_S on a 4080",
        {"model": "mixtral-8x7b", "quant": "Q3_K_S", "gpus": [("rtx-4080", 1)], "unparsed": ["exl2"]},
    ),
    ("qwen3 30b a3b on a 4090", {"model": "qwen3-30b-a3b", "gpus": [("rtx-4090", 1)]}),
    (
        "Qwen3-235B-A22B on 4x A100 80GB fp8 vllm",
        {"model": "qwen3-235b-a22b", "quant": "FP8", "engine": "vllm", "gpus": [("a100-80gb", 4)]},
    ),
    ("gpt-oss-20b on a 16gb card", {"model": "gpt-oss-20b", "gpus": [("generic-16gb", 1)], "flags": ["gpu_generic"]}),
    (
        "gpt-oss 120b mxfp4 on h100",
        {"model": "gpt-oss-120b", "quant": "MXFP4_MOE", "gpus": [("h100-sxm", 1)], "flags": ["gpu_variant"]},
    ),
    (
        "Command R 35B q4_k_m 8k on dual 4090",
        {"model": "command-r-35b", "quant": "Q4_K_M", "context": 8192, "gpus": [("rtx-4090", 2)]},
    ),
    ("exaone 3.5 7.8b on 3060", {"model": "exaone-3.5-7.8b", "gpus": [("rtx-3060-12gb", 1)], "flags": ["gpu_variant"]}),
    ("SOLAR-10.7B-Instruct-v1.0 Q5_K_M", {"model": "solar-10.7b", "quant": "Q5_K_M"}),
    (
        "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF Q5_K_M 3060",
        {"model": "llama-3.1-8b", "quant": "Q5_K_M", "gpus": [("rtx-3060-12gb", 1)], "flags": ["gpu_variant"]},
    ),
    (
        "https://huggingface.co/Qwen/Qwen2.5-14B-Instruct on 4070 ti super",
        {"model": "qwen2.5-14b", "gpus": [("rtx-4070-ti-super", 1)]},
    ),
    ("deepseek v3 on 8x h200", {"model": "deepseek-v3", "gpus": [("h200", 8)]}),
    ("llama 3.2 1b on a raspberry pi lol", {"model": "llama-3.2-1b"}),
    (
        "**llama 3.1 8b** on ||3060||",
        {"model": "llama-3.1-8b", "gpus": [("rtx-3060-12gb", 1)], "flags": ["gpu_variant"]},
    ),
    ("<@1234567890> will llama 3 8b fit on a 4060?", {"model": "llama-3-8b", "gpus": [("rtx-4060", 1)]}),
    # --- English: context ------------------------------------------------------------------------------------------
    ("llama 3.1 8b 128K", {"model": "llama-3.1-8b", "context": 131072}),
    ("llama 3.1 8b 20000 tokens", {"model": "llama-3.1-8b", "context": 20000}),
    ("llama 3.1 8b 100k context", {"model": "llama-3.1-8b", "context": 100000}),
    ("llama 3 8b 1M context lol", {"model": "llama-3-8b", "context": 1048576}),
    ("qwen3 8b 40960 ctx 4060", {"model": "qwen3-8b", "context": 40960, "gpus": [("rtx-4060", 1)]}),
    (
        "llama 3.1 8b with context=65536 on a 4090",
        {"model": "llama-3.1-8b", "context": 65536, "gpus": [("rtx-4090", 1)]},
    ),
    ("llama 3.1 8b context length of 16k", {"model": "llama-3.1-8b", "context": 16384}),
    ("llama 3.1 8b 16384", {"model": "llama-3.1-8b", "context": 16384}),
    (
        "I get 30 tokens/s with llama 3.1 8b on my 4090, can I do 32k?",
        {"model": "llama-3.1-8b", "context": 32768, "gpus": [("rtx-4090", 1)], "unparsed": ["30"]},
    ),
    # --- English: quant --------------------------------------------------------------------------------------------
    ("qwen2.5 7b iq4_xs", {"model": "qwen2.5-7b", "quant": "IQ4_XS"}),
    ("qwen2.5 7b IQ3_XXS", {"model": "qwen2.5-7b", "quant": "IQ3_XXS"}),
    ("qwen2.5 7b q4km", {"model": "qwen2.5-7b", "quant": "Q4_K_M"}),
    ("qwen2.5 7b Q4-K-S", {"model": "qwen2.5-7b", "quant": "Q4_K_S"}),
    ("qwen2.5 7b q5_k", {"model": "qwen2.5-7b", "quant": "Q5_K_M"}),
    ("qwen2.5 7b 4bit", {"model": "qwen2.5-7b", "quant": "Q4_K_M"}),
    ("qwen2.5 7b 4-bit", {"model": "qwen2.5-7b", "quant": "Q4_K_M"}),
    ("qwen2.5 7b in 8 bit", {"model": "qwen2.5-7b", "quant": "Q8_0"}),
    ("qwen2.5 7b int4", {"model": "qwen2.5-7b", "quant": "Q4_K_M"}),
    ("qwen2.5 7b int8", {"model": "qwen2.5-7b", "quant": "Q8_0"}),
    ("qwen2.5 7b bf16", {"model": "qwen2.5-7b", "quant": "BF16"}),
    ("qwen2.5 7b unquantized", {"model": "qwen2.5-7b", "quant": "F16"}),
    ("qwen2.5 7b fp8 on an L40S", {"model": "qwen2.5-7b", "quant": "FP8", "gpus": [("l40s", 1)]}),
    (
        "llama 3.3 70b awq vllm 2x a6000 32k 8 users",
        {
            "model": "llama-3.3-70b",
            "quant": "INT4",
            "context": 32768,
            "users": 8,
            "engine": "vllm",
            "gpus": [("rtx-a6000", 2)],
        },
    ),
    ("llama 3.1 8b 4bit with vllm", {"model": "llama-3.1-8b", "quant": "INT4", "engine": "vllm"}),
    ("qwen2.5 7b q7_k_m", {"error": "unknown_quant"}),
    # --- English: KV cache, engine, flash attention ----------------------------------------------------------------
    (
        "llama 3.1 8b fp8 kv cache 128k on h100",
        {"model": "llama-3.1-8b", "kv": "fp8", "context": 131072, "gpus": [("h100-sxm", 1)], "flags": ["gpu_variant"]},
    ),
    ("llama 3.1 8b q8_0 kv 32k", {"model": "llama-3.1-8b", "kv": "q8_0", "context": 32768}),
    (
        "llama 3.1 8b kv q8_0 32k 4090",
        {"model": "llama-3.1-8b", "kv": "q8_0", "context": 32768, "gpus": [("rtx-4090", 1)]},
    ),
    ("llama 3.1 8b q4_k_m with kv cache q4_0", {"model": "llama-3.1-8b", "quant": "Q4_K_M", "kv": "q4_0"}),
    (
        "llama 3.1 8b -c 16384 -np 2 -ctk q8_0 -ctv q8_0 -fa on 3060",
        {
            "model": "llama-3.1-8b",
            "context": 8192,  # llama-server's -c is the cache the 2 slots share: 8,192 tokens each
            "users": 2,
            "kv": "q8_0",
            "flash_attn": True,
            "gpus": [("rtx-3060-12gb", 1)],
            "flags": ["gpu_variant"],
        },
    ),
    ("qwen3 30b a3b vllm on 4090", {"model": "qwen3-30b-a3b", "engine": "vllm", "gpus": [("rtx-4090", 1)]}),
    ("ollama llama3.1 8b", {"model": "llama-3.1-8b", "engine": "llama.cpp"}),
    (
        "llama 3.1 8b in lm studio on a 4060 ti 16gb",
        {"model": "llama-3.1-8b", "engine": "llama.cpp", "gpus": [("rtx-4060-ti-16gb", 1)]},
    ),
    (
        "llama.cpp vs vllm for llama 3.1 8b on 4090",
        {"model": "llama-3.1-8b", "compare_engines": True, "gpus": [("rtx-4090", 1)]},
    ),
    ("llama 3.1 8b flash attention off 32k", {"model": "llama-3.1-8b", "flash_attn": False, "context": 32768}),
    ("llama 3.1 8b without flash attention", {"model": "llama-3.1-8b", "flash_attn": False}),
    (
        "llama 3.1 8b with flash attention on a 3090",
        {"model": "llama-3.1-8b", "flash_attn": True, "gpus": [("rtx-3090", 1)]},
    ),
    # --- English: users --------------------------------------------------------------------------------------------
    ("qwen2.5 7b 8 concurrent users 8k", {"model": "qwen2.5-7b", "users": 8, "context": 8192}),
    (
        "qwen2.5-1.5b q4_0 32k ctx 16 parallel users",
        {"model": "qwen2.5-1.5b", "quant": "Q4_0", "context": 32768, "users": 16},
    ),
    (
        "serve qwen2.5 14b to 4 users, 8k each, Q5_K_M, L40S",
        {"model": "qwen2.5-14b", "users": 4, "context": 8192, "quant": "Q5_K_M", "gpus": [("l40s", 1)]},
    ),
    ("llama 3.1 8b for ten users", {"model": "llama-3.1-8b", "users": 10}),
    ("llama 3.1 8b --parallel 4", {"model": "llama-3.1-8b", "users": 4}),
    ("llama 3.1 8b 0 users", {"error": "bad_number"}),
    ("llama 3.1 8b 99999 users", {"error": "bad_number"}),
    # --- English: GPUs ---------------------------------------------------------------------------------------------
    (
        "will llama 3 8b run on my 3060?",
        {"model": "llama-3-8b", "gpus": [("rtx-3060-12gb", 1)], "flags": ["gpu_variant"]},
    ),
    ("llama 3.1 8b on rtx 3060 12gb", {"model": "llama-3.1-8b", "gpus": [("rtx-3060-12gb", 1)]}),
    ("llama 3.1 8b on a 4060ti", {"model": "llama-3.1-8b", "gpus": [("rtx-4060-ti-8gb", 1)], "flags": ["gpu_variant"]}),
    ("llama 3.1 8b on a GTX 1080 Ti", {"model": "llama-3.1-8b", "gpus": [("gtx-1080-ti", 1)]}),
    ("llama 3.1 8b on an rtx 4070 super", {"model": "llama-3.1-8b", "gpus": [("rtx-4070-super", 1)]}),
    ("llama 3.1 8b on a T4", {"model": "llama-3.1-8b", "gpus": [("tesla-t4", 1)]}),
    ("llama 3.1 70b on a100 80gb", {"model": "llama-3.1-70b", "gpus": [("a100-80gb", 1)]}),
    ("llama 3.1 70b on 8x H100", {"model": "llama-3.1-70b", "gpus": [("h100-sxm", 8)], "flags": ["gpu_variant"]}),
    ("llama 3.1 70b on h100x2", {"model": "llama-3.1-70b", "gpus": [("h100-sxm", 2)], "flags": ["gpu_variant"]}),
    ("llama 3.1 70b on two 3090s", {"model": "llama-3.1-70b", "gpus": [("rtx-3090", 2)]}),
    ("llama 3.1 70b on 3090 x 2", {"model": "llama-3.1-70b", "gpus": [("rtx-3090", 2)]}),
    ("gemma 3 27b on 7900 XTX", {"model": "gemma-3-27b", "gpus": [("rx-7900-xtx", 1)]}),
    ("qwen3 8b on intel arc b580", {"model": "qwen3-8b", "gpus": [("arc-b580", 1)]}),
    ("qwen3 8b on a 4060 laptop", {"model": "qwen3-8b", "gpus": [("rtx-4060-laptop", 1)]}),
    ("can my m2 macbook air 16gb run llama 3.2 3b", {"model": "llama-3.2-3b", "gpus": [("apple-m2-16gb", 1)]}),
    (
        "M2 Ultra 192GB deepseek r1 q2_k",
        {"model": "deepseek-r1", "quant": "Q2_K", "gpus": [("apple-m2-ultra-192gb", 1)]},
    ),
    ("macbook pro m3 max 64gb llama 3.3 70b", {"model": "llama-3.3-70b", "gpus": [("apple-m3-max-64gb", 1)]}),
    (
        "mac studio m2 ultra llama 3.1 70b",
        {"model": "llama-3.1-70b", "gpus": [("apple-m2-ultra-64gb", 1)], "flags": ["gpu_variant"]},
    ),
    (
        "is 8gb enough for qwen2.5 7b at q4?",
        {"model": "qwen2.5-7b", "quant": "Q4_K_M", "gpus": [("generic-8gb", 1)], "flags": ["gpu_generic"]},
    ),
    (
        "24gb card llama 3.1 70b q2_k",
        {"model": "llama-3.1-70b", "quant": "Q2_K", "gpus": [("generic-24gb", 1)], "flags": ["gpu_generic"]},
    ),
    # llama-server's flags pasted: -c is the whole cache the -np slots share (16,384 cells for 4 slots: 4,096 each);
    # -c alone, or vLLM's --max-model-len, is one sequence's; a flag's number is never a count of the GPU after it
    (
        "qwen3 8b -np 4 -c 16384 on a 4090",
        {"model": "qwen3-8b", "context": 4096, "users": 4, "gpus": [("rtx-4090", 1)]},
    ),
    (
        "llama-server -m qwen3-8b-Q4_K_M.gguf -c 32768 -np 4 on a 3090",
        {"model": "qwen3-8b", "quant": "Q4_K_M", "context": 8192, "users": 4, "engine": "llama.cpp",
         "gpus": [("rtx-3090", 1)]},
    ),
    ("qwen3 8b -c=16384 -np=2 4090", {"model": "qwen3-8b", "context": 8192, "users": 2, "gpus": [("rtx-4090", 1)]}),
    ("qwen3 8b -c 16384 on a 4090", {"model": "qwen3-8b", "context": 16384, "gpus": [("rtx-4090", 1)]}),
    (
        "qwen3 8b --max-model-len 32768 --max-num-seqs 4 vllm h100",
        {"model": "qwen3-8b", "context": 32768, "users": 4, "engine": "vllm", "gpus": [("h100-sxm", 1)],
         "flags": ["gpu_variant"]},
    ),
    (
        "큐웬3 8b -np 4 -c 16384 4090에서 돼?",
        {"lang": K, "model": "qwen3-8b", "context": 4096, "users": 4, "gpus": [("rtx-4090", 1)]},
    ),
    (
        "라마 3.1 8b --parallel 2 --ctx-size 32768 3090 가능?",
        {"lang": K, "model": "llama-3.1-8b", "context": 16384, "users": 2, "gpus": [("rtx-3090", 1)]},
    ),
    (
        "라마3.1 8b 20480MB 그래픽카드",
        {"lang": K, "model": "llama-3.1-8b", "gpus": [("generic-20gb", 1)], "flags": ["gpu_generic"]},
    ),
    # a GPU's number read digit by digit in Hangul; words made of the same syllables stay words ("사공이 노를…")
    ("사공칠공에서 젬마3 12b 돼?", {"lang": K, "model": "gemma-3-12b", "gpus": [("rtx-4070", 1)]}),
    ("사공구공 두 장 라마3 70b", {"lang": K, "model": "llama-3-70b", "gpus": [("rtx-4090", 2)]}),
    ("오공구공 큐웬3 32b 32k", {"lang": K, "model": "qwen3-32b", "context": 32768, "gpus": [("rtx-5090", 1)]}),
    ("칠구공공 xtx 젬마3 27b", {"lang": K, "model": "gemma-3-27b", "gpus": [("rx-7900-xtx", 1)]}),
    # brand letters spelled in Hangul: 알티엑스 RTX, 지티엑스 GTX, 엑스티엑스 XTX, 엑스티 XT
    ("7900 엑스티엑스에서 큐웬3 14b 돌아가?", {"lang": K, "model": "qwen3-14b", "gpus": [("rx-7900-xtx", 1)]}),
    ("라데온 7900 엑스티에서 큐웬3 14b", {"lang": K, "model": "qwen3-14b", "gpus": [("rx-7900-xt", 1)]}),
    ("지티엑스 1080 티로 라마3 8b", {"lang": K, "model": "llama-3-8b", "gpus": [("gtx-1080-ti", 1)]}),
    ("칠구공공 엑스티엑스 젬마3 27b", {"lang": K, "model": "gemma-3-27b", "gpus": [("rx-7900-xtx", 1)]}),
    (
        "사공이 노를 젓는다 라마3 8b 3060",
        {"lang": K, "model": "llama-3-8b", "gpus": [("rtx-3060-12gb", 1)], "flags": ["gpu_variant"]},
    ),
    # forms people paste: the size after a VRAM word is the card's, the size after a RAM word the system's
    (
        "VRAM: 12GB / RAM: 32GB / model: qwen3 14b",
        {"model": "qwen3-14b", "gpus": [("generic-12gb", 1)], "flags": ["gpu_generic"], "ram_gb": 32},
    ),
    (
        "VRAM 8GB, RAM 16GB, llama 3.1 8b",
        {"model": "llama-3.1-8b", "gpus": [("generic-8gb", 1)], "flags": ["gpu_generic"], "ram_gb": 16},
    ),
    (
        "ram 32gb vram 8gb llama 3.1 8b",
        {"model": "llama-3.1-8b", "gpus": [("generic-8gb", 1)], "flags": ["gpu_generic"], "ram_gb": 32},
    ),
    (
        "VRAM: 24GB / RAM: 64GB / 모델: 큐웬3 32b",
        {"lang": K, "model": "qwen3-32b", "gpus": [("generic-24gb", 1)], "flags": ["gpu_generic"], "ram_gb": 64},
    ),
    (
        "램 32기가 vram 12기가 큐웬3 14b",
        {"lang": K, "model": "qwen3-14b", "gpus": [("generic-12gb", 1)], "flags": ["gpu_generic"], "ram_gb": 32},
    ),
    # memory in (binary) megabytes, as spec sheets and nvidia-smi write it: 20480 MB = 20 GB
    (
        "gemma 3 12b on a 20480MB card",
        {"model": "gemma-3-12b", "gpus": [("generic-20gb", 1)], "flags": ["gpu_generic"]},
    ),
    ("llama 3.1 8b 12288MB 3060", {"model": "llama-3.1-8b", "gpus": [("rtx-3060-12gb", 1)]}),
    ("llama 3.1 8b on a 3060 8192 MiB", {"model": "llama-3.1-8b", "gpus": [("rtx-3060-8gb", 1)]}),
    (
        "12288메가 그래픽카드로 젬마3 12b 돼?",
        {"model": "gemma-3-12b", "gpus": [("generic-12gb", 1)], "flags": ["gpu_generic"], "lang": K},
    ),
    (
        "3060 with 32gb ram llama 3.1 8b",
        {"model": "llama-3.1-8b", "gpus": [("rtx-3060-12gb", 1)], "flags": ["gpu_variant"]},
    ),
    ("llama 3.1 8b on a 3060 16gb", {"error": "unknown_gpu", "suggests": ["rtx-3060-12gb", "rtx-3060-8gb"]}),
    ("llama 3.1 8b on an rtx 4050", {"error": "unknown_gpu", "suggests": ["rtx-4050-laptop"]}),
    ("llama 3.1 8b on 99x 3090", {"error": "bad_number"}),
    # --- English: intents and ambiguity ----------------------------------------------------------------------------
    ("what can I run on a 3060?", {"intent": "what_fits", "gpus": [("rtx-3060-12gb", 1)], "flags": ["gpu_variant"]}),
    (
        "what models can I run with 24gb",
        {"intent": "what_fits", "gpus": [("generic-24gb", 1)], "flags": ["gpu_generic"]},
    ),
    ("biggest model that fits on a 4090?", {"intent": "what_fits", "gpus": [("rtx-4090", 1)]}),
    (
        "llama 3.1 8b vs qwen2.5 7b on 3060",
        {
            "intent": "compare",
            "model": "llama-3.1-8b",
            "compare_model": "qwen2.5-7b",
            "gpus": [("rtx-3060-12gb", 1)],
            "flags": ["gpu_variant"],
        },
    ),
    (
        "how much context can I fit with llama 3.1 8b on a 4090",
        {"intent": "max_context", "model": "llama-3.1-8b", "gpus": [("rtx-4090", 1)]},
    ),
    ("max context for qwen3 14b on a 5080", {"intent": "max_context", "model": "qwen3-14b", "gpus": [("rtx-5080", 1)]}),
    (
        "how many users can a 4090 serve with qwen2.5 7b",
        {"intent": "max_users", "model": "qwen2.5-7b", "gpus": [("rtx-4090", 1)]},
    ),
    (
        "which quant of llama 3.1 70b fits 2x 3090",
        {"intent": "best_quant", "model": "llama-3.1-70b", "gpus": [("rtx-3090", 2)]},
    ),
    (
        "best quant for gemma 3 27b on a 3090",
        {"intent": "best_quant", "model": "gemma-3-27b", "gpus": [("rtx-3090", 1)]},
    ),
    ("llama 3 on my 3060", {"error": "unknown_model", "suggests": ["llama-3-8b", "llama-3-70b"]}),
    # Llama 3 8B and 3.1 8B have one architecture (but the training context): "llama 8b" is the newest, said loosely.
    (
        "llama 8b on my 3060",
        {"model": "llama-3.1-8b", "gpus": [("rtx-3060-12gb", 1)], "flags": ["gpu_variant", "model_fuzzy"]},
    ),
    ("gemma 27b on a 4090", {"error": "unknown_model", "suggests": ["gemma-2-27b", "gemma-3-27b"]}),
    # Mistral Small 3 (2501) and 3.2 (2506) are one architecture; the newer one's 131,072-token context holds both.
    ("mistral 24b on a 3090", {"model": "mistral-small-3.2-24b", "gpus": [("rtx-3090", 1)], "flags": ["model_fuzzy"]}),
    (
        "mistrl 7b on 3060",
        {"model": "mistral-7b-v0.3", "gpus": [("rtx-3060-12gb", 1)], "flags": ["gpu_variant", "model_fuzzy"]},
    ),
    (
        "lama 3.1 8b on 3060",
        {"model": "llama-3.1-8b", "gpus": [("rtx-3060-12gb", 1)], "flags": ["gpu_variant", "model_fuzzy"]},
    ),
    ("falcon 40b on a 3090", {"error": "unknown_model"}),
    (
        "Running deepseek-r1:14b on 3060 12gb",  # Ollama's tag for the Qwen 14B distill: the preset's own alias
        {"model": "deepseek-r1-distill-qwen-14b", "gpus": [("rtx-3060-12gb", 1)]},
    ),
    ("gemma3:27b-it-qat on RTX3090", {"model": "gemma-3-27b", "quant": "Q4_0", "gpus": [("rtx-3090", 1)]}),
    # A size with a decimal point keeps it (it used to read "7.5gb" as 75 GB and "0.9 GB" as 9).
    (
        "llama 3.1 8b on a 7.5gb gpu",
        {"model": "llama-3.1-8b", "gpus": [("generic-7.5gb", 1)], "flags": ["gpu_generic"]},
    ),
    (
        "llama 3.2 1b on a 0.9 GB GPU",
        {"model": "llama-3.2-1b", "gpus": [("generic-0.9gb", 1)], "flags": ["gpu_generic"]},
    ),
    ("qwen3 8b 10.5 GB vram", {"model": "qwen3-8b", "gpus": [("generic-10.5gb", 1)], "flags": ["gpu_generic"]}),
    (
        "큐웬3 8b 7.5기가 그래픽카드",
        {"model": "qwen3-8b", "gpus": [("generic-7.5gb", 1)], "flags": ["gpu_generic"], "lang": "ko"},
    ),
    ("phi4:14b rx7900xtx", {"model": "phi-4", "gpus": [("rx-7900-xtx", 1)]}),
    (
        "32GB RAM + 8GB VRAM, llama 3.1 8b",
        {"model": "llama-3.1-8b", "gpus": [("generic-8gb", 1)], "flags": ["gpu_generic"]},
    ),
    ("rtx4060ti 16gb qwen3 14b", {"model": "qwen3-14b", "gpus": [("rtx-4060-ti-16gb", 1)]}),
    (
        "llama 3.1 8b on 3060 or 4060?",
        {
            "model": "llama-3.1-8b",
            "gpus": [("rtx-3060-12gb", 1), ("rtx-4060", 1)],
            "compare_gpus": True,
            "flags": ["gpu_variant"],
        },
    ),
    ("", {}),
    ("hello everyone, what command should I use to start the server?", {}),
    # --- Korean: models and spellings ------------------------------------------------------------------------------
    (
        "라마3 8B 32k 컨텍스트로 3060에서 돌아가나요?",
        {"lang": K, "model": "llama-3-8b", "context": 32768, "gpus": [("rtx-3060-12gb", 1)], "flags": ["gpu_variant"]},
    ),
    ("라마 3.1 8B를 4060에서 돌릴 수 있나요?", {"lang": K, "model": "llama-3.1-8b", "gpus": [("rtx-4060", 1)]}),
    (
        "라마3.3 70b 4비트 3090 두 장",
        {"lang": K, "model": "llama-3.3-70b", "quant": "Q4_K_M", "gpus": [("rtx-3090", 2)]},
    ),
    ("라마3.2 3b 노트북 4060에서", {"lang": K, "model": "llama-3.2-3b", "gpus": [("rtx-4060-laptop", 1)]}),
    (
        "젬마3 27b 3090 한 장으로 32k 되나요",
        {"lang": K, "model": "gemma-3-27b", "context": 32768, "gpus": [("rtx-3090", 1)]},
    ),
    ("젬마2 2b 라데온 6600", {"lang": K, "model": "gemma-2-2b", "gpus": [("rx-6600", 1)]}),
    (
        "큐웬3 32b 4비트로 5090 32기가에서 돌아가?",
        {"lang": K, "model": "qwen3-32b", "quant": "Q4_K_M", "gpus": [("rtx-5090", 1)]},
    ),
    (
        "퀜3 30b a3b 4060ti 16기가 두 장 64k",
        {"lang": K, "model": "qwen3-30b-a3b", "context": 65536, "gpus": [("rtx-4060-ti-16gb", 2)]},
    ),
    ("큐원2.5 14b 4070 슈퍼", {"lang": K, "model": "qwen2.5-14b", "gpus": [("rtx-4070-super", 1)]}),
    (
        "큐웬 2.5 코더 32b 4090 q4 32k 로",
        {"lang": K, "model": "qwen2.5-coder-32b", "quant": "Q4_K_M", "context": 32768, "gpus": [("rtx-4090", 1)]},
    ),
    (
        "미스트랄 네모 q6_k 3만 2천 컨텍스트 4070 슈퍼",
        {"lang": K, "model": "mistral-nemo-12b", "quant": "Q6_K", "context": 32000, "gpus": [("rtx-4070-super", 1)]},
    ),
    ("미스트럴 7b 3060 8기가", {"lang": K, "model": "mistral-7b-v0.3", "gpus": [("rtx-3060-8gb", 1)]}),
    (
        "미스트랄 스몰 24b 6비트 16k 5090에서 돌아감?",
        {"lang": K, "model": "mistral-small-24b", "quant": "Q6_K", "context": 16384, "gpus": [("rtx-5090", 1)]},
    ),
    ("믹스트랄 8x22b 4090 네 장", {"lang": K, "model": "mixtral-8x22b", "gpus": [("rtx-4090", 4)]}),
    (
        "믹스트럴 8x7b q3_k_m 4k, 4060 ti 16기가 두 장",
        {"lang": K, "model": "mixtral-8x7b", "quant": "Q3_K_M", "context": 4096, "gpus": [("rtx-4060-ti-16gb", 2)]},
    ),
    (
        "딥시크 r1 671b h100 8장 fp8",
        {"lang": K, "model": "deepseek-r1", "quant": "FP8", "gpus": [("h100-sxm", 8)], "flags": ["gpu_variant"]},
    ),
    (
        "딥씨크 r1 디스틸 큐웬 7b 3060",
        {"lang": K, "model": "deepseek-r1-distill-qwen-7b", "gpus": [("rtx-3060-12gb", 1)], "flags": ["gpu_variant"]},
    ),
    (
        "딥시크 R1 디스틸 라마 8B 3060 12기가",
        {"lang": K, "model": "deepseek-r1-distill-llama-8b", "gpus": [("rtx-3060-12gb", 1)]},
    ),
    (
        "딥시크 큐웬 14b 3060",
        {
            "lang": K,
            "model": "deepseek-r1-distill-qwen-14b",
            "gpus": [("rtx-3060-12gb", 1)],
            "flags": ["gpu_variant", "model_fuzzy"],
        },
    ),
    ("딥시크 v3 h200 8장", {"lang": K, "model": "deepseek-v3", "gpus": [("h200", 8)]}),
    ("파이4 14b 4070 ti 슈퍼", {"lang": K, "model": "phi-4", "gpus": [("rtx-4070-ti-super", 1)]}),
    ("파이3.5 미니 1650에서", {"lang": K, "model": "phi-3.5-mini", "gpus": [("gtx-1650", 1)]}),
    (
        "엑사원 32b 3090 두 개 q4_k_m 8천 토큰",
        {"lang": K, "model": "exaone-3.5-32b", "quant": "Q4_K_M", "context": 8000, "gpus": [("rtx-3090", 2)]},
    ),
    (
        "엑사원 3.5 2.4b 맥북 에어 m1",
        {"lang": K, "model": "exaone-3.5-2.4b", "gpus": [("apple-m1-8gb", 1)], "flags": ["gpu_variant"]},
    ),
    (
        "솔라 10.7b 6비트 3060 8기가",
        {"lang": K, "model": "solar-10.7b", "quant": "Q6_K", "gpus": [("rtx-3060-8gb", 1)]},
    ),
    (
        "커맨드 R 35b 4비트 8k 7900 XTX",
        {"lang": K, "model": "command-r-35b", "quant": "Q4_K_M", "context": 8192, "gpus": [("rx-7900-xtx", 1)]},
    ),
    ("커맨드알 35b 4090 두장", {"lang": K, "model": "command-r-35b", "gpus": [("rtx-4090", 2)]}),
    ("라마를 3060에서 돌리고 싶은데 3.1 8b", {"lang": K, "error": "unknown_model"}),
    ("/vram 젬마2-9b 8k", {"lang": K, "model": "gemma-2-9b", "context": 8192}),
    (
        "gpt-oss 20b 16기가로 되나",
        {"lang": K, "model": "gpt-oss-20b", "gpus": [("generic-16gb", 1)], "flags": ["gpu_generic"]},
    ),
    # --- Korean: numbers and context -------------------------------------------------------------------------------
    (
        "미스트랄 네모 12b 12만8천 컨텍스트 4090",
        {"lang": K, "model": "mistral-nemo-12b", "context": 128000, "gpus": [("rtx-4090", 1)]},
    ),
    ("라마3.1 8b 12만 8천 토큰", {"lang": K, "model": "llama-3.1-8b", "context": 128000}),
    ("라마3.1 8b 삼만이천 토큰", {"lang": K, "model": "llama-3.1-8b", "context": 32000}),
    (
        "라마3.1 8b 8천 토큰이면 3060 돼?",
        {"lang": K, "model": "llama-3.1-8b", "context": 8000, "gpus": [("rtx-3060-12gb", 1)], "flags": ["gpu_variant"]},
    ),
    (
        "미스트랄 7b fp16 4096토큰 3090",
        {"lang": K, "model": "mistral-7b-v0.3", "quant": "F16", "context": 4096, "gpus": [("rtx-3090", 1)]},
    ),
    (
        "젬마3 12b q5_k_m 컨텍스트 16384 4060ti 16기가",
        {"lang": K, "model": "gemma-3-12b", "quant": "Q5_K_M", "context": 16384, "gpus": [("rtx-4060-ti-16gb", 1)]},
    ),
    (
        "라마3.1 8b 컨텍스트 128k 사용자 4명 fp8 kv",
        {"lang": K, "model": "llama-3.1-8b", "context": 131072, "users": 4, "kv": "fp8"},
    ),
    ("라마3.1 8b 1.5만 토큰", {"lang": K, "model": "llama-3.1-8b", "context": 15000}),
    ("라마3.1 8b 컨텍스트 2천만", {"lang": K, "error": "bad_number"}),
    (
        "큐웬3 8b 초당 30토큰 나와? 4060",
        {"lang": K, "model": "qwen3-8b", "gpus": [("rtx-4060", 1)], "unparsed": ["30토큰"]},
    ),
    # --- Korean: quant, KV cache, engine, flash attention ----------------------------------------------------------
    (
        "3060 12기가에 라마3 8b q8 올라가나요",
        {"lang": K, "model": "llama-3-8b", "quant": "Q8_0", "gpus": [("rtx-3060-12gb", 1)]},
    ),
    ("큐웬2.5 7b 8비트 4060", {"lang": K, "model": "qwen2.5-7b", "quant": "Q8_0", "gpus": [("rtx-4060", 1)]}),
    ("큐웬2.5 7b 5비트 4060", {"lang": K, "model": "qwen2.5-7b", "quant": "Q5_K_M", "gpus": [("rtx-4060", 1)]}),
    ("큐웬2.5 7b 16비트 4090", {"lang": K, "model": "qwen2.5-7b", "quant": "F16", "gpus": [("rtx-4090", 1)]}),
    ("큐웬2.5 7b 양자화 없이 4090", {"lang": K, "model": "qwen2.5-7b", "quant": "F16", "gpus": [("rtx-4090", 1)]}),
    ("라마3.1 8b kv캐시 fp8로 128k", {"lang": K, "model": "llama-3.1-8b", "kv": "fp8", "context": 131072}),
    (
        "라마3.1 8b kv 캐시 q4_0 32k 3060",
        {
            "lang": K,
            "model": "llama-3.1-8b",
            "kv": "q4_0",
            "context": 32768,
            "gpus": [("rtx-3060-12gb", 1)],
            "flags": ["gpu_variant"],
        },
    ),
    (
        "라마3.1 8b 라마cpp 4090 kv 캐시 q8_0",
        {"lang": K, "model": "llama-3.1-8b", "engine": "llama.cpp", "kv": "q8_0", "gpus": [("rtx-4090", 1)]},
    ),
    (
        "라마3.1 8b vllm 동시 접속 32명 8k",
        {"lang": K, "model": "llama-3.1-8b", "engine": "vllm", "users": 32, "context": 8192},
    ),
    (
        "올라마로 젬마3 12b 3060",
        {
            "lang": K,
            "model": "gemma-3-12b",
            "engine": "llama.cpp",
            "gpus": [("rtx-3060-12gb", 1)],
            "flags": ["gpu_variant"],
        },
    ),
    ("라마3.1 8b 플래시 어텐션 끄고 32k", {"lang": K, "model": "llama-3.1-8b", "flash_attn": False, "context": 32768}),
    (
        "vllm이랑 llama.cpp 비교 큐웬3 8b 4090",
        {"lang": K, "model": "qwen3-8b", "compare_engines": True, "gpus": [("rtx-4090", 1)]},
    ),
    # --- Korean: users ---------------------------------------------------------------------------------------------
    ("라마3.1 8b 16k 컨텍스트, 사용자 열 명", {"lang": K, "model": "llama-3.1-8b", "context": 16384, "users": 10}),
    ("큐웬2.5 7b 동시 사용자 8명 8k", {"lang": K, "model": "qwen2.5-7b", "users": 8, "context": 8192}),
    ("큐웬2.5 7b 2명 8k씩", {"lang": K, "model": "qwen2.5-7b", "users": 2, "context": 8192}),
    (
        "vllm으로 큐웬2.5 7b 사용자 열 명 4k씩 4090",
        {"lang": K, "model": "qwen2.5-7b", "engine": "vllm", "users": 10, "context": 4096, "gpus": [("rtx-4090", 1)]},
    ),
    ("큐웬2.5 14b 세 명이서 쓸 건데 4090", {"lang": K, "model": "qwen2.5-14b", "users": 3, "gpus": [("rtx-4090", 1)]}),
    ("라마3.1 8b 동시접속 스무 명", {"lang": K, "model": "llama-3.1-8b", "users": 20}),
    # --- Korean: GPUs ----------------------------------------------------------------------------------------------
    (
        "4090 두 장으로 라마 3.1 70B q4 16k 돌릴 수 있어?",
        {"lang": K, "model": "llama-3.1-70b", "quant": "Q4_K_M", "context": 16384, "gpus": [("rtx-4090", 2)]},
    ),
    (
        "3090 두 개로 큐웬 2.5 72b 4비트 되나",
        {"lang": K, "model": "qwen2.5-72b", "quant": "Q4_K_M", "gpus": [("rtx-3090", 2)]},
    ),
    (
        "라마3 70b q2_k 3090 한 장 가능?",
        {"lang": K, "model": "llama-3-70b", "quant": "Q2_K", "gpus": [("rtx-3090", 1)]},
    ),
    (
        "RTX 3080 10기가 mistral nemo 16k",
        {"lang": K, "model": "mistral-nemo-12b", "context": 16384, "gpus": [("rtx-3080-10gb", 1)]},
    ),
    ("3080 12기가로 젬마3 12b", {"lang": K, "model": "gemma-3-12b", "gpus": [("rtx-3080-12gb", 1)]}),
    ("1060 3기가로 라마3.2 1b", {"lang": K, "model": "llama-3.2-1b", "gpus": [("gtx-1060-3gb", 1)]}),
    ("4060 티 16기가 큐웬3 14b", {"lang": K, "model": "qwen3-14b", "gpus": [("rtx-4060-ti-16gb", 1)]}),
    (
        "지포스 4070 티 슈퍼로 젬마3 27b q3_k_m",
        {"lang": K, "model": "gemma-3-27b", "quant": "Q3_K_M", "gpus": [("rtx-4070-ti-super", 1)]},
    ),
    ("인텔 아크 b580 큐웬3 8b", {"lang": K, "model": "qwen3-8b", "gpus": [("arc-b580", 1)]}),
    ("3060 노트북으로 라마3.2 3b", {"lang": K, "model": "llama-3.2-3b", "gpus": [("rtx-3060-laptop", 1)]}),
    ("a100 80기가 네 장 라마3.1 405b", {"lang": K, "model": "llama-3.1-405b", "gpus": [("a100-80gb", 4)]}),
    (
        "맥북 M3 맥스 36기가로 젬마2 27b 돌아가?",
        {"lang": K, "model": "gemma-2-27b", "gpus": [("apple-m3-max-36gb", 1)]},
    ),
    (
        "M3 맥스 64기가 맥북 프로로 라마 3.3 70b 4비트 돌아가나",
        {"lang": K, "model": "llama-3.3-70b", "quant": "Q4_K_M", "gpus": [("apple-m3-max-64gb", 1)]},
    ),
    ("맥미니 m4 프로 48기가 젬마3 27b", {"lang": K, "model": "gemma-3-27b", "gpus": [("apple-m4-pro-48gb", 1)]}),
    ("맥북에어 m2 24기가 큐웬2.5 14b", {"lang": K, "model": "qwen2.5-14b", "gpus": [("apple-m2-24gb", 1)]}),
    (
        "맥 스튜디오 m2 울트라 192기가 딥시크 r1 q2_k",
        {"lang": K, "model": "deepseek-r1", "quant": "Q2_K", "gpus": [("apple-m2-ultra-192gb", 1)]},
    ),
    (
        "m3 맥스 맥북으로 큐웬3 32b",
        {"lang": K, "model": "qwen3-32b", "gpus": [("apple-m3-max-36gb", 1)], "flags": ["gpu_variant"]},
    ),
    (
        "12기가 그래픽카드로 젬마3 12b",
        {"lang": K, "model": "gemma-3-12b", "gpus": [("generic-12gb", 1)], "flags": ["gpu_generic"]},
    ),
    (
        "그래픽카드 24기가 두 장 라마3.1 70b",
        {"lang": K, "model": "llama-3.1-70b", "gpus": [("generic-24gb", 2)], "flags": ["gpu_generic"]},
    ),
    ("램 64기가 3060 12기가 라마3.1 8b", {"lang": K, "model": "llama-3.1-8b", "gpus": [("rtx-3060-12gb", 1)]}),
    (
        "7900xtx 두장 라마 70b",
        {"lang": K, "model": "llama-3.3-70b", "gpus": [("rx-7900-xtx", 2)], "flags": ["model_fuzzy"]},
    ),
    ("라마3.1 8b 3060 16기가", {"lang": K, "error": "unknown_gpu", "suggests": ["rtx-3060-12gb"]}),
    ("m6 맥스로 라마3.1 70b", {"lang": K, "error": "unknown_gpu"}),  # a chip that does not exist (yet)
    ("라마3.1 8b 4090 100장", {"lang": K, "error": "bad_number"}),
    # --- Korean: intents -------------------------------------------------------------------------------------------
    ("4090으로 돌릴 수 있는 제일 큰 모델", {"lang": K, "intent": "what_fits", "gpus": [("rtx-4090", 1)]}),
    (
        "vram 16기가면 뭐 돌릴 수 있어?",
        {"lang": K, "intent": "what_fits", "gpus": [("generic-16gb", 1)], "flags": ["gpu_generic"]},
    ),
    (
        "3060으로 돌릴 수 있는 큐웬 모델",
        {
            "lang": K,
            "intent": "what_fits",
            "gpus": [("rtx-3060-12gb", 1)],
            "flags": ["gpu_variant"],
            "candidates": True,
        },
    ),
    (
        "라마 3.1 8b랑 큐웬 2.5 7b 비교",
        {"lang": K, "intent": "compare", "model": "llama-3.1-8b", "compare_model": "qwen2.5-7b"},
    ),
    (
        "젬마3 12b vs 큐웬3 14b 4060ti 16기가",
        {
            "lang": K,
            "intent": "compare",
            "model": "gemma-3-12b",
            "compare_model": "qwen3-14b",
            "gpus": [("rtx-4060-ti-16gb", 1)],
        },
    ),
    (
        "라마3.1 8b 4090에서 컨텍스트 최대 얼마?",
        {"lang": K, "intent": "max_context", "model": "llama-3.1-8b", "gpus": [("rtx-4090", 1)]},
    ),
    (
        "큐웬2.5 7b 4090 동시 사용자 몇 명까지?",
        {"lang": K, "intent": "max_users", "model": "qwen2.5-7b", "gpus": [("rtx-4090", 1)]},
    ),
    (
        "라마3.1 70b 3090 두 장이면 어떤 양자화?",
        {"lang": K, "intent": "best_quant", "model": "llama-3.1-70b", "gpus": [("rtx-3090", 2)]},
    ),
    (
        "젬마3 27b 4090 몇 비트까지 돼?",
        {"lang": K, "intent": "best_quant", "model": "gemma-3-27b", "gpus": [("rtx-4090", 1)]},
    ),
    # --- Korean: more community phrasing ---------------------------------------------------------------------------
    ("4060 8기가로 라마3.1 8b 돌아감?", {"lang": K, "model": "llama-3.1-8b", "gpus": [("rtx-4060", 1)]}),
    (
        "3090 중고로 사서 큐웬2.5 32b 돌리려는데 q4_k_m 16k 되나요?",
        {"lang": K, "model": "qwen2.5-32b", "quant": "Q4_K_M", "context": 16384, "gpus": [("rtx-3090", 1)]},
    ),
    (
        "5060ti 16기가 두 장으로 젬마3 27b q8 가능?",
        {"lang": K, "model": "gemma-3-27b", "quant": "Q8_0", "gpus": [("rtx-5060-ti-16gb", 2)]},
    ),
    (
        "맥북 프로 m4 맥스 128기가로 라마3.1 405b q2_k",
        {"lang": K, "model": "llama-3.1-405b", "quant": "Q2_K", "gpus": [("apple-m4-max-128gb", 1)]},
    ),
    ("m1 맥북 8기가에 라마3.2 1b", {"lang": K, "model": "llama-3.2-1b", "gpus": [("apple-m1-8gb", 1)]}),
    ("젬마3 4b 1050ti", {"lang": K, "model": "gemma-3-4b", "gpus": [("gtx-1050-ti", 1)]}),
    (
        "큐웬3 4b 2060에서 32k",
        {"lang": K, "model": "qwen3-4b", "context": 32768, "gpus": [("rtx-2060-6gb", 1)], "flags": ["gpu_variant"]},
    ),
    ("라마3.1 8b 동시 사용자 5명 컨텍스트 4천", {"lang": K, "model": "llama-3.1-8b", "users": 5, "context": 4000}),
    (
        "딥씨크 r1 라마 70b 4090 세 장 q4",
        {"lang": K, "model": "deepseek-r1-distill-llama-70b", "quant": "Q4_K_M", "gpus": [("rtx-4090", 3)]},
    ),
    ("라마3.1 8b kv 캐시 8비트로 64k", {"lang": K, "model": "llama-3.1-8b", "kv": "q8_0", "context": 65536}),
    (
        "엑사원 7.8b 8천 토큰 gtx 1070",
        {"lang": K, "model": "exaone-3.5-7.8b", "context": 8000, "gpus": [("gtx-1070", 1)]},
    ),
    (
        "라마3 8b 4비트 2080 ti 11기가",
        {"lang": K, "model": "llama-3-8b", "quant": "Q4_K_M", "gpus": [("rtx-2080-ti", 1)]},
    ),
    (
        "큐웬2.5 72b awq vllm a100 80기가 두 장",
        {"lang": K, "model": "qwen2.5-72b", "quant": "INT4", "engine": "vllm", "gpus": [("a100-80gb", 2)]},
    ),
    ("gpt-oss 120b 5090 세 장", {"lang": K, "model": "gpt-oss-120b", "gpus": [("rtx-5090", 3)]}),
    (
        "큐웬3 235b a22b m3 울트라 512기가",
        {"lang": K, "model": "qwen3-235b-a22b", "gpus": [("apple-m3-ultra-512gb", 1)]},
    ),
    ("라마3.2 3b 랩탑 4050", {"lang": K, "model": "llama-3.2-3b", "gpus": [("rtx-4050-laptop", 1)]}),
    ("미스트랄 7b 양자화 없이 t4", {"lang": K, "model": "mistral-7b-v0.3", "quant": "F16", "gpus": [("tesla-t4", 1)]}),
    (
        "믹스트랄 8x7b 32k 컨텍스트 a6000",
        {"lang": K, "model": "mixtral-8x7b", "context": 32768, "gpus": [("rtx-a6000", 1)]},
    ),
    (
        "파이3 미니 4천 토큰 1060",
        {"lang": K, "model": "phi-3-mini", "context": 4000, "gpus": [("gtx-1060-6gb", 1)], "flags": ["gpu_variant"]},
    ),
    (
        "h100 두 대로 라마3.1 70b fp16",
        {"lang": K, "model": "llama-3.1-70b", "quant": "F16", "gpus": [("h100-sxm", 2)], "flags": ["gpu_variant"]},
    ),
    (
        "7900 xtx 24기가 라마3.1 8b 128k",
        {"lang": K, "model": "llama-3.1-8b", "context": 131072, "gpus": [("rx-7900-xtx", 1)]},
    ),
    ("rx 7600 8기가 젬마3 4b", {"lang": K, "model": "gemma-3-4b", "gpus": [("rx-7600", 1)]}),
    (
        "라마3.1 8b 젬마2 9b 뭐가 나아? 3060",
        {
            "lang": K,
            "intent": "compare",
            "model": "llama-3.1-8b",
            "compare_model": "gemma-2-9b",
            "gpus": [("rtx-3060-12gb", 1)],
            "flags": ["gpu_variant"],
        },
    ),
    (
        "라마3.3 70b 4090 한장 + 3090 한장",
        {"lang": K, "model": "llama-3.3-70b", "gpus": [("rtx-4090", 1), ("rtx-3090", 1)]},
    ),
    (
        "큐웬2.5 32b 컨텍스트 얼마나 넣을 수 있어? 3090",
        {"lang": K, "intent": "max_context", "model": "qwen2.5-32b", "gpus": [("rtx-3090", 1)]},
    ),
    (
        "딥시크 r1 디스틸 큐웬 32b 몇 명까지 동시에 돼? a100 80기가",
        {"lang": K, "intent": "max_users", "model": "deepseek-r1-distill-qwen-32b", "gpus": [("a100-80gb", 1)]},
    ),
    (
        "라마3.1 8b 플래시어텐션 켜고 64k 4070",
        {"lang": K, "model": "llama-3.1-8b", "flash_attn": True, "context": 65536, "gpus": [("rtx-4070", 1)]},
    ),
    (
        "그래픽카드는 3060이고 램은 32기가인데 라마3.1 8b",
        {"lang": K, "model": "llama-3.1-8b", "gpus": [("rtx-3060-12gb", 1)], "flags": ["gpu_variant"]},
    ),
    ("4090 하나로 라마3.1 70b 돌려도 됨?", {"lang": K, "model": "llama-3.1-70b", "gpus": [("rtx-4090", 1)]}),
    ("큐웬2.5 7b를 사용자 50명이 동시에", {"lang": K, "model": "qwen2.5-7b", "users": 50}),
    (
        "맥스튜디오 M2 울트라 128기가 라마3.3 70b",
        {"lang": K, "model": "llama-3.3-70b", "gpus": [("apple-m2-ultra-128gb", 1)]},
    ),
    (
        "라마3.1 8b 3060 아니면 4060 중에 뭐가 나아?",
        {
            "lang": K,
            "model": "llama-3.1-8b",
            "gpus": [("rtx-3060-12gb", 1), ("rtx-4060", 1)],
            "compare_gpus": True,
            "flags": ["gpu_variant"],
        },
    ),
    (
        "라마3.1 70b 4090이랑 3090으로",
        {"lang": K, "model": "llama-3.1-70b", "gpus": [("rtx-4090", 1), ("rtx-3090", 1)]},
    ),
    ("제미나이 3060", {"lang": K, "error": "unknown_model"}),
    ("안녕하세요 질문 있어요", {"lang": K}),
    ("요즘 라면 뭐가 맛있냐", {"lang": K}),
    # --- KV cache named by "cache" / "캐시" alone, by llama.cpp's flags, before or after the format -------------------
    ("llama 3.1 8b q8_0 cache 32k", {"model": "llama-3.1-8b", "kv": "q8_0", "context": 32768}),
    ("llama 3.1 8b cache q8_0 on a 4090", {"model": "llama-3.1-8b", "kv": "q8_0", "gpus": [("rtx-4090", 1)]}),
    ("llama 3.1 8b kv q8", {"model": "llama-3.1-8b", "kv": "q8_0"}),
    ("llama 3.1 8b q4_k_m cache-type q8_0", {"model": "llama-3.1-8b", "quant": "Q4_K_M", "kv": "q8_0"}),
    ("llama 3.1 8b --cache-type-k q8_0 --cache-type-v q8_0", {"model": "llama-3.1-8b", "kv": "q8_0"}),
    ("llama 3.1 8b cache_type_k=q4_0", {"model": "llama-3.1-8b", "kv": "q4_0"}),
    (
        "qwen3 8b q5_k_m -ctk q4_0 -ctv q4_0 4060",
        {"model": "qwen3-8b", "quant": "Q5_K_M", "kv": "q4_0", "gpus": [("rtx-4060", 1)]},
    ),
    ("llama 3.1 8b q8 kv cache 16k", {"model": "llama-3.1-8b", "kv": "q8_0", "context": 16384}),
    ("llama 3.1 8b q4_0 cache", {"model": "llama-3.1-8b", "kv": "q4_0"}),
    ("llama 3.1 8b cache q4_0", {"model": "llama-3.1-8b", "kv": "q4_0"}),
    ("qwen2.5 7b kv q4 on a 4060", {"model": "qwen2.5-7b", "kv": "q4_0", "gpus": [("rtx-4060", 1)]}),
    (
        "q8_0 32k 3060 llama 3 8b",
        {
            "model": "llama-3-8b",
            "quant": "Q8_0",
            "context": 32768,
            "gpus": [("rtx-3060-12gb", 1)],
            "flags": ["gpu_variant"],
        },
    ),
    ("llama 3 8b q8_0 32k cache q4_0", {"model": "llama-3-8b", "quant": "Q8_0", "kv": "q4_0", "context": 32768}),
    ("라마3.1 8b KV 캐시 q8 32k", {"lang": K, "model": "llama-3.1-8b", "kv": "q8_0", "context": 32768}),
    ("라마3.1 8b 캐시 q8_0으로 4090", {"lang": K, "model": "llama-3.1-8b", "kv": "q8_0", "gpus": [("rtx-4090", 1)]}),
    ("라마3.1 8b 캐시 q4_0으로 64k", {"lang": K, "model": "llama-3.1-8b", "kv": "q4_0", "context": 65536}),
    ("큐웬3 8b q4_k_m에 캐시는 q8_0", {"lang": K, "model": "qwen3-8b", "quant": "Q4_K_M", "kv": "q8_0"}),
    (
        "젬마3 12b q8_0 캐시 3060",
        {"lang": K, "model": "gemma-3-12b", "kv": "q8_0", "gpus": [("rtx-3060-12gb", 1)], "flags": ["gpu_variant"]},
    ),
    (
        "라마3 8b q8_0 32k 3060",
        {
            "lang": K,
            "model": "llama-3-8b",
            "quant": "Q8_0",
            "context": 32768,
            "gpus": [("rtx-3060-12gb", 1)],
            "flags": ["gpu_variant"],
        },
    ),
    # --- a family and a size shared by versions of one architecture: the newest, said loosely --------------------
    ("llama 70b", {"model": "llama-3.3-70b", "flags": ["model_fuzzy"]}),
    ("llama 70b on 2x 3090", {"model": "llama-3.3-70b", "gpus": [("rtx-3090", 2)], "flags": ["model_fuzzy"]}),
    # Llama 2 70B is an older version with a smaller vocabulary: the newest's answer holds for it; named, it is its own.
    ("llama 2 70b on 2x 3090", {"model": "llama-2-70b", "gpus": [("rtx-3090", 2)]}),
    ("라마2 70b", {"lang": K, "model": "llama-2-70b"}),
    ("qwen 27b on a 5090", {"model": "qwen3.6-27b", "gpus": [("rtx-5090", 1)], "flags": ["model_fuzzy"]}),
    (
        "llama 3.1 8b vs llama 70b on a 4090",
        {
            "intent": "compare",
            "model": "llama-3.1-8b",
            "compare_model": "llama-3.3-70b",
            "gpus": [("rtx-4090", 1)],
            "flags": ["model_fuzzy"],
        },
    ),
    # Same architecture but not versions of one model (base and coder), or different architectures: still asked.
    ("qwen 7b on a 3060", {"error": "unknown_model", "suggests": ["qwen2.5-7b", "qwen2.5-coder-7b"]}),
    ("qwen 32b on a 4090", {"error": "unknown_model", "suggests": ["qwen3-32b", "qwen2.5-32b"]}),
    ("deepseek 671b on 8x h200", {"error": "unknown_model", "suggests": ["deepseek-v3", "deepseek-r1"]}),
    ("라마 70b", {"lang": K, "model": "llama-3.3-70b", "flags": ["model_fuzzy"]}),
    (
        "라마 70b 4090 두 장 q4",
        {"lang": K, "model": "llama-3.3-70b", "quant": "Q4_K_M", "gpus": [("rtx-4090", 2)], "flags": ["model_fuzzy"]},
    ),
    (
        "라마 8b 3060",
        {"lang": K, "model": "llama-3.1-8b", "gpus": [("rtx-3060-12gb", 1)], "flags": ["gpu_variant", "model_fuzzy"]},
    ),
    ("큐웬 7b 3060", {"lang": K, "error": "unknown_model", "suggests": ["qwen2.5-7b", "qwen2.5-coder-7b"]}),
    ("젬마 27b 4090", {"lang": K, "error": "unknown_model", "suggests": ["gemma-2-27b", "gemma-3-27b"]}),
    # --- how many GPUs a model needs ------------------------------------------------------------------------------
    (
        "how many 3090s do i need for deepseek v3",
        {"intent": "min_gpus", "model": "deepseek-v3", "gpus": [("rtx-3090", 1)]},
    ),
    ("deepseek v3 needs how many 4090s", {"intent": "min_gpus", "model": "deepseek-v3", "gpus": [("rtx-4090", 1)]}),
    ("how many gpus for llama 3.1 405b", {"intent": "min_gpus", "model": "llama-3.1-405b"}),
    (
        "how many h100s for deepseek r1 at 32k",
        {
            "intent": "min_gpus",
            "model": "deepseek-r1",
            "context": 32768,
            "gpus": [("h100-sxm", 1)],
            "flags": ["gpu_variant"],
        },
    ),
    (
        "딥시크 v3 돌리려면 3090 몇 장 필요해?",
        {"lang": K, "intent": "min_gpus", "model": "deepseek-v3", "gpus": [("rtx-3090", 1)]},
    ),
    (
        "4090 몇 개면 라마 405b 돌아가?",
        {
            "lang": K,
            "intent": "min_gpus",
            "model": "llama-3.1-405b",
            "gpus": [("rtx-4090", 1)],
            "flags": ["model_fuzzy"],
        },
    ),
    (
        "h100 몇 대 있어야 딥시크 r1 돌려?",
        {"lang": K, "intent": "min_gpus", "model": "deepseek-r1", "gpus": [("h100-sxm", 1)], "flags": ["gpu_variant"]},
    ),
    ("그래픽카드 몇 장 있어야 라마3.1 70b 돌아가?", {"lang": K, "intent": "min_gpus", "model": "llama-3.1-70b"}),
    # --- Korean misspellings of model names -----------------------------------------------------------------------
    ("딥싴 v3 h200 8장", {"lang": K, "model": "deepseek-v3", "gpus": [("h200", 8)]}),
    (
        "딥싴 r1 디스틸 큐웬 14b 3060",
        {"lang": K, "model": "deepseek-r1-distill-qwen-14b", "gpus": [("rtx-3060-12gb", 1)], "flags": ["gpu_variant"]},
    ),
    (
        "리마3.1 8b 3060",
        {"lang": K, "model": "llama-3.1-8b", "gpus": [("rtx-3060-12gb", 1)], "flags": ["gpu_variant"]},
    ),
    ("제마3 12b 4060ti 16기가", {"lang": K, "model": "gemma-3-12b", "gpus": [("rtx-4060-ti-16gb", 1)]}),
    ("쿠웬3 8b 4060", {"lang": K, "model": "qwen3-8b", "gpus": [("rtx-4060", 1)]}),
    # --- Gemma 3 QAT (Ollama's qat tags): a Q4_0 file --------------------------------------------------------------
    ("gemma 3 27b qat on a 4090", {"model": "gemma-3-27b", "quant": "Q4_0", "gpus": [("rtx-4090", 1)]}),
    (
        "gemma3:12b-it-qat on a 3060",
        {"model": "gemma-3-12b", "quant": "Q4_0", "gpus": [("rtx-3060-12gb", 1)], "flags": ["gpu_variant"]},
    ),
    ("gemma3:4b-it-qat", {"model": "gemma-3-4b", "quant": "Q4_0"}),
    ("gemma3:1b-it-qat", {"model": "gemma-3-1b", "quant": "Q4_0"}),
    ("젬마3 27b qat 3090", {"lang": K, "model": "gemma-3-27b", "quant": "Q4_0", "gpus": [("rtx-3090", 1)]}),
    (
        "올라마 gemma3:4b-it-qat 1650",
        {"lang": K, "model": "gemma-3-4b", "quant": "Q4_0", "engine": "llama.cpp", "gpus": [("gtx-1650", 1)]},
    ),
    # --- settings no slot took are reported, never guessed ---------------------------------------------------------
    ("llama 3.1 8b on a 5090ti", {"model": "llama-3.1-8b", "unparsed": ["5090ti"]}),
    ("라마3 8b 8k 5090ti", {"lang": K, "model": "llama-3-8b", "context": 8192, "unparsed": ["5090ti"]}),
]

_PLAIN_DEFAULTS = {"quant", "context", "users", "kv_cache", "engine", "ram", "ram_speed"}


def _ids() -> list[str]:
    return [q if q else "<empty>" for q, _ in TABLE]


def test_table_size() -> None:
    assert len(TABLE) >= 150
    korean = sum(1 for _, expected in TABLE if expected.get("lang") == K)
    assert korean * 2 >= len(TABLE) - 10  # about half Korean


@pytest.mark.parametrize(("question", "expected"), TABLE, ids=_ids())
def test_table(question: str, expected: dict[str, Any]) -> None:
    catalog = load_catalog()
    if "error" in expected:
        with pytest.raises(VramfitError) as info:
            parse(question, catalog)
        assert info.value.code == expected["error"]
        assert len(info.value.suggestions) <= 5
        for suggestion in expected.get("suggests", []):
            assert suggestion in info.value.suggestions
        return
    parsed = parse(question, catalog)
    assert parsed.lang == expected.get("lang", E)
    assert parsed.intent == expected.get("intent", "fit")
    assert parsed.model == expected.get("model")
    assert parsed.compare_model == expected.get("compare_model")
    assert bool(parsed.model_candidates) == expected.get("candidates", False)
    assert parsed.quant == expected.get("quant")
    assert parsed.context == expected.get("context")
    assert parsed.users == expected.get("users")
    assert (parsed.kv_cache.value if parsed.kv_cache else None) == expected.get("kv")
    assert (parsed.engine.value if parsed.engine else None) == expected.get("engine")
    assert parsed.compare_engines == expected.get("compare_engines", False)
    assert parsed.compare_gpus == expected.get("compare_gpus", False)
    assert parsed.flash_attn == expected.get("flash_attn")
    assert [(c.gpu.id, c.count) for c in parsed.gpus] == expected.get("gpus", [])
    assert [a for a in parsed.assumed if a not in _PLAIN_DEFAULTS] == expected.get("flags", [])
    assert list(parsed.unparsed) == expected.get("unparsed", [])
    if "ram_gb" in expected:
        assert parsed.ram_bytes == expected["ram_gb"] << 30
    for key, value in (("quant", parsed.quant), ("context", parsed.context), ("users", parsed.users)):
        assert (key in parsed.assumed) == (value is None)
