"""Compute buffers of llama-server b11434 on the CPU loads, beside vramfit's estimate, per llama.cpp architecture.

    python benchmarks/server_compute.py

The rows are tests/data/groundtruth/llamaserver_b11434_replay.jsonl (tools/llamacpp_truth/replay_b11434.py): every
setting of the committed llama.cpp rows (context, slots, unified cache or not, K/V types, flash attention, micro-batch)
loaded with llama-server b11434, which reserves one output a slot. For each architecture the table gives the settings,
how many of them vramfit's estimate (calc/server_graph.py, llama-server's graph) puts within 5 % of the logged
buffer, the median ratio and its range, and the same for the stages calc/compute.py sizes for llama.cpp's library
default (every token's logits, the buffer Ollama's runner reserves), which is what the estimate used for these
architectures before. ``not sized``: calc/server_graph.py leaves the architecture to calc/compute.py (the lightning
indexer, DeepSeek V4's compressed attention).
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.groundtruth import MIB, llamacpp_rows, replay_rows
from vramfit.calc.compute import compute_buffers
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.kv import kv_cache
from vramfit.calc.request import KvType
from vramfit.calc.server_graph import server_compute_bytes, sized


def main() -> None:
    configs = {row["arch_model"]: row["config"] for row in llamacpp_rows()}
    ratios: dict[str, list[tuple[float, float]]] = defaultdict(list)
    unsized: set[str] = set()
    for row in replay_rows():
        if not row["compute_buffers_mib"]:
            continue
        arch = from_hf_config(configs[row["arch_model"]])
        users, flash, ubatch = int(row["n_seq"]), bool(row["flash_attn"]), int(row["n_ubatch"])
        cache = kv_cache(arch, int(row["n_ctx"]) // users, users, KvType(row["type_k"]), KvType(row["type_v"]),
                         flash_attn=flash, n_ubatch=ubatch, unified=bool(row["kv_unified"]) or users == 1,
                         swa_full=bool(row["swa_full"]))  # fmt: skip
        logged = row["compute_buffers_mib"]["CPU"]
        library = compute_buffers(arch, cache.full_cells, n_ubatch=ubatch, flash_attn=flash).gpu_bytes / MIB
        server = server_compute_bytes(arch, cache, n_ubatch=ubatch, flash_attn=flash, n_outputs=users, n_seqs=users)
        ratios[arch.arch].append((server / MIB / logged, library / logged))
        if not sized(arch):
            unsized.add(arch.arch)
    print(f"{'architecture':<16} {'settings':>8} {'within 5%':>9} {'median':>7} {'range':>13}   "
          f"{'calc.compute: within 5%':>23} {'median':>7} {'range':>13}")  # fmt: skip
    within = total = 0
    for name in sorted(ratios):
        pairs = ratios[name]
        server, library = [p[0] for p in pairs], [p[1] for p in pairs]
        ok = sum(0.95 <= r <= 1.05 for r in server)
        within, total = within + ok, total + len(pairs)
        note = "  not sized" if name in unsized else ""
        print(f"{name:<16} {len(pairs):>8} {ok:>9} {statistics.median(server):>7.3f} "
              f"{min(server):>6.3f}-{max(server):<6.3f}   {sum(0.95 <= r <= 1.05 for r in library):>23} "
              f"{statistics.median(library):>7.3f} {min(library):>6.3f}-{max(library):<6.3f}{note}")  # fmt: skip
    print(f"\n{within} of {total} settings within 5 % of llama-server b11434 ({len(ratios)} architectures, "
          f"{len(unsized)} not sized: {', '.join(sorted(unsized))})")


if __name__ == "__main__":
    main()
