"""The weights of a model in a weight format: exact tensor sizes from a GGUF header when the model came from one, else
llama.cpp's quantizer mix (:mod:`calc.quant`) or the safetensors checkpoint vLLM loads. Shared by every engine."""

from __future__ import annotations

from functools import lru_cache

from calc.architecture import Architecture
from calc.gguf import weights_from_gguf
from calc.quant import FileType, WeightBytes, parse_file_type, weight_bytes
from calc.request import Engine, ModelRef


@lru_cache(maxsize=4096)
def _weights_cached(architecture: Architecture, quant: str, engine: Engine) -> WeightBytes:
    ftype = parse_file_type(quant)
    if engine == Engine.VLLM and ftype == FileType.MXFP4_MOE:
        # vLLM runs gpt-oss's own checkpoint: MXFP4 experts (kept by the tensor list) and 16-bit everything else.
        ftype = FileType.BF16
    return weight_bytes(architecture, ftype, engine=engine.value)


def model_weights(model: ModelRef, quant: str, engine: Engine = Engine.LLAMA_CPP) -> WeightBytes:
    """Exact tensor sizes from a GGUF header when the model came from one, else the quantizer's mix
    (llama.cpp) or the safetensors checkpoint (vLLM)."""
    if model.gguf is not None:
        return weights_from_gguf(model.architecture, model.gguf)
    return _weights_cached(model.architecture, quant, engine)
