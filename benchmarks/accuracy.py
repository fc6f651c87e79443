"""Accuracy: vramfit's estimates beside llama.cpp's own numbers and beside the popular rule of thumb.

    python benchmarks/accuracy.py

Two tables:
1. llama.cpp CUDA runs with every layer on the GPU (tests/data/groundtruth/measured.jsonl): GPU weights, KV cache,
   compute buffer, and the GPU total (weights + KV + compute), against the rule of thumb
   "quantized file size + naive KV + 10 %".
2. Real llama.cpp quantizations and contexts (tests/data/groundtruth/llamacpp_cpu.jsonl): file size and KV buffer.
3. Hybrid models (the same file's rows with a recurrent state): the context memory llama.cpp allocates (KV of the
   attention layers + recurrent state) beside vramfit's and beside the textbook KV formula, which counts every layer
   as attention and lets the whole thing grow with context.
Errors are signed percentages; each table ends with the median and worst absolute error per component.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.calc.test_measured import CASES, _kv_types
from tests.groundtruth import MIB, llamacpp_rows, measured_rows
from vramfit.calc.architecture import Architecture
from vramfit.calc.compute import compute_buffers
from vramfit.calc.file_types import parse_file_type
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.kv import KvCache, kv_cache, naive_kv_bytes
from vramfit.calc.recurrent import recurrent_state
from vramfit.calc.request import KvType
from vramfit.calc.weights import weight_bytes


def pct(estimate: float, measured: float) -> float:
    return 100.0 * (estimate - measured) / measured


def print_summary(errors: dict[str, list[float]]) -> None:
    """A table's last lines: the median and worst absolute error of each component."""
    for name, signed in errors.items():
        absolute = [abs(e) for e in signed]
        print(f"{name:<22} median {statistics.median(absolute):6.2f}%   worst {max(absolute):6.2f}%")


def row_kv_cache(
    arch: Architecture,
    row: dict[str, Any],
    type_k: KvType = KvType.F16,
    type_v: KvType | None = None,
    *,
    flash_attn: bool,
    swa_full: bool = False,
) -> KvCache:
    """The KV cache of one llamacpp_cpu.jsonl run: its context shared by its sequences, at its micro-batch and with
    its unified setting (the tables differ in the cache types, flash attention and full-size windows they ask)."""
    users = int(row["n_seq"])
    return kv_cache(
        arch,
        int(row["n_ctx"]) // users,
        users,
        type_k,
        type_v,
        flash_attn=flash_attn,
        n_ubatch=int(row["n_ubatch"]),
        unified=bool(row["kv_unified"]),
        swa_full=swa_full,
    )


