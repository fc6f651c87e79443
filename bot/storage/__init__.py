"""Where the bot keeps per-server settings and what it has answered: SQLite by default, PostgreSQL when
``DATABASE_URL`` is set (``pip install "vramfit[postgres]"``). One schema (:mod:`bot.storage.migrations`), one
repository (:mod:`bot.storage.repository`), and an async store with a short cache for the bot
(:mod:`bot.storage.store`)."""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING

from vramfit.bot.storage.db import Database, PostgresDatabase, SqliteDatabase, StorageError, connect
from vramfit.bot.storage.repository import GuildSettings, Repository, ThreadQuestion
from vramfit.bot.storage.store import StorageTimeout, Store

if TYPE_CHECKING:  # for annotations only: bot.settings imports bot.storage.db (describe_url)
    from vramfit.bot.settings import Settings  # annotations only: bot.settings imports bot.storage.db

__all__ = [
    "Database",
    "GuildSettings",
    "PostgresDatabase",
    "Repository",
    "SqliteDatabase",
    "StorageError",
    "StorageTimeout",
    "Store",
    "ThreadQuestion",
    "connect",
    "database_for",
    "open_store",
]


def database_for(settings: Settings) -> Database:
    """The database the settings name (connects; does not migrate)."""
    url = settings.database_url.get_secret_value() if settings.database_url is not None else None
    return connect(url=url, path=settings.database_path)


async def open_store(settings: Settings, *, owner: str = "") -> Store:
    """Connect, migrate and return the bot's store."""
    owner = owner or f"{socket.gethostname()}:{os.getpid()}"
    return await Store.open(
        lambda: database_for(settings),
        cache_seconds=settings.settings_cache_seconds,
        owner=owner,
        answer_timeout=settings.storage_timeout_seconds,
    )
