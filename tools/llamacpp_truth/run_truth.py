#!/usr/bin/env python3
"""Driver: generate synthetic-weight GGUFs of real architectures, quantize them with
llama.cpp's quantizer, load them with llama.cpp and record the buffer sizes
llama.cpp logs.  Appends one JSON object per measurement to --out (default:
llamacpp_truth.jsonl in the current directory).

usage (with a venv holding llama-cpp-python 0.3.36, gguf and numpy; see README.md):
  VENV/bin/python run_truth.py Qwen2.5-0.5B Llama-3.2-1B ... --out rows.jsonl
options:
  --quants Q8_0,Q6_K,...   quant types (default: all eight)
  --sweep-quant Q4_K_M     quant on which the full n_ctx/KV-type/flash-attn sweep runs
  --max-ctx 32768          largest n_ctx in the sweep
  --sweep-ctx 2048,8192,32768   n_ctx values of the sweep (capped at n_ctx_train)
  --no-extras              sweep without the n_seq=4 / n_ubatch=2048 / swa_full extras
  --repack-check Q4_0      quant also loaded with use_extra_bufts=1 ("none" to skip)
  --workdir DIR            scratch dir for the GGUF files (default: $TMPDIR/llamacpp_truth)
  --out FILE               JSONL to append to (default ./llamacpp_truth.jsonl)
  --plan v1|wide           v1: the original sweep; wide: n_ctx 4096/32768 x f16 FA off/on x q8_0, n_seq 1/2/4
  --gguf-py DIR            llama.cpp's vendored gguf-py (needed for the newest architectures)
  --keep                   keep the quantized files
  quant "F16" means: measure the generated F16 file itself (no quantizer)
"""

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from archs import ARCHS, model_config, row_config  # noqa: E402

PY = sys.executable
OUT = Path.cwd() / "llamacpp_truth.jsonl"
# llama.cpp commit vendored in llama-cpp-python 0.3.36
# (its CHANGELOG: "update llama.cpp to ggml-org/llama.cpp@0c1e57098")
LLAMA_CPP_COMMIT = {"0.3.36": "0c1e57098"}
QUANTS = ["Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q4_0", "Q3_K_M", "Q2_K", "IQ4_XS"]


def lcp_version():
    import llama_cpp

    return llama_cpp.__version__


def f(x):
    return float(x)


def parse_load_log(log):
    d = {"weights_buffers_mib": {}}
    for m in re.finditer(r"load_tensors:\s+(\S+) model buffer size =\s+([\d.]+) MiB", log):
        d["weights_buffers_mib"][m.group(1)] = d["weights_buffers_mib"].get(m.group(1), 0.0) + f(m.group(2))
    m = re.search(r"print_info: file size\s+=\s+([\d.]+) (MiB|GiB) \(([\d.]+) BPW\)", log)
    if m:
        d["file_size_log"] = m.group(0).strip()
        d["bpw_log"] = f(m.group(3))
    _found(d, "file_type_log", r"print_info: file type\s+=\s+(.+)", log, str.strip)
    _found(d, "model_params_log", r"print_info: model params\s+=\s+(.+)", log, str.strip)
    _found(d, "n_swa_log", r"print_info: n_swa\s+=\s+(\d+)", log, int)
    d["load_excerpt"] = _excerpt(
        log,
        r"model buffer size|file size|file type|model params|n_swa |n_swa_pattern|is_swa|n_ctx_train|n_embd |"
        r"n_layer |n_head|n_embd_head|n_embd_k_gqa|n_embd_v_gqa|n_ff |n_expert|n_vocab|- type |repack|REPACK|"
        r"offload|WARN|warn",
    )
    return d


def _found(d, key, pattern, log, convert):
    """d[key] = convert(the pattern's first group) where the log has it"""
    m = re.search(pattern, log)
    if m:
        d[key] = convert(m.group(1))


def _excerpt(log, pattern, limit=60):
    """the log's first ``limit`` lines that match ``pattern``"""
    return [line for line in log.splitlines() if re.search(pattern, line)][:limit]


