"""The asynchronous face of the repository, for the bot: worker threads plus a short per-server cache.

Every call runs :class:`bot.storage.repository.Repository` in a thread pool owned by the store (one thread for
SQLite, the pool's size for PostgreSQL), so the event loop never blocks on the database. Settings are cached per
server for ``cache_seconds``: a process that changes a server's settings updates its cache at once; another
process (after a reshard, say) sees the change within ``cache_seconds``. Claims and thread questions are never
cached: they must see the other processes' writes.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from bot.storage.db import Database
from bot.storage.migrations import migrate
from bot.storage.repository import (
    AddResult,
    AnswerKind,
    EngineSetting,
    GuildSettings,
    LanguageSetting,
    MentionReplies,
    Repository,
    ThreadQuestion,
    now_ms,
)

log = logging.getLogger(__name__)

T = TypeVar("T")
ANSWERED_RETENTION_MS = 14 * 24 * 3600 * 1000  # Discord replays at most a few minutes of events; keep two weeks
# A thread quiet for three months is answered afresh: its next question no longer follows up the old one.
THREAD_RETENTION_MS = 90 * 24 * 3600 * 1000


class Store:
    """Async access to the bot's data."""

    def __init__(self, db: Database, *, cache_seconds: float = 30.0, owner: str = "") -> None:
        self.db = db
        self.repo = Repository(db)
        self.cache_seconds = cache_seconds
        self.owner = owner  # written into "answered" records: which process answered (for logs and debugging)
        self._executor = ThreadPoolExecutor(max_workers=db.max_workers, thread_name_prefix="vramfit-db")
        self._cache: dict[int, tuple[float, GuildSettings]] = {}

    @classmethod
    async def open(cls, db_factory: Callable[[], Database], *, cache_seconds: float = 30.0, owner: str = "") -> Store:
        """Connect (in a thread), migrate, prune old answered records and quiet threads, and return the store."""
        loop = asyncio.get_running_loop()
        db = await loop.run_in_executor(None, db_factory)
        store = cls(db, cache_seconds=cache_seconds, owner=owner)
        try:
            await store._run(migrate, db)
            pruned = await store._run(store.repo.prune_answered, now_ms() - ANSWERED_RETENTION_MS)
            if pruned:
                log.info("Pruned %d old answered records", pruned)
            quiet = await store._run(store.repo.prune_thread_questions, now_ms() - THREAD_RETENTION_MS)
            if quiet:
                log.info("Forgot the questions of %d quiet threads", quiet)
        except BaseException:
            await store.close()
            raise
        log.info("Storage: %s", db.description)
        return store

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self.db.close)
        self._executor.shutdown(wait=False)

    async def _run(self, fn: Callable[..., T], *args: object) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args))

    # -- settings ------------------------------------------------------------------------------------------------

    async def guild(self, guild_id: int) -> GuildSettings:
        cached = self._cache.get(guild_id)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        return self._remember(await self._run(self.repo.guild, guild_id))

    def forget(self, guild_id: int | None = None) -> None:
        """Drop cached settings (one server's, or all)."""
        if guild_id is None:
            self._cache.clear()
        else:
            self._cache.pop(guild_id, None)

    async def set_language(self, guild_id: int, value: LanguageSetting) -> GuildSettings:
        return self._remember(await self._run(self.repo.set_language, guild_id, value))

    async def set_engine(self, guild_id: int, value: EngineSetting) -> GuildSettings:
        return self._remember(await self._run(self.repo.set_engine, guild_id, value))

    async def set_mention_replies(self, guild_id: int, value: MentionReplies) -> GuildSettings:
        return self._remember(await self._run(self.repo.set_mention_replies, guild_id, value))

    async def add_gpu(self, guild_id: int, gpu_id: str) -> AddResult:
        result, settings = await self._run(self.repo.add_gpu, guild_id, gpu_id)
        self._remember(settings)
        return result

    async def remove_gpu(self, guild_id: int, gpu_id: str) -> bool:
        removed, settings = await self._run(self.repo.remove_gpu, guild_id, gpu_id)
        self._remember(settings)
        return removed

    async def clear_gpus(self, guild_id: int) -> bool:
        removed, settings = await self._run(self.repo.clear_gpus, guild_id)
        self._remember(settings)
        return removed

    async def add_channel(self, guild_id: int, channel_id: int) -> AddResult:
        result, settings = await self._run(self.repo.add_channel, guild_id, channel_id)
        self._remember(settings)
        return result

    async def remove_channel(self, guild_id: int, channel_id: int) -> bool:
        removed, settings = await self._run(self.repo.remove_channel, guild_id, channel_id)
        self._remember(settings)
        return removed

    async def reset(self, guild_id: int) -> GuildSettings:
        return self._remember(await self._run(self.repo.reset, guild_id))

    def _remember(self, settings: GuildSettings) -> GuildSettings:
        if self.cache_seconds > 0:
            self._cache[settings.guild_id] = (time.monotonic() + self.cache_seconds, settings)
        return settings

    # -- answered and thread questions -------------------------------------------------------------------------------

    async def claim(self, kind: AnswerKind, target_id: int, guild_id: int | None = None) -> bool:
        """``True`` when this process is the one to answer ``target_id`` (first claim ever)."""
        claimed: bool = await self._run(
            functools.partial(self.repo.claim, kind, target_id, guild_id=guild_id, owner=self.owner)
        )
        return claimed

    async def release(self, kind: AnswerKind, target_id: int) -> None:
        await self._run(self.repo.release, kind, target_id)

    async def thread_question(self, thread_id: int) -> ThreadQuestion | None:
        return await self._run(self.repo.thread_question, thread_id)

    async def set_thread_question(self, thread_id: int, guild_id: int | None, question: ThreadQuestion) -> None:
        await self._run(self.repo.set_thread_question, thread_id, guild_id, question)
