"""Safetensors checkpoints as vLLM holds them on the GPU: FP8, INT8 (W8A8), INT4 (AWQ/GPTQ) and 16/32-bit formats.

Quantized linear weights, everything else in the 16-bit model dtype, embeddings on the GPU, one shared matrix for tied
embeddings, and vLLM's rotary cache counted in its weight memory.
"""

from __future__ import annotations

from vramfit.calc.architecture import Architecture
from vramfit.calc.file_types import FileType
from vramfit.calc.ggml import GgmlType, tensor_bytes
from vramfit.calc.safetensors import Checkpoint
from vramfit.calc.tensor_specs import TensorSpec
from vramfit.calc.tensors import gguf_tensors
from vramfit.calc.weight_bytes import WeightBytes, sum_by_role

_VLLM_GROUP = 128  # AWQ / GPTQ group size


def _is_linear(spec: TensorSpec) -> bool:
    """A projection matrix an FP8/INT8/AWQ/GPTQ checkpoint quantizes (not embeddings, head, router or norms)."""
    if spec.n_dims < 2 or not spec.name.endswith(".weight") or spec.name.endswith("_norm.weight"):
        return False
    return spec.name not in ("token_embd.weight", "output.weight") and ".ffn_gate_inp." not in spec.name


def _vllm_mxfp4_bytes(spec: TensorSpec, arch: Architecture) -> int:
    """gpt-oss experts as vLLM's MXFP4 MoE holds them: the expert width rounded up to 256 (2880 -> 3072 on an H100,
    which matches the 13.47 / 64.38 GiB vLLM reports for gpt-oss-20b / -120b)."""
    n_ff = arch.expert_ffn_size
    padded = -(-n_ff // 256) * 256
    shape = list(spec.shape)
    dim = 0 if "ffn_down_exps" in spec.name else 1
    if shape[dim] == n_ff:
        shape[dim] = padded
    return tensor_bytes(GgmlType.MXFP4, shape)


def _vllm_tensor_bytes(spec: TensorSpec, ftype: FileType, arch: Architecture) -> int:
    if spec.source_type == GgmlType.MXFP4:
        return _vllm_mxfp4_bytes(spec, arch)  # gpt-oss: vLLM runs the MXFP4 checkpoint as is
    n = spec.n_elements
    if ftype == FileType.F32:
        return 4 * n
    if not _is_linear(spec) or ftype in (FileType.F16, FileType.BF16):
        return 2 * n  # the 16-bit model dtype (norms, biases, embeddings, lm_head, router)
    rows = n // spec.row_length
    if ftype in (FileType.FP8, FileType.INT8):
        return n + 4 * rows  # 1 byte per weight + an fp32 scale per output channel (FP8-dynamic, W8A8)
    if ftype == FileType.NVFP4:
        # NVFP4 (ModelOpt, compressed-tensors nvfp4): packed 4-bit E2M1 weights, an FP8 (E4M3) scale per 16 inputs,
        # and two FP32 scalars per tensor (the weight's global scale and the input's)
        return -(-n // 2) + rows * -(-spec.row_length // 16) + 8
    # INT4 (AWQ/GPTQ): packed 4-bit weights + per group of 128 inputs an fp16 scale and a packed 4-bit zero point.
    groups = rows * -(-spec.row_length // _VLLM_GROUP)
    return -(-n // 2) + 2 * groups + -(-groups // 2)


def _rotary_cache_bytes(arch: Architecture, ftype: FileType) -> int:
    """vLLM's RotaryEmbedding cos/sin cache, counted in its weight memory: max positions x rotary dim x dtype.
    (Llama-3.1-8B: 14.96 GiB of weights + 32 MiB = the 14.99 GiB vLLM reports; Qwen3-0.6B 1.11 + 0.01.)"""
    rot_dim = arch.qk_rope_head_dim if arch.is_mla else arch.head_dim_k
    return arch.context_length * rot_dim * (4 if ftype == FileType.F32 else 2)


def checkpoint_weights(arch: Architecture, ftype: FileType) -> WeightBytes:
    """A safetensors checkpoint in ``ftype`` as vLLM holds it on the GPU."""
    specs = gguf_tensors(arch)
    sizes = [(spec, _vllm_tensor_bytes(spec, ftype, arch)) for spec in specs]
    checkpoint = sum(n for _, n in sizes)
    total = checkpoint + _rotary_cache_bytes(arch, ftype)
    roles = sum_by_role(((spec.name, spec.layer, spec.is_expert, n, "") for spec, n in sizes), arch.n_layers)
    embd, out = roles.embd_bytes, roles.out_bytes
    dtype = "F32" if ftype == FileType.F32 else "BF16" if ftype != FileType.F16 else "F16"
    return WeightBytes(
        file_type=ftype.value,
        params=sum(spec.n_elements for spec in specs),
        tensor_bytes=total,
        metadata_bytes=0,
        file_bytes=checkpoint,  # safetensors: the tensors (headers are a few KiB), without the rotary cache
        token_embd_bytes=embd,
        token_embd_type=dtype,
        output_bytes=out,  # tied: vLLM shares one matrix, so no separate head
        output_type=dtype if out else "",
        layer_bytes=roles.layers,
        expert_layer_bytes=roles.experts,
        gpu_bytes=total,  # vLLM keeps the embeddings on the GPU too
        host_bytes=0,
    )


def measured_checkpoint_weights(arch: Architecture, checkpoint: Checkpoint) -> WeightBytes:
    """A safetensors checkpoint measured from its headers (:mod:`calc.safetensors`) as vLLM holds it on the GPU: its
    tensors' own bytes (vLLM loads FP8 weights with their scales, AWQ/GPTQ's packed INT4 with scales and zero points,
    16-bit tensors as stored), plus vLLM's rotary cache and, for MXFP4 experts, the padding of the expert width to
    256 (:func:`_vllm_mxfp4_bytes`). Layers past ``num_hidden_layers`` (a multi-token-prediction block) are in the
    file but not loaded."""
    ftype = FileType(checkpoint.file_type)
    unloaded = sum(n for layer, n in checkpoint.layer_bytes.items() if layer >= arch.n_layers)
    layers = tuple(checkpoint.layer_bytes.get(il, 0) for il in range(arch.n_layers))
    experts = tuple(checkpoint.expert_layer_bytes.get(il, 0) for il in range(arch.n_layers))
    padding = 0
    if checkpoint.mxfp4_expert_bytes and arch.expert_ffn_size:
        n_ff = arch.expert_ffn_size
        padding = checkpoint.mxfp4_expert_bytes * (-(-n_ff // 256) * 256 - n_ff) // n_ff
    loaded = checkpoint.tensor_bytes - unloaded + padding
    total = loaded + _rotary_cache_bytes(arch, ftype)
    return WeightBytes(
        file_type=ftype.value,
        params=checkpoint.params,
        tensor_bytes=total,
        metadata_bytes=0,
        file_bytes=checkpoint.tensor_bytes,  # the tensors as stored (headers are a few KiB)
        token_embd_bytes=checkpoint.embd_bytes,
        token_embd_type=checkpoint.embd_dtype,
        output_bytes=checkpoint.out_bytes,  # tied: one matrix, no separate head
        output_type=checkpoint.out_dtype,
        layer_bytes=layers,
        expert_layer_bytes=experts,
        gpu_bytes=total,  # vLLM keeps the embeddings on the GPU too
        host_bytes=0,
    )
