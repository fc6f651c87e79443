#!/usr/bin/env python3
"""Measure a draft model's context as llama-server creates it for speculative decoding, with llama.cpp itself.

usage (from tools/llamacpp_truth, with the truth venv's python and --gguf-py as for run_truth.py):
  measure_draft.py TARGET DRAFT --quant Q4_K_M --configs CONFIGS_JSON --out rows.jsonl [--workdir DIR]
  measure_draft.py TARGET --mtp --quant Q4_K_M --configs CONFIGS_JSON --out rows.jsonl   (the model's own MTP head)

With --mtp the target itself is quantized and loaded with ``load_mtp`` (common.cpp: set when --spec-type draft-mtp
is asked), its context gets ``n_rs_seq = --spec-draft-n-max`` (3: the recurrent-state snapshots rollback needs,
common.h need_n_rs_seq) and the MTP context is ``ctx_type = LLAMA_CONTEXT_TYPE_MTP`` on the same model with
``ctx_other`` the target context (common/speculative.cpp common_speculative_init_result).

TARGET and DRAFT are archs.py models. The target is loaded from its generated F16 file (sparse: no disk blocks, and a
context never reads a weight) and the draft is quantized with llama.cpp's quantizer. For each configuration the
target's context is created first, then the draft's with the parameters llama.cpp 0c1e57098 gives it
(common/speculative.cpp common_base_params_to_speculative and common_speculative_init_result): the target's
n_seq_max, kv_unified, flash attention, n_batch and n_ubatch, its own cache types (-ctkd/-ctvd, default f16) and
``cparams.n_ctx = llama_n_ctx(ctx_tgt)``. Each row holds the draft context's buffers as llama.cpp logged them (the
same parser as run_truth.py) and the log lines themselves. Nothing is computed here.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY = sys.executable

# What both workers share: llama.cpp's log captured, and a context's parameters as measure_worker.py sets them.
WORKER_COMMON = r'''
import contextlib, ctypes, json, sys
import llama_cpp as L
GGML = {"f32": 0, "f16": 1, "q4_0": 2, "q8_0": 8, "bf16": 30}
LOG = []
@L.llama_log_callback
def _cb(level, text, user_data):
    if level != 1:
        with contextlib.suppress(Exception):
            LOG.append(text.decode("utf-8", "replace"))
def take():
    s = "".join(LOG); LOG.clear(); return s
def params(cfg, n_ctx, type_k, type_v):
    cp = L.llama_context_default_params()
    cp.n_ctx = n_ctx
    cp.n_batch = cfg.get("n_batch", 2048)
    cp.n_ubatch = cfg.get("n_ubatch", 512)
    cp.n_seq_max = cfg.get("n_seq", 1)
    cp.n_threads = cp.n_threads_batch = 2
    cp.type_k, cp.type_v = GGML[type_k], GGML[type_v]
    cp.flash_attn_type = L.LLAMA_FLASH_ATTN_TYPE_ENABLED if cfg.get("flash_attn") else L.LLAMA_FLASH_ATTN_TYPE_DISABLED
    cp.offload_kqv = True
    cp.kv_unified = bool(cfg.get("kv_unified", False))
    cp.no_perf = True
    return cp
'''

WORKER = WORKER_COMMON + r'''
L.llama_log_set(_cb, ctypes.c_void_p(0)); L.llama_backend_init()
mp = L.llama_model_default_params(); mp.n_gpu_layers = 0; mp.use_mmap = True; mp.use_extra_bufts = False
target = L.llama_model_load_from_file(sys.argv[1].encode(), mp); take()
draft = L.llama_model_load_from_file(sys.argv[2].encode(), mp)
load = take()
print(json.dumps({"draft_load_log": load, "draft_model_size_api": int(L.llama_model_size(draft)),
                  "draft_n_params_api": int(L.llama_model_n_params(draft))}), flush=True)
for cfg in json.loads(sys.argv[3]):
    types = (cfg.get("type_k", "f16"), cfg.get("type_v", "f16"))
    ctx_tgt = L.llama_init_from_model(target, params(cfg, cfg["n_ctx"], *types))
    target_log = take()
    n_ctx_tgt = int(L.llama_n_ctx(ctx_tgt))
    # common_speculative_init_result: cparams.n_ctx = llama_n_ctx(ctx_tgt); -ctkd/-ctvd default f16 (common.h)
    ctx_dft = L.llama_init_from_model(draft, params(cfg, n_ctx_tgt, cfg.get("draft_type_k", "f16"),
                                                    cfg.get("draft_type_v", "f16")))
    draft_log = take()
    print(json.dumps({"cfg": cfg, "target_n_ctx_api": n_ctx_tgt, "draft_n_ctx_api": int(L.llama_n_ctx(ctx_dft)),
                      "ok": bool(ctx_dft), "target_log": target_log, "draft_log": draft_log}), flush=True)
    L.llama_free(ctx_dft); L.llama_free(ctx_tgt)
'''


MTP_WORKER = WORKER_COMMON + r'''
L.llama_log_set(_cb, ctypes.c_void_p(0)); L.llama_backend_init()
out = {}
for load_mtp in (False, True):
    mp = L.llama_model_default_params(); mp.n_gpu_layers = 0; mp.use_mmap = True; mp.use_extra_bufts = False
    mp.load_mtp = load_mtp
    model = L.llama_model_load_from_file(sys.argv[1].encode(), mp)
    out[load_mtp] = (model, take(), int(L.llama_model_size(model)))
model, load_log, size = out[True]
buffers = lambda log: [x.strip() for x in log.splitlines() if "model buffer size" in x or "unused tensor" in x]
print(json.dumps({"model_size_api_without_mtp": out[False][2], "model_size_api_with_mtp": size,
                  "model_buffers_without_mtp": buffers(out[False][1]), "model_buffers_with_mtp": buffers(load_log)}),
      flush=True)
for cfg in json.loads(sys.argv[2]):
    cp = params(cfg, cfg["n_ctx"], "f16", "f16"); cp.n_rs_seq = cfg.get("n_rs_seq", 3)
    ctx_tgt = L.llama_init_from_model(model, cp)
    target_log = take()
    n_ctx_tgt = int(L.llama_n_ctx(ctx_tgt))
    cm = params(cfg, n_ctx_tgt, "f16", "f16")
    cm.ctx_type = L.LLAMA_CONTEXT_TYPE_MTP; cm.n_rs_seq = 0; cm.ctx_other = ctx_tgt
    ctx_mtp = L.llama_init_from_model(model, cm)
    mtp_log = take()
    print(json.dumps({"cfg": cfg, "target_n_ctx_api": n_ctx_tgt, "ok": bool(ctx_mtp), "target_log": target_log,
                      "mtp_log": mtp_log}), flush=True)
    if ctx_mtp:
        L.llama_free(ctx_mtp)
    L.llama_free(ctx_tgt)
'''


# The lines a row keeps of the draft context's log (the rest is the model's metadata).
DRAFT_LOG_KEYS = ("n_ctx", "n_seq_max", "KV buffer", "kv_cache", "RS buffer", "llama_memory_recurrent",
                  "compute buffer", "flash_attn")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("target")
    ap.add_argument("draft", nargs="?", default="")
    ap.add_argument("--mtp", action="store_true", help="the target's own MTP head instead of a draft model")
    ap.add_argument("--quant", default="Q4_K_M")
    ap.add_argument("--configs", required=True, help="JSON list of context configurations, as measure_worker.py")
    ap.add_argument("--out", required=True)
    ap.add_argument("--gguf-py", default="")
    ap.add_argument("--workdir", default=str(Path(tempfile.gettempdir()) / "llamacpp_truth"))
    a = ap.parse_args()
    if a.gguf_py:
        sys.path.insert(0, a.gguf_py)
    from archs import ARCHS, row_config
    from run_truth import parse_ctx_log

    env_path = {"PYTHONPATH": a.gguf_py} if a.gguf_py else {}
    if a.mtp:
        _measure_mtp(a, env_path, ARCHS, row_config, parse_ctx_log)
        return
    wd = Path(a.workdir)
    wd.mkdir(parents=True, exist_ok=True)
    target_file = wd / f"{a.target}-F16.gguf"
    draft_src, draft_file = wd / f"{a.draft}-F16.gguf", wd / f"{a.draft}-{a.quant}.gguf"
    for name, path in ((a.target, target_file), (a.draft, draft_src)):
        if not path.exists():
            subprocess.run([PY, str(HERE / "gen_gguf.py"), name, str(path)], check=True, cwd=str(HERE),
                           env={**_env(), **env_path})  # fmt: skip
    if not draft_file.exists():
        subprocess.run([PY, str(HERE / "quantize_worker.py"), str(draft_src), str(draft_file), a.quant, "2"],
                       check=True, cwd=str(HERE), capture_output=True)  # fmt: skip
    done = subprocess.run([PY, "-c", WORKER, str(target_file), str(draft_file), a.configs], check=True,
                          capture_output=True, text=True, timeout=3600)  # fmt: skip
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    head, runs = lines[0], lines[1:]
    with open(a.out, "a", encoding="utf-8") as out:
        for run in runs:
            parsed = parse_ctx_log(run["draft_log"])
            row = {
                "target_model": a.target,
                "draft_model": a.draft,
                "draft_config": row_config(ARCHS[a.draft]),
                "draft_quant": a.quant,
                "draft_model_size_api_bytes": head["draft_model_size_api"],
                "draft_n_params_api": head["draft_n_params_api"],
                **{k: v for k, v in run["cfg"].items()},
                "target_n_ctx_api": run["target_n_ctx_api"],
                "draft_n_ctx_api": run["draft_n_ctx_api"],
                "draft_context_ok": run["ok"],
                "draft_kv_buffer_mib": parsed.get("kv_buffer_mib"),
                "draft_kv_caches": parsed.get("kv_caches"),
                "draft_recurrent_buffer_mib": parsed.get("recurrent_buffer_mib"),
                "draft_compute_buffer_mib": parsed.get("compute_buffer_mib"),
                "draft_log_excerpt": "\n".join(
                    line for line in run["draft_log"].splitlines() if any(key in line for key in DRAFT_LOG_KEYS)
                ),
                "llama_cpp_commit": "0c1e57098",
            }
            out.write(json.dumps(row) + "\n")
    print(f"{len(runs)} draft contexts measured: {a.target} + {a.draft} {a.quant}")


def _measure_mtp(a, env_path, archs, row_config, parse_ctx_log) -> None:  # type: ignore[no-untyped-def]
    """The target's own MTP head: the target context (with rollback snapshots) and the MTP context, both logged."""
    wd = Path(a.workdir)
    wd.mkdir(parents=True, exist_ok=True)
    src, dst = wd / f"{a.target}-F16.gguf", wd / f"{a.target}-{a.quant}.gguf"
    if not src.exists():
        subprocess.run([PY, str(HERE / "gen_gguf.py"), a.target, str(src)], check=True, cwd=str(HERE),
                       env={**_env(), **env_path})  # fmt: skip
    if a.quant != "F16" and not dst.exists():
        subprocess.run([PY, str(HERE / "quantize_worker.py"), str(src), str(dst), a.quant, "2"],
                       check=True, cwd=str(HERE), capture_output=True)  # fmt: skip
    model_file = src if a.quant == "F16" else dst
    done = subprocess.run([PY, "-c", MTP_WORKER, str(model_file), a.configs], check=True, capture_output=True,
                          text=True, timeout=3600)  # fmt: skip
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    head, runs = lines[0], lines[1:]
    keys = ("n_ctx", "n_seq_max", "n_rs_seq", "KV buffer", "kv_cache", "RS buffer", "llama_memory_recurrent",
            "compute buffer", "flash_attn", "MTP", "mtp")  # fmt: skip
    with open(a.out, "a", encoding="utf-8") as out:
        for run in runs:
            target, mtp = parse_ctx_log(run["target_log"]), parse_ctx_log(run["mtp_log"])
            row = {
                "target_model": a.target,
                "mtp": True,
                "config": row_config(archs[a.target]),
                "quant": a.quant,
                "model_size_api_without_mtp": head["model_size_api_without_mtp"],
                "model_size_api_with_mtp": head["model_size_api_with_mtp"],
                "model_buffers_without_mtp": head["model_buffers_without_mtp"],
                "model_buffers_with_mtp": head["model_buffers_with_mtp"],
                **run["cfg"],
                "target_n_ctx_api": run["target_n_ctx_api"],
                "mtp_context_ok": run["ok"],
                "target_kv_buffer_mib": target.get("kv_buffer_mib"),
                "target_recurrent_buffer_mib": target.get("recurrent_buffer_mib"),
                "mtp_kv_buffer_mib": mtp.get("kv_buffer_mib"),
                "mtp_kv_caches": mtp.get("kv_caches"),
                "mtp_recurrent_buffer_mib": mtp.get("recurrent_buffer_mib"),
                "mtp_compute_buffer_mib": mtp.get("compute_buffer_mib"),
                "target_log_excerpt": "\n".join(x for x in run["target_log"].splitlines() if any(k in x for k in keys)),
                "mtp_log_excerpt": "\n".join(x for x in run["mtp_log"].splitlines() if any(k in x for k in keys)),
                "llama_cpp_commit": "0c1e57098",
            }
            out.write(json.dumps(row) + "\n")
    print(f"{len(runs)} MTP contexts measured: {a.target} {a.quant}")


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)


if __name__ == "__main__":
    main()
