"""The cards' persistent buttons: their classes are registered here, so a button on a card posted before a restart
still works (:mod:`bot.ui.buttons` recomputes the card from the button's id)."""

from __future__ import annotations

from vramfit.bot.bot import VramBot
from vramfit.bot.ui.buttons import DYNAMIC_ITEMS


async def setup(bot: VramBot) -> None:
    """Register the dynamic buttons."""
    bot.add_dynamic_items(*DYNAMIC_ITEMS)


async def teardown(bot: VramBot) -> None:
    bot.remove_dynamic_items(*DYNAMIC_ITEMS)
