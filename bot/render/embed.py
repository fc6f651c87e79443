"""The answer card, "show the math", and error replies, rendered for Discord in Korean or English.

Pure functions of a :class:`bot.answer_port.Card` and a language: no I/O, so they are tested directly against
Discord's limits (:mod:`bot.render.limits`). Korean copy never puts a particle right after a placeholder
("실행 가능 — **{gpu}**", not "{gpu}에서"), because the right particle depends on how the name is read.
"""

from __future__ import annotations

from collections.abc import Sequence

import discord
from discord.utils import escape_markdown, escape_mentions

from bot.answer_port import AnswerError, Card, GpuFit, Tip, Verdict
from bot.i18n import Lang, Tr, _, format_tokens_short
from bot.render.limits import DESCRIPTION, FIELD_VALUE, EmbedBuilder, clamp, clamp_lines
from bot.version import vramfit_version

BAR_CELLS = 20
NAIVE_KV_RATIO = 1.25  # show the naive KV figure when it differs from the engine's by more than this factor
SUGGESTIONS_PER_GROUP = 3

EMOJI: dict[Verdict, str] = {"fits": "✅", "tight": "⚠️", "partial": "🟧", "no": "❌"}
COLOUR: dict[Verdict, int] = {"fits": 0x2ECC71, "tight": 0xF1C40F, "partial": 0xE67E22, "no": 0xE74C3C}
NEUTRAL_COLOUR = 0x5865F2

ENGINE_NAMES = {"llama.cpp": "llama.cpp", "vllm": "vLLM"}
SEGMENT_ORDER = ("consumer", "laptop", "workstation", "datacenter", "apple", "generic")
SEGMENT_GROUP = {"laptop": "consumer"}  # laptops sit with the consumer cards


def clean(text: str) -> str:
    """User-supplied text made inert in Markdown (mentions are also blocked by ``allowed_mentions``)."""
    return escape_mentions(escape_markdown(text))


def engine_name(engine: str) -> str:
    """How the engines spell themselves."""
    return ENGINE_NAMES.get(engine.lower(), engine)


def gpu_label(fit: GpuFit) -> str:
    name = clean(fit.gpu_name)
    return f"{fit.count}× {name}" if fit.count > 1 else name


def _segment_label(tr: Tr, segment: str) -> str:
    labels = {
        "consumer": _("Consumer"),
        "workstation": _("Workstation"),
        "datacenter": _("Datacenter"),
        "apple": _("Apple Silicon"),
    }
    return tr(labels.get(segment, _("Other")))


def verdict_word(tr: Tr, verdict: Verdict) -> str:
    words = {
        "fits": _("fits"),
        "tight": _("tight fit"),
        "partial": _("partly on the CPU"),
        "no": _("doesn't fit"),
    }
    return tr(words[verdict])


def bar(used: int, capacity: int) -> str:
    """A 20-cell text bar of ``used`` against ``capacity``; full and flagged when over."""
    if capacity <= 0:
        return ""
    share = used / capacity
    filled = min(BAR_CELLS, round(share * BAR_CELLS))
    return "█" * filled + "░" * (BAR_CELLS - filled)


def _title(card: Card, tr: Tr) -> str:
    a = card.assumptions
    parts = [clean(card.model.name), a.quant, tr(_("{context} context"), context=format_tokens_short(a.context))]
    if a.users > 1:
        parts.append(tr.ngettext("{n} user", "{n} users", a.users))
    if a.engine != "llama.cpp":
        parts.append(engine_name(a.engine))
    return " · ".join(parts)


