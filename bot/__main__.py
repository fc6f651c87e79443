"""``python -m vramfit.bot`` (or ``vram-bot``): run the Discord bot, or say in one line which extra to install.

The calculator and the ``vram`` command need only the core dependencies; the bot needs the ``bot`` extra. Checking
with ``importlib.util.find_spec`` before importing anything of discord.py turns a missing extra into one sentence and
exit status 2 instead of a ``ModuleNotFoundError`` traceback.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence

from vramfit.bot.cli import argv_lang
from vramfit.bot.i18n import Tr, _

BOT_EXTRA = ("discord", "pydantic_settings", "aiohttp")
EXIT_USAGE = 2


def missing_modules() -> list[str]:
    """The modules of the bot extra that are not installed."""
    return [name for name in BOT_EXTRA if importlib.util.find_spec(name) is None]


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if missing := missing_modules():
        tr = Tr(argv_lang(args, locale=True))
        message = tr(
            _('The Discord bot needs the bot extra ({modules} not installed): pip install "vramfit[bot]"'),
            modules=", ".join(missing),
        )
        print(message, file=sys.stderr)
        return EXIT_USAGE
    from vramfit.bot.process import main as run_bot  # discord.py and the bot: the optional extra, checked just above

    return run_bot(args)


if __name__ == "__main__":
    sys.exit(main())
