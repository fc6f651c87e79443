"""Fixed costs of running an engine on a GPU that no engine log reports.

llama.cpp logs its model, KV and compute buffers but never the CUDA context, cuBLAS workspace and driver
reservations that nvidia-smi shows on top. vramfit charges one documented constant per device and backend:

* CUDA and ROCm: 457 MiB, Ollama's ``MinimumMemory`` reserve for CUDA/ROCm devices (``ml/device.go``), which it
  adds to llama.cpp's buffers when scheduling layers; for comparison gguf-parser charges 250 MiB and llama.cpp's
  ``--fit`` keeps a 1024 MiB margin.
* Metal: 512 MiB, Ollama's reserve for Metal.
* vLLM: the engine profiles itself and reserves ``gpu_memory_utilization`` (0.9) of the card; its CUDA context and
  NCCL buffers ("non-torch" memory) are inside that budget (see :mod:`calc.engines.vllm`).
"""

from __future__ import annotations

MIB = 1 << 20
GIB = 1 << 30

RUNTIME_BYTES_BY_BACKEND: dict[str, int] = {
    "cuda": 457 * MIB,
    "rocm": 457 * MIB,
    "sycl": 457 * MIB,
    "vulkan": 457 * MIB,
    "metal": 512 * MIB,
}
DEFAULT_RUNTIME_BYTES = 457 * MIB


def runtime_bytes(backend: str, gpu_count: int = 1) -> int:
    """Context and driver memory the engine needs on each device, summed over devices."""
    return RUNTIME_BYTES_BY_BACKEND.get(backend, DEFAULT_RUNTIME_BYTES) * max(gpu_count, 1)
