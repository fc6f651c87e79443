#!/usr/bin/env python3
"""Load every setting of the committed llama.cpp rows again with llama-server b11434, and record what it allocates.

usage (from the repository root, with a Python that has numpy, and a llama-server built from llama.cpp b11434):
  python tools/llamacpp_truth/replay_b11434.py all|MODEL[,MODEL...] --llama-server BUILD/bin/llama-server \\
      --gguf-py TREE/gguf-py --revision b11434 --out tests/data/groundtruth/llamaserver_b11434_replay.jsonl \\
      [--max-f16-gb 16]

The rows of tests/data/groundtruth/llamacpp_cpu.jsonl were measured with llama.cpp 0c1e57098 as a library. For each
of their models (an all-zero F16 GGUF written with gen_gguf.py and b11434's gguf-py) and each distinct setting of
its rows (context, slots and whether they share one cache, K and V types, flash attention, batch and micro-batch,
``--swa-full``), this starts ``llama-server -c N -np S -kvu|--no-kv-unified -ctk K -ctv V -fa on|off -b B -ub U
[--swa-full]`` and keeps the server's own lines: every ``llama_kv_cache: size = …`` and ``llama_memory_recurrent:
… size = …`` line, the output buffer and the CPU compute buffer. The KV cache and the recurrent state depend on
shapes and types only, so an F16 file stands for every quant of the row. Models whose F16 file would pass
``--max-f16-gb`` are left out (their loads page the whole file in on this CPU build) and listed at the end.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np
from llama_server import add_arguments, run_server

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
WRITER = "tools/llamacpp_truth/replay_b11434.py"
SETTING = ("n_ctx", "n_seq", "kv_unified", "type_k", "type_v", "flash_attn", "n_batch", "n_ubatch", "swa_full")
KV_LINE = re.compile(r"llama_kv_cache: size = .*")
RS_LINE = re.compile(r"llama_memory_recurrent: .*size = .*")
OUTPUT = re.compile(r"output buffer size = +([\d.]+) MiB")
COMPUTE = re.compile(r"(\S+) compute buffer size = +([\d.]+) MiB")


def server_args(setting: dict) -> list[str]:
    """llama-server's flags for one library setting of a row."""
    args = ["-c", str(setting["n_ctx"]), "-np", str(setting["n_seq"]), "-ngl", "99"]
    if setting["n_seq"] > 1:
        args.append("-kvu" if setting["kv_unified"] else "--no-kv-unified")
    args += ["-ctk", setting["type_k"], "-ctv", setting["type_v"], "-fa", "on" if setting["flash_attn"] else "off"]
    args += ["-b", str(setting["n_batch"]), "-ub", str(setting["n_ubatch"])]
    if setting["swa_full"]:
        args.append("--swa-full")
    return args


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(ap)
    ap.add_argument("--rows", type=Path, default=ROOT / "tests/data/groundtruth/llamacpp_cpu.jsonl")
    ap.add_argument("--max-f16-gb", type=float, default=16.0)
    a = ap.parse_args()
    sys.path[:0] = [a.gguf_py, str(HERE)]
    from archs import model_config
    from gen_gguf import build

    rows = [json.loads(line) for line in a.rows.read_text().splitlines() if line.strip()]
    models: dict[str, list[dict]] = {}
    for row in rows:
        models.setdefault(row["arch_model"], []).append(row)
    wanted = list(models) if a.models == "all" else a.models.split(",")

    def f16_bytes(model: str) -> int:
        _, tensors, _ = build(model, "/dev/null")
        return sum(2 * int(np.prod(shape)) for _, shape, _ in tensors)

    sizes = {m: f16_bytes(m) for m in wanted}
    left_out = [m for m in wanted if sizes[m] > a.max_f16_gb * 1e9]
    work = Path(a.workdir)
    work.mkdir(parents=True, exist_ok=True)
    from gen_gguf import write_gguf

    for model in sorted((m for m in wanted if m not in left_out), key=sizes.__getitem__):
        settings: list[dict] = []
        for row in models[model]:
            setting = {key: row[key] for key in SETTING}
            if setting not in settings:
                settings.append(setting)
        gguf = work / f"{model}.gguf"
        facts = write_gguf(model, str(gguf), model_config(model))
        try:
            for setting in settings:
                started = time.monotonic()
                text = run_server(a.llama_server, ["-m", str(gguf), *server_args(setting), "-lv", "4", "--no-warmup"])
                out = {
                    "arch_model": model,
                    "revision": a.revision,
                    "writer": WRITER,
                    "gguf_writer": facts["writer"],
                    **setting,
                    "served": "server is listening" in text or "all slots are idle" in text,
                    "kv_size_lines": [m[0].strip() for m in KV_LINE.finditer(text)],
                    "recurrent_size_lines": [m[0].strip() for m in RS_LINE.finditer(text)],
                    "output_buffer_mib": [float(m[1]) for m in OUTPUT.finditer(text)],
                    "compute_buffers_mib": {m[1]: float(m[2]) for m in COMPUTE.finditer(text)},
                    "seconds": round(time.monotonic() - started, 1),
                }
                with a.out.open("a") as f:
                    f.write(json.dumps(out) + "\n")
                print(model, server_args(setting), out["kv_size_lines"][:1], flush=True)
        finally:
            gguf.unlink(missing_ok=True)
    print("left out (F16 file over --max-f16-gb):", ", ".join(left_out) or "none")


if __name__ == "__main__":
    main()
