"""A diagnosed log (:mod:`bot.answering.log_doctor`) for the terminal, in Korean or English, and as the JSON of
``vram --json --log``: what was read, the engine's figures beside vramfit's, why it failed, what to change."""

from __future__ import annotations

import shlex
from typing import Any

from vramfit.bot.answering.log_doctor import (
    MIRRORED_COMMIT,
    Diagnosis,
    differing_components,
    held_elsewhere,
    other_backend,
    pipeline_copies,
)
from vramfit.bot.i18n import Lang, Tr, _, format_number
from vramfit.bot.render.text import ljust, rjust

_LABELS = {
    "weights_gpu": _("Weights on the GPU"),
    "weights_host": _("Weights in RAM"),
    "weights_all": _("Weights (GPU + RAM)"),
    "kv": _("KV cache"),
    "compute": _("Compute buffers"),
}
_FAILED = {
    "model": _("the weights"),
    "kv": _("the KV cache"),
    "compute": _("the compute buffer"),
    "torch": _("PyTorch"),
}


def _mib(tr: Tr, mib: float | None) -> str:
    return "—" if mib is None else f"{tr.num(mib, 1)} MiB"


def render_log_report(d: Diagnosis, lang: Lang) -> str:
    tr = Tr(lang)
    r = d.reading
    lines = [tr(_("What the {engine} log says:"), engine=r.engine)]
    if r.general_name:
        if d.preset is not None:
            lines.append(tr(_("Model: {name} (vramfit's {preset})"), name=r.general_name, preset=d.preset.name))
        else:
            lines.append(tr(_("Model: {name}: not one vramfit knows by its name and shape, so only the log's own "
                              "figures are shown."), name=r.general_name))  # fmt: skip
    settings = []
    if r.file_type:
        settings.append(r.file_type)
    if r.n_ctx is not None:
        settings.append(tr(_("context {n}"), n=format_number(r.n_ctx, lang)))
    if r.n_seq and r.n_seq > 1:
        settings.append(tr(_("{n} sequences"), n=r.n_seq))
    if r.type_k:
        settings.append(f"KV {r.type_k}/{r.type_v or r.type_k}")
    if r.flash_attn is not None:
        settings.append(tr(_("flash attention on")) if r.flash_attn else tr(_("flash attention off")))
    if r.layers_on_gpu is not None:
        settings.append(tr(_("{on} of {total} layers on the GPU"), on=r.layers_on_gpu, total=r.layers_total))
    if settings:
        lines.append(" · ".join(settings))
    for gpu in r.gpus:
        if gpu.used_mib is not None and gpu.total_mib:
            used, total = format_number(int(gpu.used_mib), lang), format_number(int(gpu.total_mib), lang)
            lines.append(tr(_("{gpu}: {used} of {total} MiB in use"), gpu=gpu.name, used=used, total=total))
        elif gpu.free_mib is not None:
            free = format_number(int(gpu.free_mib), lang)
            lines.append(tr(_("{gpu}: {free} MiB free at start"), gpu=gpu.name, free=free))
    if d.rows:
        estimated = any(row.estimated_mib is not None for row in d.rows)
        logged, difference = tr(_("the log")), tr(_("difference"))
        header = f"  {ljust('', 22)} {rjust(logged, 14)} {rjust('vramfit', 14)} {rjust(difference, 11)}"
        lines += ["", header if estimated else f"  {ljust('', 22)} {rjust(logged, 14)}"]
        for row in d.rows:
            diff = ""
            if row.logged_mib is not None and row.estimated_mib is not None:
                diff = f"{row.estimated_mib - row.logged_mib:+,.1f}"
            label = tr(_LABELS[row.label])
            ours = _mib(tr, row.estimated_mib) if estimated else ""
            row_text = f"  {ljust(label, 22)} {rjust(_mib(tr, row.logged_mib), 14)} {rjust(ours, 14)} {rjust(diff, 11)}"
            lines.append(row_text.rstrip())
    free_at_start = sum(g.free_mib for g in r.gpus if g.free_mib is not None)
    if d.calculated is not None and free_at_start:  # what was free against what these settings need on the GPU
        needed = d.calculated.estimate.total_bytes / 2**20
        said = _("vramfit: these settings need {needed} MiB on the GPU; {free} MiB were free at start.")
        free_mib = format_number(round(free_at_start), tr.lang)
        lines.append(tr(said, needed=format_number(round(needed), tr.lang), free=free_mib))
    for device, free_then, has in held_elsewhere(r):  # a likely cause of running short: memory taken before it started
        held = _("{gpu} started with {free} of its {total} MiB free: something else held {held} MiB.")
        numbers = {k: format_number(round(v), tr.lang) for k, v in (("free", free_then), ("total", has),
                                                                      ("held", has - free_then))}  # fmt: skip
        lines.append(tr(held, gpu=device, **numbers))
    if r.tensor_overrides:  # a setting vramfit does not model: the log's own split stands
        if d.calculated is not None:
            placed = _("The log shows {count} tensors placed with -ot (--override-tensor): vramfit doesn't model "
                       "that placement, so the weights are compared as one sum, GPU and RAM together.")  # fmt: skip
        else:
            placed = _("The log shows {count} tensors placed with -ot (--override-tensor), which vramfit doesn't "
                       "model: the split above is the log's own.")  # fmt: skip
        lines.append(tr(placed, count=format_number(r.tensor_overrides, tr.lang)))
    if copies := pipeline_copies(r):  # a setting the log shows: compute buffers reserved once per copy
        piped = _(
            "The log shows pipeline parallelism with {copies} copies: llama.cpp reserves each GPU's compute "
            "buffers {copies} times over. A build with -DGGML_SCHED_MAX_COPIES=1 reserves them once."
        )
        lines.append(tr(piped, copies=copies))
    if differing := differing_components(d):  # no setting explains it: a different build, or one the reader lacks
        parts = " / ".join(tr(_LABELS[c]) for c in differing)
        if r.build:
            other = _("{parts} differ from vramfit's by more than 1 %: this log's llama.cpp is build {build}, "
                      "vramfit mirrors {commit}, and builds allocate differently.")  # fmt: skip
            lines.append(tr(other, parts=parts, build=r.build, commit=MIRRORED_COMMIT))
        else:
            unsure = _("{parts} differ from vramfit's by more than 1 %: a different llama.cpp build than {commit}, "
                       "or a setting this log doesn't print.")  # fmt: skip
            lines.append(tr(unsure, parts=parts, commit=MIRRORED_COMMIT))
        if "compute" in differing and (backend := other_backend(r)):
            lines.append(tr(_("vramfit's compute buffers are llama.cpp's on CUDA; this log ran on {backend}."),
                            backend=backend))  # fmt: skip
    lines += _ollama_lines(d, tr) + _vllm_lines(d, tr) + _failure_lines(d, tr)
    if r.unread_from_line is not None:  # the read ran out of time: what is above is the log's first lines only
        cut = _("⏱ Read up to line {line}: the rest took longer to read than one log gets, so it isn't in this report.")
        lines += ["", tr(cut, line=format_number(r.unread_from_line - 1, tr.lang))]
    return "\n".join(lines) + "\n"


