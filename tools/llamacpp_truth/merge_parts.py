#!/usr/bin/env python3
"""Append .part_*.jsonl beside the default output (outputs of run_truth.py --out, used to run
several drivers concurrently) to the default output, fill `llama_cpp_commit` in rows written
before that field existed, and remove the part files.

usage: VENV/bin/python merge_parts.py   (in the folder holding the part files)
"""

import glob
import json
from pathlib import Path

from run_truth import LLAMA_CPP_COMMIT, OUT

parts = sorted(glob.glob(str(OUT.parent / ".part_*.jsonl")))
rows = [json.loads(line) for line in OUT.read_text().splitlines()] if OUT.exists() else []
for p in parts:
    rows += [json.loads(line) for line in Path(p).read_text().splitlines()]
for r in rows:
    if not r.get("llama_cpp_commit"):
        r["llama_cpp_commit"] = LLAMA_CPP_COMMIT.get(r.get("llama_cpp_python_version"))
tmp = OUT.with_suffix(".tmp")
with open(tmp, "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
tmp.replace(OUT)
for p in parts:
    Path(p).unlink()
print(f"{len(rows)} rows in {OUT.name}; merged {len(parts)} part files")
