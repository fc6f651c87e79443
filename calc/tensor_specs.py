"""Tensor specs and the blocks most architectures share, as llama.cpp's loader shapes them.

:class:`TensorSpec` is one tensor of a GGUF file: llama.cpp name, ggml shape ``ne`` = (row length, rows[, experts])
and the type the converter gives it in a 16-bit conversion (``source_type``): F32 for 1-D tensors, norms, biases and
the MoE router (the converter forces those to F32 and ``llama_model_quantize`` never touches them), MXFP4 for gpt-oss
experts (shipped that way) and F16 standing for the model's 16-bit dtype otherwise. :class:`TensorList` collects
them; the functions below write the pieces many families share (attention, dense and routed feed-forward, llama's
block); each family (calc/families/) writes its own blocks with them.

llama.cpp's quantizer does not walk the tensors in file order: it iterates ``llama_model_loader::weights_map``,
a map sorted by ``weight_name_comparer`` (layer number, then name). :func:`loader_order` reproduces that order,
which is the one the quantizer's running counters (``i_attention_wv``, ``i_ffn_down``...) see.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from vramfit.calc.architecture import Architecture
from vramfit.calc.ggml import GgmlType

_LAYER_RE = re.compile(r"blk\.(\d+)\.")


@dataclass(frozen=True, slots=True)
class TensorSpec:
    """One tensor: llama.cpp name, ggml shape ``ne`` (row length first), layer index (None outside blocks)."""

    name: str
    shape: tuple[int, ...]
    layer: int | None = None
    source_type: GgmlType = field(default=GgmlType.F16)

    @property
    def n_elements(self) -> int:
        return math.prod(self.shape)

    @property
    def n_dims(self) -> int:
        """``ggml_n_dims``: trailing dimensions of size 1 do not count."""
        dims = len(self.shape)
        while dims > 1 and self.shape[dims - 1] == 1:
            dims -= 1
        return dims

    @property
    def row_length(self) -> int:
        return self.shape[0]

    @property
    def is_expert(self) -> bool:
        """Routed-expert tensors (``ffn_*_exps``), the ones ``-ot exps=CPU`` / llama.cpp's fit move to RAM."""
        return "_exps." in self.name


def loader_order(tensors: Iterable[TensorSpec]) -> list[TensorSpec]:
    """Sort as ``llama_model_loader::weight_name_comparer``: non-block tensors (layer -1) first, then by layer and
    name. llama-quantize iterates the tensors, and writes the quantized file, in this order."""

    def key(spec: TensorSpec) -> tuple[int, str]:
        match = _LAYER_RE.match(spec.name)
        return (int(match.group(1)) if match else -1, spec.name)

    return sorted(tensors, key=key)


class TensorList:
    """Collects specs; 1-D tensors and the names the converter forces to F32 get ``source_type`` F32."""

    def __init__(self) -> None:
        self.specs: list[TensorSpec] = []

    def add(self, name: str, *shape: int, layer: int | None = None, source: GgmlType | None = None) -> None:
        if any(d <= 0 for d in shape):
            return  # a zero-sized dimension means the tensor does not exist in this layer
        if source is None:
            # convert_hf_to_gguf.py: n_dims <= 1, *_norm.weight, ffn_gate_inp and every non-".weight" tensor are F32.
            f32 = len(shape) <= 1 or name.endswith("_norm.weight") or ".ffn_gate_inp." in name
            f32 = f32 or not name.endswith(".weight")
            source = GgmlType.F32 if f32 else GgmlType.F16
        self.specs.append(TensorSpec(name=name, shape=tuple(shape), layer=layer, source_type=source))

    def blk(self, il: int, name: str, *shape: int, source: GgmlType | None = None) -> None:
        self.add(f"blk.{il}.{name}", *shape, layer=il, source=source)


def layer_is_moe(arch: Architecture, il: int) -> bool:
    if not arch.is_moe:
        return False
    return arch.layer_is_moe(il) if arch.moe_layers else True


def attention(
    b: TensorList,
    arch: Architecture,
    il: int,
    *,
    q_bias: bool = False,
    kv_bias: bool = False,
    o_bias: bool = False,
    qk_norm: bool = False,
) -> None:
    """attn_q/k/v/output as llama.cpp's LLM_ARCH_LLAMA loader shapes them, with optional biases and q/k norms."""
    n_embd = arch.hidden_size
    q_dim = arch.n_heads[il] * arch.head_dim_k
    k_dim = arch.n_kv_heads[il] * arch.head_dim_k
    v_dim = arch.n_kv_heads[il] * arch.head_dim_v
    o_dim = arch.n_heads[il] * arch.head_dim_v
    if q_dim == 0:
        return  # Deci/Nemotron: a layer without attention has no attention tensors at all
    b.blk(il, "attn_q.weight", n_embd, q_dim)
    b.blk(il, "attn_k.weight", n_embd, k_dim)
    b.blk(il, "attn_v.weight", n_embd, v_dim)
    b.blk(il, "attn_output.weight", o_dim, n_embd)
    if q_bias:
        b.blk(il, "attn_q.bias", q_dim)
    if kv_bias:
        b.blk(il, "attn_k.bias", k_dim)
        b.blk(il, "attn_v.bias", v_dim)
    if o_bias:
        b.blk(il, "attn_output.bias", n_embd)
    if qk_norm:
        b.blk(il, "attn_q_norm.weight", arch.head_dim_k)
        b.blk(il, "attn_k_norm.weight", arch.head_dim_k)


