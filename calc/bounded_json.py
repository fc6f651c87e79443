"""JSON read as data, whatever a file, a cache entry or a database row holds: its size and its nesting bounded before
it is parsed.

:func:`json.loads` recurses once per level of nesting, so 3,000 ``[`` raise :class:`RecursionError` (not a
:class:`ValueError`: every caller's ``except ValueError`` missed it, and a cache file of them broke every later run),
and 100,000 can exhaust the C stack. :func:`loads` measures the nesting first, in one linear pass with the strings
taken out, and refuses what is too large or too deep with :class:`JsonRefused`, a :class:`ValueError`. NaN and
Infinity are refused too: no file vramfit reads needs them.
"""

from __future__ import annotations

import json
import operator
import re
from itertools import accumulate, repeat
from typing import Any

MAX_DEPTH = 64  # the deepest real file vramfit reads (a config.json with a nested text_config) has under 10 levels

_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = bytes.maketrans(b"[]{}", b"\x02\x00\x02\x00")  # an opening bracket one level down, a closing one up


class JsonRefused(ValueError):
    """The text is not JSON vramfit reads: larger than its limit, nested deeper than :data:`MAX_DEPTH`, or not JSON."""


def nesting_depth(text: str) -> int:
    """How deep the arrays and objects of ``text`` nest (brackets inside strings are not counted); every step runs in
    C over the text once: escapes out, then every other piece between quotes (the strings) out."""
    if text.count("[") + text.count("{") <= 1:
        return 1 if "[" in text or "{" in text else 0
    unescaped = text.replace("\\\\", "").replace('\\"', "")  # an escaped backslash, then an escaped quote
    brackets = _NOT_BRACKET.sub("", "".join(unescaped.split('"')[0::2]))
    if not brackets:
        return 0
    steps = brackets.encode("ascii").translate(_STEP)  # 2 for "[" or "{", 0 for "]" or "}"
    deepest = max(accumulate(map(operator.sub, steps, repeat(1))), default=0)  # the running depth, at its deepest
    return max(0, int(deepest))


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def loads(data: bytes | str, *, max_bytes: int, max_depth: int = MAX_DEPTH) -> Any:
    """``data`` parsed, once it is known to be at most ``max_bytes`` long and ``max_depth`` deep; JsonRefused
    otherwise (a 5,000-digit integer, invalid UTF-8 and invalid JSON included)."""
    if len(data) > max_bytes:
        raise JsonRefused(f"{len(data):,} bytes, more than {max_bytes:,}")
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise JsonRefused(f"not valid JSON (not UTF-8: {exc.reason})") from None
    if text.count("[") + text.count("{") > max_depth and (depth := nesting_depth(text)) > max_depth:
        raise JsonRefused(f"nested {depth:,} deep, more than {max_depth}")
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:  # not reached after the depth check; kept so no caller ever sees one
        raise JsonRefused("nested too deeply") from None
    except ValueError as exc:  # json.JSONDecodeError, and int's digit limit
        raise JsonRefused(f"not valid JSON ({str(exc)[:120]})") from None
