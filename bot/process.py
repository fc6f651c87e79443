"""The bot process behind ``python -m vramfit.bot`` and ``vram-bot``: command line, settings, start-up and exit codes.

Usage::

    python -m vramfit.bot                  # run (DISCORD_TOKEN from the environment or .env)
    python -m vramfit.bot --sync           # sync the slash commands globally at start-up, then run
    python -m vramfit.bot --sync --guild ID    # sync to one server (appears at once; good for testing)
    python -m vramfit.bot --sync-only      # sync and exit
    python -m vramfit.bot --shard-count 4 --shard-ids 0,1    # shards 0 and 1 of 4 here; start another for 2,3

Several processes share one PostgreSQL database (``DATABASE_URL``) for the servers' settings and for the record of
what was answered, so a setting made through one process is used by the others and no message is answered twice.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Sequence

import aiohttp
import discord
from pydantic import ValidationError

from vramfit.bot.answering.service import default_backend
from vramfit.bot.bot import GLOBAL, VramBot
from vramfit.bot.settings import Settings
from vramfit.bot.storage import StorageError

log = logging.getLogger("vramfit.bot")


def build_arg_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="vram-bot", description="vramfit Discord bot")
    p.add_argument("--sync", action="store_true", help="sync slash commands at start-up (not done otherwise)")
    p.add_argument("--sync-only", action="store_true", help="sync slash commands, then exit")
    p.add_argument("--guild", type=int, help="sync to this guild only (default: VRAMFIT_DEV_GUILD_ID, else global)")
    p.add_argument(
        "--shard-count", type=int, metavar="N", help="total shards across all processes (default: ask Discord)"
    )
    p.add_argument(
        "--shard-ids", type=shard_list, metavar="A,B", help="the shards this process runs (needs --shard-count)"
    )
    return p


def shard_list(text: str) -> tuple[int, ...]:
    """``0,1`` → ``(0, 1)``."""
    try:
        ids = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected shard ids like 0,1; got {text!r}") from None
    if not ids:
        raise argparse.ArgumentTypeError("no shard ids given")
    return ids


def load_settings(args: argparse.Namespace) -> Settings:
    """Settings from the environment / .env, with the command line's shard flags on top."""
    flags: dict[str, object] = {}
    if args.shard_count is not None:
        flags["shard_count"] = args.shard_count
    if args.shard_ids is not None:
        flags["shard_ids"] = args.shard_ids
    return Settings(**flags)  # type: ignore[arg-type]


async def run(settings: Settings, *, sync_to: int | None, sync_only: bool) -> None:
    assert settings.discord_token is not None
    token = settings.discord_token.get_secret_value()
    backend = default_backend()
    if sync_only:  # it answers nothing: no answering processes, no warm-up
        settings = settings.model_copy(update={"answer_processes": 0, "warm_up": False})
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
    parser = build_arg_parser()
    args = parser.parse_args(argv)
    try:
        settings = load_settings(args)
    except ValidationError as exc:
        parser.error(str(exc.errors()[0].get("msg", exc)))
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
    except StorageError as exc:
        log.error("Cannot open the settings database: %s", exc)
        return 1
    except discord.ConnectionClosed as exc:  # the gateway closed: 4004 bad token, 4013/4014 intents, ...
        log.error("Discord closed the gateway connection (code %s): %s", exc.code, exc.reason or exc)
        return 2 if exc.code == 4004 else 1
    except discord.HTTPException as exc:  # a 5xx on login or on the gateway URL
        log.error("Discord answered %s %s: %s", exc.status, getattr(exc.response, "reason", ""), exc.text or exc)
        return 1
    except (OSError, aiohttp.ClientError) as exc:
        log.error("Cannot reach Discord: %s", exc)
        return 1
    except KeyboardInterrupt:
        pass
    return 0
