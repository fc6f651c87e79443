"""What the bot stores, as a small synchronous API over :class:`bot.storage.db.Database`.

* Per-server settings (:class:`GuildSettings`): answer language, a GPU shortlist, the default engine, how mentions
  are answered, and the auto-answer channels. Every change is one transaction that first makes sure the server's
  row exists and locks it, then changes one column or one list row: concurrent writers (other processes
  included) are serialized per server and never lose each other's changes; list limits hold under concurrency.
* "Answered" records (:meth:`Repository.claim`): a unique ``(kind, id)`` key. ``INSERT ... ON CONFLICT DO NOTHING``
  decides who answers a message or a thread: exactly one caller gets ``True``, across restarts and processes.
* The last question asked in a thread (text, the structured overrides of follow-ups, language), so follow-ups
  ("what about 32k?") are answered against it.
* What was read from the Hub or an Ollama registry (:class:`bot.sources.cache.CachedRead`: a header summary under
  its source's key, with the revision and ETag it was read at and when), so every process answers a second question
  about the same file without a request.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from vramfit.bot.sources.cache import CachedRead
from vramfit.bot.storage.db import Database, Row, Tx
from vramfit.calc.bounded_json import JsonRefused, loads

log = logging.getLogger(__name__)

LanguageSetting = Literal["user", "ko", "en"]
EngineSetting = Literal["llama.cpp", "vllm"]
MentionReplies = Literal["public", "private"]
AddResult = Literal["added", "exists", "full"]
AnswerKind = Literal["message", "thread"]

LANGUAGES: tuple[LanguageSetting, ...] = ("user", "ko", "en")
ENGINES: tuple[EngineSetting, ...] = ("llama.cpp", "vllm")
MENTION_REPLIES: tuple[MentionReplies, ...] = ("public", "private")
MAX_GPUS = 6
MAX_RESERVED_MIB = 1024 * 1024  # a server's "already in use" default: what the parser allows a question (1,024 GiB)
MAX_CHANNELS = 25
# A row is data whoever wrote it: a thread's overrides are a few keys, a remote read's summary one GGUF header (a few
# MiB with its tokenizer's arrays cut); a larger one is not read into memory at all.
MAX_OVERRIDES_BYTES = 64 << 10
MAX_SUMMARY_BYTES = 16 << 20


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True, slots=True)
class GuildSettings:
    """One server's settings (the defaults for a server that never changed any)."""

    guild_id: int
    language: LanguageSetting = "user"
    engine: EngineSetting = "llama.cpp"
    mention_replies: MentionReplies = "public"
    gpus: tuple[str, ...] = ()  # preset GPU ids, in the order they were added
    channels: frozenset[int] = field(default_factory=frozenset)  # auto-answer channels (forums, text channels)
    reserved_mib: int = 0  # GPU memory other programs hold on members' cards, MiB (0: none said)


@dataclass(frozen=True, slots=True)
class ThreadQuestion:
    """The question a thread is about: its text, the slots follow-ups changed, and its language."""

    text: str
    overrides: dict[str, Any]
    lang: str
    # When it was asked or last followed up (epoch ms; 0 for one not read from the store): not part of what it asks.
    updated_at_ms: int = field(default=0, compare=False)


