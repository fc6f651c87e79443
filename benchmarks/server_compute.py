"""Compute buffers with llama-server's output limit: what llama.cpp reserves, beside vramfit's estimate.

    python benchmarks/server_compute.py

llama.cpp 0c1e57098 reserves the compute buffer for a micro-batch of 512 tokens with at most ``n_outputs_max``
outputs. The library default keeps the logits of every token; llama-server keeps one a slot (four slots with no
``-np``), and its buffer is smaller wherever the logits were the largest stage. The rows are
tests/data/groundtruth/llamacpp_outputs.jsonl (tools/llamacpp_truth/measure_outputs.py, CPU backend). The table
gives, per model, the library default's buffer at 4,096 tokens and the server's at 4,096 and 32,768 tokens (four
slots, flash attention), in MiB, and vramfit's estimate for llama-server with its ratio to each (``/default``: the
estimate for the library default against that). vramfit sizes the server's buffer for dense models without sliding
windows (their feed-forward stage, ``calc.compute.plain_dense``) and the library default's for the others, which errs
high for llama-server by up to the logits of a micro-batch.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.groundtruth import MIB, llamacpp_rows, output_limit_rows
from vramfit.calc.compute import SERVER_AUTO_SLOTS, compute_buffers, plain_dense, server_outputs
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.kv import kv_cache
from vramfit.calc.request import KvType


def estimate_mib(config: dict[str, object], n_ctx: int, server: bool) -> float:
    """vramfit's buffer: as llama-server's (one output a slot, four slots) where the calculator sizes it so
    (``plain_dense``), else every token's; ``server`` False: every token's (the library default)."""
    arch = from_hf_config(config)  # type: ignore[arg-type]
    cache = kv_cache(arch, n_ctx, 1, KvType.F16, flash_attn=True)
    outputs = server_outputs(SERVER_AUTO_SLOTS) if server and plain_dense(arch) else None  # the rows: no -np, 4 slots
    return compute_buffers(arch, cache.full_cells, flash_attn=True, n_outputs=outputs).gpu_bytes / MIB


def main() -> None:
    configs = {row["arch_model"]: row["config"] for row in llamacpp_rows()}
    rows = {
        (r["arch_model"], r["n_ctx"], r["flash_attn"], r["n_outputs_max"], r["n_seq"]): r for r in output_limit_rows()
    }
    print(f"{'model':32} {'default 4K':>10} {'server 4K':>10} {'server 32K':>10} {'vramfit 4K':>11} "
          f"{'/default':>8} {'/server':>8} {'vramfit 32K':>11} {'/server':>8}")  # fmt: skip
    to_default, to_server = [], []
    for model in dict.fromkeys(key[0] for key in rows):
        default = rows[(model, 4096, True, 0, 1)]["compute_buffer_mib"]
        server4 = rows[(model, 4096, True, 4, 4)]["compute_buffer_mib"]
        server32 = rows[(model, 32768, True, 4, 4)]["compute_buffer_mib"]
        est4 = estimate_mib(configs[model], 4096, True)
        est32 = estimate_mib(configs[model], 32768, True)
        to_default.append(estimate_mib(configs[model], 4096, False) / default)
        to_server.append(est4 / server4)
        if server32 is None:  # the context was not created (its KV cache did not fit this machine's memory)
            print(f"{model[:32]:32} {default:10.2f} {server4:10.2f} {'—':>10} {est4:11.2f} {est4 / default:8.2f} "
                  f"{est4 / server4:8.2f} {est32:11.2f} {'—':>8}")  # fmt: skip
            continue
        to_server.append(est32 / server32)
        print(f"{model[:32]:32} {default:10.2f} {server4:10.2f} {server32:10.2f} {est4:11.2f} {est4 / default:8.2f} "
              f"{est4 / server4:8.2f} {est32:11.2f} {est32 / server32:8.2f}")  # fmt: skip
    print(
        f"\nvramfit / library default at 4K: median {statistics.median(to_default):.2f}, "
        f"range {min(to_default):.2f}-{max(to_default):.2f} ({len(to_default)} models)"
    )
    print(
        f"vramfit / llama-server (4 slots): median {statistics.median(to_server):.2f}, "
        f"range {min(to_server):.2f}-{max(to_server):.2f} ({len(to_server)} loads)"
    )


if __name__ == "__main__":
    main()
