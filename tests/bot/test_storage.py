"""The store, the same tests against SQLite and a real PostgreSQL server (tests/pg.py starts one when needed).

Data safety: two OS processes writing one server's settings at once lose nothing and keep the list limits
(:func:`test_concurrent_writers_in_two_processes_lose_nothing`); each message is claimed by exactly one of them
(same test); settings and claims survive a restart (:func:`test_settings_and_claims_survive_a_restart`).
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests import pg
from vramfit.bot.sources.cache import CachedRead
from vramfit.bot.storage import Repository, Store, ThreadQuestion, connect
from vramfit.bot.storage.db import Database, SqliteDatabase
from vramfit.bot.storage.migrations import MIGRATIONS, Migration, migrate

Target = tuple[str, str]  # ("sqlite", path) or ("postgres", url)
GUILD = 1_234_567_890_123


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Target:
    if request.param == "sqlite":
        return ("sqlite", str(tmp_path / "vramfit.db"))
    return ("postgres", pg.fresh_url())


def open_db(target: Target) -> Database:
    kind, where = target
    return connect(url=where if kind == "postgres" else None, path=where)


@pytest.fixture
def repo(target: Target) -> Any:
    db = open_db(target)
    migrate(db)
    yield Repository(db)
    db.close()


# -- schema ----------------------------------------------------------------------------------------------------------


def test_migrations_run_once_and_record_their_versions(target: Target) -> None:
    db = open_db(target)
    try:
        assert migrate(db) == [m.version for m in MIGRATIONS]
        assert migrate(db) == []  # a second start has nothing to do
        with db.transaction(write=False) as tx:
            assert [r[0] for r in tx.fetchall("SELECT version FROM schema_version ORDER BY version")] == [1, 2, 3, 4, 5]
        extra = (*MIGRATIONS, Migration(6, "a later release", ("CREATE TABLE later (id BIGINT PRIMARY KEY)",)))
        assert migrate(db, extra) == [6]
        with pytest.raises(RuntimeError, match="newer than this vramfit"):
            migrate(db)  # an older release must not run against a newer schema
    finally:
        db.close()


def test_a_failed_migration_changes_nothing(target: Target) -> None:
    db = open_db(target)
    try:
        migrate(db)
        broken = (*MIGRATIONS, Migration(6, "broken", ("CREATE TABLE half (id BIGINT)", "THIS IS NOT SQL")))
        with pytest.raises(Exception, match=r"(?i)syntax"):
            migrate(db, broken)
        with db.transaction(write=False) as tx:
            assert tx.fetchone("SELECT MAX(version) FROM schema_version") == (5,)
            if target[0] == "sqlite":
                tables = tx.fetchall("SELECT name FROM sqlite_master WHERE name = 'half'")
            else:
                tables = tx.fetchall("SELECT tablename FROM pg_tables WHERE tablename = 'half'")
            assert tables == []  # the transaction rolled back the half-applied migration
    finally:
        db.close()


def test_the_remote_reads_migration_applies_to_a_database_in_use(target: Target) -> None:
    """A database at version 3 (a bot before this release) with settings in it: migration 4 adds the remote-read
    table and keeps every row."""
    db = open_db(target)
    try:
        assert migrate(db, MIGRATIONS[:3]) == [1, 2, 3]
        repo = Repository(db)
        with db.transaction(write=True) as tx:  # written as that release wrote it (the repository reads the newest)
            tx.execute("INSERT INTO guild_settings (guild_id, language) VALUES (?, ?)", (GUILD, "ko"))
        assert repo.claim("message", 5, guild_id=GUILD)
        assert migrate(db, MIGRATIONS[:4]) == [4]
        assert repo.is_answered("message", 5)
        repo.put_remote_read(CachedRead("hub|x", "hub", "abc", "{}"))
        assert repo.remote_read("hub|x") is not None
        # migration 5 adds the server's "already in use" column, 0 for the rows already there
        assert migrate(db) == [5]
        assert repo.guild(GUILD).reserved_mib == 0 and repo.guild(GUILD).language == "ko"
        assert repo.set_reserved(GUILD, 1536).reserved_mib == 1536
    finally:
        db.close()


def test_sqlite_uses_wal(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "x.db")
    try:
        assert db.journal_mode == "wal"
    finally:
        db.close()
    with sqlite3.connect(tmp_path / "x.db") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# -- the repository --------------------------------------------------------------------------------------------------


def test_defaults_for_an_unknown_server(repo: Repository) -> None:
    settings = repo.guild(GUILD)
    assert (settings.language, settings.engine, settings.mention_replies) == ("user", "llama.cpp", "public")
    assert settings.gpus == () and settings.channels == frozenset()


def test_settings_round_trip(repo: Repository) -> None:
    assert repo.set_language(GUILD, "ko").language == "ko"
    assert repo.set_engine(GUILD, "vllm").engine == "vllm"
    assert repo.set_mention_replies(GUILD, "private").mention_replies == "private"
    assert repo.set_reserved(GUILD, 1536).reserved_mib == 1536
    with pytest.raises(ValueError, match="reserved_mib"):
        repo.set_reserved(GUILD, -1)
    assert repo.add_gpu(GUILD, "rtx-3060-12gb")[0] == "added"
    assert repo.add_gpu(GUILD, "rtx-4090")[0] == "added"
    assert repo.add_gpu(GUILD, "rtx-3060-12gb")[0] == "exists"
    assert repo.add_channel(GUILD, 42)[0] == "added"
    assert repo.add_channel(GUILD, 42)[0] == "exists"
    settings = repo.guild(GUILD)
    assert settings.gpus == ("rtx-3060-12gb", "rtx-4090")  # in the order they were added
    assert settings.channels == frozenset({42})
    assert repo.guild(GUILD + 1).language == "user"  # other servers untouched
    assert repo.remove_gpu(GUILD, "rtx-3060-12gb") == (True, repo.guild(GUILD))
    assert repo.remove_gpu(GUILD, "rtx-3060-12gb")[0] is False
    assert repo.guild(GUILD).gpus == ("rtx-4090",)
    assert repo.remove_channel(GUILD, 42)[0] is True
    assert repo.clear_gpus(GUILD)[1].gpus == ()
    with pytest.raises(ValueError, match="language"):
        repo.set_language(GUILD, "fr")  # type: ignore[arg-type]
    assert repo.reset(GUILD) == repo.guild(GUILD)
    assert repo.guild(GUILD).language == "user"


def test_list_limits(repo: Repository) -> None:
    for i in range(3):
        assert repo.add_gpu(GUILD, f"gpu-{i}", limit=3)[0] == "added"
    assert repo.add_gpu(GUILD, "gpu-3", limit=3)[0] == "full"
    assert repo.add_channel(GUILD, 1, limit=1)[0] == "added"
    assert repo.add_channel(GUILD, 2, limit=1)[0] == "full"


def test_claims_are_unique(repo: Repository) -> None:
    assert repo.claim("message", 99, guild_id=GUILD, owner="a") is True
    assert repo.claim("message", 99, guild_id=GUILD, owner="b") is False
    assert repo.claim("thread", 99) is True  # another kind, another key
    assert repo.is_answered("message", 99)
    repo.release("message", 99)
    assert repo.claim("message", 99) is True  # released after a failed send: may be claimed again
    assert repo.prune_answered(older_than_ms=0) == 0
    assert repo.prune_answered(older_than_ms=2**62) == 2


def test_quiet_threads_are_forgotten(repo: Repository) -> None:
    repo.set_thread_question(7, GUILD, ThreadQuestion("llama3 8b", {}, "en"))
    assert repo.prune_thread_questions(older_than_ms=0) == 0  # asked after that moment: kept
    assert repo.thread_question(7) is not None
    assert repo.prune_thread_questions(older_than_ms=2**62) == 1
    assert repo.thread_question(7) is None


def test_thread_questions(repo: Repository) -> None:
    assert repo.thread_question(7) is None
    repo.set_thread_question(7, GUILD, ThreadQuestion("라마3 8b 3060 될까?", {}, "ko"))
    changed = ThreadQuestion("라마3 8b 3060 될까?", {"context": 32768, "gpus": [["x", 1]]}, "ko")
    repo.set_thread_question(7, GUILD, changed)
    assert repo.thread_question(7) == changed


def test_remote_reads_round_trip_and_are_pruned(repo: Repository) -> None:
    assert repo.remote_read("hub|h|o/m|main||Q8_0") is None
    first = CachedRead("hub|h|o/m|main||Q8_0", "hub", "c0ffee", "{}", etag='"e1"', fetched_at=1_700_000_000.5)
    repo.put_remote_read(first)
    assert repo.remote_read(first.key) == first
    later = CachedRead(first.key, "hub", "beef", '{"files": ["a.gguf"]}', fetched_at=1_800_000_000.0)
    repo.put_remote_read(later)  # read again: replaces the row
    assert repo.remote_read(first.key) == later
    repo.put_remote_read(CachedRead("ollama|r|library|qwen3|8b", "ollama", "sha256:1", "{}", fetched_at=1.0))
    assert repo.prune_remote_reads(older_than_ms=500) == 0  # all read after that moment
    assert repo.prune_remote_reads(older_than_ms=1_000_000_000_000) == 1  # the one read at epoch + 1 s
    assert repo.remote_read(first.key) == later and repo.remote_read("ollama|r|library|qwen3|8b") is None


def test_the_store_as_a_remote_cache_misses_when_the_database_is_gone(target: Target) -> None:
    async def scenario() -> None:
        store = await Store.open(lambda: open_db(target))
        cache = store.remote_cache()
        read = CachedRead("ollama|r|library|qwen3|8b", "ollama", "sha256:1", "{}", fetched_at=1_790_000_000.25)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, cache.put, read)  # from a worker thread, as the answering code calls it
        assert await loop.run_in_executor(None, cache.get, read.key) == read
        await store.close()
        assert await loop.run_in_executor(None, cache.get, read.key) is None  # never raises

    asyncio.run(scenario())


# -- data safety -----------------------------------------------------------------------------------------------------

OPS = 40


def _in_two_processes(
    work: Callable[..., None], target: Target, extra_args: tuple[tuple[object, ...], ...] = ((), ())
) -> list[Any]:
    """Run ``work(target, *extra, barrier, results)`` in two spawned processes, one per ``extra_args`` entry, which
    wait for each other at ``barrier`` so their work overlaps; each must exit cleanly. What they put on ``results``."""
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=work, args=(target, *extra, barrier, results)) for extra in extra_args]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=120)
        assert proc.exitcode == 0
    return [results.get(timeout=5) for _ in procs]


def _writer(target: Target, who: int, barrier: Any, results: Any) -> None:
    """One process: migrate, then interleave every kind of write with the other process."""
    db = open_db(target)
    repo = Repository(db)
    barrier.wait(timeout=60)
    migrate(db)  # both processes migrate at the same moment: nothing left to do, and no error
    won = 0
    for i in range(OPS):
        repo.add_channel(GUILD, who * 1000 + i, limit=10_000)
        if who == 1:
            repo.set_language(GUILD, "ko" if i % 2 else "en")
        else:
            repo.set_engine(GUILD, "vllm" if i % 2 else "llama.cpp")
        repo.add_gpu(GUILD, f"gpu-{who}-{i}", limit=5)
        repo.add_gpu(GUILD + 1 + i, f"gpu-{who}", limit=1)  # both processes race for the one place of a server
        won += repo.claim("message", 50_000 + i, guild_id=GUILD, owner=str(who))
    db.close()
    results.put((who, won))


def test_concurrent_writers_in_two_processes_lose_nothing(target: Target) -> None:
    db = open_db(target)
    migrate(db)
    for i in range(OPS):  # the servers exist already: only a row lock (not the first insert) can serialize writers
        Repository(db).set_mention_replies(GUILD + 1 + i, "public")
    db.close()
    won = dict(_in_two_processes(_writer, target, ((1,), (2,))))

    db = open_db(target)
    try:
        settings = Repository(db).guild(GUILD)
        per_server = [Repository(db).guild(GUILD + 1 + i).gpus for i in range(OPS)]
        with db.transaction(write=False) as tx:
            versions = [r[0] for r in tx.fetchall("SELECT version FROM schema_version ORDER BY version")]
    finally:
        db.close()
    assert versions == [1, 2, 3, 4, 5]
    assert settings.channels == frozenset({1000 + i for i in range(OPS)} | {2000 + i for i in range(OPS)})
    assert settings.language == ("ko" if (OPS - 1) % 2 else "en")  # each process's last write of its column stands
    assert settings.engine == ("vllm" if (OPS - 1) % 2 else "llama.cpp")
    assert len(settings.gpus) == 5  # the limit holds although both processes added at once
    assert all(len(gpus) == 1 for gpus in per_server), per_server
    assert won[1] + won[2] == OPS  # every message claimed by exactly one process


def _migrator(target: Target, barrier: Any, results: Any) -> None:
    db = open_db(target)
    barrier.wait(timeout=60)
    results.put(migrate(db))
    db.close()


def test_two_processes_migrate_a_new_database_at_once(target: Target) -> None:
    applied = sorted(_in_two_processes(_migrator, target))
    assert applied == [[], [1, 2, 3, 4, 5]]  # one applied everything, the other found nothing to do


def test_settings_and_claims_survive_a_restart(target: Target) -> None:
    def factory() -> Database:
        return open_db(target)

    async def first_run() -> None:
        store = await Store.open(factory, owner="first")
        assert await store.set_language(GUILD, "ko")
        assert await store.add_gpu(GUILD, "rtx-4090") == "added"
        assert await store.add_channel(GUILD, 77) == "added"
        assert await store.claim("message", 123, GUILD) is True
        await store.set_thread_question(9, GUILD, ThreadQuestion("llama3 8b", {"quant": "Q8_0"}, "en"))
        await store.close()

    async def second_run() -> None:
        store = await Store.open(factory, owner="second")
        settings = await store.guild(GUILD)
        assert (settings.language, settings.gpus, settings.channels) == ("ko", ("rtx-4090",), frozenset({77}))
        assert await store.claim("message", 123, GUILD) is False  # answered before the restart: not again
        assert await store.thread_question(9) == ThreadQuestion("llama3 8b", {"quant": "Q8_0"}, "en")
        await store.close()

    asyncio.run(first_run())
    asyncio.run(second_run())


def test_store_cache_is_per_process_and_updated_by_its_writes(target: Target) -> None:
    async def scenario() -> None:
        a = await Store.open(lambda: open_db(target), cache_seconds=60)
        b = await Store.open(lambda: open_db(target), cache_seconds=0)
        assert (await a.guild(GUILD)).language == "user"
        await b.set_language(GUILD, "en")
        assert (await a.guild(GUILD)).language == "user"  # a's cached copy, until it expires
        a.forget(GUILD)
        assert (await a.guild(GUILD)).language == "en"
        await a.set_language(GUILD, "ko")
        assert (await a.guild(GUILD)).language == "ko"  # a's own write: at once
        assert (await b.guild(GUILD)).language == "ko"  # b caches nothing
        await a.close()
        await b.close()

    asyncio.run(scenario())


# -- rows are data: a bad one is skipped, the rest kept (issue 43) ---------------------------------------------------


@pytest.mark.parametrize("stored", ["not json{", "[" * 3000, "[1, 2]", '"text"'])
def test_a_threads_overrides_that_are_no_json_object_leave_its_question(
    repo: Repository, stored: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Before: a thread_questions row whose overrides were not JSON raised on every read, and every mention in that
    thread went unanswered. Now the overrides are dropped with a log line and the question is kept."""
    repo.set_thread_question(7, GUILD, ThreadQuestion("llama3 8b 3060", {"context": 32768}, "en"))
    with repo.db.transaction(write=True) as tx:
        tx.execute("UPDATE thread_questions SET overrides = ? WHERE thread_id = ?", (stored, 7))
    with caplog.at_level("WARNING", logger="vramfit.bot.storage.repository"):
        assert repo.thread_question(7) == ThreadQuestion("llama3 8b 3060", {}, "en")
    assert "Skipped the overrides of thread 7" in caplog.text