def parse_ctx_log(log):
    d = {}
    kv = [f(m.group(2)) for m in re.finditer(r"llama_kv_cache(?:_\w+)?:\s+(\S+) KV buffer size =\s+([\d.]+) MiB", log)]
    d["kv_buffers_mib"] = kv
    d["kv_buffer_mib"] = round(sum(kv), 4) if kv else None
    d["kv_size_lines"] = [
        line.strip() for line in log.splitlines() if re.search(r"llama_kv_cache(?:_\w+)?: size =", line)
    ]
    # structured view of every KV cache llama.cpp created (ISWA models: non-SWA then SWA cache)
    caches = []
    role = None
    for line in log.splitlines():
        m = re.search(r"creating\s+(non-SWA|SWA) KV cache, size = (\d+) cells", line)
        if m:
            role = "swa" if m.group(1) == "SWA" else "non_swa"
            continue
        # DeepSeek V4 (llama_kv_cache_dsv4): the compressed caches and the lightning indexer's keys
        m = re.search(r"creating DSV4 (CSA compressed|HCA compressed|lightning-indexer) KV cache", line)
        if m:
            role = {"CSA compressed": "dsv4_csa", "HCA compressed": "dsv4_hca", "lightning-indexer": "dsv4_lid"}[
                m.group(1)
            ]
            continue
        m = re.search(
            r"llama_kv_cache(?:_\w+)?: size =\s*([\d.]+) MiB \(\s*(\d+) cells,\s*(\d+) layers,\s*(\d+)/(\d+) seqs\), "
            r"K \((\w+)\):\s*([\d.]+) MiB, V \((\w+)\):\s*([\d.]+) MiB",
            line,
        )
        if m:
            caches.append(
                {
                    "role": role or "full",
                    "mib": f(m.group(1)),
                    "cells": int(m.group(2)),
                    "layers": int(m.group(3)),
                    "n_seq_max": int(m.group(4)),
                    "n_stream": int(m.group(5)),
                    "type_k": m.group(6),
                    "k_mib": f(m.group(7)),
                    "type_v": m.group(8),
                    "v_mib": f(m.group(9)),
                }
            )
            role = None
    d["kv_caches"] = caches
    # recurrent state (Mamba/Mamba2/GatedDeltaNet/short-conv layers): llama_memory_recurrent
    rs = [f(m.group(2)) for m in re.finditer(r"llama_memory_recurrent:\s+(\S+) RS buffer size =\s+([\d.]+) MiB", log)]
    d["recurrent_buffers_mib"] = rs
    d["recurrent_buffer_mib"] = round(sum(rs), 4) if rs else None
    d["recurrent_size_lines"] = [
        line.strip() for line in log.splitlines() if re.search(r"llama_memory_recurrent: size =", line)
    ]
    rcs = []
    for line in d["recurrent_size_lines"]:
        m = re.search(
            r"size =\s*([\d.]+) MiB \(\s*(\d+) cells,\s*(\d+) layers,\s*(\d+) seqs\s+(\d+) rs_seq\), "
            r"R \((\w+)\):\s*([\d.]+) MiB, "
            r"S \((\w+)\):\s*([\d.]+) MiB(?:, P \((\w+)\):\s*([\d.]+) MiB)?",
            line,
        )
        if m:
            rcs.append(
                {
                    "mib": f(m.group(1)),
                    "cells": int(m.group(2)),
                    "layers": int(m.group(3)),
                    "n_seq_max": int(m.group(4)),
                    "n_rs_seq": int(m.group(5)),
                    "type_r": m.group(6),
                    "r_mib": f(m.group(7)),
                    "type_s": m.group(8),
                    "s_mib": f(m.group(9)),
                    "p_mib": f(m.group(11)) if m.group(11) else 0.0,
                }
            )
    d["recurrent_caches"] = rcs
    # DeepSeek V4's compressor state (llama_dsv4_comp_state): one f32 buffer per compressor kind
    st = {}
    for m in re.finditer(r"llama_dsv4_comp_state:\s+\S+ DSV4 (\w+) state buffer size =\s+([\d.]+) MiB", log):
        st[m.group(1)] = st.get(m.group(1), 0.0) + f(m.group(2))
    d["dsv4_state_buffers_mib"] = st
    d["dsv4_state_lines"] = [
        line.strip() for line in log.splitlines() if re.search(r"llama_dsv4_comp_state: \w+ ratio =", line)
    ]
    comp = {}
    for m in re.finditer(r"\w+:\s+(\S+) compute buffer size =\s+([\d.]+) MiB", log):
        comp[m.group(1)] = comp.get(m.group(1), 0.0) + f(m.group(2))
    d["compute_buffers_mib"] = comp
    d["compute_buffer_mib"] = round(sum(comp.values()), 4) if comp else None
    outb = {}
    for m in re.finditer(r"llama_context:\s+(\S+)\s+output buffer size =\s+([\d.]+) MiB", log):
        outb[m.group(1)] = f(m.group(2))
    d["output_buffer_mib"] = round(sum(outb.values()), 4) if outb else None
    for key in [
        "n_ctx",
        "n_ctx_seq",
        "n_ctx_per_seq",
        "n_batch",
        "n_ubatch",
        "flash_attn",
        "kv_unified",
        "n_seq_max",
        "causal_attn",
        "n_outputs_max",
    ]:
        m = re.search(rf"llama_context: {key}\s+=\s+(\S+)", log)
        if m:
            d[key + "_log"] = m.group(1)
    _found(d, "graph_nodes", r"graph nodes\s+=\s+(\d+)", log, int)
    _found(d, "graph_splits", r"graph splits\s+=\s+(\d+)", log, int)
    d["ctx_excerpt"] = _excerpt(
        log,
        r"n_ctx|n_batch|n_ubatch|flash_attn|kv_unified|n_seq|KV buffer|RS buffer|state buffer|"
        r"kv_cache(_iswa|_dsv4)?: (size|creating)|memory_recurrent: size|memory_hybrid|compute buffer|"
        r"output buffer|graph nodes|graph splits|swa|SWA|error|failed|warn|WARN",
    )
    return d


