"""Reading a pasted log in linear time, whatever was pasted: the helpers every reader matches its lines with, and
the CPU deadline a read stops at.

Python's :mod:`re` backtracks, and it holds the GIL for a whole call, so one pattern that is quadratic on some input
(``(\\S+) KV buffer size`` on a 4,000-character base64 line tries every start of the word, and every end) freezes
the bot for minutes. The rules the readers keep:

- a line is at most :data:`bot.logs.MAX_LINE` characters before any pattern sees it;
- a pattern that starts with a literal is tried where the literal occurs, at its first few occurrences
  (:func:`first`), not at every one (``architecture=`` repeated 300 times on one line);
- a word before a literal (the device of ``CUDA0 KV buffer size``) is taken with :func:`word_before`, a scan
  backwards from the literal, never with a leading ``\\S+``;
- no two neighbouring parts of a pattern can match the same characters (``\\W*\\s*``, ``.*?\\s*$``), and a run of
  digits or word characters is only started where one begins (``(?<![\\d.])``).

The fuzz test (tests/bot/test_log_hostile.py) throws the shapes that broke these rules at every reader.
"""

from __future__ import annotations

import re
import time

READ_CPU_SECONDS = 2.0  # a log's read stops here (CPU time of the reading thread) and answers with what it read
CHECK_EVERY = 64  # lines between two looks at the clock


TRIES = 3  # occurrences of a pattern's literal tried on one line (a log line says one thing, once)


def first(pattern: re.Pattern[str], line: str, *literals: str) -> re.Match[str] | None:
    """``pattern`` (which starts with one of ``literals``) matched where a literal occurs in ``line``: at the first
    :data:`TRIES` occurrences, earliest first; None when it matches at none of them."""
    tried = 0
    at = min((i for literal in literals if (i := line.find(literal)) >= 0), default=-1)
    while at >= 0 and tried < TRIES:
        if (m := pattern.match(line, at)) is not None:
            return m
        tried += 1
        at = min((i for literal in literals if (i := line.find(literal, at + 1)) >= 0), default=-1)
    return None


def word_before(line: str, literal: str) -> tuple[str, int] | None:
    """The word right before the first `` literal`` in ``line`` (one space between them, as llama.cpp prints
    ``CUDA0 KV buffer size``) and where ``literal`` starts; None when there is none."""
    at = line.find(" " + literal)
    if at <= 0 or line[at - 1].isspace():
        return None
    words = line[:at].rsplit(maxsplit=1)
    return (words[-1], at + 1) if words else None


def number(text: str) -> float | None:
    """``text`` as a float, or None when it is no number ("1.2.3", "." match the pattern of a number too)."""
    try:
        return float(text)
    except ValueError:
        return None


class Deadline:
    """The CPU time one read may take (the reading thread's own, so other threads' work does not count), looked at
    every :data:`CHECK_EVERY` lines; ``stopped_at`` is the first line not read once it passed."""

    def __init__(self, seconds: float = READ_CPU_SECONDS) -> None:
        self.until = time.thread_time() + seconds
        self.stopped_at: int | None = None

    def passed(self, line_number: int) -> bool:
        """Whether the read must stop before line ``line_number`` (0-based)."""
        if not line_number or line_number % CHECK_EVERY or time.thread_time() < self.until:
            return False
        self.stopped_at = line_number
        return True
