"""The answer cards, "show the math", and error replies, rendered for Discord in Korean or English.

One card per intent: does it fit (with a solver's number on top, or llama.cpp and vLLM side by side), what fits a
GPU, and two models compared component by component with the reason their KV caches differ.

Pure functions of a :class:`bot.answering.cards.Card` and a language: no I/O, so they are tested directly against
Discord's limits (:mod:`bot.render.limits`). Korean copy never puts a particle right after a placeholder
("실행 가능 — **{gpu}**", not "{gpu}에서"), because the right particle depends on how the name is read.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import discord
from discord.utils import escape_markdown, escape_mentions

from vramfit.bot.answering.cards import (
    AnyCard,
    Assumptions,
    Card,
    CompareCard,
    GpuFit,
    KvDifference,
    Speed,
    Tip,
    Verdict,
    WhatFitsCard,
)
from vramfit.bot.i18n import Lang, Tr, _, format_tokens_short
from vramfit.bot.render.errors import describe_error, error_repos, number_limits
from vramfit.bot.render.labels import (
    GPU_VARIANT_NOTE,
    LOW_BIT_KV,
    LOW_BIT_KV_NOTE,
    QUANT_MIX_NOTE,
    QUANTIZED_KV,
    SINK_KV_NOTE,
    SOURCE_UNREAD_NOTE,
    VERDICT_LABELS,
    fit_default_line,
    ram_speed_label,
    server_caches_line,
    signed_gib,
)
from vramfit.bot.render.limits import (
    DESCRIPTION,
    FIELD_VALUE,
    PHONE_COLUMNS,
    EmbedBuilder,
    clamp,
    clamp_lines,
    columns,
)
from vramfit.bot.render.text import (
    ASK_DISPLAY_SHARE,
    IMAGES_VLLM,
    NO_MTP_HEAD,
    NO_PREFILL,
    context_limit_line,
    first_token_text,
    images_line,
    mmproj_line,
    mtp_line,
    unified_memory_sentence,
    vision_encoder_line,
)
from vramfit.bot.untrusted_text import inert
from vramfit.bot.version import vramfit_version
from vramfit.calc.errors import VramfitError
from vramfit.calc.gpu import GIB
from vramfit.calc.pcie import ASSUMED_LINK, link_label
from vramfit.calc.request import MAX_GPU_COUNT, Engine

BAR_CELLS = 20
NAIVE_KV_RATIO = 1.25  # show the naive KV figure when it differs from the engine's by more than this factor
SAME_KV_RATIO = 1.15  # compared KV caches closer than this are "about the same"
FAR_KV_RATIO = 2.0  # ... and this far apart, "far more"
KV_REASONS_IN_LINE = 2  # reasons named in a comparison's one-line explanation
SUGGESTIONS_PER_GROUP = 2

EMOJI: dict[Verdict, str] = {"fits": "✅", "tight": "⚠️", "partial": "🟧", "no": "❌"}
COLOUR: dict[Verdict, int] = {"fits": 0x2ECC71, "tight": 0xF1C40F, "partial": 0xE67E22, "no": 0xE74C3C}
NEUTRAL_COLOUR = 0x5865F2

ENGINE_NAMES = {"llama.cpp": "llama.cpp", "vllm": "vLLM"}
SEGMENT_ORDER = ("consumer", "laptop", "workstation", "datacenter", "apple", "unified", "generic")
SEGMENT_GROUP = {"laptop": "consumer"}  # laptops sit with the consumer cards


def clean(text: str) -> str:
    """User-supplied text made inert in Markdown (mentions are also blocked by ``allowed_mentions``), without the
    control, bidi-override and zero-width characters a model file's name may carry (bot.untrusted_text.inert)."""
    return escape_mentions(escape_markdown(inert(text)))


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
        "unified": _("Unified memory"),
    }
    return tr(labels.get(segment, _("Other")))


def verdict_word(tr: Tr, verdict: Verdict) -> str:
    return tr(VERDICT_LABELS[verdict])


def bar(used: int, capacity: int) -> str:
    """A 20-cell text bar of ``used`` against ``capacity``; full and flagged when over."""
    if capacity <= 0:
        return ""
    share = used / capacity
    filled = min(BAR_CELLS, round(share * BAR_CELLS))
    return "█" * filled + "░" * (BAR_CELLS - filled)


def _settings(a: Assumptions, tr: Tr, *, quant: bool = True, engine: bool = True) -> list[str]:
    """The title's settings: quant, context, users (when several), engine (when not llama.cpp)."""
    parts = [a.quant] if quant else []
    parts.append(tr(_("{context} context"), context=format_tokens_short(a.context)))
    if a.users > 1:
        parts.append(tr.ngettext("{n} user", "{n} users", a.users))
    if engine and a.engine != "llama.cpp":
        parts.append(engine_name(a.engine))
    return parts


def _title(card: Card, tr: Tr) -> str:
    return " · ".join([clean(card.model.name), *_settings(card.assumptions, tr)])


def _verdict_sentence(fit: GpuFit, tr: Tr, *, gpu_named_above: bool = False) -> str:
    """The verdict as a sentence, the first line a phone shows (``gpu_named_above``: the solver's line names the GPU
    already, so a fit says only how much is left)."""
    plan = fit.expert_plan
    if gpu_named_above and plan is None and fit.verdict in ("fits", "tight"):
        fits, tight = _("✅ Runs with {free} to spare."), _("⚠️ Fits, but only {free} is left.")
        return _verdict_said(fits if fit.verdict == "fits" else tight, fit, tr)
    if plan is not None:
        return tr(
            _("🟧 Runs on **{gpu}** with the experts of {n} of {blocks} layers in RAM."),
            gpu=gpu_label(fit),
            n=tr.num(plan.moved),
            blocks=tr.num(plan.blocks),
        )
    templates = {
        "fits": _("✅ Runs on **{gpu}** with {free} to spare."),
        "tight": _("⚠️ Fits on **{gpu}**, but only {free} is left."),
        "partial": _("🟧 Partly on the CPU: {gpu_layers} of {layers} layers on **{gpu}**, the rest slow."),
        "no": _("❌ Does not fit on **{gpu}**: {short} short."),
    }
    return _verdict_said(templates[fit.verdict], fit, tr)