def gguf_tensor_facts(path):
    """Per-role tensor byte counts and type histogram, read from the quantized file."""
    import gguf

    r = gguf.GGUFReader(path)
    hist = {}
    total = 0
    roles = {}
    for t in r.tensors:
        tn = t.tensor_type.name
        nb = int(t.n_bytes)
        total += nb
        hist.setdefault(tn, [0, 0])
        hist[tn][0] += 1
        hist[tn][1] += nb
        if t.name in ("token_embd.weight", "output.weight"):
            roles[t.name] = {"type": tn, "bytes": nb}
    data_offset = int(r.data_offset)
    return {
        "tensor_bytes_total": total,
        "tensor_types": {k: {"count": v[0], "bytes": v[1]} for k, v in hist.items()},
        "roles": roles,
        "data_offset_bytes": data_offset,
        "n_tensors": len(r.tensors),
    }


def gguf_ctx_train(path):
    import gguf

    r = gguf.GGUFReader(path)
    arch = bytes(r.fields["general.architecture"].parts[-1]).decode()
    fld = r.fields.get(f"{arch}.context_length")
    return int(fld.parts[-1][0]) if fld is not None else None


def run_json_lines(cmd, timeout):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    out = []
    for line in p.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            with contextlib.suppress(json.JSONDecodeError):
                out.append(json.loads(line))
    return p.returncode, out, p.stderr[-3000:]