class Repository:
    """The bot's data, one transaction per call."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # -- settings ------------------------------------------------------------------------------------------------

    def guild(self, guild_id: int) -> GuildSettings:
        with self.db.transaction(write=False) as tx:
            return self._read(tx, guild_id)

    def set_language(self, guild_id: int, value: LanguageSetting) -> GuildSettings:
        _check(value, LANGUAGES, "language")
        return self._set_column(guild_id, "language", value)

    def set_engine(self, guild_id: int, value: EngineSetting) -> GuildSettings:
        _check(value, ENGINES, "engine")
        return self._set_column(guild_id, "engine", value)

    def set_mention_replies(self, guild_id: int, value: MentionReplies) -> GuildSettings:
        _check(value, MENTION_REPLIES, "mention_replies")
        return self._set_column(guild_id, "mention_replies", value)

    def set_reserved(self, guild_id: int, mib: int) -> GuildSettings:
        if not 0 <= mib <= MAX_RESERVED_MIB:
            raise ValueError(f"reserved_mib must be between 0 and {MAX_RESERVED_MIB}; got {mib}")
        with self.db.transaction(write=True) as tx:
            self._lock(tx, guild_id)
            tx.execute(
                "UPDATE guild_settings SET reserved_mib = ?, updated_at = ? WHERE guild_id = ?",
                (mib, now_ms(), guild_id),
            )
            return self._read(tx, guild_id)

    def add_gpu(self, guild_id: int, gpu_id: str, *, limit: int = MAX_GPUS) -> tuple[AddResult, GuildSettings]:
        with self.db.transaction(write=True) as tx:
            self._lock(tx, guild_id)
            if tx.fetchone("SELECT 1 FROM guild_gpus WHERE guild_id = ? AND gpu_id = ?", (guild_id, gpu_id)):
                return "exists", self._read(tx, guild_id)
            count, last = tx.fetchone(
                "SELECT COUNT(*), COALESCE(MAX(position), 0) FROM guild_gpus WHERE guild_id = ?", (guild_id,)
            ) or (0, 0)
            if int(count) >= limit:
                return "full", self._read(tx, guild_id)
            tx.execute(
                "INSERT INTO guild_gpus (guild_id, gpu_id, position) VALUES (?, ?, ?)", (guild_id, gpu_id, last + 1)
            )
            self._touch(tx, guild_id)
            return "added", self._read(tx, guild_id)

    def remove_gpu(self, guild_id: int, gpu_id: str) -> tuple[bool, GuildSettings]:
        return self._delete(guild_id, "DELETE FROM guild_gpus WHERE guild_id = ? AND gpu_id = ?", (guild_id, gpu_id))

    def clear_gpus(self, guild_id: int) -> tuple[bool, GuildSettings]:
        return self._delete(guild_id, "DELETE FROM guild_gpus WHERE guild_id = ?", (guild_id,))

    def add_channel(
        self, guild_id: int, channel_id: int, *, limit: int = MAX_CHANNELS
    ) -> tuple[AddResult, GuildSettings]:
        with self.db.transaction(write=True) as tx:
            self._lock(tx, guild_id)
            if tx.fetchone(
                "SELECT 1 FROM autoanswer_channels WHERE guild_id = ? AND channel_id = ?", (guild_id, channel_id)
            ):
                return "exists", self._read(tx, guild_id)
            row = tx.fetchone("SELECT COUNT(*) FROM autoanswer_channels WHERE guild_id = ?", (guild_id,))
            if row is not None and int(row[0]) >= limit:
                return "full", self._read(tx, guild_id)
            tx.execute("INSERT INTO autoanswer_channels (guild_id, channel_id) VALUES (?, ?)", (guild_id, channel_id))
            self._touch(tx, guild_id)
            return "added", self._read(tx, guild_id)

    def remove_channel(self, guild_id: int, channel_id: int) -> tuple[bool, GuildSettings]:
        return self._delete(
            guild_id, "DELETE FROM autoanswer_channels WHERE guild_id = ? AND channel_id = ?", (guild_id, channel_id)
        )

    def reset(self, guild_id: int) -> GuildSettings:
        """Forget every setting of a server (back to the defaults)."""
        with self.db.transaction(write=True) as tx:
            self._lock(tx, guild_id)
            tx.execute("DELETE FROM guild_gpus WHERE guild_id = ?", (guild_id,))
            tx.execute("DELETE FROM autoanswer_channels WHERE guild_id = ?", (guild_id,))
            tx.execute("DELETE FROM guild_settings WHERE guild_id = ?", (guild_id,))
            return GuildSettings(guild_id)

    # -- answered messages and threads ------------------------------------------------------------------------------

    def claim(self, kind: AnswerKind, target_id: int, *, guild_id: int | None = None, owner: str = "") -> bool:
        """Record that ``target_id`` is being answered; ``True`` only for the first caller, ever."""
        with self.db.transaction(write=True) as tx:
            changed = tx.execute(
                "INSERT INTO answered (kind, target_id, guild_id, owner, answered_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (kind, target_id) DO NOTHING",
                (kind, target_id, guild_id, owner, now_ms()),
            )
        return changed == 1

    def release(self, kind: AnswerKind, target_id: int) -> None:
        """Undo a claim whose answer could not be sent (a redelivered event may then try again)."""
        with self.db.transaction(write=True) as tx:
            tx.execute("DELETE FROM answered WHERE kind = ? AND target_id = ?", (kind, target_id))

    def is_answered(self, kind: AnswerKind, target_id: int) -> bool:
        return self._row("SELECT 1 FROM answered WHERE kind = ? AND target_id = ?", (kind, target_id)) is not None

    def prune_answered(self, older_than_ms: int) -> int:
        """Forget answered records older than ``older_than_ms`` (epoch ms); Discord never replays events that old."""
        with self.db.transaction(write=True) as tx:
            return tx.execute("DELETE FROM answered WHERE answered_at < ?", (older_than_ms,))

    # -- thread questions ------------------------------------------------------------------------------------------

    def prune_thread_questions(self, older_than_ms: int) -> int:
        """Forget the questions of threads with no follow-up since ``older_than_ms`` (epoch ms)."""
        with self.db.transaction(write=True) as tx:
            return tx.execute("DELETE FROM thread_questions WHERE updated_at < ?", (older_than_ms,))

    def thread_question(self, thread_id: int) -> ThreadQuestion | None:
        row = self._row(
            "SELECT question, overrides, lang, updated_at FROM thread_questions WHERE thread_id = ?", (thread_id,)
        )
        if row is None:
            return None
        return ThreadQuestion(
            text=str(row[0]),
            overrides=_stored_overrides(row[1], thread_id),
            lang=str(row[2]),
            updated_at_ms=_int_or(row[3], 0, f"thread_questions.updated_at of thread {thread_id}"),
        )

    def set_thread_question(self, thread_id: int, guild_id: int | None, question: ThreadQuestion) -> None:
        with self.db.transaction(write=True) as tx:
            tx.execute(
                "INSERT INTO thread_questions (thread_id, guild_id, question, overrides, lang, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (thread_id) DO UPDATE SET question = excluded.question, "
                "overrides = excluded.overrides, lang = excluded.lang, updated_at = excluded.updated_at",
                (
                    thread_id,
                    guild_id,
                    question.text,
                    json.dumps(question.overrides, ensure_ascii=False, sort_keys=True),
                    question.lang,
                    now_ms(),
                ),
            )

    # -- remote reads ----------------------------------------------------------------------------------------------

    def remote_read(self, key: str) -> CachedRead | None:
        """The read kept under ``key``; None when there is none, or when its row cannot be one (a summary past
        :data:`MAX_SUMMARY_BYTES`, which is not even fetched, or a time that is no number): the source is read again
        and the row replaced."""
        row = self._row(
            "SELECT source, revision, etag, fetched_at, CASE WHEN length(summary) <= ? THEN summary END, "
            "length(summary) FROM remote_reads WHERE source_key = ?",
            (MAX_SUMMARY_BYTES, key),
        )
        if row is None:
            return None
        source, revision, etag, fetched_at, summary, length = row
        if summary is None:
            log.warning("Skipped the remote_reads row %r: its summary is %s characters, more than %s", key[:120],
                        length, MAX_SUMMARY_BYTES)  # fmt: skip
            return None
        fetched_ms = _int_or(fetched_at, None, f"remote_reads.fetched_at of {key[:120]!r}")
        if fetched_ms is None:
            return None
        return CachedRead(key, str(source), str(revision), str(summary), str(etag), fetched_ms / 1000)

    def put_remote_read(self, read: CachedRead) -> None:
        """Keep ``read`` under its key (the later of two processes reading the same file at once wins)."""
        with self.db.transaction(write=True) as tx:
            tx.execute(
                "INSERT INTO remote_reads (source_key, source, revision, etag, fetched_at, summary) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (source_key) DO UPDATE SET source = excluded.source, "
                "revision = excluded.revision, etag = excluded.etag, fetched_at = excluded.fetched_at, "
                "summary = excluded.summary",
                (read.key, read.source, read.revision, read.etag, int(read.fetched_at * 1000), read.summary),
            )

    def prune_remote_reads(self, older_than_ms: int) -> int:
        """Forget remote reads made before ``older_than_ms`` (epoch ms)."""
        with self.db.transaction(write=True) as tx:
            return tx.execute("DELETE FROM remote_reads WHERE fetched_at < ?", (older_than_ms,))

    # -- internals -----------------------------------------------------------------------------------------------

    def _lock(self, tx: Tx, guild_id: int) -> None:
        """Make sure the server's row exists, then lock it for the rest of the transaction."""
        tx.execute("INSERT INTO guild_settings (guild_id) VALUES (?) ON CONFLICT (guild_id) DO NOTHING", (guild_id,))
        tx.lock_guild(guild_id)

    @staticmethod
    def _touch(tx: Tx, guild_id: int) -> None:
        tx.execute("UPDATE guild_settings SET updated_at = ? WHERE guild_id = ?", (now_ms(), guild_id))

    def _set_column(self, guild_id: int, column: str, value: str) -> GuildSettings:
        assert column in ("language", "engine", "mention_replies")  # never user input: the SQL is built from it
        with self.db.transaction(write=True) as tx:
            self._lock(tx, guild_id)
            tx.execute(
                f"UPDATE guild_settings SET {column} = ?, updated_at = ? WHERE guild_id = ?",
                (value, now_ms(), guild_id),
            )
            return self._read(tx, guild_id)

    def _delete(self, guild_id: int, sql: str, params: tuple[Any, ...]) -> tuple[bool, GuildSettings]:
        with self.db.transaction(write=True) as tx:
            self._lock(tx, guild_id)
            changed = tx.execute(sql, params) > 0
            if changed:
                self._touch(tx, guild_id)
            return changed, self._read(tx, guild_id)

    def _row(self, sql: str, params: tuple[Any, ...]) -> Row | None:
        """A query's first row (None: it has none), read in a transaction of its own."""
        with self.db.transaction(write=False) as tx:
            return tx.fetchone(sql, params)

    @staticmethod
    def _read(tx: Tx, guild_id: int) -> GuildSettings:
        row = tx.fetchone(
            "SELECT language, engine, mention_replies, reserved_mib FROM guild_settings WHERE guild_id = ?", (guild_id,)
        )
        gpus = tx.fetchall("SELECT gpu_id FROM guild_gpus WHERE guild_id = ? ORDER BY position, gpu_id", (guild_id,))
        channels = tx.fetchall("SELECT channel_id FROM autoanswer_channels WHERE guild_id = ?", (guild_id,))
        if row is None:
            return GuildSettings(guild_id, gpus=tuple(str(g[0]) for g in gpus))
        language, engine, mentions = (str(v) for v in row[:3])
        where = f"of server {guild_id}"
        channel_ids = (_int_or(c[0], None, f"autoanswer_channels.channel_id {where}") for c in channels)
        reserved = _int_or(row[3] or 0, 0, f"guild_settings.reserved_mib {where}")
        return GuildSettings(
            guild_id=guild_id,
            language=language if language in LANGUAGES else "user",
            engine=engine if engine in ENGINES else "llama.cpp",
            mention_replies=mentions if mentions in MENTION_REPLIES else "public",
            gpus=tuple(str(g[0]) for g in gpus),
            channels=frozenset(c for c in channel_ids if c is not None),
            reserved_mib=reserved if 0 <= reserved <= MAX_RESERVED_MIB else 0,
        )


def _int_or(value: Any, default: int | None, what: str) -> Any:
    """``value`` as an int; ``default`` and a log line when a row holds something else there ('abc')."""
    try:
        return int(value)
    except (TypeError, ValueError):
        log.warning("Skipped %s: %r is no integer", what, str(value)[:80])
        return default


def _stored_overrides(raw: Any, thread_id: int) -> dict[str, Any]:
    """A thread question's overrides as stored (a JSON object of plain values); {} and a log line for anything else,
    so the thread's question itself is still followed up."""
    try:
        value = loads(str(raw or "{}"), max_bytes=MAX_OVERRIDES_BYTES, max_depth=4)
    except JsonRefused as exc:
        log.warning("Skipped the overrides of thread %s: %s", thread_id, exc)
        return {}
    if not isinstance(value, dict):
        log.warning("Skipped the overrides of thread %s: not a JSON object", thread_id)
        return {}
    return value


def _check(value: str, allowed: tuple[str, ...], what: str) -> None:
    if value not in allowed:
        raise ValueError(f"{what} must be one of {', '.join(allowed)}; got {value!r}")
