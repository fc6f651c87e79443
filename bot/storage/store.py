"""The asynchronous face of the repository, for the bot: worker threads plus a short per-server cache.

Every call runs :class:`bot.storage.repository.Repository` in a thread pool owned by the store (one thread for
SQLite, the pool's size for PostgreSQL), so the event loop never blocks on the database. Settings are cached per
server for ``cache_seconds``: a process that changes a server's settings updates its cache at once; another
process (after a reshard, say) sees the change within ``cache_seconds``. Claims and thread questions are never
cached: they must see the other processes' writes.

Nothing waits on the database for long: a read on the answer path (a server's settings, a claim, a thread's last
question) gets ``answer_timeout`` seconds (about 1 s) and then answers from the cache, even an expired entry, or
raises :class:`StorageTimeout` for the caller's fallback; a write gets ``write_timeout`` seconds. After a timeout the
store is treated as unavailable for ``DEGRADED_SECONDS``: calls fail fast instead of queueing behind a locked or
dead database.

:meth:`Store.remote_cache` is the store as the answering code's cache of Hub and Ollama reads
(:class:`bot.sources.cache.RemoteCache`): synchronous, for the answering threads, under the same timeouts; a
database that does not answer is a cache miss, and the source is read instead.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from vramfit.bot.sources.cache import CachedRead
from vramfit.bot.storage.db import Database, StorageError
from vramfit.bot.storage.migrations import migrate
from vramfit.bot.storage.repository import (
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
# A remote read answers for a day (bot.sources); older ones serve only VRAMFIT_OFFLINE=1, for a month.
REMOTE_READ_RETENTION_MS = 30 * 24 * 3600 * 1000
DEGRADED_SECONDS = 10.0


class StorageTimeout(StorageError):
    """The database did not answer in time (locked by another process, a server that is gone)."""


class Store:
    """Async access to the bot's data."""

    def __init__(
        self,
        db: Database,
        *,
        cache_seconds: float = 30.0,
        owner: str = "",
        answer_timeout: float = 1.0,
        write_timeout: float = 2.0,
    ) -> None:
        self.db = db
        self.answer_timeout = answer_timeout
        self.write_timeout = write_timeout
        self._degraded_until = 0.0
        self.repo = Repository(db)
        self.cache_seconds = cache_seconds
        self.owner = owner  # written into "answered" records: which process answered (for logs and debugging)
        self._executor = ThreadPoolExecutor(max_workers=db.max_workers, thread_name_prefix="vramfit-db")
        self._cache: dict[int, tuple[float, GuildSettings]] = {}

    @classmethod
    async def open(
        cls, db_factory: Callable[[], Database], *, cache_seconds: float = 30.0, owner: str = "", **timeouts: float
    ) -> Store:
        """Connect (in a thread), migrate, prune old answered records, quiet threads and month-old remote reads, and
        return the store."""
        loop = asyncio.get_running_loop()
        db = await loop.run_in_executor(None, db_factory)
        store = cls(db, cache_seconds=cache_seconds, owner=owner, **timeouts)
        try:
            await store._run(migrate, db)
            pruned = await store._run(store.repo.prune_answered, now_ms() - ANSWERED_RETENTION_MS)
            if pruned:
                log.info("Pruned %d old answered records", pruned)
            quiet = await store._run(store.repo.prune_thread_questions, now_ms() - THREAD_RETENTION_MS)
            if quiet:
                log.info("Forgot the questions of %d quiet threads", quiet)
            old = await store._run(store.repo.prune_remote_reads, now_ms() - REMOTE_READ_RETENTION_MS)
            if old:
                log.info("Forgot %d remote reads older than a month", old)
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

    @property
    def degraded(self) -> bool:
        """True for a while after the database failed to answer in time."""
        return time.monotonic() < self._degraded_until

    async def _timed(self, fn: Callable[..., T], *args: object, timeout: float) -> T:
        """``fn`` within ``timeout`` seconds, failing fast while the store is degraded."""
        if self.degraded:
            raise StorageTimeout("the settings database did not answer a moment ago; not waiting on it again yet")
        try:
            return await asyncio.wait_for(self._run(fn, *args), timeout)
        except TimeoutError:
            self._degraded_until = time.monotonic() + DEGRADED_SECONDS
            log.warning("The settings database did not answer within %.1f s (%s)", timeout, self.db.description)
            raise StorageTimeout(f"the settings database did not answer within {timeout:g} s") from None

    # -- settings ------------------------------------------------------------------------------------------------

    async def guild(self, guild_id: int) -> GuildSettings:
        """A server's settings: cached, else read within ``answer_timeout``; when the database is slow or down, the
        last known settings (however old) or, for a server never read, :class:`StorageError`."""
        cached = self._cache.get(guild_id)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        try:
            return self._remember(await self._timed(self.repo.guild, guild_id, timeout=self.answer_timeout))
        except Exception:
            if cached is None:
                raise
            log.warning("Using the last known settings of guild %s (the database is unavailable)", guild_id)
            return cached[1]

    async def fresh_guild(self, guild_id: int) -> GuildSettings:
        """A server's settings as stored now (for ``/vram-settings show``), within ``write_timeout``."""
        return self._remember(await self._timed(self.repo.guild, guild_id, timeout=self.write_timeout))

    async def _write(self, fn: Callable[..., T], *args: object) -> T:
        return await self._timed(fn, *args, timeout=self.write_timeout)

    async def _write_list(self, fn: Callable[..., tuple[T, GuildSettings]], *args: object) -> T:
        """A change to a server's GPU or channel list: the repository answers what happened (added, removed...) and
        the settings as they now are, which the cache keeps; the caller gets what happened."""
        outcome, settings = await self._write(fn, *args)
        self._remember(settings)
        return outcome

    def forget(self, guild_id: int | None = None) -> None:
        """Drop cached settings (one server's, or all)."""
        if guild_id is None:
            self._cache.clear()
        else:
            self._cache.pop(guild_id, None)

    async def set_language(self, guild_id: int, value: LanguageSetting) -> GuildSettings:
        return self._remember(await self._write(self.repo.set_language, guild_id, value))

    async def set_engine(self, guild_id: int, value: EngineSetting) -> GuildSettings:
        return self._remember(await self._write(self.repo.set_engine, guild_id, value))

    async def set_mention_replies(self, guild_id: int, value: MentionReplies) -> GuildSettings:
        return self._remember(await self._write(self.repo.set_mention_replies, guild_id, value))

    async def set_reserved(self, guild_id: int, mib: int) -> GuildSettings:
        return self._remember(await self._write(self.repo.set_reserved, guild_id, mib))

    async def add_gpu(self, guild_id: int, gpu_id: str) -> AddResult:
        return await self._write_list(self.repo.add_gpu, guild_id, gpu_id)

    async def remove_gpu(self, guild_id: int, gpu_id: str) -> bool:
        return await self._write_list(self.repo.remove_gpu, guild_id, gpu_id)

    async def clear_gpus(self, guild_id: int) -> bool:
        return await self._write_list(self.repo.clear_gpus, guild_id)

    async def add_channel(self, guild_id: int, channel_id: int) -> AddResult:
        return await self._write_list(self.repo.add_channel, guild_id, channel_id)

    async def remove_channel(self, guild_id: int, channel_id: int) -> bool:
        return await self._write_list(self.repo.remove_channel, guild_id, channel_id)

    async def reset(self, guild_id: int) -> GuildSettings:
        return self._remember(await self._write(self.repo.reset, guild_id))

    def _remember(self, settings: GuildSettings) -> GuildSettings:
        if self.cache_seconds > 0:
            self._cache[settings.guild_id] = (time.monotonic() + self.cache_seconds, settings)
        return settings

    # -- answered and thread questions -------------------------------------------------------------------------------

    async def claim(self, kind: AnswerKind, target_id: int, guild_id: int | None = None) -> bool:
        """``True`` when this process is the one to answer ``target_id`` (first claim ever)."""
        claim = functools.partial(self.repo.claim, kind, target_id, guild_id=guild_id, owner=self.owner)
        claimed: bool = await self._timed(claim, timeout=self.answer_timeout)
        return claimed

    async def release(self, kind: AnswerKind, target_id: int) -> None:
        await self._timed(self.repo.release, kind, target_id, timeout=self.write_timeout)

    async def thread_question(self, thread_id: int) -> ThreadQuestion | None:
        return await self._timed(self.repo.thread_question, thread_id, timeout=self.answer_timeout)

    async def set_thread_question(self, thread_id: int, guild_id: int | None, question: ThreadQuestion) -> None:
        await self._timed(self.repo.set_thread_question, thread_id, guild_id, question, timeout=self.write_timeout)

    # -- remote reads, for the answering threads ----------------------------------------------------------------------

    def remote_cache(self) -> StoreRemoteCache:
        """The store as the :class:`bot.sources.cache.RemoteCache` the answering code reads Hub and Ollama headers
        through (called from the answering threads, never from the event loop)."""
        return StoreRemoteCache(self)

    def _blocking(self, fn: Callable[..., T], *args: object, timeout: float) -> T:
        """``fn`` on the store's threads, waited for here (a worker thread) within ``timeout`` seconds."""
        if self.degraded:
            raise StorageTimeout("the settings database did not answer a moment ago; not waiting on it again yet")
        future = self._executor.submit(fn, *args)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            self._degraded_until = time.monotonic() + DEGRADED_SECONDS
            log.warning("The database did not answer within %.1f s (%s)", timeout, self.db.description)
            raise StorageTimeout(f"the database did not answer within {timeout:g} s") from None


class StoreRemoteCache:
    """Remote reads kept in the store: a miss when the database is slow or down, a write that fails is logged."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def get(self, key: str) -> CachedRead | None:
        try:
            return self.store._blocking(self.store.repo.remote_read, key, timeout=self.store.answer_timeout)
        except Exception as exc:  # StorageTimeout, a driver's error, a closed store: read the source instead
            log.warning("Could not read the remote-read cache (%s: %s)", type(exc).__name__, exc)
            return None

    def put(self, read: CachedRead) -> None:
        try:
            self.store._blocking(self.store.repo.put_remote_read, read, timeout=self.store.write_timeout)
        except Exception as exc:
            log.warning("Could not keep a remote read (%s: %s)", type(exc).__name__, exc)
