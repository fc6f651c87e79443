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

from vramfit.bot.logs.scan import first, number, word_before

# Each pattern starts with its literal and is tried once, where that literal first occurs (bot.logs.scan.first); a
# device before a literal ("CUDA0 KV buffer size") is read by bot.logs.scan.word_before.
_META_PREFIXES = ("print_info:", "llm_load_print_meta:")
_META = re.compile(r"(?:print_info|llm_load_print_meta):[ \t]*(?P<key>[\w.]+(?: [\w.]+)?)[ \t]*=[ \t]*(?P<value>.*)")
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
_MODEL_BUFFER_AFTER = re.compile(r"(?:model )?buffer size[ \t]*=[ \t]*(?P<mib>[\d.]+) MiB")
_CONTEXT_PREFIXES = ("llama_context:", "llama_new_context_with_model:", "llama_init_from_model:")
_CONTEXT = re.compile(
    r"(?:llama_context|llama_new_context_with_model|llama_init_from_model):[ \t]*"
    r"(?P<key>n_seq_max|n_ctx|n_batch|n_ubatch|n_outputs_max|flash_attn|kv_unified)[ \t]*=[ \t]*(?P<value>\S+)"
)
# llama_context prints kv_unified (0c1e57098: llama-context.cpp:315); the scheduler says when it keeps copies of the
# compute buffers for pipeline parallelism (several GPUs, every layer offloaded; GGML_SCHED_MAX_COPIES, default 4)
_BUILD = re.compile(r"build(?::| =)[ \t]*(?P<number>\d{3,6}) \((?P<commit>[0-9a-f]{7,12})\)")
# --override-tensor (-ot) placing a tensor: "tensor blk.3.ffn_up_exps.weight (...) buffer type overridden to CPU"
# (llama.cpp; ik_llama.cpp spells it "overriden")
_OVERRIDDEN = ("buffer type overridden to ", "buffer type overriden to ")
_PIPELINE = re.compile(r"pipeline parallelism enabled \(n_copies=(?P<copies>\d+)\)")
_SIZE_MIB = re.compile(r"[ \t]*=[ \t]*(?P<mib>[\d.]+) MiB")
_KV_TYPES = re.compile(r"type_k = '(?P<k>\w+)', type_v = '(?P<v>\w+)'")
_KV_SIZE_PREFIXES = ("KV self size", "llama_kv_cache")
_KV_SIZE = re.compile(
    r"(?:KV self size|llama_kv_cache\w*:[ \t]+size)[ \t]*=[ \t]*(?P<total>[\d.]+) MiB"
    r"[^K]*(?:K(?! \()[^K]*)*"  # ".*?" up to the first "K (", in one way only
    r"K \((?P<k>\w+)\):[ \t]*(?P<kmib>[\d.]+) MiB,[ \t]*V \((?P<v>\w+)\):[ \t]*(?P<vmib>[\d.]+) MiB"
)
# ik_llama.cpp's MLA cache (-mla 2): one latent "c^KV" per token, counted as the K cache (llama.cpp's own MLA stores
# the latent as K and no V)
_MLA_SIZE = re.compile(
    r"KV self size[ \t]*=[ \t]*(?P<total>[\d.]+) MiB, c\^KV \((?P<k>\w+)\):[ \t]*(?P<kmib>[\d.]+) MiB"
)
_DEVICE = re.compile(r"Device \d+: (?P<name>[^,]+), (?:compute capability|gfx)")
# "using device CUDA0 (NVIDIA GeForce RTX 4090) (0000:01:00.0) - 23000 MiB free"; a Vulkan name has its own
# parentheses ("AMD Radeon RX 7900 XTX (RADV NAVI31)"): the name is what is left once the bus id is taken off
_USING_DEVICE = re.compile(r"using device (?P<dev>\S+) \((?P<rest>.*)\) - (?P<free>\d+) MiB free")
_BUS_ID = re.compile(r"(?P<name>.*)\) \([^()]*")
_ALLOC_FAILED = re.compile(r"allocating (?P<mib>[\d.]+) MiB on device (?P<dev>\d+): \w+ failed")
_FAILED_FOR = ((("kv_cache", "kv cache"), "kv"), (("compute", "graph", "sched"), "compute"))
_CUDA_OOM = ("CUDA error: out of memory", "cudaMalloc failed: out of memory", "hipMalloc failed",
             "ErrorOutOfDeviceMemory")  # fmt: skip
