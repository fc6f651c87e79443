"""What to tell someone whose question cannot be answered: one localized sentence, and the closest valid inputs.

Shared by the Discord embed renderer (Markdown) and the terminal / JSON answers (plain text), so a question gets the
same words in both. No Discord import.
"""

from __future__ import annotations

from collections.abc import Sequence

from vramfit.bot.i18n import Lang, Tr, _
from vramfit.calc.errors import error_reason, error_subject

__all__ = ["describe_error", "error_reason", "error_subject"]

def describe_error(
    code: str,
    subject: str,
    suggestions: Sequence[str],
    detail: str,
    lang: Lang,
    *,
    markdown: bool = True,
    reason: str = "",
) -> str:
    """The sentence for an error code, with its subject, then "Did you mean" with up to five suggestions."""
    tr = Tr(lang)
    if reason == "ambiguous" and subject and code in ("unknown_model", "unknown_gpu"):
        text = tr(_("**{subject}** could mean several; which one?"), subject=subject)
    elif code == "unknown_model" and not subject:
        text = tr(_("Which model? Name one, for example `llama3 8b 32k on a 3060`."))
    elif code == "unknown_model":
        text = tr(_("I don't know the model **{subject}**."), subject=subject)
    elif code == "unknown_gpu" and not subject:
        text = tr(_("Which GPU? Add one to the question, for example `on a 3060` or `24gb`."))
    elif code == "unknown_gpu":
        text = tr(_("I don't know the GPU **{subject}**."), subject=subject)
    elif code == "unknown_quant":
        text = tr(_("Unknown quantization: **{subject}**."), subject=subject)
    elif code == "bad_number":
        text = tr(_("That number is out of range or unreadable: **{subject}**."), subject=subject or "?")
    elif code == "unsupported_architecture":
        text = tr(_("vramfit can't model the **{subject}** architecture yet, so it gives no number for it."),
                  subject=subject or "?")
    elif code == "stale_button":
        text = tr(_("I can't read this card's buttons any more. Ask again with /vram."))
    elif code == "too_complex":
        text = tr(_("That question is too long or too complex for me. Ask it in fewer words, for example "
                    "`llama3 8b 32k on a 3060`."))
    elif code == "remote_not_found":
        text = tr(_("I couldn't find **{subject}** on Hugging Face."), subject=subject or "?")
    elif code == "remote_gated":
        text = tr(_("**{subject}** needs access on Hugging Face (a gated or private repo); the owner of this server "
                    "or terminal can set HF_TOKEN."), subject=subject or "?")
    elif code == "remote_unavailable":
        text = tr(_("Hugging Face didn't answer in time or refused the request ({reason}). Try again in a moment."),
                  reason=detail or code)
    elif code == "remote_host_refused":
        text = tr(_("vramfit reads models from Hugging Face only, not from **{subject}**."), subject=subject or "?")
    elif code == "remote_offline":
        text = tr(_("**{subject}** has not been read before, and VRAMFIT_OFFLINE is set: no network."),
                  subject=subject or "?")
    elif code == "remote_no_gguf":
        text = tr(_("**{subject}**: no GGUF file of that quant there."), subject=subject or "?")
    elif code == "bad_config":
        text = tr(_("This configuration can't describe a model: {reason}"), reason=detail or code)
    elif code == "bad_file":
        text = tr(_("That file could not be read: {reason}"), reason=detail or code)
    else:
        text = tr(_("I couldn't answer that: {reason}"), reason=detail or code)
    if suggestions:
        names = ", ".join(f"`{s}`" for s in suggestions[:5])
        text += "\n" + tr(_("Did you mean: {names}"), names=names)
    return text if markdown else text.replace("**", "").replace("`", "")
