"""What a question asks: model, weight format, context, users, KV cache type, engine and GPUs."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from vramfit.calc.architecture import Architecture
from vramfit.calc.gguf import GgufHeader
from vramfit.calc.gpu import Gpu
from vramfit.calc.ollama import flash_attention_by_default
from vramfit.calc.ram_speed import RamSpeed
from vramfit.calc.safetensors import Checkpoint

MAX_CONTEXT = 10_485_760  # 10M tokens: beyond any released model; larger numbers are typos
DEFAULT_CONTEXT = 8192  # tokens per user when the question names none
MAX_USERS = 4096
MAX_GPU_COUNT = 64
MAX_RAM_BYTES = 64 << 40  # 64 TiB: beyond any single machine


class Engine(StrEnum):
    LLAMA_CPP = "llama.cpp"
    VLLM = "vllm"


class KvType(StrEnum):
    """KV cache element types (llama.cpp -ctk/-ctv, vLLM --kv-cache-dtype)."""

    F32 = "f32"
    F16 = "f16"
    BF16 = "bf16"
    FP8 = "fp8"
    Q8_0 = "q8_0"
    Q5_1 = "q5_1"
    Q5_0 = "q5_0"
    Q4_1 = "q4_1"
    Q4_0 = "q4_0"
    IQ4_NL = "iq4_nl"


class ModelRef(BaseModel):
    """A model: a preset id with its architecture, or an architecture from a config.json / GGUF file.

    ``checkpoint`` is a safetensors checkpoint measured from its headers: vLLM answers in that checkpoint's own
    format hold its tensors' bytes (:func:`calc.checkpoints.measured_checkpoint_weights`); llama.cpp answers, and
    vLLM answers in another format, size the architecture as before."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    id: str
    name: str
    family: str = ""
    architecture: Architecture
    gguf: GgufHeader | None = None  # exact tensor sizes, when the model came from a GGUF file
    checkpoint: Checkpoint | None = None  # measured safetensors bytes, when the model came from a safetensors repo
    source: str = ""  # where the numbers come from (config.json URL, file path)
    # A multimodal projector beside a GGUF (llama-server's --mmproj FILE): its file name and bytes; "" and 0 when the
    # repo has none. Not in the weights: it is loaded only when asked for.
    mmproj: str = ""
    mmproj_bytes: int = Field(default=0, ge=0)
    # The projector's compute buffer as llama.cpp reserved it for its warmup image (clip.cpp reserve_compute_meta),
    # where a published log measured it for that file; 0 when none did.
    mmproj_compute_bytes: int = Field(default=0, ge=0)
    # Its config.json describes a vision encoder (calc.hf_config.declares_vision_encoder) that no number counts: the
    # estimate is the text model's, and llama.cpp loads the encoder from its own mmproj file.
    vision_encoder: bool = False


class GpuChoice(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    gpu: Gpu
    count: int = Field(default=1, ge=1, le=MAX_GPU_COUNT)


def unstated_context(architecture: Architecture) -> int:
    """The context of a question that names none: :data:`DEFAULT_CONTEXT`, never more than the model is declared for
    (a 4k model is asked about at 4,096 tokens, not warned about a context nobody asked for)."""
    return min(DEFAULT_CONTEXT, architecture.context_limit or DEFAULT_CONTEXT)


class Request(BaseModel):
    """A fully specified question; defaults follow the JSON contract (docs/cli-json.md)."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    model: ModelRef
    quant: str = "Q4_K_M"
    context: int = Field(default=DEFAULT_CONTEXT, ge=1, le=MAX_CONTEXT, description="tokens per user")
    users: int = Field(default=1, ge=1, le=MAX_USERS, description="sequences held at once")
    kv_cache: KvType = KvType.F16
    engine: Engine = Engine.LLAMA_CPP
    flash_attn: bool | None = Field(default=None, description="None: the engine's default on the GPU")
    gpus: tuple[GpuChoice, ...] = ()
    n_ubatch: int = Field(default=512, ge=1, le=65536)
    n_batch: int = Field(default=2048, ge=1, le=65536)
    kv_unified: bool = Field(default=True, description="llama-server shares one KV buffer across slots")
    swa_full: bool = Field(
        default=False, description="llama.cpp --swa-full: sliding-window layers keep the full context"
    )
    runner: str = Field(
        default="",
        description="the program that runs llama.cpp: '' (llama-server) or 'ollama' (its defaults, ollama ps)",
    )
    checkpoint_kind: str = Field(
        default="",
        description="vLLM: the kind of quantized checkpoint asked by name (awq, gptq, bnb-4bit); sized as its format",
    )
    draft: ModelRef | None = Field(
        default=None,
        description="llama.cpp speculative decoding with a draft model (-md FILE --spec-type draft-simple): a second "
        "model on the same GPUs with its own KV cache and compute buffer (common/speculative.cpp)",
    )
    draft_quant: str = Field(default="Q4_K_M", description="the draft model's file type")
    draft_max: int = Field(
        default=3,
        ge=1,
        le=64,
        description="tokens drafted a step (--spec-draft-n-max, default 3 at 0c1e57098): llama-server reserves that "
        "many more outputs a slot",
    )
    n_outputs_max: int | None = Field(
        default=None,
        ge=0,
        description="llama.cpp's n_outputs_max, the outputs a micro-batch reserves: None as llama-server sets it "
        "(one a slot, times one plus the draft; llama.cpp PR #23861), 0 every token's (the library default, and "
        "builds before that PR)",
    )
    draft_kv_cache: KvType = Field(
        default=KvType.F16,
        description="the draft's cache type (-ctkd/-ctvd): f16 unless given, not the main model's (common.h)",
    )
    mtp: bool = Field(
        default=False,
        description="llama.cpp drafts with the model's own MTP head (--spec-type draft-mtp): its block is loaded, a "
        "second context caches its layers, and hybrid models keep recurrent-state snapshots for rollback",
    )
    images: bool = Field(
        default=False,
        description="images are sent: llama.cpp loads the vision projector (--mmproj) on the first GPU, and its --fit "
        "counts the projector's weights and warmup compute buffer (tools/server/server-context.cpp, PR #21489)",
    )
    reserved_bytes: int = Field(
        default=0,
        ge=0,
        le=MAX_RAM_BYTES,
        description="GPU memory other programs already hold (a desktop on the card): not the model's to use",
    )
    ram_bytes: int | None = Field(
        default=None, ge=0, le=MAX_RAM_BYTES, description="system RAM; None: calc.host_memory.ASSUMED_RAM_BYTES"
    )
    ram_speed: RamSpeed | None = Field(
        default=None, description="system RAM kind, rate and channels; None: calc.ram_speed.ASSUMED_RAM_SPEED"
    )

    @property
    def flash_attn_effective(self) -> bool:
        if self.flash_attn is not None:
            return self.flash_attn
        if self.runner == "ollama" and self.engine == Engine.LLAMA_CPP:
            # Ollama's own default per model family; a quantized cache needs OLLAMA_FLASH_ATTENTION=1 (calc.ollama).
            quantized = self.kv_cache not in (KvType.F16, KvType.BF16, KvType.F32)
            return quantized or flash_attention_by_default(self.model.architecture.arch)
        # llama.cpp's -fa auto turns flash attention on when the GPU backend supports it (all CUDA/Metal/ROCm
        # builds since 2025); vLLM always uses its flash/paged attention kernels.
        return True
