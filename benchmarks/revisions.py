"""What changed between llama.cpp 0c1e57098 (the library loads of llamacpp_cpu.jsonl) and llama-server b11434 (the
same settings loaded again: llamaserver_b11434_replay.jsonl), per architecture.

    python benchmarks/revisions.py

For every replayed setting the two revisions' lines are set side by side: the KV caches (each buffer, MiB), the
recurrent state, the output buffer and the CPU compute buffer. A row of the table is one llama.cpp architecture:
how many settings, how many have the same KV cache and state in both, the output buffer's and the compute buffer's
ratio b11434 / 0c1e57098 (median, and the range). llama-server keeps one output a slot where the library kept
every token's logits of a micro-batch, which is where most of the compute difference comes from.
"""

from __future__ import annotations

import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.groundtruth import llamacpp_rows, replay_rows

SETTING = ("n_ctx", "n_seq", "kv_unified", "type_k", "type_v", "flash_attn", "n_batch", "n_ubatch", "swa_full")
SIZE = re.compile(r"size = +([\d.]+) MiB")


def _sizes(lines: list[str]) -> list[float]:
    """The sizes a log's lines give, less empty caches (b11434 logs DeepSeek V4's 0-layer full-attention cache)."""
    return [size for line in lines if (m := SIZE.search(line)) and (size := float(m[1]))]


def _old_state(row: dict[str, object]) -> float:
    lines = [str(x) for x in row.get("kv_size_lines", []) or []]  # type: ignore[attr-defined]
    excerpt = str(row.get("log_excerpt", ""))
    found = re.findall(r"llama_memory_recurrent: size = +([\d.]+) MiB", excerpt + "\n".join(lines))
    return sum(float(x) for x in found[:1])


def main() -> None:
    old = {}
    for row in llamacpp_rows():
        old.setdefault((row["arch_model"], *(row[k] for k in SETTING)), row)
    by_arch: dict[str, list[tuple[dict, dict]]] = defaultdict(list)
    for new in replay_rows():
        key = (new["arch_model"], *(new[k] for k in SETTING))
        if key in old:
            by_arch[old[key]["llama_arch"]].append((old[key], new))
    print(f"{'architecture':<16} {'settings':>8} {'KV same':>8} {'state same':>10} {'outputs b/0c':>14} "
          f"{'compute b/0c':>13} {'(range)':>13}")  # fmt: skip
    totals = [0, 0, 0]
    for arch in sorted(by_arch):
        pairs = by_arch[arch]
        kv_same = sum(_sizes(n["kv_size_lines"]) == list(o["kv_buffers_mib"]) for o, n in pairs)
        states = [
            (round(_old_state(o), 2), round(sum(_sizes([x for x in n["recurrent_size_lines"] if ": size =" in x])), 2))
            for o, n in pairs
        ]
        state_same = sum(a == b for a, b in states)
        outputs = [sum(n["output_buffer_mib"]) / o["output_buffer_mib"] for o, n in pairs if o.get("output_buffer_mib")]
        compute = [n["compute_buffers_mib"].get("CPU", 0) / o["compute_buffer_mib"] for o, n in pairs
                   if o.get("compute_buffer_mib") and n["compute_buffers_mib"]]  # fmt: skip
        totals = [totals[0] + len(pairs), totals[1] + kv_same, totals[2] + state_same]
        out = f"{statistics.median(outputs):.2f}" if outputs else "—"
        comp = f"{statistics.median(compute):.2f}" if compute else "—"
        span = f"{min(compute):.2f}–{max(compute):.2f}" if compute else ""
        print(f"{arch:<16} {len(pairs):>8} {kv_same:>8} {state_same:>10} {out:>14} {comp:>13} {span:>13}")
    print(f"{'all':<16} {totals[0]:>8} {totals[1]:>8} {totals[2]:>10}")


if __name__ == "__main__":
    main()
