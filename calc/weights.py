"""The weights of a model in a weight format: exact tensor sizes from a GGUF header when the model came from one, else
llama.cpp's quantizer mix (:mod:`calc.llama_quant`) or the safetensors checkpoint vLLM loads
(:mod:`calc.checkpoints`). Shared by every engine."""

from __future__ import annotations

from functools import lru_cache

from vramfit.calc.architecture import Architecture
from vramfit.calc.checkpoints import checkpoint_weights, measured_checkpoint_weights
from vramfit.calc.file_types import FileType, parse_file_type
from vramfit.calc.gguf import weights_from_gguf
from vramfit.calc.llama_quant import gguf_file_weights
from vramfit.calc.request import Engine, ModelRef
from vramfit.calc.weight_bytes import WeightBytes


def weight_bytes(
    arch: Architecture, ftype: FileType, *, engine: str = "llama.cpp", has_imatrix: bool = False
) -> WeightBytes:
    """Weight sizes of ``arch`` in ``ftype``: a GGUF as llama.cpp loads it (quantized without an importance matrix
    unless ``has_imatrix``), or (FP8/INT8/INT4, or a 16/32-bit type with ``engine="vllm"``) a safetensors
    checkpoint as vLLM holds it on the GPU."""
    if not ftype.is_gguf or (engine == "vllm" and ftype in (FileType.F16, FileType.BF16, FileType.F32)):
        return checkpoint_weights(arch, ftype)
    return gguf_file_weights(arch, ftype, has_imatrix)


@lru_cache(maxsize=4096)
def _weights_cached(architecture: Architecture, quant: str, engine: Engine) -> WeightBytes:
    ftype = parse_file_type(quant)
    if engine == Engine.VLLM and ftype == FileType.MXFP4_MOE:
        # vLLM runs gpt-oss's own checkpoint: MXFP4 experts (kept by the tensor list) and 16-bit everything else.
        ftype = FileType.BF16
    return weight_bytes(architecture, ftype, engine=engine.value)


def model_weights(model: ModelRef, quant: str, engine: Engine = Engine.LLAMA_CPP) -> WeightBytes:
    """Exact tensor sizes from a GGUF header when the model came from one; with vLLM in the format of a safetensors
    checkpoint the model was measured from, that checkpoint's bytes; else the quantizer's mix (llama.cpp) or the
    safetensors checkpoint vLLM would load (vLLM)."""
    if model.gguf is not None:
        return weights_from_gguf(model.architecture, model.gguf)
    checkpoint = model.checkpoint
    if checkpoint is not None and engine == Engine.VLLM and parse_file_type(quant).value == checkpoint.file_type:
        return measured_checkpoint_weights(model.architecture, checkpoint)
    return _weights_cached(model.architecture, quant, engine)
