"""The answer as terminal text, in Korean or English: components, per-GPU verdicts and every assumption."""

from __future__ import annotations

import unicodedata

from vramfit.bot.answering.cards import Speed, rope_scaling_label
from vramfit.bot.answering.commands import card_commands, ollama_split, placement_caches
from vramfit.bot.answering.resolve import CompareResult, IntentResult, SolveResult, WhatFitsResult
from vramfit.bot.i18n import Lang, Tr, _, format_number, format_tokens_short
from vramfit.bot.render.errors import describe_error, error_repos, number_limits
from vramfit.bot.render.labels import (
    GPU_VARIANT_NOTE,
    LOW_BIT_KV,
    LOW_BIT_KV_NOTE,
    QUANT_MIX_NOTE,
    QUANTIZED_KV,
    RUNTIME_NOTES,
    SINK_KV_NOTE,
    VERDICT_LABELS,
    fit_default_line,
    ram_speed_label,
    server_caches_line,
    signed_gib,
)
from vramfit.calc.errors import VramfitError, error_reason, error_subject
from vramfit.calc.families import family_of
from vramfit.calc.gpu import Gpu
from vramfit.calc.pcie import ASSUMED_LINK, link_gbs, link_label
from vramfit.calc.presets import Catalog, load_catalog
from vramfit.calc.ram_speed import ASSUMED_RAM_SPEED, RamSpeed
from vramfit.calc.request import Engine, GpuChoice, Request
from vramfit.calc.results import Answer, DecodeEstimate, Estimate, Fit

TABLE_HEADINGS = (_("Verdict"), _("Headroom"), _("Max context"), _("Speed"))

# Keys the parser reports in "assumed", with the sentence that explains each.
ASSUMPTION_LABELS: dict[str, str] = {
    "quant": _("quant {quant} (default)"),
    "context": _("context {context} tokens (default)"),
    "users": _("{users} user (default)"),
    "kv_cache": _("KV cache {kv} (default)"),
    "engine": _("engine {engine} (default)"),
    "gpu_variant": _("the most common memory size of the named GPU"),
    "gpu_chip": _("the chip the named Mac came with at that memory (the newest)"),
    "gpu_generic": _("a GPU known only by its memory size"),
    "model_fuzzy": _("the closest model name to what you typed"),
    "ram": _("{ram} of system RAM"),
    "pcie": _("a {link} host link, {gbs} GB/s (the GPU's preset states none)"),
    "ram_speed": _("system RAM {ram_speed}"),
}


def placement_fits_ram(fit: Fit) -> bool:
    """The answer's placement holds in system RAM (where it does not, no command is offered, plain or not)."""
    return fit.ram_fits and (fit.expert_offload is None or fit.expert_offload.ram_fits)


def _read_ram_speed(answer: Answer) -> RamSpeed:
    """The system RAM speed the answer's decode read weights at (the assumed one when no fit read any)."""
    return next((fit.ram_speed for fit in answer.fits if fit.ram_speed is not None), ASSUMED_RAM_SPEED)