def dense_ffn(b: TensorList, arch: Architecture, il: int, n_ff: int) -> None:
    n_embd = arch.hidden_size
    b.blk(il, "ffn_gate.weight", n_embd, n_ff)
    b.blk(il, "ffn_up.weight", n_embd, n_ff)
    b.blk(il, "ffn_down.weight", n_ff, n_embd)


def moe_ffn(b: TensorList, arch: Architecture, il: int, *, shared_gate: bool = False) -> None:
    """Router + merged expert tensors (ffn_*_exps, shape {.., .., n_expert}) + optional shared expert."""
    n_embd, n_exp, n_ff = arch.hidden_size, arch.n_experts, arch.expert_ffn_size
    b.blk(il, "ffn_gate_inp.weight", n_embd, n_exp)
    b.blk(il, "ffn_gate_exps.weight", n_embd, n_ff, n_exp)
    b.blk(il, "ffn_up_exps.weight", n_embd, n_ff, n_exp)
    b.blk(il, "ffn_down_exps.weight", n_ff, n_embd, n_exp)
    n_sh = arch.shared_expert_ffn_size
    if n_sh:
        if shared_gate:
            b.blk(il, "ffn_gate_inp_shexp.weight", n_embd)  # Qwen2-MoE's sigmoid gate on the shared expert
        b.blk(il, "ffn_gate_shexp.weight", n_embd, n_sh)
        b.blk(il, "ffn_up_shexp.weight", n_embd, n_sh)
        b.blk(il, "ffn_down_shexp.weight", n_sh, n_embd)


def ffn(b: TensorList, arch: Architecture, il: int, *, shared_gate: bool = False) -> None:
    if layer_is_moe(arch, il):
        moe_ffn(b, arch, il, shared_gate=shared_gate)
    else:
        dense_ffn(b, arch, il, arch.ffn_size[il])


def llama_layers(b: TensorList, arch: Architecture) -> None:
    """LLM_ARCH_LLAMA (Llama, Mistral, Mixtral), granite, exaone and smollm3.

    LLM_ARCH_SMOLLM3 (src/models/smollm3.cpp at llama.cpp 0c1e57098) creates llama's tensors with no biases and no
    q/k norms, and token_embd doubles as the output head when output.weight is absent (SmolLM3-3B is tied). Its
    NoPE layers (every n_no_rope_layer_step = 4th, fixed in load_arch_hparams) only skip ggml_rope_ext in the graph:
    same tensors, same KV cache in every layer."""
    bias = arch.attention_bias  # LlamaAttention's attention_bias puts a bias on q, k, v and o
    for il in range(arch.n_layers):
        if arch.n_heads[il]:
            b.blk(il, "attn_norm.weight", arch.hidden_size)
        attention(b, arch, il, q_bias=bias, kv_bias=bias, o_bias=bias, qk_norm=arch.qk_norm)
        if arch.ffn_size[il] or layer_is_moe(arch, il):
            b.blk(il, "ffn_norm.weight", arch.hidden_size)
        ffn(b, arch, il)


def post_norm_layers(b: TensorList, arch: Architecture, *, whole_qk_norm: bool = False) -> None:
    """exaone4 and olmo2 (src/models/olmo2.cpp at 0c1e57098, measured: LLAMACPP.md): no pre-norms, q/k norms,
    post-attention and post-ffw norms."""
    for il in range(arch.n_layers):
        if whole_qk_norm:
            attention(b, arch, il)
            b.blk(il, "attn_q_norm.weight", arch.n_heads[il] * arch.head_dim_k)  # OLMo2 normalises all of q / k
            b.blk(il, "attn_k_norm.weight", arch.n_kv_heads[il] * arch.head_dim_k)
        else:
            attention(b, arch, il, qk_norm=True)
        b.blk(il, "post_attention_norm.weight", arch.hidden_size)
        dense_ffn(b, arch, il, arch.ffn_size[il])
        b.blk(il, "post_ffw_norm.weight", arch.hidden_size)


def biased_layernorm_layers(b: TensorList, arch: Architecture) -> None:
    """starcoder2 and phimoe (approximate): LayerNorms with biases and fully biased attention."""
    n_embd = arch.hidden_size
    for il in range(arch.n_layers):
        b.blk(il, "attn_norm.weight", n_embd)
        b.blk(il, "attn_norm.bias", n_embd)
        attention(b, arch, il, q_bias=True, kv_bias=True, o_bias=True)
        b.blk(il, "ffn_norm.weight", n_embd)
        b.blk(il, "ffn_norm.bias", n_embd)
        if layer_is_moe(arch, il):
            moe_ffn(b, arch, il)
        else:  # StarCoder2: plain GELU MLP c_fc / c_proj with biases
            b.blk(il, "ffn_up.weight", n_embd, arch.ffn_size[il])
            b.blk(il, "ffn_up.bias", arch.ffn_size[il])
            b.blk(il, "ffn_down.weight", arch.ffn_size[il], n_embd)
            b.blk(il, "ffn_down.bias", n_embd)
