"""A bot in its own OS process, pointed at a fake Discord running in the test's process.

The test starts the fake Discord, then ``start_bot_process(urls, settings)``; the child patches discord.py's REST and
gateway addresses, runs the real VramBot with those settings (its shard slice, its database) and reports "ready".
``stop()`` closes it. Used by the multi-process tests (one settings database shared by several processes).
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any


def _serve(conn: Connection, urls: dict[str, str], settings: dict[str, Any]) -> None:
    asyncio.run(_run(conn, urls, settings))


async def _run(conn: Connection, urls: dict[str, str], settings: dict[str, Any]) -> None:
    import discord
    import yarl
    from discord.gateway import DiscordWebSocket

    from tests.fake_discord.backend import FakeBackend
    from vramfit.bot.bot import VramBot
    from vramfit.bot.settings import Settings

    discord.http.Route.BASE = urls["api"]
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(urls["gateway"])
    bot = VramBot(Settings(_env_file=None, **settings), FakeBackend().backend(), guild_ready_timeout=0.05)
    await bot.login("process-token")
    task = asyncio.create_task(bot.connect())
    await bot.wait_until_ready()
    conn.send("ready")
    await asyncio.get_running_loop().run_in_executor(None, conn.recv)  # "stop"
    await bot.close()
    await asyncio.wait_for(task, 10)


@dataclass
class BotProcess:
    process: BaseProcess
    conn: Connection

    async def ready(self, timeout: float = 30.0) -> None:
        loop = asyncio.get_running_loop()
        ok = await loop.run_in_executor(None, self.conn.poll, timeout)
        assert ok and self.conn.recv() == "ready", "the bot process did not become ready"

    def stop(self) -> None:
        if self.process.is_alive():
            self.conn.send("stop")
            self.process.join(timeout=15)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(timeout=5)


def start_bot_process(urls: dict[str, str], settings: dict[str, Any]) -> BotProcess:
    ctx = mp.get_context("spawn")  # a fresh interpreter: nothing shared with the test's process
    parent, child = ctx.Pipe()
    process = ctx.Process(target=_serve, args=(child, urls, settings), daemon=True)
    process.start()
    return BotProcess(process=process, conn=parent)