def _headline(card: Card, tr: Tr) -> tuple[str, int]:
    total = card.estimate.total_bytes
    if not card.named_gpus or not card.fits:
        return tr(_("Needs about **{total}** of GPU memory."), total=tr.gib(total)), NEUTRAL_COLOUR
    fit = card.fits[0]
    gpu = gpu_label(fit)
    templates = {
        "fits": _("✅ Runs on **{gpu}** with {free} to spare."),
        "tight": _("⚠️ Fits on **{gpu}**, but only {free} is left."),
        "partial": _("🟧 Only partly fits on **{gpu}**: {gpu_layers} of {layers} layers on the GPU."),
        "no": _("❌ Does not fit on **{gpu}**: {short} short."),
    }
    line = tr(
        templates[fit.verdict],
        gpu=gpu,
        free=tr.gib(max(fit.headroom_bytes, 0)),
        short=tr.gib(max(-fit.headroom_bytes, 0)),
        gpu_layers=tr.num(fit.gpu_layers),
        layers=tr.num(fit.layers),
    )
    budget = fit.budget_bytes
    percent = tr.num(100 * total / budget) if budget else "?"
    usage = f"`{bar(total, budget)}` {tr.gib(total)} / {tr.gib(budget)} · {percent}%"
    return f"{line}\n{usage}", COLOUR[fit.verdict]


def _gpu_line(fit: GpuFit, tr: Tr) -> str:
    templates = {
        "fits": _("✅ **{gpu}** — fits, {free} free"),
        "tight": _("⚠️ **{gpu}** — tight fit, {free} free"),
        "partial": _("🟧 **{gpu}** — {gpu_layers} of {layers} layers on the GPU, the rest on the CPU (slower)"),
        "no": _("❌ **{gpu}** — doesn't fit, {short} short"),
    }
    return tr(
        templates[fit.verdict],
        gpu=gpu_label(fit),
        free=tr.gib(max(fit.headroom_bytes, 0)),
        short=tr.gib(max(-fit.headroom_bytes, 0)),
        gpu_layers=tr.num(fit.gpu_layers),
        layers=tr.num(fit.layers),
    )


def _tip_line(tip: Tip, tr: Tr) -> str:
    templates = {
        "context": _("Lower the context: {value} → {total}"),
        "kv_cache": _("Quantize the KV cache to {value} → {total}"),
        "quant": _("A smaller quant, {value} → {total}"),
        "gpus": _("Use {value} GPUs → {total}"),
    }
    value = format_tokens_short(int(tip.value)) if tip.kind == "context" and tip.value.isdigit() else tip.value
    text = tr(templates[tip.kind], value=clean(value), total=tr.gib(tip.total_bytes))
    return f"{EMOJI[tip.verdict]} {text} ({verdict_word(tr, tip.verdict)})"


def _footer(card: Card, tr: Tr) -> str:
    a = card.assumptions
    parts = [
        tr(_("Assumes {quant}"), quant=a.quant),
        tr(_("context {tokens}"), tokens=tr.num(a.context)),
        tr.ngettext("{n} user", "{n} users", a.users),
        tr(_("KV cache {kv}"), kv=a.kv_cache),
        engine_name(a.engine),
        tr(_("flash attention on")) if a.flash_attn else tr(_("flash attention off")),
        tr(_("1 GiB = 2³⁰ bytes")),
        tr(_("estimates, not measurements")),
        f"vramfit {vramfit_version()}",
    ]
    return " · ".join(parts)


