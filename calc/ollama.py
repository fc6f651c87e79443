"""Ollama as it runs llama.cpp: the settings it picks when the question names Ollama and leaves them open.

Ollama starts llama.cpp's server for GGUF models, so the memory rules are llama.cpp's (:mod:`calc.engines.llama_cpp`);
what differs is the defaults. The context, when neither the model nor ``OLLAMA_CONTEXT_LENGTH`` sets one, follows the
GPUs' memory (Ollama's docs/context-length.mdx at commit 948f69330acf96a2310f1b53fdfc211731a386d8: "< 24 GiB VRAM: 4k
context, 24-48 GiB VRAM: 32k context, >= 48 GiB VRAM: 256k context"), and never exceeds the model's own context
(the same page's ``ollama ps`` shows gemma4 at 131072).

Flash attention, unless ``OLLAMA_FLASH_ATTENTION`` says otherwise, is on only for the model families Ollama enables it
for (:func:`flash_attention_by_default`); without it ``OLLAMA_KV_CACHE_TYPE`` does nothing and the cache stays f16 (a
published measurement of Ollama 0.20.3: qwen2.5 with q8_0 and no flash attention grows 12.00 KiB per token, the f16
figure; with ``OLLAMA_FLASH_ATTENTION=1`` 6.37 KiB, q8_0's), so a quantized cache asked for on Ollama is answered
with flash attention on, as the command to copy sets it.

``ollama ps`` shows where a loaded model sits, "100% GPU" or "16%/84% CPU/GPU": the share of the model's memory on
each side (:func:`processor_split`).
"""

from __future__ import annotations

from vramfit.calc.families import BY_ARCH

GIB = 1 << 30


def flash_attention_by_default(arch: str) -> bool:
    """Whether Ollama runs a model of llama.cpp architecture ``arch`` with flash attention when nothing says: the
    families that set ``ollama_flash_attention`` (ollama/ollama pull requests #11996 "gptoss: enable flash attention by
    default" (2025-08), #12482 "Enable flash attention by default for qwen3 and qwen3moe" (2025-10), #12639 "Enable
    flash attention by default for gemma3", all merged). Others only with OLLAMA_FLASH_ATTENTION=1 (an April 2026
    comment on ollama#8335: "Not for gemma4 unfortunately"); an architecture the calculator does not model, never."""
    family = BY_ARCH.get(arch)
    return family is not None and family.ollama_flash_attention


CONTEXT_BY_VRAM: tuple[tuple[int, int], ...] = ((48 * GIB, 262144), (24 * GIB, 32768), (0, 4096))


def default_context(vram_bytes: int, trained_context: int) -> int:
    """Ollama's context for ``vram_bytes`` of GPU memory (all GPUs), capped at the model's trained context."""
    context = next(tokens for floor, tokens in CONTEXT_BY_VRAM if vram_bytes >= floor)
    return min(context, trained_context) if trained_context > 0 else context


def processor_split(gpu_bytes: int, cpu_bytes: int) -> tuple[int, int]:
    """``ollama ps``'s PROCESSOR column as (CPU %, GPU %), rounded as Ollama prints them."""
    total = gpu_bytes + cpu_bytes
    if total <= 0 or cpu_bytes <= 0:
        return 0, 100
    cpu = round(100 * cpu_bytes / total)
    return cpu, 100 - cpu
