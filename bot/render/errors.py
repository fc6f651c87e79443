"""What to tell someone whose question cannot be answered: one localized sentence, and the closest valid inputs.

Shared by the Discord embed renderer (Markdown) and the terminal / JSON answers (plain text), so a question gets the
same words in both. No Discord import.
"""

from __future__ import annotations

from collections.abc import Sequence

from vramfit.bot.i18n import Lang, Tr, _
from vramfit.calc.errors import error_reason, error_subject
from vramfit.calc.presets import load_catalog

__all__ = ["describe_error", "error_reason", "error_repos", "error_subject"]

# One sentence per code, by what it names: the text the user must fix ({subject}), or why it failed ({reason}).
SUBJECT_MESSAGES: dict[str, str] = {
    "unknown_model": _("I don't know the model **{subject}**."),
    "unknown_gpu": _("I don't know the GPU **{subject}**."),
    "unknown_quant": _("Unknown quantization: **{subject}**."),
    "bad_number": _("That number is out of range or unreadable: **{subject}**."),
    "unsupported_architecture": _(
        "vramfit can't model the **{subject}** architecture yet, so it gives no number for it."
    ),
    "log_too_large": _(
        "The attached log is larger than **{subject}**, so I didn't read it: attach the start-up, from the model's "
        "loading to the error."
    ),
    "log_not_read_in_time": _(
        "I read the first **{subject}** lines of that log in the time one log gets and found no line llama.cpp, "
        "Ollama or vLLM wrote. Paste the start-up, from the model's loading to the error."
    ),
    "attachment_too_large": _(
        "The attached file is larger than **{subject}**, so I didn't read it: a config.json is a few KiB."
    ),
    "remote_not_found": _("I couldn't find **{subject}** on Hugging Face."),
    "remote_gated": _(
        "**{subject}** needs access on Hugging Face (a gated or private repo); the owner of this server or terminal "
        "can set HF_TOKEN."
    ),
    "remote_host_refused": _("vramfit reads models from Hugging Face only, not from **{subject}**."),
    "remote_offline": _("**{subject}** has not been read before, and VRAMFIT_OFFLINE is set: no network."),
    "remote_no_gguf": _("**{subject}**: no GGUF file of that quant there."),
    "remote_no_config": _(
        "**{subject}** has no config.json, so vramfit can't tell its architecture from its safetensors files."
    ),
    "remote_no_weights": _(
        "**{subject}** has neither GGUF files nor a Transformers safetensors checkpoint (model.safetensors or its "
        "index), so there is nothing to size."
    ),
    "remote_unreachable": _(
        "I can't reach **{subject}**: there is no network, or its name doesn't resolve. Check the connection and ask "
        "again."
    ),
    "remote_token_refused": _(
        "Hugging Face refused the HF_TOKEN set for this server or terminal (an expired or mistyped token), so "
        "**{subject}** was not read. Its owner can set a valid token or remove it."
    ),
    "conflicting_sources": _("**{subject}**: each names a model, so give only one of them."),
    "chart_not_written": _("I couldn't write the chart to **{subject}**: check that its folder exists and is yours."),
    "bad_flag": _("The command line can't take **{subject}**; `vram --help` lists its flags and their values."),
    "remote_bad_answer": _(
        "**{subject}** answered with something that is neither a file list nor a file header, so vramfit stopped "
        "reading. Try again in a while."
    ),
    "ollama_not_found": _("I couldn't find **{subject}** in the Ollama registry."),
    "ollama_rate_limited": _("The Ollama registry is limiting requests: try again in **{subject}** seconds."),
    "ollama_no_model": _("**{subject}**: the Ollama registry lists no GGUF model file for it."),
    "ollama_host_refused": _(
        "The Ollama registry sent the download to **{subject}**, which is neither the registry nor its storage, so "
        "vramfit didn't follow it."
    ),
    "ollama_offline": _(
        "**{subject}** has not been read from the Ollama registry before, and VRAMFIT_OFFLINE is set: no network."
    ),
}
REASON_MESSAGES: dict[str, str] = {
    "remote_unavailable": _(
        "Hugging Face didn't answer in time or refused the request ({reason}). Try again in a moment."
    ),
    "ollama_unavailable": _(
        "The Ollama registry didn't answer in time or refused the request ({reason}). Try again in a moment."
    ),
    "remote_too_large": _(
        "That model's files are larger than vramfit reads from Hugging Face or the Ollama registry ({reason}), so it "
        "gives no number for it."
    ),
    "bad_config": _("This configuration can't describe a model: {reason}"),
    "bad_file": _("That file could not be read: {reason}"),
}
# Codes that need no subject at all, and what to say when a subject is missing.
PLAIN_MESSAGES: dict[str, str] = {
    "unsupported_setting": _(
        "vramfit counts a draft model with llama.cpp's llama-server only: speculative decoding in vLLM or Ollama isn't "
        "modelled, so there is no number for it. Ask without the draft, or for llama.cpp."
    ),
    "not_a_log": _(
        "That doesn't look like a log of llama.cpp, Ollama or vLLM, nor nvidia-smi's table: nothing in it was read. "
        "Paste the start-up, from the model's loading to the error."
    ),
    "chart_one_model": _("A chart draws one model on its GPUs: ask about one model, not what fits or a comparison."),
    "chart_unavailable": _(
        "Charts need matplotlib: install vramfit with its chart extra (`pip install 'vramfit[chart]'`)."
    ),
    "unknown_model": _("Which model? Name one, for example `llama3 8b 32k on a 3060`."),
    "unknown_gpu": _("Which GPU? Add one to the question, for example `on a 3060` or `24gb`."),
    "stale_button": _("I can't read this card's buttons any more. Ask again with /vram."),
    "too_complex": _(
        "That question is too long or too complex for me. Ask it in fewer words, for example `llama3 8b 32k on a 3060`."
    ),
    "ollama_rate_limited": _("The Ollama registry is limiting requests: try again in a moment."),
}


