"""The published llama-bench rows of tests/data/groundtruth/speed.jsonl, read as calculator requests.

Each row names its device and model as the source wrote them; the tables below say which preset GPU and which
model (preset, or a config.json of the model named, with its source) each one is, so the estimator can be run on
the row's own setting. Rows whose device or model has no preset are left out, and the benchmark says how many.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.presets import load_catalog
from vramfit.calc.ram_speed import DESKTOP_CHANNELS, RamSpeed
from vramfit.calc.request import ModelRef

ROWS = Path(__file__).resolve().parents[1] / "tests" / "data" / "groundtruth" / "speed.jsonl"

# device as the source wrote it → (preset GPU id, count)
DEVICES: dict[str, tuple[str, int]] = {
    "2x Intel Arc A770 (16gb)": ("arc-a770-16gb", 2),
    "2x AMD Radeon RX 7900 XTX (RADV NAVI31)": ("rx-7900-xtx", 2),
    "AMD Radeon 8060S Graphics (gfx1151, Strix Halo)": ("ryzen-ai-max-395-128gb", 1),
    "AMD Radeon AI PRO R9700, gfx1201": ("radeon-ai-pro-r9700", 1),
    "AMD Radeon RX 7900 XTX (RADV NAVI31) [GPU 0 ONLY, pciBus 6]": ("rx-7900-xtx", 1),
    "AMD Radeon RX 7900 XTX (RADV NAVI31) [GPU 1 ONLY, pciBus 15]": ("rx-7900-xtx", 1),
    "7900 XTX": ("rx-7900-xtx", 1),
    "AMD Radeon RX 5700 XT (RADV NAVI10)": ("rx-5700-xt", 1),
    "AMD RX 6800 XT": ("rx-6800-xt", 1),
    "AMD Radeon RX 9070 XT (RADV GFX1201)": ("rx-9070-xt", 1),
    "Apple M1": ("apple-m1-8gb", 1),  # "M1 7-Core GPU 8GB"
    "Apple M1 Max": ("apple-m1-max-64gb", 1),
    "Apple M2 Ultra": ("apple-m2-ultra-192gb", 1),
    "M2 Ultra": ("apple-m2-ultra-192gb", 1),
    "Apple M4 GPU (16GB)": ("apple-m4-16gb", 1),
    "Apple M4 Pro (20-core GPU)": ("apple-m4-pro-48gb", 1),
    "Arc B70": ("arc-pro-b70", 1),
    "Intel(R) Arc(TM) A770 Graphics": ("arc-a770-16gb", 1),
    "Intel(R) Arc(tm) A310 Graphics (DG2)": ("arc-a310", 1),
    "M1 Ultra": ("apple-m1-ultra-128gb", 1),
    "M2 Air": ("apple-m2-24gb", 1),
    "M3 Max (40CU)": ("apple-m3-max-64gb", 1),
    "M3 Pro (18CU)": ("apple-m3-pro-36gb", 1),
    "M3 Ultra": ("apple-m3-ultra-512gb", 1),
    "NVIDIA A100 80GB PCIe": ("a100-80gb-pcie", 1),
    "NVIDIA A40": ("a40", 1),
    "NVIDIA A100-SXM4-80GB": ("a100-80gb", 1),
    "NVIDIA GB10": ("dgx-spark", 1),
    "NVIDIA GeForce RTX 2080 (8 GB)": ("rtx-2080", 1),
    "NVIDIA GeForce RTX 4070": ("rtx-4070", 1),
    "2x GeForce RTX 3060": ("rtx-3060-12gb", 2),
    "NVIDIA GeForce RTX 3080": ("rtx-3080-10gb", 1),
    "NVIDIA GeForce RTX 3080 Ti": ("rtx-3080-ti", 1),
    "NVIDIA GeForce RTX 3090": ("rtx-3090", 1),
    "RTX 3090": ("rtx-3090", 1),
    "NVIDIA GeForce RTX 4070 Ti": ("rtx-4070-ti", 1),
    "NVIDIA GeForce RTX 4090": ("rtx-4090", 1),
    "RTX 4090": ("rtx-4090", 1),
    "NVIDIA GeForce RTX 5070": ("rtx-5070", 1),
    "NVIDIA GeForce RTX 5090": ("rtx-5090", 1),
    "NVIDIA H100 PCIe": ("h100-pcie", 1),
    "NVIDIA L40S": ("l40s", 1),
    "NVIDIA RTX 6000 Ada Generation": ("rtx-6000-ada", 1),
    "NVIDIA RTX A6000": ("rtx-a6000", 1),
    "P40": ("tesla-p40", 1),
    "Radeon 8060S Graphics (Strix Halo, gfx1151)": ("ryzen-ai-max-395-128gb", 1),
    "Radeon RX 6700 XT": ("rx-6700-xt", 1),
    "RTX 3050 6GB": ("rtx-3050-6gb", 1),
    # llama.cpp discussion #4167's Apple Silicon table (decode rows): each chip and GPU-core count to the preset of
    # its memory bandwidth (the M3 Max's 30-core and the M4 Max's 32-core parts are the 300 and 410 GB/s presets)
    "Apple M1 (7-core GPU)": ("apple-m1-8gb", 1),
    "Apple M1 (8-core GPU)": ("apple-m1-8gb", 1),
    "Apple M1 Pro (14-core GPU)": ("apple-m1-pro-16gb", 1),
    "Apple M1 Pro (16-core GPU)": ("apple-m1-pro-16gb", 1),
    "Apple M1 Max (24-core GPU)": ("apple-m1-max-32gb", 1),
    "Apple M1 Max (32-core GPU)": ("apple-m1-max-32gb", 1),
    "Apple M1 Ultra (48-core GPU)": ("apple-m1-ultra-64gb", 1),
    "Apple M1 Ultra (64-core GPU)": ("apple-m1-ultra-64gb", 1),
    "Apple M2 (8-core GPU)": ("apple-m2-8gb", 1),
    "Apple M2 (10-core GPU)": ("apple-m2-8gb", 1),
    "Apple M2 Pro (16-core GPU)": ("apple-m2-pro-16gb", 1),
    "Apple M2 Pro (19-core GPU)": ("apple-m2-pro-16gb", 1),
    "Apple M2 Max (30-core GPU)": ("apple-m2-max-32gb", 1),
    "Apple M2 Max (38-core GPU)": ("apple-m2-max-32gb", 1),
    "Apple M2 Ultra (60-core GPU)": ("apple-m2-ultra-64gb", 1),
    "Apple M2 Ultra (76-core GPU)": ("apple-m2-ultra-64gb", 1),
    "Apple M3 (10-core GPU)": ("apple-m3-8gb", 1),
    "Apple M3 Pro (14-core GPU)": ("apple-m3-pro-18gb", 1),
    "Apple M3 Pro (18-core GPU)": ("apple-m3-pro-18gb", 1),
    "Apple M3 Max (30-core GPU)": ("apple-m3-max-36gb", 1),
    "Apple M3 Max (40-core GPU)": ("apple-m3-max-48gb", 1),
    "Apple M3 Ultra (60-core GPU)": ("apple-m3-ultra-96gb", 1),
    "Apple M3 Ultra (80-core GPU)": ("apple-m3-ultra-96gb", 1),
    "Apple M4 (10-core GPU)": ("apple-m4-16gb", 1),
    "Apple M4 Pro (16-core GPU)": ("apple-m4-pro-24gb", 1),
    "Apple M4 Max (32-core GPU)": ("apple-m4-max-36gb", 1),
    "Apple M4 Max (40-core GPU)": ("apple-m4-max-48gb", 1),
}

# Llama 2 has no preset (few ask about it now); its configs, from meta-llama/Llama-2-7b-hf and Llama-2-13b-hf
# (https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json, .../Llama-2-13b-hf/...).
LLAMA_2 = {
    "7b": {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
           "intermediate_size": 11008, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 32,
           "vocab_size": 32000, "max_position_embeddings": 4096, "tie_word_embeddings": False},
    "13b": {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 5120,
            "intermediate_size": 13824, "num_attention_heads": 40, "num_hidden_layers": 40, "num_key_value_heads": 40,
            "vocab_size": 32000, "max_position_embeddings": 4096, "tie_word_embeddings": False},
}  # fmt: skip

# model as the source wrote it (lowercased, a prefix) → preset id or "llama-2-7b" / "llama-2-13b"
MODELS: tuple[tuple[str, str], ...] = (
    ("llama 8b", "llama-3.1-8b"), ("llama 3.1 8b", "llama-3.1-8b"), ("llama 3b", "llama-3.2-3b"),
    ("llama 1b", "llama-3.2-1b"), ("llama 70b", "llama-3.1-70b"), ("llama 7b", "llama-2-7b"),
    ("llama-2-7b", "llama-2-7b"), ("llama 13b", "llama-2-13b"), ("gpt-oss 20b", "gpt-oss-20b"),
    ("gpt-oss 120b", "gpt-oss-120b"), ("gemma3 4b", "gemma-3-4b"), ("qwen3moe 30b.a3b", "qwen3-30b-a3b"),
    ("qwen3 14b", "qwen3-14b"), ("qwen3-14b", "qwen3-14b"), ("qwen2 7b", "qwen2.5-7b"), ("gemma2 27b", "gemma-2-27b"),
    ("gemma-3-27b", "gemma-3-27b"), ("gemma4 31b", "gemma-4-31b"), ("gemma-3-12b", "gemma-3-12b"),
    ("qwen2.5-14b", "qwen2.5-14b"), ("qwen3-4b", "qwen3-4b"), ("glm4moe 106b.a12b", "glm-4.5-air"),
    ("qwen3 32b", "qwen3-32b"), ("gpt-oss-20b", "gpt-oss-20b"), ("qwen35moe 35b.a3b", "qwen3.5-35b-a3b"),
)  # fmt: skip
QUANTS = {"Q4_K_M", "Q4_0", "Q8_0", "Q6_K", "F16", "BF16", "MXFP4", "Q3_K_M", "Q4_K_S"}

# Host RAM bandwidth of the offloaded rows, where the source names the machine: the i9-10900X has four channels
# of DDR4-2933 (Intel ARK), 4 × 8 B × 2933 MT/s = 93.9 GB/s.
HOST_BANDWIDTH_GBS = {"Intel i9-10900X": 93.9}


# The machines measured whose GPU is a larger build than the preset row the device maps to (the preset takes the base
# configuration sold with that memory): their FP16 (Apple: FP32) throughput, TFLOPS, with its source.
MACHINE_TFLOPS: dict[str, float] = {
    # ggerganov's Mac Studio, 76-core GPU (device_note); Apple: "76 cores capable of delivering 27.2 teraflops"
    # (https://tekspecz.com/new-blog-2/2023/6/8/hardware-breakdown-presents-apples-m2-ultra-processor)
    "M2 Ultra": 27.2,
    "Apple M2 Ultra": 27.2,
    # "M1 Ultra Mac Studio (64 core 128Gb)"; "The Apple M1 Ultra with 64 GPU cores achieves an FP32 processing
    # performance (single precision) of 21.2 TFLOP/s" (https://www.cpu-monkey.com/en/cpu-apple_m1_ultra_64_gpu)
    "M1 Ultra": 21.2,
}

# llama.cpp discussion #4167's table names each chip with its GPU-core count, the presets (by memory size) one
# configuration each: an Apple GPU core has 128 shaders, each an FP16 (= FP32 on Apple) multiply-add per clock, so
# the throughput is cores × 128 × 2 × the chip's GPU clock. The clocks are the ones the presets' FP16 sources quote
# (hmc-tech.com, presets/gpus.toml): M1, M1 Pro and M1 Max 1278 MHz ("1792 Shaders ... 1278MHz", apple-m1-pro-16gb),
# M1 Ultra 1290 MHz ("6144 Shaders ... 1290MHz", apple-m1-ultra-64gb), M2 and M3 families 1398 MHz ("1024 Shaders
# ... 1398MHz", apple-m2-8gb, apple-m3-8gb; "7680 Shaders ... 1398MHz", apple-m2-ultra-64gb, apple-m3-ultra-96gb),
# M4 and M4 Pro 1470 MHz ("1280 Shaders ... 1470MHz", apple-m4-8gb; "2048 Shaders ... 1470MHz", apple-m4-pro-24gb),
# M4 Max 1678 MHz ("4096 Shaders ... 1678MHz", apple-m4-max-48gb).
APPLE_GPU_CLOCK_MHZ = {"M1": 1278, "M1 Pro": 1278, "M1 Max": 1278, "M1 Ultra": 1290, "M2": 1398, "M2 Pro": 1398,
                       "M2 Max": 1398, "M2 Ultra": 1398, "M3": 1398, "M3 Pro": 1398, "M3 Max": 1398, "M3 Ultra": 1398,
                       "M4": 1470, "M4 Pro": 1470, "M4 Max": 1678}  # fmt: skip
_APPLE_CORES = re.compile(r"^Apple (M\d(?: Pro| Max| Ultra)?) \((\d+)-core GPU\)$")
for _device in list(DEVICES):
    if _match := _APPLE_CORES.match(_device):
        MACHINE_TFLOPS[_device] = round(int(_match[2]) * 128 * 2 * APPLE_GPU_CLOCK_MHZ[_match[1]] / 1e6, 2)


def _host_bandwidth(row: dict[str, Any]) -> float | None:
    """The row's system RAM bandwidth from the kind, rate and channels its source states (``ram_kind``, ``ram_mts``,
    ``ram_channels``; a desktop's two channels where the source names a desktop platform but not the count)."""
    kind, mts = row.get("ram_kind"), row.get("ram_mts")
    if kind not in ("ddr4", "ddr5") or not mts:
        return None
    return RamSpeed(kind=kind, mts=int(mts), channels=int(row.get("ram_channels") or DESKTOP_CHANNELS)).bandwidth_gbs