def test_a_channel_id_that_is_no_number_drops_that_row_only(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Before: one autoanswer_channels row of 'abc' (SQLite takes any text in a BIGINT column) dropped all of that
    server's settings. Now that row is skipped with a log line; the language, GPUs and other channels stay."""
    db = connect(url=None, path=str(tmp_path / "vramfit.db"))
    migrate(db)
    repo = Repository(db)
    try:
        repo.set_language(GUILD, "ko")
        repo.add_gpu(GUILD, "rtx-3090")
        repo.add_channel(GUILD, 42)
        with db.transaction(write=True) as tx:
            tx.execute("INSERT INTO autoanswer_channels (guild_id, channel_id) VALUES (?, ?)", (GUILD, "abc"))
            tx.execute("UPDATE guild_settings SET reserved_mib = ? WHERE guild_id = ?", ("lots", GUILD))
        with caplog.at_level("WARNING", logger="vramfit.bot.storage.repository"):
            settings = repo.guild(GUILD)
        assert (settings.language, settings.gpus, settings.channels, settings.reserved_mib) == (
            "ko", ("rtx-3090",), frozenset({42}), 0
        )
        assert "autoanswer_channels.channel_id of server" in caplog.text and "'abc'" in caplog.text
    finally:
        db.close()


def test_a_remote_read_past_its_size_is_not_even_fetched(repo: Repository, caplog: pytest.LogCaptureFixture) -> None:
    """Before: a poisoned remote_reads row of 336,000 tensors was fetched and parsed (5.6 s, 584 MB) before it was
    refused. Now a summary past MAX_SUMMARY_BYTES stays in the database: the read misses, with a log line."""
    from vramfit.bot.storage.repository import MAX_SUMMARY_BYTES

    huge = CachedRead("hub|h|o/m|main||Q8_0", "hub", "c0ffee", "[" + " " * MAX_SUMMARY_BYTES + "]", fetched_at=1.0)
    repo.put_remote_read(huge)
    with caplog.at_level("WARNING", logger="vramfit.bot.storage.repository"):
        assert repo.remote_read(huge.key) is None
    assert "Skipped the remote_reads row" in caplog.text
    fits = CachedRead(huge.key, "hub", "c0ffee", "[" + " " * (MAX_SUMMARY_BYTES - 2) + "]", fetched_at=1.0)
    repo.put_remote_read(fits)
    assert repo.remote_read(huge.key) == fits
