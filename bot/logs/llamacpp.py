"""llama.cpp's start-up log, as llama-server, llama-cli, llama-cpp-python, Ollama's runner, LM Studio and forks
(ik_llama.cpp) print it: the model's metadata (``print_info:``, older ``llm_load_print_meta:``), the layers and model
buffers (``load_tensors:`` / ``llm_load_tensors:``), the context (``llama_context:`` /
``llama_new_context_with_model:``), the KV cache (``llama_kv_cache:``, ``llama_kv_cache_unified:``,
``llama_kv_cache_init:``, ``KV self size``), the recurrent state (``llama_memory_recurrent:``), the compute buffers
(``sched_reserve:`` or the context's lines), the devices, and failed allocations
(``ggml_backend_cuda_buffer_type_alloc_buffer: allocating … MiB on device N: cudaMalloc failed: out of memory`` and
the line after it that says what it was for).

Lines are searched, not anchored: timestamps, process ids, log levels and Ollama's ``time=… msg=`` wrappers in front
are passed over.
"""

from __future__ import annotations

import re
from typing import Any

_META = re.compile(r"(?:print_info|llm_load_print_meta):\s*(?P<key>[\w.]+(?: [\w.]+)?)\s*=\s*(?P<value>.*?)\s*$")
_META_KEYS = {
    "file type": "file_type", "model ftype": "file_type", "file size": "file_size", "model size": "file_size",
    "model params": "params", "general.name": "general_name", "arch": "arch", "n_ctx_train": "n_ctx_train",
    "n_layer": "n_layer", "n_head": "n_head", "n_head_kv": "n_head_kv", "n_embd": "n_embd",
    "n_embd_head_k": "n_embd_head_k", "n_expert": "n_expert", "n_vocab": "n_vocab",
}  # fmt: skip
_INT_KEYS = frozenset(
    ("n_ctx_train", "n_layer", "n_head", "n_head_kv", "n_embd", "n_embd_head_k", "n_expert", "n_vocab")
)
_OFFLOADED = re.compile(r"offloaded (\d+)/(\d+) layers to GPU")
_MODEL_BUFFER = re.compile(
    r"(?:load_tensors|llm_load_tensors):\s+(?P<dev>\S+) (?:model )?buffer size\s*=\s*(?P<mib>[\d.]+) MiB"
)
_CONTEXT = re.compile(
    r"(?:llama_context|llama_new_context_with_model|llama_init_from_model):\s*"
    r"(?P<key>n_seq_max|n_ctx|n_batch|n_ubatch|n_outputs_max|flash_attn)\s*=\s*(?P<value>\S+)"
)
# llama_context prints kv_unified (0c1e57098: llama-context.cpp:315); the scheduler says when it keeps copies of the
# compute buffers for pipeline parallelism (several GPUs, every layer offloaded; GGML_SCHED_MAX_COPIES, default 4)
_UNIFIED = re.compile(r"(?:llama_context|llama_new_context_with_model):\s*kv_unified\s*=\s*(?P<value>true|false)")
_BUILD = re.compile(r"\bbuild(?::| =)\s*(?P<number>\d{3,6}) \((?P<commit>[0-9a-f]{7,12})\)")
# --override-tensor (-ot) placing a tensor: "tensor blk.3.ffn_up_exps.weight (...) buffer type overridden to CPU"
# (llama.cpp; ik_llama.cpp spells it "overriden")
_OVERRIDE = re.compile(r"[Tt]ensor \S+ .*?buffer type overrid+en to (?P<dev>\S+)")
_PIPELINE = re.compile(r"pipeline parallelism enabled \(n_copies=(?P<copies>\d+)\)")
_KV_BUFFER = re.compile(r"(?P<dev>\S+) KV buffer size\s*=\s*(?P<mib>[\d.]+) MiB")
_KV_TYPES = re.compile(r"type_k = '(?P<k>\w+)', type_v = '(?P<v>\w+)'")
_KV_SIZE = re.compile(
    r"(?:KV self size|llama_kv_cache\w*:\s+size)\s*=\s*(?P<total>[\d.]+) MiB"
    r".*?K \((?P<k>\w+)\):\s*(?P<kmib>[\d.]+) MiB,\s*V \((?P<v>\w+)\):\s*(?P<vmib>[\d.]+) MiB"
)
# ik_llama.cpp's MLA cache (-mla 2): one latent "c^KV" per token, counted as the K cache (llama.cpp's own MLA stores
# the latent as K and no V)
_MLA_SIZE = re.compile(r"KV self size\s*=\s*(?P<total>[\d.]+) MiB, c\^KV \((?P<k>\w+)\):\s*(?P<kmib>[\d.]+) MiB")
_RS_BUFFER = re.compile(r"(?P<dev>\S+) RS buffer size\s*=\s*(?P<mib>[\d.]+) MiB")
_OUTPUT_BUFFER = re.compile(r"(?P<dev>\S+)\s+output buffer size\s*=\s*(?P<mib>[\d.]+) MiB")
_COMPUTE_BUFFER = re.compile(r"(?P<dev>\S+) compute buffer size\s*=\s*(?P<mib>[\d.]+) MiB")
_DEVICE = re.compile(r"Device \d+: (?P<name>.+?), (?:compute capability|gfx)")
_USING_DEVICE = re.compile(r"using device (?P<dev>\S+) \((?P<name>.+?)\)(?: \([^)]*\))? - (?P<free>\d+) MiB free")
_ALLOC_FAILED = re.compile(r"allocating (?P<mib>[\d.]+) MiB on device (?P<dev>\d+): \w+ failed")
_FAILED_FOR = (
    (re.compile(r"kv_cache|KV cache|kv cache", re.IGNORECASE), "kv"),
    (re.compile(r"compute|graph|sched", re.IGNORECASE), "compute"),
    (re.compile(r"load_tensors|model buffer|unable to allocate \S+ buffer|load model", re.IGNORECASE), "model"),
)
_CUDA_OOM = re.compile(
    r"CUDA error: out of memory|cudaMalloc failed: out of memory|hipMalloc failed|ErrorOutOfDeviceMemory"
)