def width(text: str) -> int:
    """Terminal columns: Hangul and other wide characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def ljust(text: str, columns: int) -> str:
    return text + " " * max(columns - width(text), 0)


def rjust(text: str, columns: int) -> str:
    return " " * max(columns - width(text), 0) + text


def _settings_line(request: Request, tr: Tr) -> str:
    flash = tr(_("flash attention on")) if request.flash_attn_effective else tr(_("flash attention off"))
    return tr(
        _("{model} · {quant} · {context} tokens × {users} · KV {kv} · {engine} ({flash})"),
        model=request.model.name,
        quant=request.quant,
        context=format_number(request.context, tr.lang),
        users=tr.ngettext("{n} user", "{n} users", request.users),
        kv=request.kv_cache.value,
        engine=request.engine.value,
        flash=flash,
    )


def _fit_row(fit: Fit, tr: Tr, trained: int = 0) -> str:
    name = fit.name if fit.count == 1 else f"{fit.count}× {fit.name}"
    verdict = tr(VERDICT_LABELS[fit.verdict.value])
    mark = fit.verdict.value
    if fit.verdict.value == "partial":
        verdict = tr(_("{on} of {all} layers on the GPU"), on=fit.gpu_layers, all=fit.layers)
    headroom = signed_gib(tr, fit.headroom_bytes)
    plan = fit.expert_offload
    offloaded = fit.verdict.value in ("partial", "no") and bool(fit.ram_bytes)
    if offloaded and plan is not None and plan.ram_fits:  # the row says the plan the command runs, as the card does
        verdict = tr(_("experts of {moved}/{blocks} layers in RAM"), moved=plan.expert_blocks_moved,
                     blocks=plan.expert_blocks)  # fmt: skip
        headroom, mark = signed_gib(tr, fit.usable_bytes - plan.gpu_bytes), "partial"
    elif offloaded and not (plan.ram_fits if plan is not None else fit.ram_fits):  # what RAM must hold, it cannot
        verdict, mark = tr(VERDICT_LABELS["no"]), "no"
    max_ctx = format_number(fit.max_context, tr.lang) if fit.max_context else "—"
    if fit.max_context and trained and fit.max_context > trained:
        max_ctx = format_number(trained, tr.lang) + "*"  # the model's limit, not memory's (footnote below)
    decode = fit.expert_offload.decode if fit.expert_offload is not None else fit.decode
    speed = speed_text(decode, tr) if decode is not None and mark != "no" else "—"  # no speed for what cannot run
    padding = " " * max(28 - width(verdict), 0)
    marked = VERDICT_MARKS[mark] + verdict + MARK_END + padding  # coloured by the terminal, or unmarked
    return f"  {ljust(name, 34)} {marked} {rjust(headroom, 11)}  {rjust(max_ctx, 11)}  {speed}"


# Private-use characters around a verdict in the terminal text: the command line turns them into colours on a colour
# terminal and removes them everywhere else (:func:`terminal_colours`), so the renderer stays free of escape codes.
VERDICT_MARKS = {"fits": "\ue000", "tight": "\ue001", "partial": "\ue002", "no": "\ue003"}
MARK_END = "\ue00f"
_ANSI = {
    "\ue000": "\x1b[32m", "\ue001": "\x1b[33m", "\ue002": "\x1b[38;5;208m", "\ue003": "\x1b[31m", MARK_END: "\x1b[0m"
}  # fmt: skip


def terminal_colours(text: str, *, colour: bool) -> str:
    """``text`` with its verdict marks as ANSI colours (green fits, yellow tight, orange partly, red no), or without
    them."""
    table = str.maketrans(_ANSI if colour else dict.fromkeys(_ANSI, ""))
    return text.translate(table)


MAC_SYSTEM_RESERVE_BYTES = 8 << 30  # what macOS and its apps keep when the GPU limit is raised (common practice)


def mac_wired_limit_mb(memory_bytes: int) -> int:
    """The ``iogpu.wired_limit_mb`` that leaves macOS 8 GiB (``sysctl`` takes MiB)."""
    return max(memory_bytes - MAC_SYSTEM_RESERVE_BYTES, 0) >> 20


def unified_memory_sentence(tr: Tr, *, apple: bool, usable_bytes: int, memory_bytes: int) -> str:
    """What a unified-memory machine lets its GPU use, and on a Mac how to raise it where raising gains anything (a
    16 GB Mac already gives the GPU more than leaving macOS 8 GiB would)."""
    usable, memory = tr.gib(usable_bytes), tr.gib(memory_bytes)
    if not apple:
        return tr(
            _("The GPU may use {usable} of the {memory} it shares with the CPU (a BIOS or driver setting)."),
            usable=usable,
            memory=memory,
        )
    mb = mac_wired_limit_mb(memory_bytes)
    if mb << 20 <= usable_bytes:
        return tr(_("macOS lets the GPU use {usable} of this Mac's {memory}."), usable=usable, memory=memory)
    return tr(
        _(
            "macOS lets the GPU use {usable} of this Mac's {memory}; "
            "`sudo sysctl iogpu.wired_limit_mb={mb}` raises it to {raised}."
        ),
        usable=usable,
        memory=memory,
        mb=mb,
        raised=tr.gib(mb << 20),
    )


def unified_memory_line(gpu: Gpu, tr: Tr) -> str:
    """What a unified-memory machine lets its GPU use, and on a Mac how to raise it (calc.gpu)."""
    return unified_memory_sentence(
        tr, apple=gpu.vendor == "apple", usable_bytes=gpu.usable_bytes, memory_bytes=gpu.memory_bytes
    )


def ollama_ps_line(answer: Answer, tr: Tr) -> str:
    """What ``ollama ps`` would show for the first GPU: "100% GPU" or "16%/84% CPU/GPU" (calc.ollama)."""
    cpu, gpu = ollama_split(answer.fits[0], answer.estimate)
    split = tr(_("100% GPU")) if cpu == 0 else tr(_("{cpu}%/{gpu}% CPU/GPU"), cpu=cpu, gpu=gpu)
    return tr(_("`ollama ps` would show: {split}"), split=split)


def speed_text(decode: DecodeEstimate, tr: Tr) -> str:
    """ "≈ 38 tok/s (23–45)": the estimate and its band (calc.speed)."""
    return tr(
        _("≈ {n} tok/s ({low}–{high})"),
        n=format_number(round(decode.tokens_per_second), tr.lang),
        low=format_number(round(decode.low), tr.lang),
        high=format_number(round(decode.high), tr.lang),
    )


def offload_lines(fit: Fit, tr: Tr) -> list[str]:
    """For a GPU that does not hold the model whole: the MoE expert-offload plan, or what the layers left on the
    CPU need in system RAM (nothing on unified memory, where the GPU and the CPU share one pool)."""
    if fit.verdict.value not in ("partial", "no") or not fit.ram_bytes:
        return []
    plan = fit.expert_offload
    ram = {"ram": tr.gib(fit.ram_bytes), "usable": tr.gib(fit.ram_usable_bytes)}
    if plan is not None:
        lines = [
            "  "
            + tr(
                _("↳ MoE offload: the experts of {moved} of {blocks} layers in system RAM (--n-cpu-moe {n}):"),
                moved=plan.expert_blocks_moved,
                n=plan.n_cpu_moe,
                blocks=plan.expert_blocks,
            ),
            "    "
            + tr(
                _("GPU {gpu} of {gpu_usable}, RAM {host} of {usable} usable ({ram} RAM)"),
                gpu=tr.gib(plan.gpu_bytes),
                gpu_usable=tr.gib(fit.usable_bytes),
                host=tr.gib(plan.host_bytes),
                **ram,
            ),
        ]
        if fit.ram_speed is not None:
            lines.append("    " + tr(_("RAM bandwidth: {speed}"), speed=ram_speed_label(fit.ram_speed, tr)))
        if not plan.ram_fits:
            lines.append("    " + tr(_("❌ …but that does not fit in system RAM either.")))
        return lines
    line = tr(_("↳ System RAM: {host} of {usable} usable ({ram} RAM)"), host=tr.gib(fit.host_bytes), **ram)
    lines = ["  " + line]
    if fit.ram_speed is not None:
        lines.append("    " + tr(_("RAM bandwidth: {speed}"), speed=ram_speed_label(fit.ram_speed, tr)))
    if not fit.ram_fits:
        lines.append("    " + tr(_("❌ The layers left on the CPU do not fit in system RAM either.")))
    return lines


# Said where the decode speed is shown but no prompt speed can be: the GPU has no FP16 throughput (presets/gpus.toml).
NO_PREFILL = _("first token: not estimated (no FP16 throughput known for this GPU)")


def first_token_text(prompt: int, prefill: Speed | DecodeEstimate, tr: Tr) -> str:
    """ "first token after ≈ 8 s for a prompt of 32K (4–12 s)": the asked context read as the prompt, at the prefill
    estimate and its band (the slower end of the band is the longer wait)."""
    return tr(
        _("first token after ≈ {s} s for a prompt of {prompt} ({fast}–{slow} s)"),
        s=tr.num(prompt / prefill.tokens_per_second, 1),
        prompt=format_tokens_short(prompt),
        fast=tr.num(prompt / prefill.high, 1),
        slow=tr.num(prompt / prefill.low, 1),
    )


def first_token_line(fit: Fit, prompt: int, tr: Tr) -> str:
    """ "GeForce RTX 5090: first token after ≈ 18.5 s for a prompt of 8K (11.6–36.5 s)", as the card says it
    (first_token_text), for the placement the answer shows when it runs ("" otherwise); "not estimated" where
    the GPU carries no FP16 figure but a decode speed is shown."""
    plan = fit.expert_offload
    runs = plan.ram_fits if plan is not None else fit.verdict.value != "no" and fit.ram_fits
    prefill = plan.prefill if plan is not None else fit.prefill
    decode = plan.decode if plan is not None else fit.decode
    if not runs or (prefill is None and decode is None):
        return ""
    name = fit.name if fit.count == 1 else f"{fit.count}× {fit.name}"
    said = first_token_text(prompt, prefill, tr) if prefill is not None else tr(NO_PREFILL)
    return tr(_("{gpu}: {first_token}"), gpu=name, first_token=said)


def context_limit_line(tr: Tr, model: str, context: int, trained: int, scaled: int, scaling: str) -> str:
    """The line that compares the asked context with the model's limits ("" within them): past its training context
    and any RoPE scaling its config declares, a warning; past the training context on a declared YaRN scaling, a
    note that says so (calc.model_limits)."""
    if not trained or context <= trained:
        return ""
    if context > max(trained, scaled):
        if scaled > trained:
            return tr(
                _("⚠️ {model} was trained for {trained} tokens and its {scaling} RoPE scaling reaches {scaled}; past "
                  "that its answers degrade."),
                model=model, trained=tr.num(trained), scaling=scaling, scaled=tr.num(scaled),
            )  # fmt: skip
        return tr(
            _("⚠️ {model} was trained for {trained} tokens; past that its answers degrade."),
            model=model,
            trained=tr.num(trained),
        )
    return tr(
        _("ℹ️ Past the {trained} tokens {model} was trained for, on the {scaling} RoPE scaling its config declares (up "
          "to {scaled})."),
        model=model, trained=tr.num(trained), scaling=scaling, scaled=tr.num(scaled),
    )  # fmt: skip


def mmproj_line(tr: Tr, file: str, size: int) -> str:
    """What the repo's vision projector adds when loaded (not in the total: the verdict is the text model's)."""
    return tr(
        _("Vision projector {file}: +{size} on the GPU with --mmproj (not in the total above)"),
        file=file,
        size=tr.small_size(size),
    )


# The warmup compute buffers of the vision projectors measured so far (tests/data/groundtruth/llamacpp_mmproj.jsonl,
# the published logs of Gemma 3 4B and Qwen3.5 4B among them: 19.89 to 248.10 MiB): what a projector without a
# measurement may add.
UNMEASURED_VISION_COMPUTE = "20–248 MiB"


def images_line(
    tr: Tr, mmproj: str, vision_bytes: int, compute_bytes: int, vision_encoder: bool, engine: str = "llama.cpp"
) -> str:
    """What sending images adds (llama.cpp's --fit counts the projector's weights and its warmup compute buffer; vLLM
    loads the encoder with its checkpoint, which these numbers do not size)."""
    if engine == Engine.VLLM and vision_encoder:
        return tr(IMAGES_VLLM)
    if vision_bytes and compute_bytes:
        return tr(
            _("Images: the vision projector {file} adds {size} on the GPU, in the total ({compute} of it for the "
              "projector's compute buffers)"),
            file=mmproj, size=tr.small_size(vision_bytes), compute=tr.small_size(compute_bytes),
        )  # fmt: skip
    if vision_bytes:
        return tr(
            _("Images: the vision projector {file} adds {size} on the GPU, in the total, without its compute buffer, "
              "which was not measured for this projector ({range} for the projectors measured)"),
            file=mmproj, size=tr.small_size(vision_bytes), range=UNMEASURED_VISION_COMPUTE,
        )  # fmt: skip
    if vision_encoder:
        return tr(_("Images: the size of this model's vision projector is not known, so it is not in the total"))
    return tr(_("Images: this model takes no images (no vision encoder), so nothing is added"))


def draft_note(tr: Tr, request: Request, est: Estimate) -> str:
    """What a draft model's bytes are (llama.cpp speculative decoding: its own weights, cache and compute buffer)."""
    draft = request.draft
    return tr(
        _("({name} {quant}: weights {weights}, KV {kv} at {kv_type}, compute {compute})"),
        name=draft.name if draft is not None else "",
        quant=request.draft_quant,
        weights=tr.gib(est.draft_weights_bytes),
        kv=tr.gib(est.draft_kv_bytes),
        kv_type=request.draft_kv_cache.value,
        compute=tr.gib(est.draft_compute_bytes),
    )


