"""``VramBot``: an ``AutoShardedBot`` that answers "will this LLM run on my GPU?" with a card.

Start-up (``setup_hook``, before the gateway connects): open the settings store (SQLite, or PostgreSQL with
``DATABASE_URL``; migrated; a store that cannot be opened leaves the bot running without server settings), set the
Korean translator, load every extension in ``bot/exts`` (one failing is logged, the rest load; the persistent buttons
are registered by ``bot/exts/buttons.py``), and sync the commands only when asked (``--sync`` or the owner's
``@vramfit sync``), never on every start. ``shard_ids`` in the settings make this process run only those shards.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import functools
import logging
import pkgutil
import sys
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar, cast

import discord
from discord.ext import commands

import vramfit.bot.exts as extensions_package
from vramfit.bot.answering.cards import AnyCard, Backend, Overrides
from vramfit.bot.answering.cpu_budget import cpu_budget
from vramfit.bot.answering.processes import AnswerProcesses
from vramfit.bot.cooldowns import UserCooldown
from vramfit.bot.errors import AnswerError
from vramfit.bot.i18n import Lang
from vramfit.bot.settings import Settings
from vramfit.bot.sources.budget import cancel_scope
from vramfit.bot.sources.huggingface import hub_deadline_seconds
from vramfit.bot.sources.ollama import timeout_seconds as ollama_deadline_seconds
from vramfit.bot.sources.references import mentions_remote_model
from vramfit.bot.storage import StorageError, Store, open_store
from vramfit.bot.storage.defaults import GuildDefaults
from vramfit.bot.translator import VramTranslator
from vramfit.bot.tree import VramTree
from vramfit.bot.ui.deliveries import CallbackWatch

log = logging.getLogger(__name__)

T = TypeVar("T")
GLOBAL = 0  # sync target meaning "global commands"


def extensions() -> list[str]:
    """Every module in ``bot/exts`` whose name does not start with ``_`` (the python-discord convention)."""
    return sorted(
        f"{extensions_package.__name__}.{m.name}"
        for m in pkgutil.iter_modules(extensions_package.__path__)
        if not m.name.startswith("_")
    )


def intents(*, message_content: bool = False) -> discord.Intents:
    """Guilds (for channels and threads) and messages (to see mentions); the privileged message-content intent only
    when asked for (``VRAMFIT_MESSAGE_CONTENT=true``: servers use auto-answer channels)."""
    value = discord.Intents.none()
    value.guilds = True
    value.guild_messages = True
    value.dm_messages = True
    value.message_content = message_content
    return value


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none (macOS, musl, Windows)."""
    name = ctypes.util.find_library("c") if sys.platform.startswith("linux") else None
    trim = getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None
    return cast(Callable[[int], int], trim) if trim is not None else None


_TRIM = _malloc_trim()


def give_back_memory() -> None:
    """Hand the heap's free pages back to the system (glibc keeps them after a large read is freed: the bot stayed
    hundreds of MB above its baseline after remote reads of large headers)."""
    if _TRIM is not None:
        _TRIM(0)


def remote_deadline_seconds() -> float:
    """The longest a remote read may take: the Hub's deadline or the registry's, whichever is longer."""
    return max(hub_deadline_seconds(), ollama_deadline_seconds())


