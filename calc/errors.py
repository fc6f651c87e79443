"""Errors the calculator raises on bad input, each with the stable code of the JSON contract."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class VramfitError(ValueError):
    """Base error: ``code`` is the machine-readable reason, ``suggestions`` the closest valid inputs."""

    code = "error"

    def __init__(self, message: str, suggestions: Sequence[str] | None = None, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.suggestions = list(suggestions or [])
        self.details = details

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled whole (its code, suggestions and details too), so an answer computed in another process comes
        back as the same error; an exception's default pickling keeps only ``args``."""
        return _rebuilt, (type(self), dict(self.__dict__))

    @property
    def subject(self) -> str:
        """The text the user must fix ("lamma-9b", "-5", "num_hidden_layers"), when it is known."""
        return error_subject(self)

    @property
    def reason(self) -> str:
        """Why it failed beyond the code: "ambiguous" (several presets match), or ""."""
        return error_reason(self)


def _rebuilt(kind: type[VramfitError], state: dict[str, Any]) -> VramfitError:
    """An error as :meth:`VramfitError.__reduce__` pickled it."""
    error = kind.__new__(kind)
    ValueError.__init__(error, state.get("message", ""))
    error.__dict__.update(state)
    return error


class UnknownModelError(VramfitError):
    code = "unknown_model"


class UnknownGpuError(VramfitError):
    code = "unknown_gpu"


class UnknownQuantError(VramfitError):
    code = "unknown_quant"


class BadNumberError(VramfitError):
    code = "bad_number"


class BadFileError(VramfitError):
    code = "bad_file"


class BadConfigError(BadFileError):
    """A config.json (or GGUF header) that reads, but whose numbers cannot describe a model: a count of zero or past
    the limits, heads that cannot share KV heads evenly, a key missing or of the wrong kind. The field is named."""

    code = "bad_config"


class UnsupportedArchitectureError(VramfitError):
    """A model whose architecture the calculator does not model: an error, never a number from another layout."""

    code = "unsupported_architecture"


class UnsupportedSettingError(VramfitError):
    """A setting the engine asked for has no model in the calculator (a draft model with vLLM): no number."""

    code = "unsupported_setting"


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
