"""``/vram-fit`` and ``/vram-compare``: the two questions that read better as a form than as a sentence.

``/vram-fit gpu context users`` lists the preset models that fit a GPU (largest first, a few per family, each at
the most faithful quant that fits); ``/vram-compare model_a model_b context quant gpu`` puts two models side by side
and says why their KV caches differ. Both answer in the user's Discord language, with the same buttons as ``/vram``
(context presets re-render in place, language toggle, Pin), and with the server's ``/vram-settings`` applied
(language, default engine, and the GPU shortlist when ``/vram-compare`` names no GPU). ``/vram`` and mentions
answer the same questions in words ("what can I run on a 3060?", "llama3 8b vs gemma2 9b"); this module only adds
the forms.
"""

from __future__ import annotations

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from vramfit.bot.answering.cards import Overrides, given_options
from vramfit.bot.bot import VramBot
from vramfit.bot.ui.options import CONTEXT_OPTION, QUANT_OPTION, USERS_OPTION, gpu_choices, model_choices
from vramfit.bot.ui.slash import QUANT_CHOICES, answer_interaction, card_command
from vramfit.calc.request import MAX_CONTEXT, MAX_USERS

MAX_NAME = 100  # an autocompleted option's value: a preset id, or what the user typed


class Questions(commands.Cog):
    """What fits a GPU, and two models compared."""

    def __init__(self, bot: VramBot) -> None:
        self.bot = bot

    @app_commands.command(
        name=_("vram-fit"), description=_("Which models fit my GPU? Largest first, with quant and headroom.")
    )
    @app_commands.rename(gpu=_("gpu"), context=_("context"), users=_("users"))
    @app_commands.describe(
        gpu=_("The GPU, e.g. 3060, 2x 3090 or M2 16GB"),
        context=CONTEXT_OPTION,
        users=USERS_OPTION,
    )
    @card_command
    async def vram_fit(
        self,
        interaction: discord.Interaction[VramBot],
        gpu: app_commands.Range[str, 1, MAX_NAME],
        context: app_commands.Range[int, 1, MAX_CONTEXT] | None = None,
        users: app_commands.Range[int, 1, MAX_USERS] | None = None,
    ) -> None:
        overrides = Overrides(intent="what_fits", gpu=gpu)
        await self._answer(interaction, given_options(overrides, context=context, users=users))

    @app_commands.command(name=_("vram-compare"), description=_("Compare two models' memory, component by component."))
    @app_commands.rename(
        model_a=_("model_a"), model_b=_("model_b"), context=_("context"), quant=_("quant"), gpu=_("gpu")
    )
    @app_commands.describe(
        model_a=_("First model"),
        model_b=_("Second model"),
        context=CONTEXT_OPTION,
        quant=QUANT_OPTION,
        gpu=_("A GPU to check both against (optional)"),
    )
    @app_commands.choices(quant=QUANT_CHOICES)
    @card_command
    async def vram_compare(
        self,
        interaction: discord.Interaction[VramBot],
        model_a: app_commands.Range[str, 1, MAX_NAME],
        model_b: app_commands.Range[str, 1, MAX_NAME],
        context: app_commands.Range[int, 1, MAX_CONTEXT] | None = None,
        quant: str | None = None,
        gpu: app_commands.Range[str, 1, MAX_NAME] | None = None,
    ) -> None:
        overrides = Overrides(intent="compare", model=model_a, compare_model=model_b)
        await self._answer(interaction, given_options(overrides, context=context, quant=quant, gpu=gpu))

    async def _answer(self, interaction: discord.Interaction[VramBot], overrides: Overrides) -> None:
        await answer_interaction(self.bot, interaction, "", overrides)

    # presets suggested as the user types (bot.ui.options)
    vram_fit.autocomplete("gpu")(gpu_choices)
    vram_compare.autocomplete("gpu")(gpu_choices)
    vram_compare.autocomplete("model_a")(model_choices)
    vram_compare.autocomplete("model_b")(model_choices)


async def setup(bot: VramBot) -> None:
    """Load the Questions cog."""
    await bot.add_cog(Questions(bot))