ASK_DISPLAY_SHARE = _(
    "🖥️ A display on this GPU uses some of its memory too, and how much depends on the screens and what is open: say "
    "it (nvidia-smi's Memory-Usage with the model stopped), e.g. \"1.5GB already used\", and I'll take it off."
)
IMAGES_VLLM = _("Images: vLLM loads the vision encoder with the checkpoint; these numbers are the text model's alone")
NO_MTP_HEAD = _("MTP: this file carries no MTP head llama.cpp can draft with, so nothing is added")


def mtp_line(tr: Tr, size: int) -> str:
    """A file whose MTP head llama.cpp can draft with, and what drafting with it would add (not in the total)."""
    return tr(
        _("MTP head in the file: llama.cpp drafts with it on --spec-type draft-mtp, adding {size} (not in the total)"),
        size=tr.gib(size),
    )


def vision_encoder_line(tr: Tr) -> str:
    """A model whose config.json describes a vision encoder: the numbers are the text model's alone."""
    return tr(_("Vision encoder: not in these numbers; llama.cpp converts it to a separate mmproj file (--mmproj)"))


def render_answer(answer: Answer, lang: Lang, assumed: tuple[str, ...] = ()) -> str:
    tr = Tr(lang)
    est, request = answer.estimate, answer.request
    arch = request.model.architecture
    trained = arch.context_limit  # the model's own limit: its training context or what its RoPE scaling reaches
    lines = [_settings_line(request, tr), ""]
    limit_line = context_limit_line(
        tr, request.model.name, request.context, arch.context_length, arch.rope_scaled_context, rope_scaling_label(arch)
    )
    if limit_line:
        lines[1:1] = [limit_line]
    if family_of(arch.arch).attention_sinks and request.kv_cache.value in QUANTIZED_KV:
        lines.insert(len(lines) - 1, "⚠️ " + tr(SINK_KV_NOTE, model=request.model.name))
    elif request.kv_cache.value in LOW_BIT_KV:
        lines.insert(len(lines) - 1, "ℹ️ " + tr(LOW_BIT_KV_NOTE, kv=request.kv_cache.value))
    unified = bool(request.gpus) and request.gpus[0].gpu.is_unified  # one memory pool: no "system RAM" apart
    host = ""
    if est.host_bytes and not unified:
        host = tr(_("(+ {size} token embeddings in system RAM)"), size=tr.gib(est.host_bytes))
    naive = ""
    if est.kv_cache_naive_bytes != est.kv_cache_bytes:
        naive = tr(_("(the naive formula says {size})"), size=tr.gib(est.kv_cache_naive_bytes))
    backend = request.gpus[0].gpu.backend if request.gpus else "cuda"
    runtime_note = (
        tr(_("(vLLM profile: non-torch memory)"))
        if request.engine == Engine.VLLM
        else tr(RUNTIME_NOTES.get(backend, RUNTIME_NOTES["cuda"]))
    )
    # DeepSeek V4's fixed per-sequence buffers are its KV compressor's, not a recurrent layer's (calc/recurrent.py).
    state_label = tr(_("Compressor state")) if request.model.architecture.compress_ratios else tr(_("Recurrent state"))
    dequant_note = (
        tr(
            _("(+{size} for flash attention's f16 copy of one layer's K and V)"),
            size=tr.small_size(est.flash_attn_copy_bytes),
        )
        if est.flash_attn_copy_bytes
        else ""
    )
    rows = [
        (tr(_("Weights")), est.weights_bytes, host),
        (tr(_("KV cache")), est.kv_cache_bytes, naive),
        *(
            [(state_label, est.recurrent_state_bytes, tr(_("(per user; does not grow with context)")))]
            if est.recurrent_state_bytes
            else []
        ),
        (tr(_("Compute buffers")), est.compute_bytes, dequant_note),
        (tr(_("Runtime")), est.runtime_bytes, runtime_note),
        *([(tr(_("Draft model")), est.draft_bytes, draft_note(tr, request, est))] if est.draft_bytes else []),
        *(
            [(tr(_("MTP drafting")), est.mtp_bytes, tr(_("(its MTP block, the cache of its layers, compute)")))]
            if est.mtp_bytes
            else []
        ),
        (
            tr(_("Total")),
            est.total_bytes,
            tr(
                _("(file {file} = {file_gb}, {params}B parameters, {bpw} bits per weight)"),
                file=tr.gib(est.file_bytes),
                file_gb=tr.gb(est.file_bytes),
                params=format_number(est.params / 1e9, lang, digits=2),
                bpw=format_number(est.bits_per_weight, lang, digits=2),
            )
            if est.effective_params is None
            else tr(
                _("(file {file} = {file_gb}, {params}B parameters, {effective}B effective, {bpw} bits per weight)"),
                file=tr.gib(est.file_bytes),
                file_gb=tr.gb(est.file_bytes),
                params=format_number(est.params / 1e9, lang, digits=2),
                effective=format_number(est.effective_params / 1e9, lang, digits=2),
                bpw=format_number(est.bits_per_weight, lang, digits=2),
            ),
        ),
    ]
    for label, size, note in rows:
        shown = tr.small_size(size) if label == state_label else tr.gib(size)
        lines.append(f"  {ljust(label, 16)} {rjust(shown, 11)}  {note}".rstrip())
    if est.mtp_head_bytes and not request.mtp:
        lines.append("  " + mtp_line(tr, est.mtp_head_bytes))
    elif request.mtp and not est.mtp_bytes:
        lines.append("  " + tr(NO_MTP_HEAD))
    if request.images:
        m = request.model
        lines.append("  " + images_line(tr, m.mmproj, est.vision_bytes, est.vision_compute_bytes, m.vision_encoder,
                                        request.engine))  # fmt: skip
    elif request.model.mmproj:
        lines.append("  " + mmproj_line(tr, request.model.mmproj, request.model.mmproj_bytes))
    elif request.model.vision_encoder:
        lines.append("  " + vision_encoder_line(tr))
    lines.append("")
    if answer.fits:
        title = tr(_("GPU")) if request.gpus else tr(_("Smallest GPUs that fit"))
        verdict, headroom, max_ctx, speed = (tr(label) for label in TABLE_HEADINGS)
        lines.append(f"  {ljust(title, 34)} {ljust(verdict, 28)} {rjust(headroom, 11)}  {rjust(max_ctx, 11)}  {speed}")
        lines.extend(_fit_row(fit, tr, trained) for fit in answer.fits)
        capped = [fit.max_context for fit in answer.fits if fit.max_context and fit.max_context > trained]
        if capped:
            lines.append(
                "  "
                + tr(
                    _("* the model's trained limit; memory alone would allow {n} tokens"),
                    n=format_number(max(capped), lang),
                )
            )
    else:
        lines.append("  " + tr(_("No preset GPU holds this, even eight of them.")))
    for fit in answer.fits:
        lines.extend(offload_lines(fit, tr))
    first_token = first_token_line(answer.fits[0], request.context, tr) if request.gpus and answer.fits else ""
    if first_token:
        lines.append("  " + first_token)
    caches = (
        server_caches_line(placement_caches(answer.fits[0]), tr, answer.fits[0].ram_bytes)
        if request.gpus and answer.fits
        else ""
    )
    if caches:
        lines.append("  " + caches)
    fitted = ""
    if request.gpus and answer.fits and placement_fits_ram(answer.fits[0]):
        fitted = fit_default_line(answer.fits[0].fit_default, tr)
    if fitted:
        lines.append("  " + fitted)
    if request.gpus and unified and answer.fits:
        lines.append("  " + unified_memory_line(request.gpus[0].gpu, tr))
    if request.runner == "ollama" and request.gpus and answer.fits:
        lines.append("  " + ollama_ps_line(answer, tr))
    if request.reserved_bytes and request.gpus:
        reserved = tr.gib(request.reserved_bytes)
        lines.append(
            "  " + tr(_("Already in use on the GPU: {reserved}, taken off what the model may use"), reserved=reserved)
        )
    commands = card_commands(request, answer.fits[0]) if request.gpus and answer.fits else {}
    if commands:
        first, *alternatives = commands.values()
        lines += ["", "  " + tr(_("To run it:")), "    " + first]
        for command in alternatives:  # the Ollama alternative
            lines.append("    " + tr(_("or with Ollama: {command}"), command=command))
    if assumed:
        lines.append("")
        filled = {
            "quant": request.quant,
            "context": format_number(request.context, lang),
            "users": request.users,
            "kv": request.kv_cache.value,
            "engine": request.engine.value,
            "ram": tr.gib(answer.fits[0].ram_bytes) if answer.fits else "",
            "link": link_label(*ASSUMED_LINK),
            "gbs": format_number(link_gbs(*ASSUMED_LINK), lang, digits=1),
            "ram_speed": ram_speed_label(_read_ram_speed(answer), tr),
        }
        notes = [tr(ASSUMPTION_LABELS[key], **filled) for key in assumed if key in ASSUMPTION_LABELS]
        others = load_catalog().other_sizes(request.gpus[0].gpu) if "gpu_variant" in assumed and request.gpus else []
        if others:  # which size, and the others it is sold in
            note = tr(GPU_VARIANT_NOTE, gpu=request.gpus[0].gpu.name, others=", ".join(g.name for g in others))
            notes[list(k for k in assumed if k in ASSUMPTION_LABELS).index("gpu_variant")] = note
        lines.append(tr(_("Assumed: {items}"), items="; ".join(notes)))
    return "\n".join(lines) + "\n"