def _ollama_lines(d: Diagnosis, tr: Tr) -> list[str]:
    r = d.reading
    out = []
    if r.ollama_layers_offload is not None and r.ollama_layers_model is not None:
        out.append(tr(_("Ollama put {on} of {total} layers on the GPU: it needs {full} GiB for all of it, with {free} "
                        "GiB available."), on=r.ollama_layers_offload, total=r.ollama_layers_model,
                      full=tr.num(r.ollama_required_full_gib or 0, 1),
                      free=" + ".join(tr.num(v, 1) for v in r.ollama_available_gib) or "?"))  # fmt: skip
    for name, size, processor in r.ollama_ps:
        out.append(tr(_("ollama ps: {name} takes {size}, {processor}"), name=name, size=size, processor=processor))
    return out


def _vllm_lines(d: Diagnosis, tr: Tr) -> list[str]:
    r = d.reading
    out = []
    if r.kv_cache_gib is not None and r.weights_gib is not None:
        out.append(tr(_("vLLM: weights {weights} GiB, KV cache {kv} GiB (what its memory share leaves)"),
                      weights=tr.num(r.weights_gib, 2), kv=tr.num(r.kv_cache_gib, 2)))  # fmt: skip
    if r.kv_tokens and r.max_model_len and r.kv_tokens < r.max_model_len:
        out.append(tr(_("❌ The KV cache holds {tokens} tokens, fewer than --max-model-len {asked}: start with "
                        "--max-model-len {tokens}, or give vLLM more of the GPU (--gpu-memory-utilization)."),
                      tokens=r.kv_tokens, asked=r.max_model_len))  # fmt: skip
    elif any(f.what == "vllm_kv" for f in r.failures):
        out.append(tr(_("❌ No memory was left for the KV cache after the weights and activations: raise "
                        "--gpu-memory-utilization, or serve a smaller checkpoint (FP8, AWQ).")))  # fmt: skip
    return out


def _failure_lines(d: Diagnosis, tr: Tr) -> list[str]:
    r = d.reading
    if not d.failed_what:
        return []
    what = tr(_FAILED.get(d.failed_what, _("memory")))
    if d.failed_mib is not None:
        device = next((f.device for f in r.failures if f.mib == d.failed_mib), "")
        failed = _("❌ Out of memory: {what} asked for {mib} MiB on {device} and did not get it.")
        out = ["", tr(failed, what=what, mib=tr.num(d.failed_mib, 1), device=device or "GPU")]
    else:
        out = ["", tr(_("❌ The GPU ran out of memory."))]
    request = d.request
    if request is not None and d.gpu_name and d.fitting_context:
        total = d.fitting_context * request.users
        model = d.preset.name if d.preset else ""
        fits = _("On {gpu}, with every layer on the GPU, {model} fits up to {n} tokens of context:")
        out.append(tr(fits, gpu=d.gpu_name, model=model, n=format_number(total, tr.lang)))
        out.append("    " + shlex.join(["llama-server", "-c", str(total), "-ngl", "99"]))
    elif request is not None and d.gpu_name:
        out.append(tr(_("On {gpu} not even a short context fits with every layer on the GPU: offload layers "
                        "(-ngl) or experts (--n-cpu-moe), or take a smaller quant."), gpu=d.gpu_name))  # fmt: skip
    return out


def log_report_json(d: Diagnosis) -> dict[str, Any]:
    """``vram --json --log``: the reading, vramfit's figures beside it (MiB), the failure and the context that fits."""
    return {
        "log": d.reading.model_dump(mode="json", exclude_defaults=True),
        "model": d.preset.id if d.preset else None,
        "rows": [
            {"component": row.label, "log_mib": row.logged_mib, "vramfit_mib": row.estimated_mib} for row in d.rows
        ],
        "failure": {"what": d.failed_what, "mib": d.failed_mib} if d.failed_what else None,
        "fitting_context": d.fitting_context * d.request.users if d.request and d.fitting_context else None,
    }
