#!/usr/bin/env python3
"""Name the writer that made each row of a llamacpp_cpu.jsonl: add `"writer": ...` right after `llama_arch`.

The writer is what gen_gguf.writer_for picks for the row's model (archs.ARCHS[arch_model]): "arch_builders.build_<x>"
for the architectures arch_builders.py writes, "gen_gguf.generic" for gen_gguf.py's own tensor list (qwen2, llama,
gemma2, gemma3, qwen3, qwen3moe). Every other byte of every row stays as it was: the rows are one compact
`json.dumps(row)` per line (", " and ": " separators, ASCII escapes), and the new line is the old one with the
field inserted, which the script checks before it writes anything. A row whose `config` is not its model's ARCHS
entry, or that names another writer already, stops the script.

usage: python annotate_writer.py tests/data/groundtruth/llamacpp_cpu.jsonl [--check]
  --check   only verify that every row already names the writer it should (exit 1 otherwise)
"""

import json
import sys
from pathlib import Path

from archs import ARCHS, model_config, row_config
from gen_gguf import writer_for


def writer_of(row):
    name = row["arch_model"]
    if name not in ARCHS:
        raise SystemExit(f"{name}: no archs.py entry")
    if row["config"] != row_config(ARCHS[name]):
        raise SystemExit(f"{name}: the row's config is not archs.ARCHS[{name!r}]")
    return writer_for(model_config(name))[0]


def annotate_line(line):
    row = json.loads(line)
    if json.dumps(row) != line:
        raise SystemExit(f"{row['arch_model']}: the line is not json.dumps(row); refusing to rewrite it")
    writer = writer_of(row)
    if "writer" in row:
        if row["writer"] != writer:
            raise SystemExit(f"{row['arch_model']}: names writer {row['writer']!r}, expected {writer!r}")
        return line
    new = {}
    for k, v in row.items():
        new[k] = v
        if k == "llama_arch":
            new["writer"] = writer
    out = json.dumps(new)
    # the same bytes with one field inserted, and the same row without it
    anchor = f'"llama_arch": {json.dumps(row["llama_arch"])}, '
    assert out == line.replace(anchor, anchor + f'"writer": {json.dumps(writer)}, ', 1), row["arch_model"]
    assert {k: v for k, v in json.loads(out).items() if k != "writer"} == row
    return out


def main(argv):
    path = Path(argv[0])
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    if "--check" in argv[1:]:
        bad = [i + 1 for i, line in enumerate(lines) if json.loads(line).get("writer") != writer_of(json.loads(line))]
        print(f"{len(lines)} rows; {len(bad)} without the right writer" + (f": lines {bad[:10]}" if bad else ""))
        return 1 if bad else 0
    out = [annotate_line(line) for line in lines]
    path.write_text("\n".join(out) + ("\n" if text.endswith("\n") else ""), encoding="utf-8")
    counts = {}
    for line in out:
        w = json.loads(line)["writer"]
        counts[w] = counts.get(w, 0) + 1
    print(f"{len(out)} rows: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