def _sum_line(card: Card, tr: Tr, budget: int) -> str:
    """ "Weights 4.3 + KV 4.0 + other 0.7 = **9.0 GiB** of 12.0 GiB": the whole answer in one line."""
    e = card.estimate
    parts = {
        "weights": tr.gib(e.weights_bytes),
        "kv": tr.gib(e.kv_cache_bytes),
        "state": tr.small_size(e.recurrent_state_bytes),
        "other": tr.gib(e.overhead_bytes),
        "total": tr.gib(e.total_bytes),
        "budget": tr.gib(budget),
    }
    if e.recurrent_state_bytes and budget:
        template = _("Weights {weights} + KV {kv} + state {state} + other {other} = **{total}** of {budget}")
    elif e.recurrent_state_bytes:
        template = _("Weights {weights} + KV {kv} + state {state} + other {other} = **{total}**")
    elif budget:
        template = _("Weights {weights} + KV {kv} + other {other} = **{total}** of {budget}")
    else:
        template = _("Weights {weights} + KV {kv} + other {other} = **{total}**")
    return tr(template, **parts)


def _headline(card: Card, tr: Tr) -> tuple[str, int]:
    """The verdict sentence and the sum (and, where something stays on the CPU, the system RAM), and the colour."""
    if not card.named_gpus or not card.fits:
        return _sum_line(card, tr, 0), NEUTRAL_COLOUR
    fit = card.fits[0]
    plan = fit.expert_plan
    host, fits_ram = (plan.host_bytes, plan.ram_fits) if plan is not None else (fit.host_bytes, fit.ram_fits)
    offloads = fit.verdict in ("partial", "no") and bool(fit.ram_bytes)
    if offloads and not fits_ram:  # one verdict: what stays in RAM does not fit there, so it does not run
        lines = [
            tr(
                _("❌ Doesn't run on **{gpu}**: RAM is {short} short of the {host} left to it."),
                gpu=gpu_label(fit),
                host=tr.gib(host),
                short=tr.gib(host - fit.ram_usable_bytes),
            )
        ]
    else:
        lines = [_verdict_sentence(fit, tr, gpu_named_above=card.solution is not None)]
        a, pool = card.assumptions, card.estimate.kv_pool_tokens
        if a.engine == "vllm" and fit.verdict == "tight" and pool and a.users > 1:  # it starts; not every user fits
            lines[0] = tr(
                _("⚠️ vLLM starts on **{gpu}**, but its KV cache holds {pool} tokens: {n} of the {users} users at "
                  "{context} at once."),
                gpu=gpu_label(fit), pool=tr.num(pool), n=tr.num(pool // max(a.context, 1)), users=tr.num(a.users),
                context=format_tokens_short(a.context),
            )  # fmt: skip
    if plan is None:
        lines.append(_sum_line(card, tr, fit.budget_bytes))
    if fit.segment in ("apple", "unified") and fit.verdict != "fits":
        lines.append(_unified_line(fit, tr))
    if offloads:
        total_ram = tr.gib(fit.ram_bytes)
        if card.ram_assumed:  # the verdict rests on it, so it is said here, not only under "show the math"
            total_ram = tr(_("{ram}, assumed"), ram=total_ram)
        if plan is not None:
            ram = tr(
                _("GPU **{gpu}** of {budget} · RAM {host} of {usable} ({ram})"),
                gpu=tr.gib(plan.gpu_bytes),
                budget=tr.gib(fit.budget_bytes),
                host=tr.gib(host),
                usable=tr.gib(fit.ram_usable_bytes),
                ram=total_ram,
            )
        else:
            ram = tr(
                _("RAM {host} of {usable} usable ({ram})"),
                host=tr.gib(host),
                usable=tr.gib(fit.ram_usable_bytes),
                ram=total_ram,
            )
        if fit.ram_speed is not None and not fit.ram_speed_assumed:  # an assumed one is in the footer
            ram += " · " + tr(_("RAM bandwidth: {speed}"), speed=ram_speed_label(fit.ram_speed, tr))
        lines.append(ram)
    return "\n".join(lines), COLOUR[fit.verdict] if fits_ram or not offloads else COLOUR["no"]


def _unified_line(fit: GpuFit, tr: Tr) -> str:
    """On a Mac or another unified-memory machine that is short or tight: what its GPU may use (and on a Mac, how to
    raise it), in the terminal's words (bot.render.text.unified_memory_sentence)."""
    return unified_memory_sentence(
        tr, apple=fit.segment == "apple", usable_bytes=fit.budget_bytes, memory_bytes=fit.memory_bytes
    )


def _context_and_speed(card: Card, tr: Tr, *, context: bool = True, speed: bool = True, short: bool = False) -> str:
    """ "Largest context 57,344 tokens · ≈ 41 tok/s (likely 25–48) · first token after …" for the first named GPU
    (either part may be missing); ``context`` / ``speed`` False leave that part out (a speed question shows its speed
    first, on its own). ``short``: the phone card's form, "Max context 57,344 · ≈ 41 tok/s (25–48) · first token ≈
    8 s", the bands of the first token and what memory would allow past the model's limit left to "show the math"."""
    fit = card.fits[0]
    parts: list[str] = []
    if not context:
        return " · ".join(_speed_parts(card, tr, short=short))
    trained = max(card.model.trained_context, card.model.scaled_context)  # the model's limit, with its RoPE scaling
    if short and fit.expert_plan is None and fit.max_context:
        if trained and fit.max_context > trained:
            parts.append(tr(_("Max context {n} (the model's limit)"), n=tr.num(trained)))
        else:
            parts.append(tr(_("Max context {n}"), n=tr.num(fit.max_context)))
    elif fit.expert_plan is None and fit.max_context:
        if trained and fit.max_context > trained:
            parts.append(
                tr(
                    _("Largest context {trained} (the model's limit; memory would allow {memory})"),
                    trained=tr.num(trained),
                    memory=tr.num(fit.max_context),
                )
            )
        else:
            parts.append(tr(_("Largest context {n} tokens"), n=tr.num(fit.max_context)))
    return " · ".join(parts + (_speed_parts(card, tr, short=short) if speed else []))


def _speed_parts(card: Card, tr: Tr, *, short: bool = False) -> list[str]:
    """The first named GPU's decode speed and time to the first token, as far as the card has them (``short``: the
    phone card's words, the first token's band left out)."""
    fit = card.fits[0]
    parts: list[str] = []
    plan = fit.expert_plan
    decode = plan.decode if plan is not None else fit.decode
    if decode is not None and _runs(fit):
        parts.append(
            tr(
                _("≈ {n} tok/s ({low}–{high})") if short else _("≈ {n} tok/s (likely {low}–{high})"),
                n=tr.num(round(decode.tokens_per_second)),
                low=tr.num(round(decode.low)),
                high=tr.num(round(decode.high)),
            )
        )
    prefill = shown_prefill(fit)
    if prefill is not None and short:
        seconds = card.assumptions.context / prefill.tokens_per_second
        parts.append(tr(_("first token ≈ {s} s"), s=tr.num(seconds, 1 if seconds < 10 else 0)))  # "≈ 7.7", "≈ 23"
    elif prefill is not None:
        parts.append(first_token_text(card.assumptions.context, prefill, tr))
    elif decode is not None and _runs(fit):  # a GPU without a sourced FP16 figure (no tensor cores, or generic)
        parts.append(tr(_("first token: not estimated")) if short else tr(NO_PREFILL))
    return parts


def _runs(fit: GpuFit) -> bool:
    """The placement the card shows runs: on the GPU, or with what stays on the CPU fitting in system RAM."""
    plan = fit.expert_plan
    if plan is not None:
        return plan.ram_fits
    return fit.verdict != "no" and fit.ram_fits


def shown_prefill(fit: GpuFit) -> Speed | None:
    """The prefill estimate of the placement the card shows (the --n-cpu-moe plan's where there is one), when it
    runs: with layers or experts in system RAM it includes their PCIe copies (calc.speed.streamed_prefill_speed)."""
    prefill = fit.expert_plan.prefill if fit.expert_plan is not None else fit.prefill
    return prefill if prefill is not None and _runs(fit) else None


def _gpu_line(fit: GpuFit, tr: Tr) -> str:
    plan = fit.expert_plan
    if plan is not None:
        return tr(
            _("🟧 **{gpu}** — every layer on the GPU, the experts of {n} of {blocks} layers in system RAM"),
            gpu=gpu_label(fit),
            n=tr.num(plan.moved),
            blocks=tr.num(plan.blocks),
        )
    templates = {
        "fits": _("✅ **{gpu}** — fits, {free} free"),
        "tight": _("⚠️ **{gpu}** — tight fit, {free} free"),
        "partial": _("🟧 **{gpu}** — {gpu_layers} of {layers} layers on the GPU, the rest on the CPU (slower)"),
        "no": _("❌ **{gpu}** — doesn't fit, {short} short"),
    }
    return _verdict_said(templates[fit.verdict], fit, tr)


def _tip_line(tip: Tip, tr: Tr) -> str:
    templates = {
        "kv_cache": _("Quantize the KV cache to {value}: {total} of {usable}"),
        # measured: next to no quality loss (labels.LOW_BIT_KV_NOTE); the compute buffer as f16's unless flash
        # attention's f16 copy of one layer on CUDA or ROCm outgrows the other stages (calc.compute, Tip.buffer_bytes)
        "kv_cache_q8": _(
            "Quantize the KV cache to {value} (next to no quality loss, no larger buffers): {total} of {usable}"
        ),
        "kv_cache_q8_buffers": _(
            "Quantize the KV cache to {value} (next to no quality loss, {buffers} more for "
            "flash attention's buffers): {total} of {usable}"
        ),
        "context": _("Lower the context to {value}: {total} of {usable}"),
        "quant": _("A smaller quant, {value}: {total} of {usable}"),
        "quant_lower": _("A smaller quant, {value} (lower quality): {total} of {usable}"),
        "gpus": _("Use {value} GPUs: {total} of {usable}"),
    }
    value = format_tokens_short(int(tip.value)) if tip.kind == "context" and tip.value.isdigit() else tip.value
    kind: str = "quant_lower" if tip.kind == "quant" and tip.lower_quality else tip.kind
    if tip.kind == "kv_cache" and tip.value == "q8_0":  # its quality cost: labels.LOW_BIT_KV_NOTE
        kind = "kv_cache_q8_buffers" if tip.buffer_bytes else "kv_cache_q8"
    text = tr(templates[kind], value=clean(value), total=tr.gib(tip.total_bytes), usable=tr.gib(tip.usable_bytes),
              buffers=tr.small_size(tip.buffer_bytes))  # fmt: skip
    return f"{EMOJI[tip.verdict]} {text}"


def _card_footer(card: Card, tr: Tr) -> str:
    """The default card's footer, one short row on a phone: that it is an estimate, the quant (when the row has room
    for it: the title names it too), the KV cache type and the engine; flash attention only when off. The rest
    (the unit, what was assumed about RAM and the PCIe link, the version) is in "show the math"'s footer."""
    a = card.assumptions
    engine = "Ollama" if card.ollama_split is not None else engine_name(a.engine)
    parts = [tr(_("estimate")), a.quant, tr(_("KV {kv}"), kv=a.kv_cache), engine]
    if not a.flash_attn:
        parts.append(tr(_("FA off")))
    if columns(" · ".join(parts)) > PHONE_COLUMNS:
        parts.remove(a.quant)
    return " · ".join(parts)


def _footer(card: Card, tr: Tr) -> str:
    """Every setting and assumption behind the numbers, for "show the math" and the side-by-side cards."""
    footer = _fit_footer(card.assumptions, tr)
    if card.ollama_split is not None:
        footer = footer.replace("llama.cpp", "Ollama (llama.cpp)", 1)
    if card.fits and card.fits[0].ram_speed_assumed and card.fits[0].ram_speed is not None:
        speed = card.fits[0].ram_speed
        assumed = tr(_("RAM {name}, {channels}-channel assumed"), name=speed.name, channels=speed.channels)
        footer = assumed + " · " + footer
    if card.ram_assumed and card.fits:
        footer = tr(_("RAM {ram} assumed"), ram=tr.gib(card.fits[0].ram_bytes)) + " · " + footer
    if card.fits and card.fits[0].pcie_assumed and shown_prefill(card.fits[0]) is not None:
        footer = tr(_("{link} assumed"), link=link_label(*ASSUMED_LINK)) + " · " + footer
    if card.gpu_variant is not None:  # the default card has no row for it: its verdict names the size
        answered, others = card.gpu_variant
        footer = tr(GPU_VARIANT_NOTE, gpu=answered, others=", ".join(others)) + " · " + footer
    return footer


def _assumptions_footer(a: Assumptions, tr: Tr, *, quant: bool = True, engine: bool = True) -> str:
    if quant:
        parts = [tr(_("Assumes {quant}"), quant=a.quant), tr(_("context {tokens}"), tokens=tr.num(a.context))]
    else:
        parts = [tr(_("Assumes context {tokens}"), tokens=tr.num(a.context))]
    parts += [
        tr.ngettext("{n} user", "{n} users", a.users),
        tr(_("KV cache {kv}"), kv=a.kv_cache),
    ]
    if engine:
        parts.append(engine_name(a.engine))
    parts += [
        tr(_("flash attention on")) if a.flash_attn else tr(_("flash attention off")),
        tr(_("1 GiB = 2³⁰ bytes")),
        tr(_("estimates, not measurements")),
        f"vramfit {vramfit_version()}",
    ]
    return " · ".join(parts)


def _fit_footer(a: Assumptions, tr: Tr) -> str:
    """The default card's one line: every setting the title does not show (it shows the model, the quant, the
    context and the users), the unit, and that it is an estimate."""
    parts = [
        a.quant,
        tr(_("KV cache {kv}"), kv=a.kv_cache),
        engine_name(a.engine),
        tr(_("flash attention on")) if a.flash_attn else tr(_("flash attention off")),
        tr(_("1 GiB = 2³⁰ bytes")),
        tr(_("estimates, not measurements")),
        f"vramfit {vramfit_version()}",
    ]
    return " · ".join(parts)


RENDERED_KEPT = 256  # embeds kept for the cards answered most recently (a repeated question reuses its card)
_rendered: OrderedDict[tuple[int, Lang], tuple[AnyCard, discord.Embed]] = OrderedDict()


def render_card(card: AnyCard, lang: Lang) -> discord.Embed:
    """The answer card for ``card`` (any intent) in ``lang``, within every Discord limit. A card answered again (the
    backend's cache hands out the same card object) reuses the embed drawn for it, work the event loop does not do
    again in a burst of one question. Callers send it as it is; none changes it."""
    key = (id(card), lang)
    kept = _rendered.get(key)
    if kept is not None and kept[0] is card:
        _rendered.move_to_end(key)
        return kept[1]
    embed = _render_any(card, lang)
    _rendered[key] = (card, embed)  # the card itself is kept too, so its id is not reused while it is here
    while len(_rendered) > RENDERED_KEPT:
        _rendered.popitem(last=False)
    return embed


def _render_any(card: AnyCard, lang: Lang) -> discord.Embed:
    if isinstance(card, WhatFitsCard):
        return render_what_fits(card, lang)
    if isinstance(card, CompareCard):
        return render_compare(card, lang)
    if card.engines:
        return render_engines(card, lang)
    return _render_fit(card, lang)


def _render_fit(card: Card, lang: Lang) -> discord.Embed:
    """The default card, for a phone: warnings, the verdict as a sentence, the sum in one line, the largest context
    and the speed, at most three tips, the command to copy, a one-line footer; the components are behind "show the
    math" (:func:`render_math`)."""
    tr = Tr(lang)
    description, colour = _headline(card, tr)
    lines: list[str] = []
    if card.unparsed:
        lines.append(_not_understood(card.unparsed, tr))
    if card.source_unread:
        lines.append("⚠️ " + tr(SOURCE_UNREAD_NOTE, source=f"`{inert(card.source_unread)}`"))
    if card.quant_mix:
        lines.append("ℹ️ " + tr(QUANT_MIX_NOTE, mix=f"`{card.quant_mix}`", quant=card.assumptions.quant))  # [A-Z0-9_-]
    if card.model.attention_sinks and card.assumptions.kv_cache in QUANTIZED_KV:
        lines.append("⚠️ " + tr(SINK_KV_NOTE, model=clean(card.model.name)))
    elif card.assumptions.kv_cache in LOW_BIT_KV:
        lines.append("ℹ️ " + escape_markdown(tr(LOW_BIT_KV_NOTE, kv=card.assumptions.kv_cache)))  # "q4_0" as typed
    limit_line = _card_limit_line(card, tr)
    if limit_line:
        lines.append(limit_line)
    if card.solution is not None:
        lines.append(_solution_line(card, tr))
    lines.append(description)
    if card.model.source_url and card.model.source_kind == "safetensors":
        lines.append(
            tr(
                _("📄 Read from the config.json and safetensors headers of [{repo}]({url}), revision {revision}"),
                repo=clean(card.model.source_file),
                url=card.model.source_url,
                revision=clean(card.model.source_revision[:12]),
            )
        )
    elif card.model.source_url:
        lines.append(
            tr(
                _("📄 Read from the header of [{file}]({url}), revision {revision}"),
                file=clean(card.model.source_file),
                url=card.model.source_url,
                revision=clean(card.model.source_revision[:12]),
            )
        )
    elif card.model.source_kind == "attachment":
        lines.append(tr(_("📄 Read from the attached **{file}**"), file=clean(card.model.source_file)))
    if card.images and card.assumptions.engine == Engine.VLLM and card.model.vision_encoder:
        lines.append("🖼️ " + tr(IMAGES_VLLM))
    elif card.images:
        e = card.estimate
        if e.vision_bytes:
            key = (
                _("Images: {file} +{size}, in the total")
                if e.vision_compute_bytes
                else _("Images: {file} +{size}, in the total (compute buffer not measured)")
            )
            lines.append("🖼️ " + tr(key, file=clean(card.model.mmproj), size=tr.small_size(e.vision_bytes)))
        elif card.model.vision_encoder:
            lines.append("🖼️ " + tr(_("Images: projector size not known, not in the total")))
        else:
            lines.append("🖼️ " + tr(_("Images: this model takes none")))
    elif card.model.mmproj:
        mmproj = tr(_("{file}: +{size} with --mmproj, not in the total"), file=clean(card.model.mmproj),
                    size=tr.small_size(card.model.mmproj_bytes))  # fmt: skip
        lines.append("🖼️ " + mmproj)
    elif card.model.vision_encoder:
        lines.append("🖼️ " + tr(_("Vision encoder not counted (--mmproj)")))
    if card.mtp and card.estimate.mtp_bytes:
        mtp = tr(_("MTP drafting: +{size} on the GPU, in the total"), size=tr.gib(card.estimate.mtp_bytes))
        lines.append("🎯 " + mtp)
    elif card.mtp:
        lines.append("🎯 " + tr(NO_MTP_HEAD))
    if card.draft:
        draft = tr(_("Draft {name} {quant}: +{size} on the GPU, in the total"), name=clean(card.draft_name),
                   quant=card.draft_quant, size=tr.gib(card.estimate.draft_bytes))  # fmt: skip
        lines.append("🎯 " + draft)
    speed_first = card.speed_first and card.named_gpus and card.fits and bool(_speed_parts(card, tr))
    if speed_first:  # "how fast?", "몇 토큰 나와?": the speed is the answer's first line
        lines.insert(0, "⚡ " + _context_and_speed(card, tr, context=False, short=True))
    # The largest context is left out where a line above says it already: the solver's answer, or the model's limit.
    said = bool(limit_line) or (card.solution is not None and card.solution.kind == "max_context")
    if card.named_gpus and card.fits and not (speed_first and said):
        extra = _context_and_speed(card, tr, context=not said, speed=not speed_first, short=True)
        if extra:
            lines.append(extra)
    if card.ollama_split is not None:
        cpu, gpu = card.ollama_split
        split = tr(_("100% GPU")) if cpu == 0 else tr(_("{cpu}%/{gpu}% CPU/GPU"), cpu=cpu, gpu=gpu)
        lines.append(tr(_("`ollama ps` would show: {split}"), split=split))
    if card.reserved_mib and card.named_gpus:
        in_use = tr(_("Already in use on the GPU: {reserved}, taken off"), reserved=tr.gib(card.reserved_mib << 20))
        lines.append(in_use)
    elif card.asks_display_share:
        lines.append(tr(ASK_DISPLAY_SHARE))
    # What would help, at most three lines (CalcBackend.tips), each with the verdict it reaches: in the description,
    # since a field's name would take one of the twelve rows a phone shows (issue 25).
    lines += [_tip_line(tip, tr) for tip in card.tips]
    if card.command:  # the command to copy ends the description, for the same reason
        lines.append(clamp(f"`{card.command}`", FIELD_VALUE))
    builder = EmbedBuilder(title=_title(card, tr), description="\n".join(lines), footer=_card_footer(card, tr),
                           colour=colour)  # fmt: skip
    if card.named_gpus and len(card.fits) > 1:
        gpu_lines = [_gpu_line(fit, tr) for fit in card.fits]
        builder.add_field(tr.ngettext("Your GPU", "Your GPUs", len(card.fits)), clamp_lines(gpu_lines, FIELD_VALUE),
                          priority=85)  # fmt: skip
    elif not card.named_gpus:
        _add_suggestions(builder, card.fits, tr)
    return builder.build()


def _card_limit_line(card: Card, tr: Tr) -> str:
    """The context-limit warning in the card's few words (the title names the model; the terminal says it whole,
    bot.render.text.context_limit_line): "" within the model's limits."""
    m, context = card.model, card.assumptions.context
    trained, scaled = m.trained_context, m.scaled_context
    if not trained or context <= trained:
        return ""
    if context <= max(trained, scaled):
        return tr(
            _("ℹ️ Past its trained {trained} tokens, on {scaling} RoPE scaling (to {scaled})."),
            trained=tr.num(trained), scaling=m.rope_scaling, scaled=tr.num(scaled),
        )  # fmt: skip
    if scaled > trained:
        return tr(
            _("⚠️ Past its {scaled}-token limit ({scaling} RoPE scaling), answers degrade."),
            scaled=tr.num(scaled), scaling=m.rope_scaling,
        )  # fmt: skip
    return tr(_("⚠️ Trained for {trained} tokens: past that, answers degrade."), trained=tr.num(trained))


def _add_suggestions(builder: EmbedBuilder, fits: Sequence[GpuFit], tr: Tr) -> None:
    """The smallest GPUs that fit, one line per segment (consumer, workstation, datacenter, Apple…), two cards each."""
    groups: dict[str, list[GpuFit]] = {}
    for fit in fits:
        if fit.verdict in ("fits", "tight"):
            segment = SEGMENT_GROUP.get(fit.segment, fit.segment)
            groups.setdefault(segment if segment in SEGMENT_ORDER else "generic", []).append(fit)
    if not groups:
        builder.add_field(tr(_("GPUs")), tr(_("No single preset GPU fits this. See the tips below.")), priority=85)
        return
    lines = []
    for segment in (s for s in SEGMENT_ORDER if s in groups):
        picks = sorted(groups[segment], key=lambda f: (f.total_memory_bytes, f.count))[:SUGGESTIONS_PER_GROUP]
        names = ", ".join(f"**{gpu_label(fit)}**" for fit in picks)
        lines.append(tr(_("{group}: {gpus}"), group=_segment_label(tr, segment), gpus=names))
    builder.add_field(tr(_("Smallest GPUs that fit")), clamp_lines(lines, FIELD_VALUE), priority=75)


def _solution_line(card: Card, tr: Tr) -> str:
    """The solver's number, above the card at that number."""
    solution = card.solution
    assert solution is not None
    gpu = clean(solution.gpu_name) if solution.count == 1 else f"{solution.count}× {clean(solution.gpu_name)}"
    context = format_tokens_short(card.assumptions.context)
    if solution.value is None:
        nothing = {
            "max_context": _("📏 Not even 256 tokens fit with every layer on **{gpu}**."),
            "max_users": _("👥 Not even one user at {context} context fits with every layer on **{gpu}**."),
            "best_quant": _("🎯 No quant fits on **{gpu}** with room to spare."),
            "min_gpus": _("🧮 Not even {count} of **{gpu}** hold it with room to spare."),
        }
        return tr(nothing[solution.kind], gpu=clean(solution.gpu_name), context=context, count=tr.num(MAX_GPU_COUNT))
    if solution.kind == "max_context":
        tokens = int(solution.value)
        value = tr.ngettext("{n} token", "{n} tokens", tokens)
        if tokens >= 1024 and tokens % 1024 == 0:
            value += f" ({format_tokens_short(tokens)})"
        template = _("📏 Largest context with every layer on **{gpu}**: **{value}**")
    elif solution.kind == "max_users":
        value = tr.ngettext("{n} user", "{n} users", int(solution.value))
        template = _("👥 Most users at {context} context on **{gpu}**: **{value}**")
    elif solution.kind == "min_gpus":
        value = tr.num(int(solution.value))
        template = _("🧮 GPUs needed at {context} context: **{value}× {gpu}**")
        return tr(template, gpu=clean(solution.gpu_name), value=value, context=context)
    else:
        value = solution.value  # a quant name from the solver's ladder
        template = _("🎯 Best quant that fits **{gpu}** with room to spare: **{value}**")
    return tr(template, gpu=gpu, value=value, context=context)


def _column(card: Card, tr: Tr) -> str:
    """One model's (or engine's) components and verdict, for a side-by-side card."""
    e = card.estimate
    lines = [
        tr(_("Weights **{size}**"), size=tr.gib(e.weights_bytes)),
        tr(_("KV cache **{size}**"), size=tr.gib(e.kv_cache_bytes)),
        tr(_("Overhead **{size}**"), size=tr.gib(e.overhead_bytes)),
        tr(_("Total **{size}**"), size=tr.gib(e.total_bytes)),
    ]
    if card.named_gpus and card.fits:
        lines.append(_verdict_text(card.fits[0], tr))
    elif card.fits:
        smallest = min(
            (f for f in card.fits if f.verdict in ("fits", "tight")),
            key=lambda f: (f.total_memory_bytes, f.count),
            default=None,
        )
        if smallest is not None:
            lines.append(tr(_("smallest GPU that fits: {gpu}"), gpu=gpu_label(smallest)))
    return "\n".join(lines)


def _oriented(reason: KvDifference, big_is_b: bool) -> tuple[int, int]:
    """A reason's values as (larger cache's model, smaller cache's model)."""
    return (reason.b, reason.a) if big_is_b else (reason.a, reason.b)


def _reason_text(factor: str, big: int, small: int, tr: Tr) -> str | None:
    """A reason that explains why the larger cache is larger, in words; None when it points the other way."""
    if factor == "head_dim" and big > small:
        return tr(_("head size {a} vs {b}"), a=tr.num(big), b=tr.num(small))
    if factor == "kv_heads" and big > small:
        return tr(_("{a} vs {b} KV heads"), a=tr.num(big), b=tr.num(small))
    if factor == "layers" and big > small:
        return tr(_("{a} vs {b} layers"), a=tr.num(big), b=tr.num(small))
    if factor == "sliding_window" and small and not big:
        return tr(_("no sliding window vs a {window}-token window"), window=tr.num(small))
    if factor == "mla" and small and not big:
        return tr(_("latent attention (MLA) in one model only"))
    return None


def kv_explanation(card: CompareCard, tr: Tr) -> str:
    """One line: which model needs more KV cache, how much more, and the architectural reasons."""
    a, b = card.a, card.b
    ka, kb = a.estimate.kv_cache_bytes, b.estimate.kv_cache_bytes
    if max(ka, kb) <= SAME_KV_RATIO * min(ka, kb):
        return tr(_("Both need about the same KV cache at this context."))
    big_is_b = kb > ka
    big, small = (b, a) if big_is_b else (a, b)
    far = min(ka, kb) == 0 or max(ka, kb) >= FAR_KV_RATIO * min(ka, kb)
    reasons = [text for r in card.reasons if (text := _reason_text(r.factor, *_oriented(r, big_is_b), tr)) is not None][
        :KV_REASONS_IN_LINE
    ]
    names = {"big": clean(big.model.name), "small": clean(small.model.name)}
    if not reasons:
        template = (
            _("**{big}** needs far more KV cache than **{small}**.")
            if far
            else _("**{big}** needs more KV cache than **{small}**.")
        )
        return tr(template, **names)
    joined = reasons[0] if len(reasons) == 1 else tr(_("{first} and {second}"), first=reasons[0], second=reasons[1])
    template = (
        _("**{big}** needs far more KV cache than **{small}**: {reasons}.")
        if far
        else _("**{big}** needs more KV cache than **{small}**: {reasons}.")
    )
    return tr(template, reasons=joined, **names)


def _not_understood(words: tuple[str, ...], tr: Tr) -> str:
    """"⚠️ Not understood: `5090ti`, `q9`": the words of a question that no setting took."""
    return tr(_("⚠️ Not understood: {words}"), words=", ".join(f"`{clean(w)}`" for w in words))


def render_compare(card: CompareCard, lang: Lang) -> discord.Embed:
    """Two models side by side in ten lines or fewer: the title (the GPU in it when one was named), why their KV
    caches differ, then one line each for the weights, the KV cache (with the cache per token at this context as the
    single answer holds it: sliding windows, hybrid state and MLA included), the rest and the total, with the
    difference, and each model's verdict on the GPU. Issue 25: the side-by-side fields took 22–25 lines."""
    tr = Tr(lang)
    a, b = card.a, card.b
    names = tr(_("{a} vs {b}"), a=clean(a.model.name), b=clean(b.model.name))
    gpu = [gpu_label(a.fits[0])] if a.named_gpus and a.fits else []
    title = " · ".join([names, *_settings(a.assumptions, tr), *gpu])
    tokens = max(1, a.assumptions.context * a.assumptions.users)
    real = (a.estimate.kv_cache_bytes // tokens, b.estimate.kv_cache_bytes // tokens)
    naive = (a.estimate.kv_cache_naive_bytes // tokens, b.estimate.kv_cache_naive_bytes // tokens)
    sentences = [kv_explanation(card, tr), *_hybrid_notes(card, tr)]
    if any(n > NAIVE_KV_RATIO * max(r, 1) for n, r in zip(naive, real, strict=True)):
        textbook = _("The textbook formula says {a} and {b} KiB per token.")
        sentences.append(tr(textbook, a=_kib(naive[0], tr), b=_kib(naive[1], tr)))
    ea, eb = a.estimate, b.estimate
    pair = _("{label} **{a}** vs **{b}** GiB ({diff})")
    lines = [
        " ".join(sentences),
        tr(pair, label=tr(_("Weights")), **_gib_pair(ea.weights_bytes, eb.weights_bytes, tr)),
        tr(pair, label=tr(_("KV cache")), **_gib_pair(ea.kv_cache_bytes, eb.kv_cache_bytes, tr))
        + " · "
        + tr(_("{a} vs {b} KiB per token"), a=_kib(real[0], tr), b=_kib(real[1], tr)),
        tr(pair, label=tr(_("Other")), **_gib_pair(ea.overhead_bytes, eb.overhead_bytes, tr)),
        tr(pair, label=tr(_("Total")), **_gib_pair(ea.total_bytes, eb.total_bytes, tr)),
    ]
    if a.named_gpus and a.fits and b.fits:
        lines.append(tr(_("{a} vs {b}"), a=_verdict_text(a.fits[0], tr), b=_verdict_text(b.fits[0], tr)))
    elif not a.named_gpus and (a.fits or b.fits):  # the preset GPUs were tried
        smallest = tr(_("{a} vs {b}"), a=_smallest_gpu(a, tr), b=_smallest_gpu(b, tr))
        lines.append(tr(_("Smallest GPU that fits: {gpus}"), gpus=smallest))
    if card.unparsed:
        lines.insert(0, _not_understood(card.unparsed, tr))
    colour = NEUTRAL_COLOUR
    if a.named_gpus and a.fits and b.fits:
        colour = COLOUR[b.fits[0].verdict] if a.fits[0].verdict == b.fits[0].verdict else NEUTRAL_COLOUR
    return EmbedBuilder(title=title, description="\n".join(lines), footer=_card_footer(a, tr), colour=colour).build()


def _gib_pair(a: int, b: int, tr: Tr) -> dict[str, str]:
    """Two sizes in GiB and b's difference from a: "+1.2", "−0.8", "±0.0" (what rounds to nothing has no sign)."""
    diff = round((b - a) / GIB, 1)
    signed = "±0.0" if diff == 0 else ("+" if diff > 0 else "−") + tr.num(abs(diff), 1)
    return {"a": tr.num(a / GIB, 1), "b": tr.num(b / GIB, 1), "diff": signed}


def _kib(num_bytes: int, tr: Tr) -> str:
    kib = num_bytes / 1024
    return tr.num(kib, 0 if kib == int(kib) else 1)


def _verdict_text(fit: GpuFit, tr: Tr) -> str:
    verdicts = {
        "fits": _("{emoji} fits, {free} free"),
        "tight": _("{emoji} tight fit, {free} free"),
        "partial": _("{emoji} {gpu_layers} of {layers} layers on the GPU"),
        "no": _("{emoji} doesn't fit, {short} short"),
    }
    return _verdict_said(verdicts[fit.verdict], fit, tr)


def _verdict_said(template: str, fit: GpuFit, tr: Tr) -> str:
    """A verdict template of any card filled with the GPU's figures (each template takes the fields it names)."""
    return tr(
        template,
        gpu=gpu_label(fit),
        emoji=EMOJI[fit.verdict],
        free=tr.gib(max(fit.headroom_bytes, 0)),
        short=tr.gib(max(-fit.headroom_bytes, 0)),
        gpu_layers=tr.num(fit.gpu_layers),
        layers=tr.num(fit.layers),
    )


def _smallest_gpu(card: Card, tr: Tr) -> str:
    smallest = min(
        (f for f in card.fits if f.verdict in ("fits", "tight")),
        key=lambda f: (f.total_memory_bytes, f.count),
        default=None,
    )
    return f"**{gpu_label(smallest)}**" if smallest is not None else tr(_("none"))


def _hybrid_notes(card: CompareCard, tr: Tr) -> list[str]:
    """For a hybrid model beside a plain one: most of its layers keep a fixed-size state, not a KV cache."""
    notes = []
    for one, other in ((card.a, card.b), (card.b, card.a)):
        if one.estimate.recurrent_state_bytes and not other.estimate.recurrent_state_bytes:
            notes.append(
                tr(
                    _("{model} is hybrid: its other layers keep a fixed-size state ({state}), not a KV cache."),
                    model=clean(one.model.name),
                    state=tr.small_size(one.estimate.recurrent_state_bytes),
                )
            )
    return notes


def render_engines(card: Card, lang: Lang) -> discord.Embed:
    """The same question on llama.cpp and vLLM, side by side, with what vLLM's up-front reservation means."""
    tr = Tr(lang)
    first = card.engines[0] if card.engines else card
    engines = " / ".join(engine_name(c.assumptions.engine) for c in card.engines)
    title = " · ".join([clean(first.model.name), *_settings(first.assumptions, tr, engine=False), engines])
    lines: list[str] = []
    for each in card.engines:
        if each.named_gpus and each.fits:
            headline = _headline(each, tr)[0].split("\n", 1)[0]
            lines.append(f"**{engine_name(each.assumptions.engine)}**: {headline}")
    lines.append(_vllm_note(card, tr))
    colour = COLOUR[first.fits[0].verdict] if first.named_gpus and first.fits else NEUTRAL_COLOUR
    footer = _assumptions_footer(first.assumptions, tr, engine=False)
    builder = EmbedBuilder(title=title, description="\n".join(lines), footer=footer, colour=colour)
    for each in card.engines:
        builder.add_field(engine_name(each.assumptions.engine), _column(each, tr), inline=True, priority=90)
    return builder.build()


def _vllm_note(card: Card, tr: Tr) -> str:
    """One sentence on vLLM's reservation, with this card's numbers when a GPU was named."""
    vllm = next((c for c in card.engines if c.assumptions.engine == "vllm"), None)
    llama = next((c for c in card.engines if c.assumptions.engine != "vllm"), None)
    kv = tr.gib(llama.estimate.kv_cache_bytes) if llama is not None else "?"
    if vllm is None or not vllm.named_gpus or not vllm.fits:
        return tr(
            _(
                "vLLM reserves 90% of the GPU's memory when it starts and fills whatever the weights, activations "
                "and runtime leave with KV cache, so the card looks almost full whatever the context; llama.cpp "
                "allocates only the KV cache this context needs ({kv})."
            ),
            kv=kv,
        )
    fit, e = vllm.fits[0], vllm.estimate
    reserved = fit.usable_bytes
    fixed = e.total_bytes - e.kv_cache_bytes
    if reserved <= fixed:
        return tr(
            _(
                "vLLM reserves 90% of the card ({reserved}) when it starts, but the weights, activations and runtime "
                "({fixed}) need more than that, so it would not start; llama.cpp allocates only what this context "
                "needs."
            ),
            reserved=tr.gib(reserved),
            fixed=tr.gib(fixed),
        )
    return tr(
        _(
            "vLLM reserves 90% of the card ({reserved} of {memory}) when it starts: after the weights, activations "
            "and runtime ({fixed}), all of the remaining {pool} becomes KV cache, room for {tokens} tokens, so the "
            "card looks almost full whatever the context; llama.cpp allocates only the KV cache this context needs "
            "({kv})."
        ),
        reserved=tr.gib(reserved),
        memory=tr.gib(fit.total_memory_bytes),
        fixed=tr.gib(fixed),
        pool=tr.gib(reserved - fixed),
        tokens=tr.num(e.kv_pool_tokens),
        kv=kv,
    )


def render_what_fits(card: WhatFitsCard, lang: Lang) -> discord.Embed:
    """The preset models that fit one GPU, largest first, each with its quant, total and headroom."""
    tr = Tr(lang)
    gpu = clean(card.gpu_name) if card.count == 1 else f"{card.count}× {clean(card.gpu_name)}"
    title = " · ".join([tr(_("What fits on {gpu}"), gpu=gpu), *_settings(card.assumptions, tr, quant=False)])
    intro = [
        tr(_("Usable GPU memory: **{usable}**"), usable=tr.gib(card.usable_bytes)),
        tr(
            _(
                "Preset models that fit whole, largest first, each at the most faithful quant that still leaves "
                "room to spare; at most two per family."
            )
        ),
    ]
    if card.model_prefix:
        intro.append(tr(_("Only models whose id starts with `{prefix}`."), prefix=clean(card.model_prefix)))
    if card.unparsed:
        intro.insert(0, _not_understood(card.unparsed, tr))
    rows = [
        tr(
            _("{rank}. **{model}** · {quant} · {total} · {free} free"),
            rank=rank,
            model=clean(m.name),
            quant=m.quant,
            total=tr.gib(m.total_bytes),
            free=tr.gib(max(m.headroom_bytes, 0)),
        )
        for rank, m in enumerate(card.models, 1)
    ]
    if not rows:
        rows = [
            tr(
                _(
                    "No preset model fits whole at this context. A shorter context or a quantized KV cache leaves "
                    "more room."
                )
            )
        ]
    description = "\n".join(intro) + "\n\n" + clamp_lines(rows, DESCRIPTION - 600)
    colour = COLOUR["fits"] if card.models else COLOUR["no"]
    footer = _assumptions_footer(card.assumptions, tr, quant=False)
    return EmbedBuilder(title=title, description=description, footer=footer, colour=colour).build()


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
    if e.effective_params is not None:
        lines.append(
            tr(
                _("**Effective:** {effective} of the {params} parameters; the embedding tables stay in system RAM"),
                effective=tr.num(e.effective_params / 1e9, 2) + "B",
                params=tr.num(m.params / 1e9, 2) + "B",
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
            plan = fit.expert_plan
            if plan is None:
                lines.append(
                    tr(
                        _("**{gpu}:** {memory} − {total} = {headroom}"),
                        gpu=gpu_label(fit),
                        memory=tr.gib(fit.budget_bytes),
                        total=tr.gib(e.total_bytes),
                        headroom=signed_gib(tr, fit.headroom_bytes),
                    )
                )
                continue
            # Experts in RAM: the GPU holds the total less them, RAM holds them; each side adds up on its own, so
            # the figures are the ones the verdict uses (the whole total against the GPU would read as a shortfall).
            lines.append(
                tr(
                    _("**{gpu}**, the experts of {moved} layers in RAM: {memory} − {gpu_side} = {headroom}"),
                    gpu=gpu_label(fit),
                    moved=tr.num(plan.moved),
                    memory=tr.gib(fit.budget_bytes),
                    gpu_side=tr.gib(plan.gpu_bytes),
                    headroom=signed_gib(tr, fit.budget_bytes - plan.gpu_bytes),
                )
            )
            if fit.ram_bytes:
                lines.append(
                    tr(
                        _("**System RAM:** {usable} usable − {host} = {left}"),
                        usable=tr.gib(fit.ram_usable_bytes),
                        host=tr.gib(plan.host_bytes),
                        left=signed_gib(tr, fit.ram_usable_bytes - plan.host_bytes),
                    )
                )
    caches_line = server_caches_line(card.fits[0].server_caches, tr, card.fits[0].ram_bytes) if card.fits else ""
    if card.named_gpus and caches_line:
        lines.append(caches_line)
    first = card.fits[0] if card.fits else None
    ram_ok = first is not None and first.ram_fits and (first.expert_plan is None or first.expert_plan.ram_fits)
    fitted = fit_default_line(first.fit_default, tr) if first is not None and ram_ok else ""
    if card.named_gpus and fitted:
        lines.append(fitted)
    # What the phone card says in few words, whole: the model's limits, the vision part, the speed with its bands.
    limit_line = context_limit_line(tr, clean(m.name), a.context, m.trained_context, m.scaled_context, m.rope_scaling)
    if limit_line:
        lines.append(limit_line)
    if card.estimate.mtp_head_bytes and not card.mtp:
        lines.append("🎯 " + mtp_line(tr, card.estimate.mtp_head_bytes))
    if card.draft:
        e = card.estimate
        lines.append(
            tr(
                _(
                    "**Draft model:** {name} {quant}, every layer on the GPU (-ngld), its own cache of the model's "
                    "cells in f16 unless -ctkd: weights {weights} + KV {kv} + compute {compute} = {total}"
                ),
                name=clean(card.draft_name),
                quant=card.draft_quant,
                weights=tr.gib(e.draft_weights_bytes),
                kv=tr.gib(e.draft_kv_bytes),
                compute=tr.gib(e.draft_compute_bytes),
                total=tr.gib(e.draft_bytes),
            )
        )
    if card.images:
        e = card.estimate
        lines.append("🖼️ " + images_line(tr, clean(m.mmproj), e.vision_bytes, e.vision_compute_bytes, m.vision_encoder,
                                         a.engine))  # fmt: skip
    elif m.mmproj:
        lines.append("🖼️ " + mmproj_line(tr, clean(m.mmproj), m.mmproj_bytes))
    elif m.vision_encoder:
        lines.append("🖼️ " + vision_encoder_line(tr))
    if card.named_gpus and card.fits and (speed := _context_and_speed(card, tr)):
        lines.append(tr(_("**{gpu}:** {context_and_speed}"), gpu=gpu_label(card.fits[0]), context_and_speed=speed))
    builder = EmbedBuilder(
        title=tr(_("The math: {model}"), model=clean(m.name)),
        description=clamp_lines(lines, DESCRIPTION),
        footer=_footer(card, tr),
        colour=NEUTRAL_COLOUR,
    )
    return builder.build()


def render_error(error: VramfitError, lang: Lang) -> str:
    """A short, friendly message for a question the user must fix."""
    subject = clamp(clean(error.subject), 100)
    suggestions = [clean(s) for s in error.suggestions]
    detail = clamp(clean(error.message or error.code), 300)
    repos = error_repos(error)  # Hub repos that may be an unknown model
    text = describe_error(
        error.code, subject, suggestions, detail, lang, reason=error.reason, limits=number_limits(error), repos=repos
    )
    return clamp(text, 2000)


def help_text(lang: Lang) -> str:
    """What to say when mentioned with no question."""
    tr = Tr(lang)
    return tr(
        _(
            "Ask me whether a model runs on a GPU, for example: `llama3 8b 32k on a 3060` or `qwen2.5 14b q8 4090`. "
            "I also answer `what can I run on a 3060?`, `llama3 8b vs gemma2 9b` and `how much context can llama 3.1 "
            "8b take on a 3060?`. Or use `/vram`, `/vram-fit` and `/vram-compare`."
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
