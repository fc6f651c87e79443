"""Bounds on what a model description may claim, checked before anything is sized or allocated.

A config.json or GGUF header of a few hundred bytes can claim ten million layers; everything downstream builds
per-layer tuples, so each count is checked against a bound far above any released model and below what would cost
real time or memory. The bounds name the largest real values they leave room for.
"""

from __future__ import annotations

MAX_LAYERS = 1024  # Llama 3.1 405B has 126, DeepSeek V3 61, Kimi K2 61
MAX_HIDDEN = 1 << 17  # 131,072; Llama 405B: 16,384
MAX_HEADS = 4096  # DeepSeek V3: 128 query heads
MAX_HEAD_DIM = 1 << 14  # MLA latent + rope: 576
MAX_FFN = 1 << 21  # 2M; Llama 405B: 53,248
MAX_VOCAB = 1 << 23  # 8M tokens; Gemma 3: 262,144
MAX_EXPERTS = 1 << 14  # 16,384; Kimi K2: 384
MAX_CONTEXT_LENGTH = 1 << 28  # 268M; Llama 4 Scout: 10,485,760
MAX_CONFIG_BYTES = 4 << 20  # a config.json is a few KiB; 4 MiB leaves room for label maps and comments
MAX_GGUF_HEADER_BYTES = 32 << 20  # the metadata and tensor table of a large-vocabulary GGUF take 5 to 8 MiB
MAX_GGUF_KEYS = 1 << 16
MAX_GGUF_TENSORS = 1 << 17  # DeepSeek V3 GGUFs have about 1,100 tensors
MAX_GGUF_STRING = 1 << 24  # 16 MiB: no key, value or tensor name is longer
MAX_GGUF_ARRAY = 1 << 20  # items in one metadata array; Gemma 3 lists 262,144 tokens, Qwen3 151,387 merges
MAX_KEPT_ARRAY = 1 << 14  # longer arrays (token scores, types, merges) are counted and skipped, not kept
GGML_MAX_DIMS = 4  # ggml.h GGML_MAX_DIMS
MAX_TENSOR_ELEMENTS = 1 << 46