def render_card(card: Card, lang: Lang) -> discord.Embed:
    """The answer card for ``card`` in ``lang``, within every Discord limit."""
    tr = Tr(lang)
    e = card.estimate
    description, colour = _headline(card, tr)
    builder = EmbedBuilder(title=_title(card, tr), description=description, footer=_footer(card, tr), colour=colour)

    weights = [f"**{tr.gib(e.weights_bytes)}**"]
    if e.host_bytes > 0:
        weights.append(tr(_("+{host} in system RAM"), host=tr.gib(e.host_bytes)))
    if e.file_bytes > 0:
        weights.append(tr(_("file {file}"), file=tr.gib(e.file_bytes)))
    builder.add_field(tr(_("Weights")), "\n".join(weights), inline=True, priority=90)

    kv = [f"**{tr.gib(e.kv_cache_bytes)}**"]
    naive, actual = e.kv_cache_naive_bytes, e.kv_cache_bytes
    if naive > 0 and actual > 0 and max(naive, actual) > NAIVE_KV_RATIO * min(naive, actual):
        kv.append(tr(_("naive formula: {naive}"), naive=tr.gib(naive)))
        if "sliding_window" in card.notes or card.model.sliding_window:
            kv.append(tr(_("(sliding-window layers keep fewer tokens)")))
    builder.add_field(tr(_("KV cache")), "\n".join(kv), inline=True, priority=90)

    overhead = [
        f"**{tr.gib(e.overhead_bytes)}**",
        tr(
            _("compute {compute} + runtime {runtime}"), compute=tr.gib(e.compute_bytes), runtime=tr.gib(e.runtime_bytes)
        ),
    ]
    builder.add_field(tr(_("Overhead")), "\n".join(overhead), inline=True, priority=80)
    builder.add_field(tr(_("Total")), f"**{tr.gib(e.total_bytes)}**", inline=True, priority=95)

    if card.named_gpus:
        lines = [_gpu_line(fit, tr) for fit in card.fits]
        name = tr.ngettext("Your GPU", "Your GPUs", len(card.fits))
        builder.add_field(name, clamp_lines(lines, FIELD_VALUE), priority=85)
        first = card.fits[0] if card.fits else None
        if first is not None and (first.max_context or first.verdict in ("partial", "no")):
            if first.max_context:
                value = tr.ngettext("{n} token", "{n} tokens", first.max_context)
            else:
                value = tr(_("none: it does not fit even with a short context"))
            builder.add_field(tr(_("Largest context on {gpu}"), gpu=gpu_label(first)), value, priority=70)
    else:
        _add_suggestions(builder, card.fits, tr)

    if card.tips:
        lines = [_tip_line(tip, tr) for tip in card.tips]
        builder.add_field(tr(_("What would help")), clamp_lines(lines, FIELD_VALUE), priority=60)
    return builder.build()


def _add_suggestions(builder: EmbedBuilder, fits: Sequence[GpuFit], tr: Tr) -> None:
    groups: dict[str, list[GpuFit]] = {}
    for fit in fits:
        if fit.verdict in ("fits", "tight"):
            segment = SEGMENT_GROUP.get(fit.segment, fit.segment)
            groups.setdefault(segment if segment in SEGMENT_ORDER else "generic", []).append(fit)
    if not groups:
        builder.add_field(tr(_("GPUs")), tr(_("No single preset GPU fits this. See the tips below.")), priority=85)
        return
    for rank, segment in enumerate(s for s in SEGMENT_ORDER if s in groups):
        picks = sorted(groups[segment], key=lambda f: (f.total_memory_bytes, f.count))[:SUGGESTIONS_PER_GROUP]
        lines = [
            tr(_("**{gpu}** — {free} free"), gpu=gpu_label(fit), free=tr.gib(max(fit.headroom_bytes, 0)))
            for fit in picks
        ]
        name = tr(_("Smallest that fit: {group}"), group=_segment_label(tr, segment))
        builder.add_field(name, clamp_lines(lines, FIELD_VALUE), inline=True, priority=75 - rank)