_LOOKS_LIKE = ("print_info:", "llm_load_", "load_tensors:", "llama_context:", "llama_new_context_with_model",
               "llama_kv_cache", "ggml_backend_", "llama_model_load")  # fmt: skip


def looks_like(text: str) -> bool:
    return any(word in text for word in _LOOKS_LIKE)


def _device_size(line: str, literal: str) -> tuple[str, float] | None:
    """``(device, MiB)`` of a ``<device> <literal> = N MiB`` line."""
    found = word_before(line, literal)
    if found is None:
        return None
    device, at = found
    m = _SIZE_MIB.match(line, at + len(literal))
    mib = number(m["mib"]) if m else None
    return (device, mib) if mib is not None else None


def _failed_for(after: str) -> str:
    """What a failed allocation was for, by the lines after it (the weights when they name nothing else)."""
    lowered = after.lower()
    return next((what for words, what in _FAILED_FOR if any(word in lowered for word in words)), "model")


class Reader:
    """The fields of :class:`bot.logs.reading.LogReading` these lines give, fed one line at a time."""

    def __init__(self) -> None:
        self.out: dict[str, Any] = {}
        self.model: dict[str, float] = {}
        self.kv: dict[str, float] = {}
        self.compute: dict[str, float] = {}
        self.output: dict[str, float] = {}
        self.recurrent: dict[str, float] = {}
        self.gpus: list[dict[str, Any]] = []
        self.failures: list[dict[str, Any]] = []
        self.kv_total = self.kv_k = self.kv_v = 0.0
        self.kv_sized = False

    def feed(self, i: int, line: str, lines: list[str]) -> None:
        out = self.out
        if m := first(_META, line, *_META_PREFIXES):
            key = _META_KEYS.get(m["key"].strip())
            value = m["value"].strip()
            if key in _INT_KEYS:
                if value.isdigit():
                    out.setdefault(key, int(value))
            elif key:
                out.setdefault(key, value)
        if m := first(_OFFLOADED, line, "offloaded "):
            out["layers_on_gpu"], out["layers_total"] = int(m[1]), int(m[2])
        if "buffer size" in line:
            self._buffers(line)
        if m := first(_CONTEXT, line, *_CONTEXT_PREFIXES):
            self._context(m["key"], m["value"])
        if "build" not in out and (m := first(_BUILD, line, "build")):
            out["build"] = f"{m['number']} ({m['commit']})"
        if any(word in line for word in _OVERRIDDEN):
            out["tensor_overrides"] = out.get("tensor_overrides", 0) + 1
        if m := first(_PIPELINE, line, "pipeline parallelism"):
            out["n_copies"] = int(m["copies"])
        if m := first(_KV_TYPES, line, "type_k = "):
            out["type_k"], out["type_v"] = m["k"], m["v"]
        m = first(_KV_SIZE, line, *_KV_SIZE_PREFIXES)  # one line per cache (sliding window: two): summed
        sizes = [size for key in ("total", "kmib", "vmib") if m and (size := number(m[key])) is not None]
        if m and len(sizes) == 3:
            self.kv_sized = True
            self.kv_total += sizes[0]
            self.kv_k += sizes[1]
            self.kv_v += sizes[2]
            out.setdefault("type_k", m["k"])
            out.setdefault("type_v", m["v"])
        m = first(_MLA_SIZE, line, "KV self size")
        if m and (total := number(m["total"])) is not None and (latent := number(m["kmib"])) is not None:
            self.kv_sized = True
            self.kv_total += total
            self.kv_k += latent
            out.setdefault("type_k", m["k"])
        if m := first(_DEVICE, line, "Device "):
            self.gpus.append({"name": m["name"].strip()})
        if m := first(_USING_DEVICE, line, "using device "):
            bus = _BUS_ID.fullmatch(m["rest"])
            name = (bus["name"] if bus else m["rest"]).strip()
            known = next((g for g in self.gpus if g["name"] == name and "free_mib" not in g), None)
            if known is None:
                self.gpus.append({"name": name, "free_mib": float(m["free"])})
            else:
                known["free_mib"] = float(m["free"])
        if (m := first(_ALLOC_FAILED, line, "allocating ")) and (failed := number(m["mib"])) is not None:
            what = _failed_for(" ".join(lines[i + 1 : i + 4]))
            self.failures.append({"what": what, "device": f"device {m['dev']}", "mib": failed})
        elif any(word in line for word in _CUDA_OOM) and not any(f.get("mib") for f in self.failures):
            self.failures.append({"what": "cuda", "message": line.strip()[-200:]})

    def _buffers(self, line: str) -> None:
        if (at := line.find("load_tensors:")) >= 0 and line[at + 13 : at + 14].isspace():
            # "load_tensors:   CUDA0 model buffer size = 4403.49 MiB" (a file in parts or mapped in pieces: summed)
            rest = line[at + 13 :].split(maxsplit=1)
            size = _MODEL_BUFFER_AFTER.match(rest[1]) if len(rest) == 2 else None
            if size is not None and (mib := number(size["mib"])) is not None:
                device = rest[0]
                self.model[device] = round(self.model.get(device, 0.0) + mib, 2)
        if found := _device_size(line, "KV buffer size"):
            self.kv[found[0]] = self.kv.get(found[0], 0.0) + found[1]
        if found := _device_size(line, "RS buffer size"):
            self.recurrent[found[0]] = found[1]
        if found := _device_size(line, "compute buffer size"):
            self.compute[found[0]] = found[1]
        if (at := line.find("output buffer size")) > 0:  # "CPU  output buffer size" (two spaces in some builds)
            words = line[:at].rsplit(maxsplit=1)
            m = _SIZE_MIB.match(line, at + len("output buffer size"))
            mib = number(m["mib"]) if m else None
            if words and mib is not None and line[at - 1].isspace():
                self.output[words[-1]] = mib

    def _context(self, key: str, value: str) -> None:
        if key == "flash_attn":
            self.out["flash_attn"] = {"1": True, "enabled": True, "true": True, "0": False, "disabled": False,
                                      "false": False}.get(value.lower())  # fmt: skip
        elif key == "kv_unified":
            if value in ("true", "false"):
                self.out["kv_unified"] = value == "true"
        elif value.isdigit():
            self.out["n_seq" if key == "n_seq_max" else key] = int(value)

    def fields(self) -> dict[str, Any]:
        out = dict(self.out)
        if self.kv_sized:
            out |= {"kv_total_mib": round(self.kv_total, 2), "kv_k_mib": round(self.kv_k, 2),
                    "kv_v_mib": round(self.kv_v, 2)}  # fmt: skip
        elif self.kv:
            out["kv_total_mib"] = round(sum(self.kv.values()), 2)
        out |= {"model_mib": self.model, "kv_mib": self.kv, "compute_mib": self.compute, "output_mib": self.output,
                "recurrent_mib": self.recurrent}  # fmt: skip
        out["gpus"] = tuple(self.gpus)
        out["failures"] = tuple(self.failures)
        return out


def read(lines: list[str]) -> dict[str, Any]:
    """The fields of :class:`bot.logs.reading.LogReading` these lines give."""
    reader = Reader()
    for i, line in enumerate(lines):
        reader.feed(i, line, lines)
    return reader.fields()
