"""What a pasted log says: the settings, the buffers per device, the GPUs and their memory, and why it failed.

One frozen record for every engine's log (:mod:`bot.logs` reads them); a field the log does not show is None (or
empty). Sizes are MiB as the engines print them (vLLM's GiB and GB, Ollama's GiB are converted), so a figure can be
held against the log line it came from.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Allocation(BaseModel):
    """A failed allocation: ``mib`` on ``device`` for ``what`` (model, kv, compute), or an engine's own words."""

    model_config = ConfigDict(frozen=True)

    what: str  # "model", "kv", "compute", "cuda", "vllm_kv", "torch"
    device: str = ""
    mib: float | None = None
    message: str = ""


class GpuSeen(BaseModel):
    """A GPU the log names: from llama.cpp's device lines, nvidia-smi or rocm-smi, vLLM's total memory."""

    model_config = ConfigDict(frozen=True)

    name: str
    free_mib: float | None = None
    used_mib: float | None = None
    total_mib: float | None = None


class LogReading(BaseModel):
    model_config = ConfigDict(frozen=True)

    engine: str = ""  # llama.cpp, ik_llama.cpp, ollama, ollama-ps, vllm, nvidia-smi, rocm-smi; "" when none is known
    # The model, as the log prints it (llama.cpp's print_info / llm_load_print_meta)
    general_name: str = ""
    arch: str = ""
    file_type: str = ""  # "Q4_K - Medium"
    file_size: str = ""  # "4.58 GiB (4.89 BPW)"
    params: str = ""  # "8.03 B"
    n_ctx_train: int | None = None
    n_layer: int | None = None
    n_head: int | None = None
    n_head_kv: int | None = None
    n_embd: int | None = None
    n_embd_head_k: int | None = None
    n_expert: int | None = None
    n_vocab: int | None = None
    # The settings
    n_ctx: int | None = None
    n_seq: int | None = None  # llama.cpp's n_seq_max (--parallel)
    n_batch: int | None = None
    n_ubatch: int | None = None
    # the outputs a micro-batch reserves (llama.cpp PR #23861, printed by 0c1e57098's llama_context); None: a build
    # that does not print it, which reserves every token's
    n_outputs_max: int | None = None
    flash_attn: bool | None = None
    kv_unified: bool | None = None  # llama.cpp's --kv-unified as the context printed it
    build: str = ""  # llama.cpp's "build: 5331 (33eff402)" as the log prints it; "" when it does not
    tensor_overrides: int = 0  # tensors --override-tensor (-ot) placed on a device of its choosing
    n_copies: int | None = None  # pipeline parallelism: compute-buffer copies the scheduler keeps (1: none)
    type_k: str = ""
    type_v: str = ""
    layers_on_gpu: int | None = None
    layers_total: int | None = None
    # The buffers, MiB per device ("CUDA0", "ROCm0", "CPU", "CPU_Mapped", "CUDA_Host")
    model_mib: dict[str, float] = Field(default_factory=dict)
    kv_mib: dict[str, float] = Field(default_factory=dict)
    kv_total_mib: float | None = None
    kv_k_mib: float | None = None
    kv_v_mib: float | None = None
    compute_mib: dict[str, float] = Field(default_factory=dict)
    output_mib: dict[str, float] = Field(default_factory=dict)
    recurrent_mib: dict[str, float] = Field(default_factory=dict)
    gpus: tuple[GpuSeen, ...] = ()
    failures: tuple[Allocation, ...] = ()
    # vLLM's start-up (GiB as printed)
    max_model_len: int | None = None
    gpu_memory_utilization: float | None = None
    tensor_parallel: int | None = None
    weights_gib: float | None = None
    kv_cache_gib: float | None = None
    activation_gib: float | None = None
    non_torch_gib: float | None = None
    cudagraph_gib: float | None = None
    gpu_blocks: int | None = None
    kv_tokens: int | None = None
    max_concurrency: float | None = None
    # Ollama's "offload" line (GiB as printed) and `ollama ps`
    ollama_layers_model: int | None = None
    ollama_layers_offload: int | None = None
    ollama_required_full_gib: float | None = None
    ollama_required_partial_gib: float | None = None
    ollama_kv_gib: float | None = None
    ollama_weights_gib: float | None = None
    ollama_graph_full_gib: float | None = None
    ollama_available_gib: tuple[float, ...] = ()
    ollama_ps: tuple[tuple[str, str, str], ...] = ()  # (name, size, processor) per row
    # The read ran out of time (bot.logs.scan.READ_CPU_SECONDS of CPU) and stopped before this line (1-based): what
    # is above is read, the rest is not. None: every line was read.
    unread_from_line: int | None = None

    @property
    def gpu_model_mib(self) -> float:
        """The weights on GPUs: every model buffer but the host's."""
        return _on(self.model_mib, host=False)

    @property
    def host_model_mib(self) -> float:
        return _on(self.model_mib, host=True)

    @property
    def gpu_compute_mib(self) -> float:
        return _on(self.compute_mib, host=False)

    @property
    def host_compute_mib(self) -> float:
        return _on(self.compute_mib, host=True)


def _on(buffers: dict[str, float], *, host: bool) -> float:
    """The MiB of ``buffers`` in system memory (``host``) or on the GPUs."""
    return sum(mib for device, mib in buffers.items() if is_host(device) == host)


def is_host(device: str) -> bool:
    """Whether a llama.cpp buffer name is system memory: CPU, CPU_Mapped, CPU_REPACK, AMX (weights repacked for
    Intel's AMX), CUDA_Host, ROCm_Host…"""
    upper = device.upper()
    return upper.startswith(("CPU", "AMX")) or upper.endswith("_HOST") or upper == "HOST"