def error_message(error: VramfitError, lang: Lang) -> str:
    """The error as plain text: the same words as the bot's, in the question's language."""
    subject = error_subject(error)
    text = describe_error(
        error.code,
        subject,
        error.suggestions,
        error.message,
        lang,
        markdown=False,
        reason=error_reason(error),
        limits=number_limits(error),
        repos=error_repos(error),
    )
    supported = error.details.get("supported")
    if error.code == "unsupported_architecture" and supported:
        text += "\n" + Tr(lang)(_("It models: {names}"), names=supported)
    return text


def error_text(error: VramfitError, lang: Lang) -> str:
    lines = [error_message(error, lang)]
    if error.code == "unknown_model" and not error_subject(error):
        lines.append(Tr(lang)(_('Example: vram "llama3-8b 32k 3060"')))
    return "\n".join(lines) + "\n"


def list_models_text(catalog: Catalog, lang: Lang) -> str:
    tr = Tr(lang)
    lines = [tr(_("{n} preset models:"), n=len(catalog.models))]
    lines += [f"  {m.id:<34} {m.name}" for m in catalog.models.values()]
    return "\n".join(lines) + "\n"


def list_gpus_text(catalog: Catalog, lang: Lang) -> str:
    tr = Tr(lang)
    lines = [tr(_("{n} preset GPUs:"), n=len(catalog.gpus))]
    lines += [f"  {g.id:<28} {g.name:<36} {tr.gib(g.memory_bytes):>10}" for g in catalog.gpus.values()]
    return "\n".join(lines) + "\n"