def measured_table() -> None:
    rows = {r["id"]: r for r in measured_rows()}
    errors: dict[str, list[float]] = {"weights": [], "kv": [], "compute": [], "total": [], "rule of thumb total": []}
    print("llama.cpp on CUDA, every layer on the GPU (MiB; error in %)")
    header = f"{'case':<52} {'weights':>18} {'KV':>16} {'compute':>16} {'total':>17} {'thumb':>16}"
    print(header)
    for case_id, (arch, quant, users, gpus) in sorted(CASES.items()):
        row = rows[case_id]
        type_k, type_v = _kv_types(row)
        flash = bool(row["flash_attn"])
        ubatch = int(row.get("n_ubatch") or 512)
        weights = weight_bytes(arch, parse_file_type(quant))
        cache = kv_cache(arch, int(row["n_ctx"]) // users, users, type_k, type_v, flash_attn=flash, n_ubatch=ubatch)
        compute = compute_buffers(arch, cache.full_cells, n_ubatch=ubatch, flash_attn=flash, gpu_count=gpus)
        measured_total = (row["weights_gpu_mib"] + row["kv_mib"] + row["compute_mib"]) * MIB
        ours_total = weights.gpu_bytes + cache.total_bytes + compute.gpu_bytes
        naive = naive_kv_bytes(arch, int(row["n_ctx"]) // users, users, type_k)
        thumb = (weights.file_bytes + naive) * 1.1
        parts = {
            "weights": pct(weights.gpu_bytes, row["weights_gpu_mib"] * MIB),
            "kv": pct(cache.total_bytes, row["kv_mib"] * MIB),
            "compute": pct(compute.gpu_bytes, row["compute_mib"] * MIB),
            "total": pct(ours_total, measured_total),
            "rule of thumb total": pct(thumb, measured_total),
        }
        for key, value in parts.items():
            errors[key].append(value)
        print(
            f"{case_id[:52]:<52} {weights.gpu_bytes / MIB:9.0f} {parts['weights']:+6.2f}% "
            f"{cache.total_bytes / MIB:7.0f} {parts['kv']:+6.2f}% {compute.gpu_bytes / MIB:7.0f} "
            f"{parts['compute']:+6.1f}% {ours_total / MIB:8.0f} {parts['total']:+6.2f}% "
            f"{thumb / MIB:7.0f} {parts['rule of thumb total']:+6.1f}%"
        )
    print_summary(errors)


def llamacpp_table() -> None:
    print("\nllama.cpp quantizations (CPU build; file bytes and KV buffer)")
    errors: dict[str, list[float]] = {"file": [], "kv": [], "rule of thumb kv": []}
    seen: set[tuple[str, str]] = set()
    for row in llamacpp_rows():
        arch = from_hf_config(row["config"])
        users = int(row["n_seq"])
        cache = row_kv_cache(
            arch,
            row,
            KvType(row["type_k"]),
            KvType(row["type_v"]),
            flash_attn=bool(row["flash_attn"]),
            swa_full=bool(row["swa_full"]),
        )
        measured_kv = row["kv_buffer_mib"] * MIB
        errors["kv"].append(pct(cache.total_bytes, measured_kv))
        errors["rule of thumb kv"].append(
            pct(naive_kv_bytes(arch, int(row["n_ctx"]) // users, users, KvType(row["type_k"])), measured_kv)
        )
        key = (row["arch_model"], row["quant"])
        if key in seen:
            continue
        seen.add(key)
        weights = weight_bytes(arch, parse_file_type(row["quant"]))
        error = pct(weights.file_bytes, row["file_bytes"])
        errors["file"].append(error)
        print(
            f"{row['arch_model']:<14} {row['quant']:<7} file {weights.file_bytes:>14,} vs {row['file_bytes']:>14,} "
            f"({error:+.3f}%)  tensors exact: {weights.tensor_bytes == row['model_size_api_bytes']}"
        )
    print_summary(errors)


def hybrid_table() -> None:
    print("\nHybrid models: context memory = KV (attention layers) + recurrent state (MiB)")
    print(
        f"{'model':<18} {'n_ctx':>7} {'users':>5} {'llama.cpp':>10} {'vramfit':>10} {'naive KV':>10} {'naive/real':>10}"
    )
    for row in llamacpp_rows():
        if not row.get("recurrent_caches") or row["type_k"] != "f16" or not row["flash_attn"]:
            continue
        arch = from_hf_config(row["config"])
        users = int(row["n_seq"])
        cache = row_kv_cache(arch, row, flash_attn=True)
        ours = (cache.total_bytes + recurrent_state(arch, users).total_bytes) / MIB
        measured = row["kv_buffer_mib"] + row["recurrent_buffer_mib"]
        naive = naive_kv_bytes(arch, int(row["n_ctx"]) // users, users) / MIB
        print(
            f"{row['arch_model']:<18} {row['n_ctx']:>7} {users:>5} {measured:>10.2f} {ours:>10.2f} {naive:>10.2f} "
            f"{naive / measured:>9.2f}x"
        )


def family_table() -> None:
    """One row per measured model at its longest measured context (one user, f16, flash attention): what the textbook
    formula says beside what llama.cpp allocated, the headline for windows, chunks, MLA and recurrent state."""
    print("\nContext memory per model at its longest measured context, 1 user, f16 (MiB)")
    heads = ("llama.cpp", "vramfit", "naive KV", "naive/real")
    print(f"{'model':<24} {'llama.cpp arch':<14} {'n_ctx':>7} " + " ".join(f"{h:>10}" for h in heads))
    longest: dict[str, dict[str, object]] = {}
    for row in llamacpp_rows():
        if int(row["n_seq"]) != 1 or row["type_k"] != "f16" or not row["flash_attn"] or row["swa_full"]:
            continue
        best = longest.get(row["arch_model"])
        if best is None or int(row["n_ctx"]) > int(str(best["n_ctx"])):
            longest[row["arch_model"]] = row
    for name, row in longest.items():
        arch = from_hf_config(row["config"])  # type: ignore[arg-type]
        n_ctx = int(str(row["n_ctx"]))
        cache = kv_cache(arch, n_ctx, 1, flash_attn=True, n_ubatch=int(str(row["n_ubatch"])))
        ours = (cache.total_bytes + recurrent_state(arch, 1).total_bytes) / MIB
        measured = float(str(row["kv_buffer_mib"])) + float(str(row.get("recurrent_buffer_mib") or 0.0))
        naive = naive_kv_bytes(arch, n_ctx, 1) / MIB
        figures = f"{measured:>10.2f} {ours:>10.2f} {naive:>10.2f} {naive / measured:>9.2f}x"
        print(f"{name:<24} {arch.arch:<14} {n_ctx:>7} {figures}")


if __name__ == "__main__":
    measured_table()
    llamacpp_table()
    hybrid_table()
    family_table()