def render_math(card: Card, lang: Lang) -> discord.Embed:
    """The formulas behind ``card`` with this model's numbers (sent ephemerally)."""
    tr = Tr(lang)
    e, a, m = card.estimate, card.assumptions, card.model
    lines: list[str] = []
    if m.params > 0 and e.file_bytes > 0:
        bpw = e.file_bytes * 8 / m.params
        lines.append(
            tr(
                _(
                    "**Weights:** {params} parameters × {bpw} bits ÷ 8 ≈ file {file}; {host} of it stays in system "
                    "RAM, so {weights} on the GPU"
                ),
                params=tr.num(m.params / 1e9, 1) + "B",
                bpw=tr.num(bpw, 2),
                file=tr.gib(e.file_bytes),
                host=tr.gib(e.host_bytes),
                weights=tr.gib(e.weights_bytes),
            )
        )
    else:
        lines.append(
            tr(
                _("**Weights:** file {file}; {host} of it stays in system RAM, so {weights} on the GPU"),
                file=tr.gib(e.file_bytes),
                host=tr.gib(e.host_bytes),
                weights=tr.gib(e.weights_bytes),
            )
        )
    if m.layers and m.kv_heads and m.head_dim:
        lines.append(
            tr(
                _(
                    "**KV cache, naive:** 2 × layers {layers} × KV heads {kv_heads} × head size {head_dim} × tokens "
                    "{tokens} × users {users} × bytes {bytes} ({kv}) = {naive}"
                ),
                layers=tr.num(m.layers),
                kv_heads=tr.num(m.kv_heads),
                head_dim=tr.num(m.head_dim),
                tokens=tr.num(a.context),
                users=tr.num(a.users),
                bytes=tr.num(a.kv_bytes_per_element, 2 if a.kv_bytes_per_element % 1 else 0),
                kv=a.kv_cache,
                naive=tr.gib(e.kv_cache_naive_bytes),
            )
        )
    if e.kv_cache_bytes != e.kv_cache_naive_bytes or not (m.layers and m.kv_heads and m.head_dim):
        lines.append(
            tr(
                _("**KV cache, as {engine} allocates it:** {kv}"),
                engine=engine_name(a.engine),
                kv=tr.gib(e.kv_cache_bytes),
            )
        )
        if m.sliding_window:
            lines.append(
                tr(_("Sliding-window layers keep only the last {window} tokens."), window=tr.num(m.sliding_window))
            )
    lines.append(
        tr(
            _("**Overhead:** compute buffers {compute} + runtime (CUDA context, driver) {runtime} = {overhead}"),
            compute=tr.gib(e.compute_bytes),
            runtime=tr.gib(e.runtime_bytes),
            overhead=tr.gib(e.overhead_bytes),
        )
    )
    lines.append(
        tr(
            _("**Total:** {weights} + {kv} + {overhead} = {total}"),
            weights=tr.gib(e.weights_bytes),
            kv=tr.gib(e.kv_cache_bytes),
            overhead=tr.gib(e.overhead_bytes),
            total=tr.gib(e.total_bytes),
        )
    )
    if card.named_gpus:
        for fit in card.fits:
            lines.append(
                tr(
                    _("**{gpu}:** {memory} − {total} = {headroom}"),
                    gpu=gpu_label(fit),
                    memory=tr.gib(fit.budget_bytes),
                    total=tr.gib(e.total_bytes),
                    headroom=tr.gib(fit.headroom_bytes),
                )
            )
    builder = EmbedBuilder(
        title=tr(_("The math: {model}"), model=clean(m.name)),
        description=clamp_lines(lines, DESCRIPTION),
        footer=_footer(card, tr),
        colour=NEUTRAL_COLOUR,
    )
    return builder.build()


def render_error(error: AnswerError, lang: Lang) -> str:
    """A short, friendly message for a question the user must fix."""
    tr = Tr(lang)
    subject = clamp(clean(error.subject), 100)
    if error.code == "unknown_model" and not subject:
        text = tr(_("Which model? Name one, for example `llama3 8b 32k on a 3060`."))
    elif error.code == "unknown_model":
        text = tr(_("I don't know the model **{subject}**."), subject=subject)
    elif error.code == "unknown_gpu":
        text = tr(_("I don't know the GPU **{subject}**."), subject=subject)
    elif error.code == "unknown_quant":
        text = tr(_("Unknown quantization: **{subject}**."), subject=subject)
    elif error.code == "bad_number":
        text = tr(_("That number is out of range or unreadable: **{subject}**."), subject=subject or "?")
    else:
        text = tr(_("I couldn't answer that: {reason}"), reason=clamp(clean(error.message or error.code), 300))
    if error.suggestions:
        names = ", ".join(f"`{clean(s)}`" for s in error.suggestions[:5])
        text += "\n" + tr(_("Did you mean: {names}"), names=names)
    return clamp(text, 2000)


def help_text(lang: Lang) -> str:
    """What to say when mentioned with no question."""
    tr = Tr(lang)
    return tr(
        _(
            "Ask me whether a model runs on a GPU, for example: `llama3 8b 32k on a 3060` or `qwen2.5 14b q8 4090`. "
            "Or use `/vram`."
        )
    )


def embed_as_text(embed: discord.Embed) -> str:
    """A plain-text rendering of an embed (logs, reports, tests)."""
    out: list[str] = []
    if embed.title:
        out.append(f"# {embed.title}")
    if embed.description:
        out.append(embed.description)
    for f in embed.fields:
        out.append(f"## {f.name}\n{f.value}")
    if embed.footer.text:
        out.append(f"-- {embed.footer.text}")
    return "\n".join(out)
