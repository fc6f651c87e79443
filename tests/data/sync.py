"""Refresh the committed ground truth from a newer measurement folder.

    python -m tests.data.sync --from DIR      # DIR holds groundtruth/ and eval/, laid out as tests/data/
    make groundtruth FROM=DIR

Rows the repository copy lacks are appended (a row is known by its ``id``, or by its whole content where rows have
no id); rows already here are never rewritten or dropped, so a test's expected numbers change only when a new row is
added. ``architectures.json`` gains the models it lacks. The tests themselves only ever read ``tests/data/``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent
JSONL = (
    "groundtruth/llamacpp_cpu.jsonl",
    "groundtruth/measured.jsonl",
    "groundtruth/speed.jsonl",
    "eval/queries_public.jsonl",
)
DOCS = {
    "groundtruth/LLAMACPP.md": "groundtruth/LLAMACPP.md",
    "groundtruth/SPEED.md": "groundtruth/SPEED.md",
    "groundtruth/README.md": "groundtruth/MEASURED.md",
}


def _row_key(row: dict[str, Any]) -> str:
    return str(row["id"]) if "id" in row else json.dumps(row, sort_keys=True, ensure_ascii=False)


def merge_jsonl(source: Path, target: Path) -> int:
    """Append the rows of ``source`` that ``target`` lacks; returns how many were added."""
    lines = target.read_text(encoding="utf-8").splitlines() if target.exists() else []
    known = {_row_key(json.loads(line)) for line in lines if line.strip()}
    added = []
    for line in source.read_text(encoding="utf-8").splitlines():
        if line.strip() and _row_key(row := json.loads(line)) not in known:
            known.add(_row_key(row))
            added.append(line)
    if added:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join([*[x for x in lines if x.strip()], *added]) + "\n", encoding="utf-8")
    return len(added)


def merge_architectures(source: Path, target: Path) -> int:
    """Add the models of ``source`` that ``target`` lacks; returns how many were added."""
    new = json.loads(source.read_text(encoding="utf-8"))
    have = json.loads(target.read_text(encoding="utf-8")) if target.exists() else {**new, "models": {}}
    missing = {k: v for k, v in new["models"].items() if k not in have["models"]}
    if missing:
        have["models"].update(missing)
        target.write_text(json.dumps(have, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return len(missing)


def sync(source_root: Path, data_root: Path = DATA) -> dict[str, int]:
    """Merge every known file from ``source_root`` into ``data_root``; returns rows added per file."""
    added: dict[str, int] = {}
    for rel in JSONL:
        if (source_root / rel).is_file():
            added[rel] = merge_jsonl(source_root / rel, data_root / rel)
    arch = "groundtruth/architectures.json"
    if (source_root / arch).is_file():
        added[arch] = merge_architectures(source_root / arch, data_root / arch)
    for src, dst in DOCS.items():
        if (source_root / src).is_file() and (
            not (data_root / dst).exists() or (source_root / src).read_bytes() != (data_root / dst).read_bytes()
        ):
            shutil.copyfile(source_root / src, data_root / dst)
            added[dst] = 1
    return added


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--from",
        dest="source",
        type=Path,
        required=True,
        help="folder holding groundtruth/ and eval/ with newer measurements",
    )
    args = parser.parse_args(argv)
    if not (args.source / "groundtruth").is_dir():
        print(f"{args.source}: no groundtruth/ folder there", file=sys.stderr)
        return 2
    for rel, count in sync(args.source).items():
        print(f"{rel}: {count} added" if rel.endswith((".jsonl", ".json")) else f"{rel}: updated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