SOLVE_HEADLINES: dict[str, str] = {
    "max_context": _("Largest context with every layer on {gpu}: {value} tokens"),
    "max_users": _("Most users at this context on {gpu}: {value}"),
    "best_quant": _("Best quant that fits {gpu}: {value}"),
    "min_gpus": _("GPUs needed: {gpu}"),
}
SOLVE_NOTHING: dict[str, str] = {
    "max_context": _("Not even 256 tokens fit entirely on {gpu}."),
    "max_users": _("Not even one user fits entirely on {gpu}."),
    "best_quant": _("No quant fits entirely on {gpu}."),
    "min_gpus": _("Not even 64 of these hold it: {gpu}."),
}
KV_REASONS: dict[str, str] = {
    "head_dim": _("head size {a} vs {b}"),
    "layers": _("{a} vs {b} layers with a KV cache"),
    "kv_heads": _("{a} vs {b} KV heads"),
    "sliding_window": _("sliding window {a} vs {b} tokens"),
    "mla": _("latent attention (MLA) in one model only"),
}


def _gpu_label(choice: GpuChoice) -> str:
    return choice.gpu.name if choice.count == 1 else f"{choice.count}× {choice.gpu.name}"


def render_solve(result: SolveResult, lang: Lang, assumed: tuple[str, ...] = ()) -> str:
    tr = Tr(lang)
    gpu = _gpu_label(result.gpu)
    if result.value is None:
        headline = tr(SOLVE_NOTHING[result.intent], gpu=gpu)
    else:
        value = format_number(result.value, lang) if isinstance(result.value, int) else result.value
        headline = tr(SOLVE_HEADLINES[result.intent], gpu=gpu, value=value)
    return headline + "\n\n" + render_answer(result.answer, lang, assumed)


