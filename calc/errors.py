"""Errors the calculator raises on bad input, each with the stable code of the JSON contract."""

from __future__ import annotations


class VramfitError(ValueError):
    """Base error: ``code`` is the machine-readable reason, ``suggestions`` the closest valid inputs."""

    code = "error"

    def __init__(self, message: str, suggestions: list[str] | None = None, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.suggestions = suggestions or []
        self.details = details


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