def sweep_configs(ctx_train, max_ctx, arch, ctx_list=(2048, 8192, 32768), extras=True):
    ctxs = [c for c in ctx_list if c <= min(ctx_train, max_ctx)]
    if (
        ctx_train < max(ctx_list)
        and ctx_train <= max_ctx
        and ctx_train not in ctxs
        and (ctx_train < 8192 or not extras)
    ):
        ctxs.append(ctx_train)
    cfgs = []
    for n in ctxs:
        cfgs.append(dict(n_ctx=n, type_k="f16", type_v="f16", flash_attn=False))
        cfgs.append(dict(n_ctx=n, type_k="f16", type_v="f16", flash_attn=True))
        cfgs.append(dict(n_ctx=n, type_k="q8_0", type_v="f16", flash_attn=False))
        cfgs.append(dict(n_ctx=n, type_k="q8_0", type_v="q8_0", flash_attn=True))
        cfgs.append(dict(n_ctx=n, type_k="q4_0", type_v="q4_0", flash_attn=True))
    if not extras or not ctxs:
        return cfgs
    mid = 8192 if 8192 in ctxs else ctxs[-1]
    cfgs.append(dict(n_ctx=mid, type_k="f16", type_v="f16", flash_attn=True, n_seq=4, kv_unified=False))
    cfgs.append(dict(n_ctx=mid, type_k="f16", type_v="f16", flash_attn=True, n_seq=4, kv_unified=True))
    cfgs.append(dict(n_ctx=mid, type_k="f16", type_v="f16", flash_attn=True, n_ubatch=2048, n_batch=2048))
    if arch in ("gemma2", "gemma3"):
        cfgs.append(dict(n_ctx=mid, type_k="f16", type_v="f16", flash_attn=True, swa_full=True))
        cfgs.append(dict(n_ctx=mid, type_k="f16", type_v="f16", flash_attn=False, swa_full=True))
    return cfgs


def plan_wide_sweep(ctx_train, arch):
    """wide plan (Q4_K_M): n_ctx 4096/32768 (capped at n_ctx_train) x {f16 FA off, f16 FA on, q8_0/q8_0 FA on},
    n_seq=4 with kv_unified false/true at each n_ctx, one n_seq=2 row, swa_full for sliding-window archs."""
    ctxs = [n for n in (4096, 32768) if n <= ctx_train] or [ctx_train]
    cfgs = []
    for n in ctxs:
        cfgs.append(dict(n_ctx=n, type_k="f16", type_v="f16", flash_attn=False))
        cfgs.append(dict(n_ctx=n, type_k="f16", type_v="f16", flash_attn=True))
        cfgs.append(dict(n_ctx=n, type_k="q8_0", type_v="q8_0", flash_attn=True))
        cfgs.append(dict(n_ctx=n, type_k="f16", type_v="f16", flash_attn=True, n_seq=4, kv_unified=False))
        cfgs.append(dict(n_ctx=n, type_k="f16", type_v="f16", flash_attn=True, n_seq=4, kv_unified=True))
    mid = min(16384, ctx_train)
    cfgs.append(dict(n_ctx=mid, type_k="f16", type_v="f16", flash_attn=True, n_seq=2, kv_unified=False))
    if arch in SWA_ARCHS:
        cfgs.append(dict(n_ctx=ctxs[-1], type_k="f16", type_v="f16", flash_attn=True, swa_full=True))
        cfgs.append(
            dict(n_ctx=ctxs[-1], type_k="f16", type_v="f16", flash_attn=True, n_seq=4, kv_unified=False, swa_full=True)
        )
    return cfgs


def plan_wide_base(ctx_train):
    n = min(4096, ctx_train)
    return [
        dict(n_ctx=n, type_k="f16", type_v="f16", flash_attn=False),
        dict(n_ctx=n, type_k="f16", type_v="f16", flash_attn=True),
    ]


SWA_ARCHS = ("gemma2", "gemma3", "gemma4", "gpt-oss", "cohere2", "exaone4", "olmo2", "deepseek4")


