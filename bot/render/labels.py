"""Words every renderer shares (the embed, the terminal, the JSON's messages), so a verdict reads the same in each."""

from __future__ import annotations

from vramfit.bot.i18n import Tr, _
from vramfit.calc.fit_params import FitDefault
from vramfit.calc.ram_speed import RamSpeed
from vramfit.calc.server_caches import ServerCaches

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


# A KV cache of 4 or 5 bits a value: its quality cost, said wherever such a cache is asked for. llama.cpp rotates the
# K and V of a quantized cache with a Hadamard transform by default since PR #21038 (merged 2026-04-01; b11434 has
# it), which made low-bit caches cheap on most models: q4_0 K and V cost +0.22 % perplexity on Qwen3.5-4B
# (ollama37#102). Before it, the same q4_0 keys cost 11.3 % on Qwen3-30B-A3B (ik_llama.cpp PR #1034, "no Hadamard"
# column). What remains is long, exact work: tool calls in long agentic sessions fail more with int4 KV (Level1Techs,
# via eeshansrivastava89/minimal-ai#18), and GSM8K drops to 0.83-0.85 at q4_0 from 0.96 (FreeToken#268).
LOW_BIT_KV = frozenset({"q5_1", "q5_0", "q4_1", "q4_0", "iq4_nl"})
LOW_BIT_KV_NOTE = _(
    "A {kv} KV cache costs little quality on most models now that llama.cpp rotates quantized caches (one test: "
    "+0.22 % perplexity with q4_0 on Qwen3.5 4B), but long agentic tool use fails more often with it."
)

# Models with learned attention sinks (gpt-oss) are the exception to the rotation: at q8_0 K, their median KL
# divergence from the f16 cache is 0.055 and the top token is the same at 74.9 % of positions
# (TheTom/llama-cpp-turboquant#305), so any quantized K cache gets this note on them.
QUANTIZED_KV = frozenset({"q8_0", *LOW_BIT_KV})
SINK_KV_NOTE = _(
    "{model} uses attention sinks, which a quantized K cache hurts even with llama.cpp's rotation (one test at q8_0: "
    "a different top token at 1 position in 4). Keep the K cache in f16."
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


def server_caches_line(caches: ServerCaches | None, tr: Tr, ram_bytes: int) -> str:
    """llama-server's context checkpoints and prompt cache in system RAM (calc.server_caches), where the model makes
    checkpoints or the command cuts either to fit the RAM; "" otherwise (the default prompt cache alone is counted in
    the RAM verdict without a line)."""
    if caches is None or (not caches.checkpoint_bytes and caches.is_default):
        return ""
    parts = {
        "checkpoints": tr.gib(caches.checkpoints_bytes),
        "n": caches.ctx_checkpoints,
        "size": tr.small_size(caches.checkpoint_bytes),
        "cache": tr.gib(caches.cache_ram_bytes),
        "ram": tr.gib(ram_bytes),
    }
    if caches.is_default:
        return "💾 " + tr(
            _("System RAM: context checkpoints up to {checkpoints} ({n} × {size} a slot) + prompt cache up to "
              "{cache}, counted"),
            **parts,
        )  # fmt: skip
    return "💾 " + tr(
        _("System RAM: context checkpoints up to {checkpoints} ({n} × {size} a slot) + prompt cache up to {cache}: "
          "the command sets them to fit {ram} of RAM"),
        **parts,
    )  # fmt: skip


def fit_default_line(choice: FitDefault | None, tr: Tr) -> str:
    """What llama-server's --fit (on by default) does to the plain ``llama-server -m MODEL``, which leaves the context
    and the layers to it (calc.fit_params); "" where it changes nothing."""
    if choice is None or not choice.changed:
        return ""
    parts = {"context": tr.num(choice.context), "trained": tr.num(choice.trained_context)}
    if not choice.fits:
        template = _("Run plainly (`llama-server -m` with no -c or -ngl), --fit cannot leave 1 GiB free, even at "
                     "{context} tokens")  # fmt: skip
    elif choice.n_cpu_moe is not None:
        template = _("Run plainly (`llama-server -m` with no -c or -ngl), --fit runs it at {context} tokens and moves "
                     "the experts of about {n} layers to system RAM")  # fmt: skip
        parts["n"] = tr.num(choice.n_cpu_moe)
    elif choice.gpu_layers is not None:
        template = _("Run plainly (`llama-server -m` with no -c or -ngl), --fit runs it at {context} tokens and keeps "
                     "about {n} layers on the GPU")  # fmt: skip
        parts["n"] = tr.num(choice.gpu_layers)
    else:
        template = _("Run plainly (`llama-server -m` with no -c or -ngl), --fit cuts the context from {trained} to "
                     "{context} to keep 1 GiB free")  # fmt: skip
    return "🧮 " + tr(template, **parts)