# A model named with its size that the catalog does not have: said plainly, never answered as another model.
NOT_IN_CATALOG = _(
    "I don't know **{subject}** yet, so I won't answer for another model. For an exact answer, give its Hugging Face "
    "repo or link, its Ollama tag, or attach its config.json or GGUF."
)


# The setting a number was for, as an error names it ("the context must be between …").
NUMBER_FIELDS: dict[str, str] = {
    "context": _("The context"),
    "users": _("The number of users"),
    "ubatch": _("The micro-batch"),
    "batch": _("The batch"),
    "ram": _("The system RAM"),
    "ram_speed": _("The RAM's rate (MT/s)"),
    "ram_channels": _("The number of memory channels"),
    "gpu_count": _("The number of GPUs"),
}


def _display_names(code: str, suggestions: Sequence[str]) -> list[str]:
    """Preset ids as people read them, with the id to type: "GeForce RTX 4060 (`rtx-4060`)"."""
    catalog = load_catalog()
    names = {m.id: m.name for m in catalog.models.values()} if code == "unknown_model" else {}
    if code == "unknown_gpu":
        names = {g.id: g.name for g in catalog.gpus.values()}
    return [f"{names[s]} (`{s}`)" if s in names else f"`{s}`" for s in suggestions]


def error_repos(error: object) -> list[str]:
    """The Hub repos an unknown model's error offers (``details["repos"]``, see bot.sources.huggingface)."""
    repos = (getattr(error, "details", {}) or {}).get("repos")
    return [str(repo) for repo in repos] if isinstance(repos, list | tuple) else []


def number_limits(error: object) -> tuple[str, object, object] | None:
    """(field, low, high) of a number out of range, when the error knows them."""
    details = getattr(error, "details", {}) or {}
    if "field" in details and "low" in details and "high" in details:
        return str(details["field"]), details["low"], details["high"]
    return None


def describe_error(
    code: str,
    subject: str,
    suggestions: Sequence[str],
    detail: str,
    lang: Lang,
    *,
    markdown: bool = True,
    reason: str = "",
    limits: tuple[str, object, object] | None = None,
    repos: Sequence[str] = (),
) -> str:
    """The sentence for an error code, with its subject, then "Did you mean" with up to five suggestions."""
    tr = Tr(lang)
    if code == "bad_number" and limits is not None and limits[0] in NUMBER_FIELDS:
        field, low, high = limits
        text = tr(
            _("{field} must be between {low} and {high}; you wrote **{subject}**."),
            field=tr(NUMBER_FIELDS[field]),
            low=tr.num(float(str(low))),
            high=tr.num(float(str(high))),
            subject=subject or "?",
        )
    elif reason == "not_in_catalog" and subject and code == "unknown_model":
        text = tr(NOT_IN_CATALOG, subject=subject)
    elif reason == "ambiguous" and subject and code in ("unknown_model", "unknown_gpu"):
        text = tr(_("**{subject}** could mean several; which one?"), subject=subject)
    elif code in PLAIN_MESSAGES and (not subject or code not in SUBJECT_MESSAGES):
        text = tr(PLAIN_MESSAGES[code])
    elif code in SUBJECT_MESSAGES:
        text = tr(SUBJECT_MESSAGES[code], subject=subject or "?")
    else:
        text = tr(REASON_MESSAGES.get(code, _("I couldn't answer that: {reason}")), reason=detail or code)
    if suggestions:
        names = ", ".join(_display_names(code, suggestions[:5]))
        text += "\n" + tr(_("Did you mean: {names}"), names=names)
    if repos:
        found = ", ".join(f"`{repo}`" for repo in repos[:5])
        text += "\n" + tr(_("On Hugging Face: {repos} (ask with one of them for its exact size)"), repos=found)
    return text if markdown else text.replace("**", "").replace("`", "")
