"""JSON read as data and the cache folder kept within bounds (issue 43): nesting measured against a reference walk of
the parsed value, refusals as JsonRefused (a ValueError, never a RecursionError), and the oldest entries removed
when a folder passes its limit."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from vramfit.calc.bounded_json import MAX_DEPTH, JsonRefused, loads, nesting_depth
from vramfit.calc.cache_files import evict_oldest, write_cache_file


def _depth(value: Any) -> int:
    """The reference: the nesting of a parsed value, walked."""
    if isinstance(value, dict | list):
        children = value.values() if isinstance(value, dict) else value
        return 1 + max((_depth(v) for v in children), default=0)
    return 0


@pytest.mark.parametrize(
    ("text", "depth"),
    [("1", 0), ('"[[["', 0), ("[]", 1), ("{}", 1), ('{"a": [1, {"b": "]]]}"}]}', 3), ('["\\\\", "\\"[", [[]]]', 3),
     ('{"k\\"[": {"x": [[[]]]}}', 5)],
)  # fmt: skip
def test_nesting_is_counted_outside_strings(text: str, depth: int) -> None:
    assert nesting_depth(text) == depth == _depth(json.loads(text))


def test_nesting_agrees_with_a_walk_of_random_json() -> None:
    rng = random.Random(43)
    leaves = ['a"[\\]{', "x\\\\", 1, None, '\\"]]', "{[", 2.5, "\\", '"']

    def grow(level: int) -> Any:
        roll = rng.random()
        if level > 7 or roll < 0.3:
            return rng.choice(leaves)
        if roll < 0.65:
            return [grow(level + 1) for _ in range(rng.randint(0, 3))]
        return {rng.choice(["k[", '"}', "\\\\", "z"]): grow(level + 1) for _ in range(rng.randint(0, 3))}

    for _ in range(2000):
        value = grow(0)
        assert nesting_depth(json.dumps(value)) == _depth(value)


@pytest.mark.parametrize(
    ("data", "words"),
    [("[" * 3000, "nested 3,000 deep"), ("{" * 100_000, "nested 100,000 deep"), ("[" * (MAX_DEPTH + 1), "deep"),
     ('{"a": NaN}', "NaN"), (b"\xff{}", "not UTF-8"), ("1" * 5000, "not valid JSON"), ("x" * 101, "101 bytes")],
)  # fmt: skip
def test_what_is_not_json_vramfit_reads_is_refused_as_a_value_error(data: str | bytes, words: str) -> None:
    with pytest.raises(JsonRefused, match=words):
        loads(data, max_bytes=100 if words == "101 bytes" else 1 << 20)
    assert issubclass(JsonRefused, ValueError)
    assert loads("[" * MAX_DEPTH + "]" * MAX_DEPTH, max_bytes=1 << 20) is not None


def test_a_folder_past_its_limit_loses_its_oldest_files_first(tmp_path: Path) -> None:
    folder = tmp_path / "hub"
    folder.mkdir(mode=0o700)
    for age, name in enumerate(["new.json", "mid.json", "old.json", "old.json.bad", "note.txt"]):
        (folder / name).write_bytes(b"x" * 100)
        os.utime(folder / name, (1_000_000 - age * 100, 1_000_000 - age * 100))
    evict_oldest(folder, 250)
    # the damaged file first, then the oldest entry; what is no entry stays
    assert sorted(p.name for p in folder.iterdir()) == ["mid.json", "new.json", "note.txt"]
    write_cache_file(folder / "newest.json", b"y" * 200, folder_limit=250)
    assert sorted(p.name for p in folder.iterdir()) == ["newest.json", "note.txt"]  # the one just written stays
