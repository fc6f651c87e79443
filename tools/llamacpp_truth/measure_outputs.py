#!/usr/bin/env python3
"""Measure the compute buffer a context reserves with llama-server's output limit, with llama.cpp itself.

usage (from tools/llamacpp_truth, with the truth venv's python and --gguf-py as for run_truth.py):
  measure_outputs.py MODEL[,MODEL...] --out rows.jsonl [--workdir DIR] [--gguf-py DIR]

llama.cpp 0c1e57098 reserves a context's compute buffer for a micro-batch of ``n_ubatch`` tokens with
``min(n_ubatch, n_outputs_max)`` outputs (llama-context.cpp sched_reserve: ``n_outputs_pp``). The library default,
``n_outputs_max`` 0, means n_batch: the logits of every token of the micro-batch (the rows of run_truth.py).
llama-server sets it to one output per slot times one plus the draft length (tools/server/server-context.cpp
server_output_limits, common/speculative.cpp common_speculative_get_output_limits), and with no ``-np`` it runs four
slots on a unified cache (tools/server/server.cpp: "n_parallel is set to auto, using n_parallel = 4 and kv_unified =
true"). MODEL is an archs.py model, written as a sparse F16 file (a context never reads a weight, and the compute
buffer does not depend on the weights' types). For each model six contexts are created on the CPU backend, each row
holding llama.cpp's ``compute buffer size`` line:

* 4,096 tokens, flash attention, the library default (``n_outputs_max`` 0);
* 4,096 and 32,768 tokens, flash attention, one output (one slot);
* 4,096 tokens without flash attention, one output;
* 4,096 and 32,768 tokens, flash attention, four sequences on a unified cache and four outputs (llama-server with no
  ``-np``).

Nothing is computed here.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from llama_log import LINES as LOG  # noqa: E402
from llama_log import capture  # noqa: E402

# (n_ctx, flash attention, n_outputs_max, n_seq_max): n_seq_max > 1 on a unified cache, as llama-server's slots
CONTEXTS = [
    (4096, True, 0, 1),
    (4096, True, 1, 1),
    (32768, True, 1, 1),
    (4096, False, 1, 1),
    (4096, True, 4, 4),
    (32768, True, 4, 4),
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("models", help="archs.py models, comma-separated")
    ap.add_argument("--out", required=True, help="append JSON rows (llamacpp_outputs.jsonl) here")
    ap.add_argument("--gguf-py", default=None)
    ap.add_argument("--workdir", default=tempfile.gettempdir())
    a = ap.parse_args()
    if a.gguf_py:
        sys.path.insert(0, a.gguf_py)
    import gen_gguf  # type: ignore[import-not-found]
    import llama_cpp as L  # type: ignore[import-not-found]

    L.llama_log_set(capture, ctypes.c_void_p(0))
    L.llama_backend_init()
    with open(a.out, "a", encoding="utf-8") as out:
        for name in a.models.split(","):
            path = os.path.join(a.workdir, f"outputs-{name}-F16.gguf")
            gen_gguf.write_gguf(name, path)
            mparams = L.llama_model_default_params()
            mparams.n_gpu_layers = 0
            model = L.llama_model_load_from_file(path.encode(), mparams)
            assert model, f"{name} did not load"
            for n_ctx, flash_attn, n_outputs_max, n_seq in CONTEXTS:
                LOG.clear()
                cp = L.llama_context_default_params()
                cp.n_ctx, cp.n_batch, cp.n_ubatch, cp.n_seq_max = n_ctx, 2048, 512, n_seq
                cp.n_threads = cp.n_threads_batch = 2
                cp.flash_attn_type = L.LLAMA_FLASH_ATTN_TYPE_ENABLED if flash_attn else L.LLAMA_FLASH_ATTN_TYPE_DISABLED
                cp.n_outputs_max = n_outputs_max
                cp.kv_unified = n_seq > 1
                cp.no_perf = True
                ctx = L.llama_init_from_model(model, cp)
                text = "".join(LOG)
                buffers = [float(x) for x in re.findall(r"CPU compute buffer size =\s+([\d.]+) MiB", text)]
                row = {
                    "arch_model": name,
                    "n_ctx": n_ctx,
                    "flash_attn": flash_attn,
                    "n_outputs_max": n_outputs_max,
                    "n_seq": n_seq,
                    "kv_unified": n_seq > 1,
                    "n_batch": 2048,
                    "n_ubatch": 512,
                    "type_k": "f16",
                    "type_v": "f16",
                    "context_ok": bool(ctx),
                    "compute_buffer_mib": buffers[0] if buffers else None,
                    "log_excerpt": [line.rstrip() for line in LOG if re.search(
                        r"n_outputs_max|compute buffer size|n_ctx  |flash_attn|kv_unified|n_seq_max", line)],
                    "backend": "CPU (llama-cpp-python CPU build, n_gpu_layers=0)",
                    "llama_cpp_python_version": L.__version__,
                    "llama_cpp_commit": "0c1e57098",
                }  # fmt: skip
                print(name, n_ctx, flash_attn, n_outputs_max, n_seq, row["compute_buffer_mib"], flush=True)
                out.write(json.dumps(row) + "\n")
                out.flush()
                if ctx:
                    L.llama_free(ctx)
            L.llama_model_free(model)
            os.remove(path)


if __name__ == "__main__":
    main()
