"""``python -m bot`` (or ``vram-bot``): run the Discord bot.

Usage::

    python -m bot                  # run (DISCORD_TOKEN from the environment or .env)
    python -m bot --sync           # sync the slash commands globally at start-up, then run
    python -m bot --sync --guild ID    # sync to one server (appears at once; good for testing)
    python -m bot --sync-only      # sync and exit
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence

import aiohttp
import discord

from bot.bot import GLOBAL, VramBot
from bot.settings import Settings

log = logging.getLogger("bot")


def build_arg_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="vram-bot", description="vramfit Discord bot")
    p.add_argument("--sync", action="store_true", help="sync slash commands at start-up (not done otherwise)")
    p.add_argument("--sync-only", action="store_true", help="sync slash commands, then exit")
    p.add_argument("--guild", type=int, help="sync to this guild only (default: VRAMFIT_DEV_GUILD_ID, else global)")
    return p


async def run(settings: Settings, *, sync_to: int | None, sync_only: bool) -> None:
    from bot.backend import default_backend

    assert settings.discord_token is not None
    token = settings.discord_token.get_secret_value()
    backend = default_backend()
    async with VramBot(settings, backend, sync_to=sync_to) as vram_bot:
        if sync_only:
            await vram_bot.login(token)  # setup_hook runs inside login and does the sync
            return
        await vram_bot.start(token)


def configure_logging(level_name: str) -> None:
    """discord.py's coloured console logging on the root logger, once per process; discord.http kept quiet."""
    level = logging.getLevelNamesMapping().get(level_name, logging.INFO)
    root = logging.getLogger()
    if not any(getattr(h, "_vramfit", False) for h in root.handlers):
        discord.utils.setup_logging(level=level, root=True)
        root.handlers[-1]._vramfit = True  # type: ignore[attr-defined]
    root.setLevel(level)
    logging.getLogger("discord.http").setLevel(logging.WARNING)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_arg_parser().parse_args(argv)
    settings = Settings()
    configure_logging(settings.log_level)
    log.info("Settings: %s", settings.safe_summary())
    if settings.discord_token is None:
        log.error("DISCORD_TOKEN is not set (environment or .env); not starting")
        return 2
    sync_to: int | None = None
    if args.sync or args.sync_only:
        sync_to = args.guild or settings.dev_guild_id or GLOBAL
    try:
        asyncio.run(run(settings, sync_to=sync_to, sync_only=args.sync_only))
    except discord.LoginFailure:
        log.error("Discord rejected the token")
        return 2
    except (OSError, aiohttp.ClientError) as exc:
        log.error("Cannot reach Discord: %s", exc)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
