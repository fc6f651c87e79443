"""The two databases behind :mod:`bot.storage`: SQLite (a file, WAL mode) and PostgreSQL (``DATABASE_URL``).

Both are used through the same small, synchronous interface: :meth:`Database.transaction` opens one transaction
and yields a :class:`Tx` whose ``execute``/``fetch`` take SQL with ``?`` placeholders (rewritten to ``%s`` for
psycopg). Writes are always in a transaction: SQLite's starts with ``BEGIN IMMEDIATE`` (the database's write lock is
taken at once, so two processes never interleave a read-modify-write), PostgreSQL's take row locks where the
repository asks for them (:meth:`Tx.lock_guild`). :class:`bot.storage.store.Store` runs these calls in worker
threads so the event loop never waits on the disk or the network.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

log = logging.getLogger(__name__)

Dialect = Literal["sqlite", "postgres"]
Row = tuple[Any, ...]
SQLITE_BUSY_TIMEOUT_S = 30.0


class StorageError(RuntimeError):
    """The database cannot be opened or migrated."""


class Tx(ABC):
    """One open transaction."""

    dialect: Dialect

    @abstractmethod
    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement; return the number of rows it changed."""

    @abstractmethod
    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Run one query; return its rows."""

    def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        rows = self.fetchall(sql, params)
        return rows[0] if rows else None

    def lock_guild(self, guild_id: int) -> None:  # noqa: B027 - a no-op unless the database needs row locks
        """Serialize writers of one guild's settings until the transaction ends (the row must exist).

        SQLite needs nothing here: ``BEGIN IMMEDIATE`` already holds the database's single write lock.
        """


class Database(ABC):
    """A connection (pool) to one database."""

    dialect: Dialect
    description: str  # for logs: a path, or host/port/db without the password

    @abstractmethod
    def transaction(self, *, write: bool) -> contextlib.AbstractContextManager[Tx]:
        """Open a transaction: committed when the block ends, rolled back when it raises."""

    @abstractmethod
    def close(self) -> None: ...

    @property
    def max_workers(self) -> int:
        """How many threads may use this database at once."""
        return 1


# -- SQLite --------------------------------------------------------------------------------------------------------


class _SqliteTx(Tx):
    dialect: Dialect = "sqlite"

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self._conn.execute(sql, tuple(params)).rowcount

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return list(self._conn.execute(sql, tuple(params)).fetchall())


class SqliteDatabase(Database):
    """One SQLite connection (WAL mode, ``BEGIN IMMEDIATE`` for writes), shared by the threads of one process under
    a lock; other processes open their own and wait on the file lock up to :data:`SQLITE_BUSY_TIMEOUT_S`."""

    dialect: Dialect = "sqlite"

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self.description = f"sqlite:{self.path}"
        if self.path != ":memory:":
            Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        try:
            # isolation_level=None: no implicit transactions; every transaction is an explicit BEGIN ... COMMIT.
            self._conn = sqlite3.connect(
                self.path, timeout=SQLITE_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            mode = self._journal_mode_wal()
            self._conn.execute("PRAGMA synchronous=NORMAL")  # durable across process crashes in WAL mode
            self._conn.execute(f"PRAGMA busy_timeout={int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open {self.description}: {exc}") from exc
        self.journal_mode = str(mode).lower()
        self._lock = threading.Lock()

    def _journal_mode_wal(self) -> str:
        """Switch to WAL. Two processes opening a new file at once can see SQLITE_BUSY here without the busy handler
        being consulted (the switch needs an exclusive lock), so retry for the busy timeout."""
        deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_S
        while True:
            try:
                return str(self._conn.execute("PRAGMA journal_mode=WAL").fetchone()[0])
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    @contextlib.contextmanager
    def transaction(self, *, write: bool) -> Iterator[Tx]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield _SqliteTx(self._conn)
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise

    def close(self) -> None:
        with self._lock:
            self._conn.close()


# -- PostgreSQL ----------------------------------------------------------------------------------------------------


class _PostgresTx(Tx):
    dialect: Dialect = "postgres"

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    @staticmethod
    def _sql(sql: str) -> str:
        return sql.replace("?", "%s")  # the repository's SQL has no literal question marks

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        cursor = self._conn.execute(self._sql(sql), tuple(params))
        return int(cursor.rowcount)

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        cursor = self._conn.execute(self._sql(sql), tuple(params))
        return [tuple(row) for row in cursor.fetchall()]

    def lock_guild(self, guild_id: int) -> None:
        self.execute("SELECT guild_id FROM guild_settings WHERE guild_id = ? FOR UPDATE", (guild_id,))


def describe_url(url: str) -> str:
    """A PostgreSQL URL or conninfo string without its password, for logs."""
    from urllib.parse import urlsplit

    host: str | None
    port: int | str | None
    if "://" not in url:
        keys = dict(part.split("=", 1) for part in url.split() if "=" in part)
        host, port, user, dbname = keys.get("host"), keys.get("port"), keys.get("user"), keys.get("dbname")
    else:
        try:
            parts = urlsplit(url)
            host, port, user, dbname = parts.hostname, parts.port, parts.username, parts.path.lstrip("/")
        except ValueError:
            return "postgresql://(unparsable URL)"
    return f"postgresql://{user or ''}@{host or 'localhost'}:{port or 5432}/{dbname or ''}"


class PostgresDatabase(Database):
    """A psycopg 3 connection pool (autocommit connections; every call opens an explicit transaction)."""

    dialect: Dialect = "postgres"

    def __init__(self, url: str, *, max_size: int = 4, connect_timeout: float = 10.0) -> None:
        try:
            from psycopg_pool import ConnectionPool
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise StorageError('DATABASE_URL is set but psycopg is missing: pip install "vramfit[postgres]"') from exc

        self.description = describe_url(url)
        self._max_size = max_size
        self._pool: ConnectionPool[Any] = ConnectionPool(
            url,
            min_size=1,
            max_size=max_size,
            kwargs={"autocommit": True},
            check=ConnectionPool.check_connection,  # a connection dropped by a server restart is replaced
            open=False,
            name="vramfit",
        )
        try:
            self._pool.open(wait=True, timeout=connect_timeout)
        except Exception as exc:
            self._pool.close()
            raise StorageError(f"cannot connect to {self.description}: {exc}") from exc

    @property
    def max_workers(self) -> int:
        return self._max_size

    @contextlib.contextmanager
    def transaction(self, *, write: bool) -> Iterator[Tx]:
        with self._pool.connection() as conn, conn.transaction():
            yield _PostgresTx(conn)

    def close(self) -> None:
        self._pool.close()


def connect(*, url: str | None, path: str | Path) -> Database:
    """PostgreSQL when ``url`` is set, else SQLite at ``path``."""
    if url:
        return PostgresDatabase(url)
    return SqliteDatabase(path)