def render_compare(result: CompareResult, lang: Lang) -> str:
    tr = Tr(lang)
    cmp = result.comparison
    name_a, name_b = result.a.model.name, result.b.model.name
    lines = [
        tr(
            _("{a} vs {b} · {quant} · {context} tokens"),
            a=name_a,
            b=name_b,
            quant=result.a.quant,
            context=format_number(result.a.context, lang),
        ),
        "",
    ]
    lines.append(f"  {ljust('', 16)} {rjust(name_a[:16], 16)} {rjust(name_b[:16], 16)}")
    rows = [
        (_("Weights"), cmp.a.weights_bytes, cmp.b.weights_bytes),
        (_("KV cache"), cmp.a.kv_cache_bytes, cmp.b.kv_cache_bytes),
        (_("Compute buffers"), cmp.a.compute_bytes, cmp.b.compute_bytes),
        (_("Runtime"), cmp.a.runtime_bytes, cmp.b.runtime_bytes),
        (_("Total"), cmp.a.total_bytes, cmp.b.total_bytes),
    ]
    for label, a, b in rows:
        lines.append(f"  {ljust(tr(label), 16)} {rjust(tr.gib(a), 16)} {rjust(tr.gib(b), 16)}")
    lines.append("")
    per_token = tr(
        _("KV cache per token: {a} vs {b} KiB"),
        a=format_number(cmp.kv_per_token_a / 1024, lang),
        b=format_number(cmp.kv_per_token_b / 1024, lang),
    )
    lines.append(per_token)
    if cmp.reasons:
        reasons = "; ".join(tr(KV_REASONS[r.factor.value], a=r.a, b=r.b) for r in cmp.reasons)
        lines.append(tr(_("Why: {reasons}"), reasons=reasons))
    return "\n".join(lines) + "\n"