def looks_like(text: str) -> bool:
    return bool(re.search(r"print_info:|llm_load_|load_tensors:|llama_context:|llama_new_context_with_model|"
                          r"llama_kv_cache|ggml_backend_|llama_model_load", text))  # fmt: skip


def read(lines: list[str]) -> dict[str, Any]:
    """The fields of :class:`bot.logs.reading.LogReading` these lines give."""
    out: dict[str, Any] = {}
    model: dict[str, float] = {}
    kv: dict[str, float] = {}
    compute: dict[str, float] = {}
    output: dict[str, float] = {}
    recurrent: dict[str, float] = {}
    gpus: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    kv_total = kv_k = kv_v = 0.0
    kv_sized = False
    for i, line in enumerate(lines):
        if m := _META.search(line):
            key = _META_KEYS.get(m["key"].strip())
            if key in _INT_KEYS:
                if m["value"].isdigit():
                    out.setdefault(key, int(m["value"]))
            elif key:
                out.setdefault(key, m["value"])
        if m := _OFFLOADED.search(line):
            out["layers_on_gpu"], out["layers_total"] = int(m[1]), int(m[2])
        if m := _MODEL_BUFFER.search(line):  # a file in parts, or a large one mapped in pieces: one line each
            model[m["dev"]] = round(model.get(m["dev"], 0.0) + float(m["mib"]), 2)
        if m := _CONTEXT.search(line):
            value = m["value"]
            if m["key"] == "flash_attn":
                out["flash_attn"] = {"1": True, "enabled": True, "true": True, "0": False, "disabled": False,
                                     "false": False}.get(value.lower())  # fmt: skip
            elif value.isdigit():
                out["n_seq" if m["key"] == "n_seq_max" else m["key"]] = int(value)
        if m := _UNIFIED.search(line):
            out["kv_unified"] = m["value"] == "true"
        if "build" not in out and (m := _BUILD.search(line)):
            out["build"] = f"{m['number']} ({m['commit']})"
        if _OVERRIDE.search(line):
            out["tensor_overrides"] = out.get("tensor_overrides", 0) + 1
        if m := _PIPELINE.search(line):
            out["n_copies"] = int(m["copies"])
        if m := _KV_TYPES.search(line):
            out["type_k"], out["type_v"] = m["k"], m["v"]
        if m := _KV_BUFFER.search(line):
            kv[m["dev"]] = kv.get(m["dev"], 0.0) + float(m["mib"])
        if m := _KV_SIZE.search(line):  # one line per cache (a sliding-window model has two): summed
            kv_sized = True
            kv_total += float(m["total"])
            kv_k += float(m["kmib"])
            kv_v += float(m["vmib"])
            out.setdefault("type_k", m["k"])
            out.setdefault("type_v", m["v"])
        if m := _MLA_SIZE.search(line):
            kv_sized = True
            kv_total += float(m["total"])
            kv_k += float(m["kmib"])
            out.setdefault("type_k", m["k"])
        if m := _RS_BUFFER.search(line):
            recurrent[m["dev"]] = float(m["mib"])
        if m := _OUTPUT_BUFFER.search(line):
            output[m["dev"]] = float(m["mib"])
        if m := _COMPUTE_BUFFER.search(line):
            compute[m["dev"]] = float(m["mib"])
        if m := _DEVICE.search(line):
            gpus.append({"name": m["name"].strip()})
        if m := _USING_DEVICE.search(line):
            name = m["name"].strip()
            known = next((g for g in gpus if g["name"] == name and "free_mib" not in g), None)
            if known is None:
                gpus.append({"name": name, "free_mib": float(m["free"])})
            else:
                known["free_mib"] = float(m["free"])
        if m := _ALLOC_FAILED.search(line):
            after = " ".join(lines[i + 1 : i + 4])
            what = next((w for pattern, w in _FAILED_FOR if pattern.search(after)), "model")
            failures.append({"what": what, "device": f"device {m['dev']}", "mib": float(m["mib"])})
        elif _CUDA_OOM.search(line) and not any(f.get("mib") for f in failures):
            failures.append({"what": "cuda", "message": line.strip()[-200:]})
    if kv_sized:
        out |= {"kv_total_mib": round(kv_total, 2), "kv_k_mib": round(kv_k, 2), "kv_v_mib": round(kv_v, 2)}
    elif kv:
        out["kv_total_mib"] = round(sum(kv.values()), 2)
    out |= {"model_mib": model, "kv_mib": kv, "compute_mib": compute, "output_mib": output, "recurrent_mib": recurrent}
    out["gpus"] = tuple(gpus)
    out["failures"] = tuple(failures)
    return out