class VramBot(commands.AutoShardedBot):
    """The vramfit Discord bot."""

    user: discord.ClientUser  # set once logged in
    tree: VramTree

    def __init__(
        self,
        settings: Settings,
        backend: Backend,
        *,
        sync_to: int | None = None,
        **options: Any,
    ) -> None:
        options.setdefault("shard_count", settings.shard_count)
        # What Discord answered each interaction callback: a reply it refused with a rate limit can be posted in the
        # channel at once, and one it may have taken is never sent twice (bot.ui.deliveries)
        self.callbacks = CallbackWatch()
        options.setdefault("http_trace", self.callbacks.trace_config())
        if settings.shard_ids is not None:
            options.setdefault("shard_ids", list(settings.shard_ids))
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=intents(message_content=settings.message_content),
            allowed_mentions=discord.AllowedMentions.none(),
            tree_cls=VramTree,
            help_command=None,
            chunk_guilds_at_startup=False,
            member_cache_flags=discord.MemberCacheFlags.none(),
            max_messages=None,
            owner_ids=set(settings.owner_ids) or None,
            **options,
        )
        self.settings = settings
        self.backend = backend
        self.sync_to = sync_to  # GLOBAL, a guild id, or None for no sync at start-up
        self.mention_cooldown = UserCooldown(settings.cooldown_rate, settings.cooldown_seconds)
        self.button_cooldown = UserCooldown(settings.button_cooldown_rate, settings.button_cooldown_seconds)
        self.slash_cooldowns: dict[str, UserCooldown] = {}  # by command (slash_retry)
        self.loaded_extensions: list[str] = []
        self.store: Store | None = None  # opened in setup_hook
        self.store_error: str | None = None  # why the store could not be opened (the bot then runs without it)
        # The parser and the calculator are CPU work: they run here, so no question can hold up the event loop.
        self.answer_pool = ThreadPoolExecutor(max_workers=settings.answer_workers, thread_name_prefix="vramfit-answer")
        # Questions that read the Hub or a registry: their own threads, so a stalled server cannot hold the workers
        # that answer preset questions; each is cancelled (bot.sources.budget.cancel_scope) when given up on.
        self.remote_pool = ThreadPoolExecutor(max_workers=settings.remote_workers, thread_name_prefix="vramfit-remote")
        # Questions being answered now, by what they ask: the same question asked again meanwhile (a burst in a busy
        # channel) waits for that answer instead of computing it once more
        self._answering: dict[tuple[str, ...], asyncio.Future[AnyCard]] = {}
        # Where answers are computed when the backend can be built again in another process (setup_hook starts it)
        self.processes: AnswerProcesses | None = None

    async def setup_hook(self) -> None:
        if self.store is None and self.store_error is None:
            try:
                self.store = await open_store(self.settings)
            except Exception as exc:  # StorageError, OSError (a parent path that is a file), a driver's own error
                # Answers do not need the store: run without server settings rather than not at all.
                self.store_error = f"{type(exc).__name__}: {exc}" if not isinstance(exc, StorageError) else str(exc)
                log.error("Settings store unavailable, running without server settings: %s", self.store_error)
        if self.store is not None and self.backend.use_remote_cache is not None:
            self.backend.use_remote_cache(self.store.remote_cache())  # Hub and Ollama reads shared by every process
        started = time.monotonic()
        if self.settings.answer_processes and self.backend.process_factory is not None:
            self.processes = self._start_processes()
            await asyncio.gather(*(asyncio.wrap_future(ready) for ready in self.processes.started()))
            log.info("%d answering processes ready in %.1f s", self.processes.workers, time.monotonic() - started)
        elif self.settings.warm_up and self.backend.warm is not None:
            await asyncio.get_running_loop().run_in_executor(self.answer_pool, self.backend.warm)
            log.info("Warmed up in %.1f s", time.monotonic() - started)
        await self.tree.set_translator(VramTranslator())
        for name in extensions():
            try:
                await self.load_extension(name)
            except Exception:
                log.exception("Failed to load extension %s", name)
            else:
                self.loaded_extensions.append(name)
        log.info("Loaded extensions: %s", ", ".join(self.loaded_extensions))
        if self.sync_to is not None:
            await self.sync_commands(self.sync_to or None)

    async def close(self) -> None:
        await super().close()
        store, self.store = self.store, None
        if store is not None and self.backend.use_remote_cache is not None:
            self.backend.use_remote_cache(None)
        if store is not None:
            await store.close()
        self.answer_pool.shutdown(wait=False, cancel_futures=True)
        self.remote_pool.shutdown(wait=False, cancel_futures=True)
        if self.processes is not None:
            self.processes.close()

    def _start_processes(self) -> AnswerProcesses:
        assert self.backend.process_factory is not None
        return AnswerProcesses(self.backend.process_factory, self.settings.answer_processes,
                               cpu_seconds=self.settings.answer_cpu_seconds, warm=self.settings.warm_up)  # fmt: skip

    async def in_process(
        self, text: str, lang: Lang | None, overrides: Overrides, defaults: GuildDefaults | None
    ) -> AnyCard:
        """The answer computed in a worker process, within ``answer_timeout_seconds`` (TimeoutError past it); kept in
        the backend's card cache. A pool whose worker died (killed for memory, say) is started again and this
        question answered in a thread."""
        assert self.processes is not None
        try:
            future = asyncio.wrap_future(self.processes.answer(text, lang, overrides, defaults))
            await asyncio.wait((future,), timeout=self.settings.answer_timeout_seconds)
            if not future.done():
                future.cancel()  # a question still queued is dropped; one running ends at its CPU budget
                raise TimeoutError
            card = future.result()
        except BrokenProcessPool:
            log.error("An answering process died; starting them again and answering this question in a thread")
            self.processes.close()
            self.processes = self._start_processes()
            return await self.off_loop(self.answer_card, text, lang, overrides, defaults)
        if self.backend.remember is not None and (defaults is None or not defaults.reads_question(overrides)):
            self.backend.remember(text, lang, overrides, card)  # a repeated question is answered on the loop
        return card

    async def sync_commands(self, guild_id: int | None = None) -> list[discord.app_commands.AppCommand]:
        """Push the commands (with their Korean localizations) to Discord: globally, or to one guild now."""
        if guild_id:
            guild = discord.Object(guild_id)
            self.tree.copy_global_to(guild=guild)
            synced = await self.tree.sync(guild=guild)
            log.info("Synced %d commands to guild %s", len(synced), guild_id)
        else:
            synced = await self.tree.sync()
            log.info("Synced %d global commands", len(synced))
        return synced

    def slash_retry(self, interaction: discord.Interaction[Any]) -> float | None:
        """The seconds a user must wait before this command answers them again, or None (owners are exempt): the
        per-user cooldown of each card command, in the mapping mentions use (bot.cooldowns), since discord.py's
        ``dynamic_cooldown`` scans every user's bucket on each call."""
        if interaction.user.id in self.settings.owner_ids:
            return None
        name = interaction.command.qualified_name if interaction.command is not None else ""
        cooldown = self.slash_cooldowns.get(name)
        if cooldown is None:
            cooldown = self.slash_cooldowns[name] = UserCooldown(
                self.settings.cooldown_rate, self.settings.cooldown_seconds
            )
        return cooldown.hit(interaction.user.id)

    def answer_card(
        self, text: str, lang: Lang | None, overrides: Overrides, defaults: GuildDefaults | None = None
    ) -> AnyCard:
        """Run the backend here and now (raises :class:`bot.errors.AnswerError` for questions the user must
        fix); ``defaults`` (a server's /vram-settings) are applied first, since that too reads the question."""
        if defaults is not None:
            overrides = defaults.apply(text, overrides)
        with cpu_budget(self.settings.answer_cpu_seconds):
            return self.backend.answer(text, lang, overrides)

    async def off_loop(self, fn: Callable[..., T], *args: Any, remote: bool = False) -> T:
        """Run CPU work (a parse) in the answering threads, within ``answer_timeout_seconds``; with ``remote``, work
        that may read the Hub or a registry in the remote threads, within its read deadline on top, cancelled (its
        reads stop within a quarter second) when that passes."""
        loop = asyncio.get_running_loop()
        timeout = self.settings.answer_timeout_seconds
        cancelled: threading.Event | None = None
        if remote:
            timeout += remote_deadline_seconds()
            cancelled = threading.Event()

            def call() -> T:
                assert cancelled is not None
                try:
                    with cancel_scope(cancelled):
                        return fn(*args)
                finally:
                    give_back_memory()  # a remote read may have parsed a header of thousands of tensors

            future = loop.run_in_executor(self.remote_pool, call)
        else:
            future = loop.run_in_executor(self.answer_pool, functools.partial(fn, *args))
        await asyncio.wait((future,), timeout=timeout)  # no wrapper task, as wait_for has
        if not future.done():
            future.cancel()  # a job not started yet is dropped; a running one is told to stop its reads
            if cancelled is not None:
                cancelled.set()
            raise TimeoutError
        try:
            return future.result()
        except Exception as error:
            # The worker's frames in the error's traceback hold what it was reading (a refused header's tensors):
            # they are let go now, not at the next full garbage collection
            traceback.clear_frames(error.__traceback__)
            raise

    async def answer(
        self, text: str, lang: Lang | None, overrides: Overrides, defaults: GuildDefaults | None = None
    ) -> AnyCard:
        """:meth:`answer_card` in a worker thread, within ``answer_timeout_seconds``: a question that takes longer
        is answered "too long or too complex" (``AnswerError("too_complex")``) and the event loop never waits. A
        question naming a Hub repo or an Ollama tag runs in the remote threads and, past its deadline, is answered
        "the Hub did not answer in time"."""
        if self.backend.cached is not None and (defaults is None or not defaults.reads_question(overrides)):
            card = self.backend.cached(text, lang, overrides)  # answered before: no worker thread needed
            if card is not None:
                return card
        key = (text.strip(), str(lang), repr(sorted(overrides.items())), repr(defaults))
        shared = self._answering.get(key)
        if shared is None:
            shared = asyncio.ensure_future(self._answer_now(text, lang, overrides, defaults))
            self._answering[key] = shared
            shared.add_done_callback(lambda done: self._answered(key, done))
        return await asyncio.shield(shared)  # one asker giving up does not cancel the others' answer

    def _answered(self, key: tuple[str, ...], done: asyncio.Future[AnyCard]) -> None:
        self._answering.pop(key, None)
        if not done.cancelled():
            done.exception()  # retrieved here too: every asker may have given up on it

    async def _answer_now(
        self, text: str, lang: Lang | None, overrides: Overrides, defaults: GuildDefaults | None
    ) -> AnyCard:
        remote = mentions_remote_model(text)
        try:
            if self.processes is not None and not remote:
                return await self.in_process(text, lang, overrides, defaults)
            return await self.off_loop(self.answer_card, text, lang, overrides, defaults, remote=remote)
        except TimeoutError:
            log.warning("Gave up answering after %.1f s: %r", self.settings.answer_timeout_seconds, text[:200])
            if remote:
                why = f"no answer within {remote_deadline_seconds():g} s"
                raise AnswerError("remote_unavailable", why, reason=why) from None
            raise AnswerError("too_complex", "the question took too long to answer", subject=text[:60]) from None

    async def on_ready(self) -> None:
        log.info(
            "Ready as %s (%s) in %d guilds, %d shards", self.user, self.user.id, len(self.guilds), self.shard_count or 1
        )

    async def on_error(self, event_method: str, /, *args: Any, **kwargs: Any) -> None:
        """A listener that raised (a mention, an auto-answer): logged with where it happened, never re-raised."""
        where = {}
        for value in args:
            for name in ("guild", "channel"):
                found = getattr(value, name, None)
                if found is not None and name not in where:
                    where[name] = getattr(found, "id", None)
            if getattr(value, "id", None) is not None and "id" not in where:
                where["id"] = value.id
        log.exception("Error in listener %s (%s)", event_method, where)

    async def on_command_error(self, context: commands.Context[Any], exception: commands.CommandError, /) -> None:
        """Prefix (owner) commands: unknown commands and non-owners are ignored quietly."""
        if isinstance(exception, commands.CommandNotFound | commands.CheckFailure | commands.UserInputError):
            log.debug("Ignored prefix command error: %s", exception)
            return
        log.error("Error in prefix command %s", context.command, exc_info=exception)