@dataclass(frozen=True)
class SpeedRow:
    row: dict[str, Any]
    model: ModelRef
    quant: str
    gpu: str
    count: int
    kind: str  # "tg" or "pp"
    tokens: int  # pp: prompt tokens; tg: tokens generated
    depth: int  # tokens already in the KV cache
    offload: str  # "all", "ngl N", "ncmoe N", "cpu"
    host_bandwidth_gbs: float | None
    backend: str  # as the row ran it: cuda, metal, vulkan, rocm, sycl

    @property
    def fp16_tflops(self) -> float:
        """The measured machine's GPU throughput: MACHINE_TFLOPS where its GPU is a larger build, else the preset's."""
        return MACHINE_TFLOPS.get(str(self.row["device"])) or load_catalog().gpus[self.gpu].fp16_tflops

    @property
    def fold(self) -> int:
        """0 or 1: the half of the rows this one belongs to (its id as a hex number, even or odd)."""
        return int(str(self.row["id"]).removeprefix("spd-"), 16) % 2

    @property
    def measured(self) -> float:
        return float(self.row["tokens_per_second"])


_TEST = re.compile(r"^(pp|tg)(\d+)(?: @ d(\d+))?$")


def _model(name: str) -> ModelRef | None:
    key = name.lower()
    for prefix, model_id in MODELS:
        if key.startswith(prefix):
            if model_id.startswith("llama-2-"):
                config = LLAMA_2[model_id.removeprefix("llama-2-")]
                return ModelRef(id=model_id, name=model_id, architecture=from_hf_config(config))
            return load_catalog().models[model_id].ref()
    return None


