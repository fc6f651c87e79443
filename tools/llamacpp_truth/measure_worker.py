#!/usr/bin/env python3
"""Load one GGUF with llama.cpp (CPU, n_gpu_layers=0) and create one context per
requested configuration; capture llama.cpp's own log (via llama_log_set, which
routes both llama and ggml logging) and print one JSON line per context.

usage: measure_worker.py MODEL.gguf CONFIGS_JSON
  CONFIGS_JSON: list of {"n_ctx":..,"type_k":"f16","type_v":"f16","flash_attn":false,
                         "n_seq":1,"kv_unified":false,"swa_full":false,
                         "n_batch":2048,"n_ubatch":512}
Runs in its own process so that a llama.cpp abort cannot kill the driver.
"""

import contextlib
import ctypes
import json
import sys

import llama_cpp as L

GGML_TYPES = {"f32": 0, "f16": 1, "q4_0": 2, "q4_1": 3, "q5_0": 6, "q5_1": 7, "q8_0": 8, "bf16": 30}

LOG = []
_LAST = [1]


@L.llama_log_callback
def _cb(level, text, user_data):
    # ggml levels: 1 DEBUG, 2 INFO, 3 WARN, 4 ERROR, 5 CONT; drop DEBUG (and its continuations)
    if level == 5:
        level = _LAST[0]
    _LAST[0] = level
    if level == 1:
        return
    with contextlib.suppress(Exception):
        LOG.append(text.decode("utf-8", "replace"))


def take_log():
    s = "".join(LOG)
    LOG.clear()
    return s


def main():
    model_path = sys.argv[1]
    configs = json.loads(sys.argv[2])
    use_extra_bufts = bool(int(sys.argv[3])) if len(sys.argv) > 3 else False
    L.llama_log_set(_cb, ctypes.c_void_p(0))
    L.llama_backend_init()

    mp = L.llama_model_default_params()
    mp.n_gpu_layers = 0
    mp.use_mmap = True
    mp.use_mlock = False
    mp.use_extra_bufts = use_extra_bufts  # False: no CPU weight repacking (CPU_REPACK buffers)
    model = L.llama_model_load_from_file(model_path.encode(), mp)
    load_log = take_log()
    if not model:
        print(json.dumps({"error": "model load failed", "load_log": load_log}), flush=True)
        return
    print(
        json.dumps(
            {
                "load_log": load_log,
                "model_size_api": int(L.llama_model_size(model)),
                "model_n_params_api": int(L.llama_model_n_params(model)),
                "use_extra_bufts": use_extra_bufts,
            }
        ),
        flush=True,
    )

    for cfg in configs:
        cp = L.llama_context_default_params()
        cp.n_ctx = cfg["n_ctx"]
        cp.n_batch = cfg.get("n_batch", 2048)
        cp.n_ubatch = cfg.get("n_ubatch", 512)
        cp.n_seq_max = cfg.get("n_seq", 1)
        cp.n_threads = 2
        cp.n_threads_batch = 2
        cp.type_k = GGML_TYPES[cfg.get("type_k", "f16")]
        cp.type_v = GGML_TYPES[cfg.get("type_v", "f16")]
        cp.flash_attn_type = (
            L.LLAMA_FLASH_ATTN_TYPE_ENABLED if cfg.get("flash_attn") else L.LLAMA_FLASH_ATTN_TYPE_DISABLED
        )
        cp.offload_kqv = True
        cp.swa_full = bool(cfg.get("swa_full", False))
        cp.kv_unified = bool(cfg.get("kv_unified", False))
        cp.no_perf = True
        ctx = L.llama_init_from_model(model, cp)
        ctx_log = take_log()
        rec = {"cfg": cfg, "ctx_log": ctx_log, "ok": bool(ctx)}
        if ctx:
            rec["n_ctx_api"] = int(L.llama_n_ctx(ctx))
            rec["n_ctx_seq_api"] = int(L.llama_n_ctx_seq(ctx))
            rec["n_batch_api"] = int(L.llama_n_batch(ctx))
            rec["n_ubatch_api"] = int(L.llama_n_ubatch(ctx))
            rec["n_seq_max_api"] = int(L.llama_n_seq_max(ctx))
            L.llama_free(ctx)
            rec["free_log"] = take_log()
        print(json.dumps(rec), flush=True)

    L.llama_model_free(model)


if __name__ == "__main__":
    main()
