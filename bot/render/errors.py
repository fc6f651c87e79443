"""What to tell someone whose question cannot be answered: one localized sentence, and the closest valid inputs.

Shared by the Discord embed renderer (Markdown) and the terminal / JSON answers (plain text), so a question gets the
same words in both. No Discord import.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.i18n import Lang, Tr, _

# Keys of VramfitError.details that name the text the user must fix, most specific first.
SUBJECT_KEYS = ("subject", "query", "text", "model", "gpu", "quant", "number", "value", "name")
SUBJECT_CODES = ("unknown_model", "unknown_gpu", "unknown_quant", "bad_number")


def error_subject(error: object) -> str:
    """The offending text ("lamma-9b") of a calculator or parser error, when it is known."""
    details = getattr(error, "details", {}) or {}
    for key in SUBJECT_KEYS:
        value = details.get(key)
        if isinstance(value, str | int | float) and str(value):
            return str(value)
    message = str(getattr(error, "message", "") or "")
    if ": " in message and getattr(error, "code", "") in SUBJECT_CODES:
        return message.split(": ", 1)[1].strip(" '\"")
    return ""


def error_reason(error: object) -> str:
    """Why the parser gave up: "ambiguous" (several presets match), "no_model", or "" (nothing matched)."""
    details = getattr(error, "details", {}) or {}
    return str(details.get("reason") or "")


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
    elif code == "stale_button":
        text = tr(_("I can't read this card's buttons any more. Ask again with /vram."))
    elif code == "too_complex":
        text = tr(_("That question is too long or too complex for me. Ask it in fewer words, for example "
                    "`llama3 8b 32k on a 3060`."))
    elif code == "bad_file":
        text = tr(_("That file could not be read: {reason}"), reason=detail or code)
    else:
        text = tr(_("I couldn't answer that: {reason}"), reason=detail or code)
    if suggestions:
        names = ", ".join(f"`{s}`" for s in suggestions[:5])
        text += "\n" + tr(_("Did you mean: {names}"), names=names)
    return text if markdown else text.replace("**", "").replace("`", "")