def _offload(text: str) -> str | None:
    if text.startswith(("all", "default", "not stated")):
        return "all"
    if found := re.match(r"--n-cpu-moe (\d+)", text):
        return f"ncmoe {found[1]}"
    if found := re.fullmatch(r"-ngl (\d+)(?: \(partial[^)]*\))?", text):
        return "cpu" if found[1] == "0" else f"ngl {found[1]}"
    return None


def speed_rows() -> tuple[list[SpeedRow], list[dict[str, Any]]]:
    """The rows the estimator can be run on, and the rows left out."""
    used: list[SpeedRow] = []
    left: list[dict[str, Any]] = []
    for line in ROWS.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        test = _TEST.match(row["test"].replace("llmfit bench avg tok/s", "").strip())
        llmfit = row["test"].startswith("tg (llmfit")
        model = _model(row["model"])
        offload = _offload(row["offload"])
        device = DEVICES.get(row["device"])
        if (test is None and not llmfit) or model is None or device is None or row["quant"] not in QUANTS:
            left.append(row)
            continue
        if offload is None or offload == "cpu":
            left.append(row)
            continue
        if llmfit:
            kind, tokens, depth = "tg", 4096, 0  # llmfit runs llama-server at context 4096
        else:
            assert test is not None
            kind, tokens, depth = test[1], int(test[2]), int(test[3] or 0)
        host = HOST_BANDWIDTH_GBS.get(row.get("cpu") or "") or _host_bandwidth(row)
        backend = str(row["backend"]).lower()
        count = max(device[1], int(row.get("gpu_count") or 1))  # "2x" in the device, or the row's own count
        fields = (row["quant"], device[0], count, kind, tokens, depth, offload, host, backend)
        used.append(SpeedRow(row, model, *fields))
    return used, left
