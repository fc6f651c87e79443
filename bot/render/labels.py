"""Words every renderer shares (the embed, the terminal, the JSON's messages), so a verdict reads the same in each."""

from __future__ import annotations

from vramfit.bot.i18n import Tr, _
from vramfit.calc.ram_speed import RamSpeed

# A verdict as a person reads it; "partial" means N of M layers run on the GPU and the rest on the CPU.
VERDICT_LABELS: dict[str, str] = {
    "fits": _("fits"),
    "tight": _("tight fit"),
    "partial": _("partly offloaded to the CPU"),
    "no": _("doesn't fit"),
}


# What the runtime line of a llama.cpp answer covers, by the first GPU's backend (calc/runtime.py sizes each).
RUNTIME_NOTES: dict[str, str] = {
    "cuda": _("(CUDA context and driver)"),
    "rocm": _("(ROCm context and driver)"),
    "sycl": _("(SYCL context and driver)"),
    "vulkan": _("(Vulkan context and driver)"),
    "metal": _("(Metal's reserve)"),
}


def ram_speed_label(speed: RamSpeed, tr: Tr) -> str:
    """The system RAM a decode estimate read weights at: "DDR5-5600, 2-channel, 89.6 GB/s"."""
    return tr(
        _("{name}, {channels}-channel, {gbs} GB/s"),
        name=speed.name,
        channels=speed.channels,
        gbs=tr.num(speed.bandwidth_gbs, 1),
    )


# An uploader's mix ("UD-Q4_K_XL", "Q6_K_L") answered without its file, as the standard quant it starts from.
QUANT_MIX_NOTE = _(
    "{mix} is sized as {quant}, the nearest standard quant: its maker keeps some tensors at higher precision, so the "
    "file is a little larger. Give the repo or the file for its exact size."
)


# A KV cache of 4 or 5 bits a value: its quality cost, said wherever such a cache is asked for. Measured: on llama.cpp's
# CUDA build, Llama 3 8B's KL divergence from the f16 model is 0.00019 with an f16 cache and 0.00155 with q8_0 K and V
# (llama.cpp PR #7412, JohannesGaessler, 2024-05-20); on Qwen3-30B-A3B, perplexity rises 0.04 % with a q8_0 K cache
# and 11.3 % with a q4_0 one, plain block quantization as llama.cpp's (ik_llama.cpp PR #1034, "no Hadamard" column,
# 2025-12-04), and the loss of a quantized cache grows with the context (ik_llama.cpp PR #1547 measures at 8,192
# tokens for that reason).
LOW_BIT_KV = frozenset({"q5_1", "q5_0", "q4_1", "q4_0", "iq4_nl"})
LOW_BIT_KV_NOTE = _(
    "A {kv} KV cache costs quality, most on long contexts (one test: +11 % perplexity with q4_0 keys, +0.04 % with "
    "q8_0)."
)


# A GPU sold in several memory sizes, named without one: answered for its most common size (presets: ``default``).
GPU_VARIANT_NOTE = _("{gpu}, the most common size of the GPU named (also sold: {others})")


# A repo or tag whose server could not be read, answered from the catalog's preset of the same model.
SOURCE_UNREAD_NOTE = _(
    "{source} could not be read (its server did not answer), so this answer is vramfit's preset of the same model, "
    "not that file's own header."
)


def signed_gib(tr: Tr, num_bytes: int) -> str:
    """"+1.2 GiB", "−0.4 GiB"; a difference that rounds to nothing is "±0.0 GiB", never "−0.0"."""
    shown = tr.gib(abs(num_bytes))
    if round(abs(num_bytes) * 10 / (1 << 30)) == 0:
        return "±" + shown
    return ("+" if num_bytes > 0 else "−") + shown
