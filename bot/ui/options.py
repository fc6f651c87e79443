"""What the options of the commands that answer with a card (``/vram``, ``/vram-fit``, ``/vram-compare``) share:
the descriptions several of them give (one wording, translated once), and the presets their model and GPU options
suggest as the user types. A command registers :func:`model_choices` or :func:`gpu_choices` for an option
(``command.autocomplete("model")(model_choices)``); being functions outside a class, discord.py calls them without a
cog."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.app_commands import locale_str as _

from vramfit.bot.answering.cards import Backend

if TYPE_CHECKING:  # annotations only: bot.bot is a layer above bot.ui (tests/import_layers.py)
    from vramfit.bot.bot import VramBot  # annotations only: bot.bot is a layer above bot.ui (tests/import_layers.py)

log = logging.getLogger(__name__)

CONTEXT_OPTION = _("Context length in tokens per user; 8192 by default")
USERS_OPTION = _("Users served at once; 1 by default")
QUANT_OPTION = _("Quant; Q4_K_M by default")


def _choices(backend: Backend, kind: str, current: str) -> list[app_commands.Choice[str]]:
    """The choices for a model (``kind`` "model") or GPU option while the user types ``current``: the backend's 25
    best (Discord shows at most 25) for its first 100 characters; none when the lookup fails (logged: an autocomplete
    has no way to show an error)."""
    source = backend.suggest_models if kind == "model" else backend.suggest_gpus
    try:
        found = source(current[:100])[:25]
    except Exception:
        log.exception("Autocomplete for %s failed on %r", kind, current)
        return []
    return [app_commands.Choice(name=label[:100], value=value) for label, value in found]


async def model_choices(interaction: discord.Interaction[VramBot], current: str) -> list[app_commands.Choice[str]]:
    """A model option's choices (``/vram``, ``/vram-compare``)."""
    return _choices(interaction.client.backend, "model", current)


async def gpu_choices(interaction: discord.Interaction[VramBot], current: str) -> list[app_commands.Choice[str]]:
    """A GPU option's choices (``/vram``, ``/vram-fit``, ``/vram-compare``)."""
    return _choices(interaction.client.backend, "gpu", current)
