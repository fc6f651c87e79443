"""A model described by a Hugging Face config.json: given to ``vram --config FILE`` or attached to a Discord message.

Both read the same way: the bytes as JSON (:func:`vramfit.calc.files.parse_config_json`: malformed JSON is
``bad_file``), the architecture by :func:`vramfit.calc.hf_config.from_hf_config` (a ``model_type`` it does not
model is ``unsupported_architecture``, with the nearest presets as suggestions, never a guess from another layout).
No Discord here: the bot reads the attachment and hands its bytes over.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vramfit.calc.errors import BadFileError, UnsupportedArchitectureError, VramfitError
from vramfit.calc.files import parse_config_json
from vramfit.calc.hf_config import declares_vision_encoder, from_hf_config
from vramfit.calc.presets import load_catalog
from vramfit.calc.request import ModelRef

MAX_ATTACHMENT_BYTES = 1 << 20  # a config.json is a few KiB; an attachment larger than 1 MiB is not one
ATTACHED_SOURCE = "attachment:"  # ModelRef.source of a model read from an attached config.json: "attachment:{name}"


class AttachmentTooLargeError(BadFileError):
    """An attachment past :data:`MAX_ATTACHMENT_BYTES`: refused before it is read."""

    code = "attachment_too_large"


def model_from_config(config: Mapping[str, Any], *, fallback_name: str, source: str) -> ModelRef:
    """The model a config.json describes, named by its ``_name_or_path`` (else ``fallback_name``)."""
    name = str(config.get("_name_or_path") or fallback_name)[:200]
    try:
        architecture = from_hf_config(config)
    except UnsupportedArchitectureError as exc:
        exc.suggestions = nearest_presets(name, exc)
        raise
    return ModelRef(id=name.split("/")[-1].lower() or "config", name=name or "config.json",
                    architecture=architecture, source=source,
                    vision_encoder=declares_vision_encoder(config))  # fmt: skip


def attached_config_model(data: bytes, filename: str) -> ModelRef:
    """The model of an attached config.json's bytes; its ``source`` is ``attachment:{filename}``."""
    name = filename.rsplit("/", 1)[-1][:100] or "config.json"
    if len(data) > MAX_ATTACHMENT_BYTES:
        raise too_large(name)
    config = parse_config_json(data, name)
    fallback = str(config.get("model_type") or "") or name.removesuffix(".json")  # a config without _name_or_path
    return model_from_config(config, fallback_name=fallback, source=ATTACHED_SOURCE + name)


def too_large(name: str) -> AttachmentTooLargeError:
    limit = f"{MAX_ATTACHMENT_BYTES >> 20} MiB"
    return AttachmentTooLargeError(f"{name} is larger than {limit}", subject=limit, field="size")


def nearest_presets(name: str, error: VramfitError) -> list[str]:
    """Presets a user could ask about instead: the closest names to the model's own, else to its architecture."""
    catalog = load_catalog()
    by_name = catalog.suggest_models(name.split("/")[-1], 3)
    return by_name or catalog.suggest_models(str(error.details.get("subject")), 3)