def base_configs(ctx_train):
    n = 8192 if ctx_train >= 8192 else ctx_train
    return [
        dict(n_ctx=n, type_k="f16", type_v="f16", flash_attn=False),
        dict(n_ctx=n, type_k="f16", type_v="f16", flash_attn=True),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="+")
    ap.add_argument("--quants", default=",".join(QUANTS))
    ap.add_argument("--sweep-quant", default="Q4_K_M")
    ap.add_argument("--max-ctx", type=int, default=32768)
    ap.add_argument(
        "--sweep-ctx", default="2048,8192,32768", help="n_ctx values of the sweep (capped at n_ctx_train and --max-ctx)"
    )
    ap.add_argument("--no-extras", action="store_true", help="sweep without the n_seq/n_ubatch/swa_full extras")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "llamacpp_truth"))
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--out", default=str(OUT), help="JSONL output (default ./llamacpp_truth.jsonl)")
    ap.add_argument("--repack-check", default="Q4_0", help="also load this quant with use_extra_bufts=1 (CPU repack)")
    ap.add_argument(
        "--plan",
        default="v1",
        choices=["v1", "wide"],
        help="v1: the original sweep; wide: n_ctx 4096/32768 x f16 FA off/on x q8_0, n_seq 1/2/4, unified on/off",
    )
    ap.add_argument(
        "--gguf-py",
        default=os.environ.get("LLAMACPP_GGUF_PY"),
        help="gguf-py directory to use instead of the installed gguf (e.g. llama.cpp's vendored gguf-py)",
    )
    a = ap.parse_args()
    wd = Path(a.workdir)
    wd.mkdir(parents=True, exist_ok=True)
    out_path = Path(a.out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    ver = lcp_version()
    quants = a.quants.split(",")
    if a.gguf_py:
        os.environ["PYTHONPATH"] = a.gguf_py + os.pathsep + os.environ.get("PYTHONPATH", "")
        sys.path.insert(0, a.gguf_py)
    from gen_gguf import writer_for  # imports gguf: after --gguf-py

    for name in a.models:
        c = model_config(name)
        writer = writer_for(c)[0]  # which writer made the file (recorded in every row)
        ctx_train = c.get("max_position_embeddings", 0)
        src = wd / f"{name}-F16.gguf"
        t0 = time.time()
        if not src.exists():
            subprocess.run([PY, str(HERE / "gen_gguf.py"), name, str(src)], check=True, cwd=str(HERE))
        print(f"[{name}] generated F16 in {time.time() - t0:.1f}s", flush=True)
        for q in quants:
            t1 = time.time()
            if q == "F16":
                # the generated (unquantized) file itself; not produced by llama.cpp's quantizer
                dst = src
                qlines = ["(F16 source written by gen_gguf.py, not quantized)"]
            else:
                dst = wd / f"{name}-{q}.gguf"
                rc, res, err = run_json_lines(
                    [PY, str(HERE / "quantize_worker.py"), str(src), str(dst), q, "2"], timeout=3600
                )
                qlog = res[0]["log"] if res else ""
                if not res or res[0]["rc"] != 0 or not dst.exists():
                    print(f"[{name}] quantize {q} FAILED rc={rc} {err[-500:]} {qlog[-500:]}", flush=True)
                    continue
                qlines = [
                    line.strip()
                    for line in qlog.splitlines()
                    if re.search(r"model size|quant size|fallback|WARNING|llama_model_quantize_impl: model size", line)
                ]
            tq = time.time() - t1
            file_bytes = dst.stat().st_size
            facts = gguf_tensor_facts(str(dst))
            ctx_train = (
                gguf_ctx_train(str(dst)) or ctx_train
            )  # n_ctx_train as written in the GGUF (e.g. 2**20 for NoPE Granite)
            if a.plan == "wide":
                cfgs = plan_wide_sweep(ctx_train, c["llama_arch"]) if q == a.sweep_quant else plan_wide_base(ctx_train)
            else:
                cfgs = (
                    sweep_configs(
                        ctx_train,
                        a.max_ctx,
                        c["llama_arch"],
                        tuple(int(x) for x in a.sweep_ctx.split(",")),
                        not a.no_extras,
                    )
                    if q == a.sweep_quant
                    else base_configs(ctx_train)
                )
            runs = [(0, cfgs)]
            if q == a.repack_check:
                runs.append((1, base_configs(ctx_train)[:1]))
            for extra, cf in runs:
                t2 = time.time()
                rc, res, err = run_json_lines(
                    [PY, str(HERE / "measure_worker.py"), str(dst), json.dumps(cf), str(extra)], timeout=1800
                )
                if not res or "load_log" not in res[0]:
                    print(f"[{name}] load {q} FAILED rc={rc} {err[-800:]} {json.dumps(res)[:800]}", flush=True)
                    continue
                ld = parse_load_log(res[0]["load_log"])
                n_ok = 0
                with open(out_path, "a") as fo:
                    for r in res[1:]:
                        cfg = r["cfg"]
                        cd = parse_ctx_log(r["ctx_log"])
                        row = {
                            "arch_model": name,
                            "llama_arch": c["llama_arch"],
                            "writer": writer,
                            "config": row_config(ARCHS[name]),
                            "quant": q,
                            "file_bytes": file_bytes,
                            "model_size_log": " | ".join(qlines),
                            "file_size_log": ld.get("file_size_log"),
                            "bpw_log": ld.get("bpw_log"),
                            "file_type_log": ld.get("file_type_log"),
                            "model_params_log": ld.get("model_params_log"),
                            "model_size_api_bytes": res[0].get("model_size_api"),
                            "model_n_params_api": res[0].get("model_n_params_api"),
                            "gguf_tensor_facts": facts,
                            "n_ctx": cfg["n_ctx"],
                            "n_ctx_api": r.get("n_ctx_api"),
                            "n_ctx_seq_api": r.get("n_ctx_seq_api"),
                            "type_k": cfg.get("type_k", "f16"),
                            "type_v": cfg.get("type_v", "f16"),
                            "flash_attn": bool(cfg.get("flash_attn")),
                            "n_seq": cfg.get("n_seq", 1),
                            "kv_unified": bool(cfg.get("kv_unified", False)),
                            "swa_full": bool(cfg.get("swa_full", False)),
                            "n_batch": r.get("n_batch_api", cfg.get("n_batch", 2048)),
                            "n_ubatch": r.get("n_ubatch_api", cfg.get("n_ubatch", 512)),
                            "use_extra_bufts": bool(extra),
                            "context_ok": r["ok"],
                            "weights_buffers_mib": ld["weights_buffers_mib"],
                            "kv_buffer_mib": cd["kv_buffer_mib"],
                            "kv_buffers_mib": cd["kv_buffers_mib"],
                            "kv_size_lines": cd["kv_size_lines"],
                            "kv_caches": cd["kv_caches"],
                            "recurrent_buffer_mib": cd["recurrent_buffer_mib"],
                            "recurrent_buffers_mib": cd["recurrent_buffers_mib"],
                            "recurrent_size_lines": cd["recurrent_size_lines"],
                            "recurrent_caches": cd["recurrent_caches"],
                            **(
                                {
                                    "dsv4_state_buffers_mib": cd["dsv4_state_buffers_mib"],
                                    "dsv4_state_lines": cd["dsv4_state_lines"],
                                }
                                if cd["dsv4_state_buffers_mib"] or cd["dsv4_state_lines"]
                                else {}
                            ),
                            "n_ctx_train_gguf": ctx_train,
                            "plan": a.plan,
                            "compute_buffer_mib": cd["compute_buffer_mib"],
                            "compute_buffers_mib": cd["compute_buffers_mib"],
                            "output_buffer_mib": cd["output_buffer_mib"],
                            "graph_nodes": cd.get("graph_nodes"),
                            "graph_splits": cd.get("graph_splits"),
                            "ctx_log_fields": {k: v for k, v in cd.items() if k.endswith("_log")},
                            "n_swa_log": ld.get("n_swa_log"),
                            "backend": "CPU (llama-cpp-python CPU build, n_gpu_layers=0, use_mmap=1)",
                            "llama_cpp_python_version": ver,
                            "llama_cpp_commit": LLAMA_CPP_COMMIT.get(ver),
                            "log_excerpt": "\n".join(qlines + ld["load_excerpt"] + cd["ctx_excerpt"]),
                        }
                        fo.write(json.dumps(row) + "\n")
                        n_ok += 1
                print(
                    f"[{name}] {q} quant {tq:.1f}s, {n_ok} ctx rows (extra_bufts={extra}) in {time.time() - t2:.1f}s; "
                    f"file {file_bytes} B; weights {ld['weights_buffers_mib']}",
                    flush=True,
                )
            if not a.keep and dst != src:
                dst.unlink()
        if not a.keep:
            src.unlink()
        print(f"[{name}] done in {time.time() - t0:.1f}s", flush=True)


if __name__ == "__main__":
    main()
