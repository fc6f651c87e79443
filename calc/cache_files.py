"""The user's cache folder: where it is, and how its files are read and written so that nothing planted there can
run code, redirect a write or hang a read.

What is kept there (parsed presets, the parser's name index, Hub and Ollama headers) is JSON, never pickle: a file
in the cache folder is data whoever wrote it. A folder is used only when it is a directory owned by this user that
no one else may write to (created ``0700``); a file is read only when it is a regular file owned by this user, no
larger than the caller's limit, opened without following a symlink and without blocking (a FIFO is refused, not
waited on); a write goes to a fresh temporary file created with ``O_EXCL | O_NOFOLLOW`` (``tempfile.mkstemp``) and is
renamed over the target, so a planted symlink is replaced, never written through. A cache that cannot be used is
simply not used: every function here returns None or does nothing rather than raise.

A file that is there but is not what vramfit wrote (JSON too deep or too large to read as data, or not the entry its
reader expects) is set aside as ``<name>.bad``, with a warning on the ``vramfit.calc.cache_files`` logger, and the
entry is built again: one damaged file costs one rebuild, not every later run.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from vramfit.calc.bounded_json import JsonRefused, loads

log = logging.getLogger(__name__)

MAX_CACHE_FILE_BYTES = 64 << 20  # the largest entry is a parser index or a merged GGUF header: a few MiB
REMOTE_FOLDER_BYTES = 256 << 20  # what the Hub's and the registry's reads may take of the cache folder, each


def cache_dir() -> Path | None:
    """Where parsed presets and remote reads are kept between runs: ``VRAMFIT_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/vramfit`` or ``~/.cache/vramfit``; ``VRAMFIT_CACHE_DIR=""`` turns the cache off."""
    configured = os.environ.get("VRAMFIT_CACHE_DIR")
    if configured is not None:
        return Path(configured) if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "vramfit"


def _owned_by_me(st: os.stat_result) -> bool:
    geteuid = getattr(os, "geteuid", None)  # not on Windows, where the folder's ACL decides
    return geteuid is None or st.st_uid == geteuid()


def usable_folder(folder: Path, *, create: bool = False) -> bool:
    """Whether ``folder`` is a directory of this user's that no one else may write to; with ``create``, made
    (``0700``) when missing."""
    try:
        if create:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.stat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and _owned_by_me(st) and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def read_cache_file(path: Path, limit: int = MAX_CACHE_FILE_BYTES) -> tuple[bytes, float] | None:
    """The bytes of a cache file and when it was written (epoch seconds), or None when there is none or it is not
    a regular file of this user's in a usable folder, or is over ``limit`` bytes."""
    if not usable_folder(path.parent):
        return None
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not _owned_by_me(st) or st.st_size > limit:
            return None
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return (b"".join(chunks), st.st_mtime) if total <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


def write_cache_file(path: Path, data: bytes, *, folder_limit: int | None = None) -> None:
    """Write ``data`` to ``path`` atomically (a concurrent reader sees the old file or the whole new one) through a
    fresh temporary file beside it; a cache that cannot be written is simply not used. With ``folder_limit``, the
    folder's oldest files are then removed until it holds at most that many bytes (:func:`evict_oldest`)."""
    if not usable_folder(path.parent, create=True):
        return
    _write(path, data)
    if folder_limit is not None:
        evict_oldest(path.parent, folder_limit, keep=path)


def evict_oldest(folder: Path, limit: int, *, keep: Path | None = None) -> None:
    """Remove the least recently written ``*.json`` files of ``folder`` (``*.bad`` ones first) until the rest take at
    most ``limit`` bytes; ``keep`` (the file just written) stays. Files another process removes meanwhile are
    skipped."""
    entries: list[tuple[bool, float, int, Path]] = []
    try:
        for entry in os.scandir(folder):
            if entry.name.endswith((".json", ".json.bad")) and entry.is_file(follow_symlinks=False):
                st = entry.stat(follow_symlinks=False)
                entries.append((not entry.name.endswith(".bad"), st.st_mtime, st.st_size, Path(entry.path)))
    except OSError:
        return
    total = sum(size for _, _, size, _ in entries)
    for _, _, size, path in sorted(entries):
        if total <= limit:
            break
        if keep is not None and path == keep:
            continue
        with contextlib.suppress(OSError):
            os.unlink(path)
        total -= size


def _write(path: Path, data: bytes) -> None:
    try:
        fd, partial = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(partial, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(partial)


def set_aside(path: Path, why: str) -> None:
    """Move a cache file that cannot be used to ``<name>.bad`` (replacing an older one), so the next run builds the
    entry again instead of failing on it; said once as a warning."""
    aside = path.with_name(path.name + ".bad")
    try:
        os.replace(path, aside)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(path)
    log.warning("Cache file %s could not be used (%s): set aside as %s, and built again", path, why[:200], aside.name)


def read_cache_json(path: Path, limit: int = MAX_CACHE_FILE_BYTES) -> tuple[Any, float] | None:
    """A cache file's JSON (at most ``limit`` bytes, nested at most :data:`calc.bounded_json.MAX_DEPTH` deep) and when
    it was written; None when there is none, and a file that is not such JSON is set aside (:func:`set_aside`)."""
    found = read_cache_file(path, limit)
    if found is None:
        return None
    try:
        return loads(found[0], max_bytes=limit), found[1]
    except JsonRefused as exc:
        set_aside(path, str(exc))
        return None