def render_what_fits(result: WhatFitsResult, lang: Lang) -> str:
    tr = Tr(lang)
    gpu = _gpu_label(result.gpu)
    lines = [
        tr(
            _("Models that fit {gpu} at {context} tokens, largest first:"),
            gpu=gpu,
            context=format_number(result.template.context, lang),
        ),
        "",
    ]
    if not result.models:
        lines.append("  " + tr(_("No preset model fits entirely at this context.")))
    for item in result.models:
        headroom = "+" + tr.gib(item.fit.headroom_bytes)
        lines.append(
            f"  {ljust(item.name, 34)} {ljust(item.quant, 8)} {rjust(tr.gib(item.fit.total_bytes), 10)}"
            f"  {rjust(headroom, 10)}"
        )
    return "\n".join(lines) + "\n"


def unparsed_line(words: tuple[str, ...], lang: Lang) -> str:
    """The words of the question no setting took, said before the answer (the answer is for the rest)."""
    return Tr(lang)(_("⚠️ Not understood: {words}"), words=", ".join(f"`{w}`" for w in words))


def speed_first_line(answer: Answer, lang: Lang) -> str:
    """For a speed question ("how fast?", "몇 토큰 나와?"): "⚡ RTX 3060 12GB: ≈ 38 tok/s (23–45)", said first; "" when
    no GPU was named or the first one has no speed (it does not run)."""
    if not answer.request.gpus or not answer.fits:
        return ""
    fit = answer.fits[0]
    decode = fit.expert_offload.decode if fit.expert_offload is not None else fit.decode
    if decode is None or fit.verdict.value == "no":
        return ""
    name = fit.name if fit.count == 1 else f"{fit.count}× {fit.name}"
    return "⚡ " + Tr(lang)(_("{gpu}: {speed}"), gpu=name, speed=speed_text(decode, Tr(lang)))


def quant_mix_line(mix: str, quant: str, lang: Lang) -> str:
    """An uploader's mix ("UD-Q4_K_XL") answered as its nearest standard quant, said before the answer."""
    return "ℹ️ " + Tr(lang)(QUANT_MIX_NOTE, mix=mix, quant=quant)


def render_result(result: IntentResult, lang: Lang, assumed: tuple[str, ...] = ()) -> str:
    """Terminal text for any intent."""
    if isinstance(result, SolveResult):
        return render_solve(result, lang, assumed)
    if isinstance(result, CompareResult):
        return render_compare(result, lang)
    if isinstance(result, WhatFitsResult):
        return render_what_fits(result, lang)
    if not result.engines:
        return render_answer(result.answer, lang, assumed)
    tr = Tr(lang)
    parts = [render_answer(a, lang, assumed) for a in result.engines]
    note = tr(
        _(
            "vLLM reserves 90% of the card up front and fills what the weights and activations leave with KV "
            "cache; llama.cpp allocates only what this context needs."
        )
    )
    return "\n".join(parts) + note + "\n"
