"""A real PostgreSQL server for the tests, started from the installed binaries into a temporary directory.

``DATABASE_URL`` set: the tests use that server. Otherwise the first test that needs PostgreSQL runs ``initdb`` and
``pg_ctl start`` (as the ``postgres`` user when the tests run as root: the server refuses root) on a free port on
127.0.0.1, and the server is stopped when the test process exits. Each test gets its own schema
(:func:`fresh_url`), so tests never see each other's rows. Without binaries the PostgreSQL tests are skipped on a
developer's machine and fail under CI (``CI=true``): ``make setup`` installs them (``apt-get install postgresql``).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest

PG_USER = "postgres"
DB_NAME = "vramfit_test"


@dataclass(frozen=True)
class PgServer:
    url: str  # the database's URL, without a schema
    data_dir: Path | None = None  # None: not ours (DATABASE_URL)


def bin_dir() -> Path | None:
    """The directory with ``initdb`` and ``pg_ctl``: on PATH, else Debian's /usr/lib/postgresql/<version>/bin."""
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).resolve().parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    return Path(candidates[-1]).parent if candidates else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_postgres(cmd: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return cmd
    runuser = shutil.which("runuser")
    if runuser:
        return [runuser, "-u", PG_USER, "--", *cmd]
    return ["su", PG_USER, "-s", "/bin/sh", "-c", " ".join(cmd)]


def _start() -> PgServer:
    binaries = bin_dir()
    if binaries is None:
        raise RuntimeError("PostgreSQL binaries not found (apt-get install postgresql, or set DATABASE_URL)")
    root = Path(tempfile.mkdtemp(prefix="vramfit-pg-"))
    data, sockets = root / "data", root / "sock"
    data.mkdir()
    sockets.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, PG_USER)
        shutil.chown(data, PG_USER)
        shutil.chown(sockets, PG_USER)
        os.chmod(root, 0o755)
    port = _free_port()
    run = functools.partial(subprocess.run, check=True, capture_output=True, text=True, timeout=120)
    run(_as_postgres([str(binaries / "initdb"), "-D", str(data), "-U", PG_USER, "--auth=trust", "-E", "UTF8",
                      "--no-sync"]))  # fmt: skip
    options = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
    run(_as_postgres([str(binaries / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(root / "log"), "-w",
                      "-t", "60", "start"]))  # fmt: skip
    server = PgServer(url=f"postgresql://{PG_USER}@127.0.0.1:{port}/{DB_NAME}", data_dir=data)
    atexit.register(_stop, binaries, root)
    import psycopg

    with psycopg.connect(f"postgresql://{PG_USER}@127.0.0.1:{port}/postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {DB_NAME}")
    return server


def _stop(binaries: Path, root: Path) -> None:
    with contextlib.suppress(Exception):
        subprocess.run(
            _as_postgres([str(binaries / "pg_ctl"), "-D", str(root / "data"), "-m", "immediate", "-w", "stop"]),
            capture_output=True,
            timeout=60,
        )
    shutil.rmtree(root, ignore_errors=True)


@functools.cache
def _server() -> PgServer | str:
    """The server, or why there is none (cached for the test process)."""
    url = os.environ.get("DATABASE_URL")
    if url:
        return PgServer(url=url)
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return 'psycopg is not installed (pip install -e ".[dev]")'
    try:
        return _start()
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        detail = getattr(exc, "stderr", "") or ""
        return f"cannot start PostgreSQL: {exc} {detail}".strip()


def server() -> PgServer:
    """The test server; skips the test (fails it under CI) when there is none."""
    found = _server()
    if isinstance(found, str):
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"PostgreSQL is required in CI: {found}")
        pytest.skip(found)
    return found


def fresh_url() -> str:
    """A URL whose ``search_path`` is a new, empty schema (every connection made from it sees only that schema)."""
    import psycopg

    base = server().url
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in base else "?"
    return f"{base}{separator}options={quote(f'-csearch_path={schema}')}"
