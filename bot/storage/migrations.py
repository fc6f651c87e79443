"""The schema, as numbered migrations that run once each, in order, in one transaction per start-up.

The same SQL runs on SQLite and PostgreSQL (``BIGINT`` ids, ``TEXT``, ``ON CONFLICT``). ``schema_version`` holds
one row per applied migration. Several processes may start at once: on PostgreSQL the migration transaction takes
an advisory lock first, on SQLite ``BEGIN IMMEDIATE`` is the lock; the second process then sees the versions the
first applied and has nothing left to do. Never edit a released migration: add the next one.

Settings are one column per scalar setting and one row per list item (GPUs, channels), so two writers changing
different settings of a server never overwrite each other's work (no JSON blob to read, modify and write back).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from vramfit.bot.storage.db import Database, Tx

log = logging.getLogger(__name__)

ADVISORY_LOCK_ID = 0x7672616D666974  # "vramfit"


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    statements: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "guild settings, answered messages, thread questions",
        (
            """CREATE TABLE guild_settings (
                guild_id BIGINT PRIMARY KEY,
                language TEXT NOT NULL DEFAULT 'user',
                engine TEXT NOT NULL DEFAULT 'llama.cpp',
                mention_replies TEXT NOT NULL DEFAULT 'public',
                updated_at BIGINT NOT NULL DEFAULT 0
            )""",
            """CREATE TABLE guild_gpus (
                guild_id BIGINT NOT NULL,
                gpu_id TEXT NOT NULL,
                position INTEGER NOT NULL,
                PRIMARY KEY (guild_id, gpu_id)
            )""",
            """CREATE TABLE autoanswer_channels (
                guild_id BIGINT NOT NULL,
                channel_id BIGINT NOT NULL,
                PRIMARY KEY (guild_id, channel_id)
            )""",
            """CREATE TABLE answered (
                kind TEXT NOT NULL,
                target_id BIGINT NOT NULL,
                guild_id BIGINT,
                owner TEXT NOT NULL DEFAULT '',
                answered_at BIGINT NOT NULL,
                PRIMARY KEY (kind, target_id)
            )""",
            """CREATE TABLE thread_questions (
                thread_id BIGINT PRIMARY KEY,
                guild_id BIGINT,
                question TEXT NOT NULL,
                overrides TEXT NOT NULL DEFAULT '{}',
                lang TEXT NOT NULL DEFAULT 'en',
                updated_at BIGINT NOT NULL
            )""",
        ),
    ),
    Migration(
        2,
        "index to prune old answered records",
        ("CREATE INDEX answered_by_time ON answered (answered_at)",),
    ),
    Migration(
        3,
        "index to prune threads that went quiet",
        ("CREATE INDEX thread_questions_by_time ON thread_questions (updated_at)",),
    ),
    Migration(
        4,
        "remote reads (Hub and Ollama header summaries) shared by the bot's processes",
        (
            """CREATE TABLE remote_reads (
                source_key TEXT PRIMARY KEY,
                source TEXT NOT NULL,
                revision TEXT NOT NULL DEFAULT '',
                etag TEXT NOT NULL DEFAULT '',
                fetched_at BIGINT NOT NULL,
                summary TEXT NOT NULL
            )""",
            "CREATE INDEX remote_reads_by_time ON remote_reads (fetched_at)",
        ),
    ),
    Migration(
        5,
        "a server's GPU memory already in use (a desktop on the card), taken off every answer that states none",
        ("ALTER TABLE guild_settings ADD COLUMN reserved_mib INTEGER NOT NULL DEFAULT 0",),
    ),
)


def current_version(tx: Tx) -> int:
    row = tx.fetchone("SELECT MAX(version) FROM schema_version")
    return int(row[0]) if row and row[0] is not None else 0


def migrate(db: Database, migrations: tuple[Migration, ...] = MIGRATIONS) -> list[int]:
    """Apply the migrations this database lacks; return their versions (empty when it was current)."""
    applied: list[int] = []
    with db.transaction(write=True) as tx:
        if tx.dialect == "postgres":
            tx.fetchall("SELECT pg_advisory_xact_lock(?)", (ADVISORY_LOCK_ID,))
        tx.execute(
            "CREATE TABLE IF NOT EXISTS schema_version ("
            "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)"
        )
        have = current_version(tx)
        latest = max((m.version for m in migrations), default=0)
        if have > latest:
            raise RuntimeError(f"{db.description} is at schema version {have}, newer than this vramfit ({latest})")
        for migration in sorted(migrations, key=lambda m: m.version):
            if migration.version <= have:
                continue
            for statement in migration.statements:
                tx.execute(statement)
            tx.execute(
                "INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, int(time.time() * 1000)),
            )
            applied.append(migration.version)
    if applied:
        log.info("Migrated %s to schema version %d (applied %s)", db.description, applied[-1], applied)
    return applied
