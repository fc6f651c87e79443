"""Reading a model file a user names: regular files only, with a size cap, never blocking.

``--config /dev/zero`` would read until memory runs out and ``--config some.fifo`` would wait forever; both are
refused here by looking at the open file (``fstat`` after an ``O_NONBLOCK`` open, so a FIFO with no writer does not
block the open itself and nothing can be swapped between the check and the read).
"""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO

from vramfit.calc.bounded_json import JsonRefused, loads
from vramfit.calc.errors import BadFileError
from vramfit.calc.limits import MAX_CONFIG_BYTES


def open_regular_file(path: str | Path) -> tuple[BinaryIO, int]:
    """Open ``path`` for reading if it is a regular file: (binary stream, size). Raises BadFileError otherwise."""
    name = Path(path).name or str(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise BadFileError(f"cannot read {name}: {exc.strerror or exc}", path=str(path), field="path") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise BadFileError(f"{name} is not a regular file", path=str(path), field="path")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb"), info.st_size
    except BaseException:
        os.close(fd)
        raise


def parse_config_json(data: bytes, name: str = "config.json") -> dict[str, Any]:
    """A config.json's bytes → its object; more than :data:`calc.limits.MAX_CONFIG_BYTES`, NaN, Infinity, 1e309,
    5,000-digit integers and deep nesting refused (:mod:`calc.bounded_json`)."""
    try:
        config = loads(data, max_bytes=MAX_CONFIG_BYTES)
    except JsonRefused as exc:
        raise BadFileError(f"{name}: {exc}", field="json") from None
    if not _finite(config):
        raise BadFileError(f"{name}: a number is too large", field="json")
    if not isinstance(config, dict):
        raise BadFileError(f"{name} must be a JSON object", field="json")
    return config


def _finite(value: Any) -> bool:
    """Whether every number in a parsed JSON value is finite (1e309 parses as infinity); its nesting is bounded."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


def read_config_json(path: str | Path) -> dict[str, Any]:
    """Read a Hugging Face config.json from disk, within :data:`calc.limits.MAX_CONFIG_BYTES`."""
    stream, size = open_regular_file(path)
    name = Path(path).name
    with stream:
        if size > MAX_CONFIG_BYTES:
            raise BadFileError(f"{name} is {size:,} bytes; a config.json is at most {MAX_CONFIG_BYTES:,}", field="size")
        data = stream.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise BadFileError(f"{name} is larger than {MAX_CONFIG_BYTES:,} bytes", field="size")
    return parse_config_json(data, name)
