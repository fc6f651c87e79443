"""The tensors of a GGUF file, predicted from the architecture alone.

:func:`gguf_tensors` lists every tensor ``convert_hf_to_gguf.py`` writes for a model, named and shaped as
llama.cpp's loader (``llama_model::load_tensors`` / ``src/models/*.cpp``) expects them: ``blk.N.attn_q.weight``
with ggml shape ``ne`` = (row length, rows[, experts]). Each spec also records the type the converter gives it in a
16-bit conversion (``source_type``): F32 for 1-D tensors, norms, biases and the MoE router (the converter forces
those to F32 and ``llama_model_quantize`` never touches them), MXFP4 for gpt-oss experts (shipped that way) and F16
standing for the model's 16-bit dtype otherwise.

llama.cpp's quantizer does not walk the tensors in file order: it iterates ``llama_model_loader::weights_map``,
a map sorted by ``weight_name_comparer`` (layer number, then name). :func:`loader_order` reproduces that order,
which is the one the quantizer's running counters (``i_attention_wv``, ``i_ffn_down``...) see.

How sure each layout is. Read in llama.cpp's sources: the quantizer's walk (llama-quant.cpp, the loader's
weight_name_comparer), deepseek2 (graph in src/models/deepseek2.cpp; convert_hf_to_gguf.py splitting kv_b_proj into
attn_k_b / attn_v_b) and the qwen2 loader. Reproduced to the byte by llama.cpp logs or files: llama (Llama
2/3/3.1/3.2/3.3 incl. 70B and rope_freqs), qwen2, qwen3moe, gemma2, phi3 (Phi-3.5-mini, Phi-4, Phi-4-mini), glm4,
glm4moe (GLM-4.5 and -Air), minimax-m2 (MiniMax M2.7), nemotron_h_moe (Nemotron 3 Nano), llama4 (Llama 4 Scout,
Maverick), deepseek32 (DeepSeek V3.2), glm-dsa (GLM-5, and GLM-5.2 with its shared indexers), gemma4 (Gemma 4 31B
and 26B-A4B's expert block), smollm3 (SmolLM3-3B), exaone4 and gpt-oss (EXAONE 4.0 32B, gpt-oss-20b and -120b),
gemma3 (Gemma 3 4B, 12B and 27B), qwen3 (Qwen3 0.6B and 8B), exaone (EXAONE 3.5 7.8B), the big ones on copies with
fewer layers or experts, command-r and cohere2 (Command R 35B and Command R7B on copies with 4 layers) and deepseek2
(Kimi K2 and DeepSeek V3.1 on copies with 4 layers and 16 experts; the V2 files predate the kv_b split; with that
one tensor swapped they match), olmo2 (OLMo 2 7B, and 32B on a copy with 8 layers).
Written from llama.cpp's loader as recalled, not checked against a file: gemma, qwen2moe, granite. Approximate:
starcoder2, phimoe and unknown architectures (llama layout).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from vramfit.calc.architecture import Architecture
from vramfit.calc.errors import UnsupportedArchitectureError
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


class _Builder:
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


# Architectures whose converter never writes output.weight: llama.cpp duplicates token_embd as the output head.
_ALWAYS_TIED = frozenset({"gemma", "gemma2", "gemma3", "gemma4", "command-r", "cohere2", "lfm2"})


def has_output_tensor(arch: Architecture) -> bool:
    """False when the model is tied: no ``output.weight``, token_embd doubles as the output head."""
    return not (arch.tied_embeddings or arch.arch in _ALWAYS_TIED)


def _layer_is_moe(arch: Architecture, il: int) -> bool:
    if not arch.is_moe:
        return False
    return arch.layer_is_moe(il) if arch.moe_layers else True


def _attention(
    b: _Builder,
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


def _dense_ffn(b: _Builder, arch: Architecture, il: int, n_ff: int) -> None:
    n_embd = arch.hidden_size
    b.blk(il, "ffn_gate.weight", n_embd, n_ff)
    b.blk(il, "ffn_up.weight", n_embd, n_ff)
    b.blk(il, "ffn_down.weight", n_ff, n_embd)


def _moe_ffn(b: _Builder, arch: Architecture, il: int, *, shared_gate: bool = False) -> None:
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


def _ffn(b: _Builder, arch: Architecture, il: int, *, shared_gate: bool = False) -> None:
    if _layer_is_moe(arch, il):
        _moe_ffn(b, arch, il, shared_gate=shared_gate)
    else:
        _dense_ffn(b, arch, il, arch.ffn_size[il])


def _layers_llama(b: _Builder, arch: Architecture) -> None:
    """LLM_ARCH_LLAMA (Llama, Mistral, Mixtral), granite, exaone and smollm3.

    LLM_ARCH_SMOLLM3 (src/models/smollm3.cpp at llama.cpp 0c1e57098) creates llama's tensors with no biases and no
    q/k norms, and token_embd doubles as the output head when output.weight is absent (SmolLM3-3B is tied). Its
    NoPE layers (every n_no_rope_layer_step = 4th, fixed in load_arch_hparams) only skip ggml_rope_ext in the graph:
    same tensors, same KV cache in every layer."""
    bias = arch.attention_bias  # LlamaAttention's attention_bias puts a bias on q, k, v and o
    for il in range(arch.n_layers):
        if arch.n_heads[il]:
            b.blk(il, "attn_norm.weight", arch.hidden_size)
        _attention(b, arch, il, q_bias=bias, kv_bias=bias, o_bias=bias, qk_norm=arch.qk_norm)
        if arch.ffn_size[il] or _layer_is_moe(arch, il):
            b.blk(il, "ffn_norm.weight", arch.hidden_size)
        _ffn(b, arch, il)


def _layers_qwen(b: _Builder, arch: Architecture) -> None:
    """qwen2/qwen2moe (q/k/v biases, no o bias) and qwen3/qwen3moe (per-head q/k RMS norms, no biases)."""
    qwen3 = arch.arch in ("qwen3", "qwen3moe")
    bias = arch.attention_bias and not qwen3
    for il in range(arch.n_layers):
        b.blk(il, "attn_norm.weight", arch.hidden_size)
        _attention(b, arch, il, q_bias=bias, kv_bias=bias, qk_norm=qwen3)
        b.blk(il, "ffn_norm.weight", arch.hidden_size)
        _ffn(b, arch, il, shared_gate=arch.arch == "qwen2moe")


def _layers_gemma(b: _Builder, arch: Architecture) -> None:
    """gemma (pre-norms), gemma2 (+ post-attention/post-ffw norms), gemma3 (+ per-head q/k norms)."""
    post = arch.arch in ("gemma2", "gemma3")
    for il in range(arch.n_layers):
        b.blk(il, "attn_norm.weight", arch.hidden_size)
        _attention(b, arch, il, qk_norm=arch.arch == "gemma3")
        if post:
            b.blk(il, "post_attention_norm.weight", arch.hidden_size)
        b.blk(il, "ffn_norm.weight", arch.hidden_size)
        _dense_ffn(b, arch, il, arch.ffn_size[il])
        if post:
            b.blk(il, "post_ffw_norm.weight", arch.hidden_size)


def _layers_phi3(b: _Builder, arch: Architecture) -> None:
    """LLM_ARCH_PHI3: fused attn_qkv {n_embd, n_embd + 2·n_embd_gqa} and fused gate+up as ffn_up {n_embd, 2·n_ff}."""
    n_embd = arch.hidden_size
    for il in range(arch.n_layers):
        q_dim = arch.n_heads[il] * arch.head_dim_k
        kv_dim = arch.n_kv_heads[il] * arch.head_dim_k
        b.blk(il, "attn_norm.weight", n_embd)
        b.blk(il, "attn_qkv.weight", n_embd, q_dim + 2 * kv_dim)
        b.blk(il, "attn_output.weight", q_dim, n_embd)
        b.blk(il, "ffn_norm.weight", n_embd)
        b.blk(il, "ffn_up.weight", n_embd, 2 * arch.ffn_size[il])
        b.blk(il, "ffn_down.weight", arch.ffn_size[il], n_embd)


def _layers_deepseek2(b: _Builder, arch: Architecture) -> None:
    """LLM_ARCH_DEEPSEEK2 with MLA as the current converter writes it (kv_b_proj split into attn_k_b / attn_v_b), and
    LLM_ARCH_DEEPSEEK32 (src/models/deepseek32.cpp): the same blocks with the DSA lightning indexer (indexer.k_norm
    weight and bias, proj, attn_k, attn_q_b), then the NextN/MTP block the converter appends (a full MoE block with
    its indexer, plus nextn.eh_proj / embed_tokens / enorm / hnorm / shared_head_head / shared_head_norm), and
    LLM_ARCH_GLM_DSA (src/models/glm-dsa.cpp, GLM-5): the same again, the indexer only in the layers that have one
    (GLM-5.2's "full" layers; the loader creates it TENSOR_NOT_REQUIRED) and always in the MTP block."""
    n_embd, n_head = arch.hidden_size, arch.n_heads[0]
    rope, nope, v_head = arch.qk_rope_head_dim, arch.qk_nope_head_dim, arch.v_head_dim
    kv_lora, q_lora = arch.kv_lora_rank, arch.q_lora_rank
    # DeepSeek-V3 / Kimi-K2 / V3.2 carry the routing bias e_score_correction_bias (exp_probs_b); V2 does not.
    probs_bias = arch.expert_probs_bias
    index_heads, index_dim = arch.indexer_heads, arch.indexer_head_dim

    def block(il: int, moe: bool) -> None:
        b.blk(il, "attn_norm.weight", n_embd)
        if q_lora:
            b.blk(il, "attn_q_a.weight", n_embd, q_lora)
            b.blk(il, "attn_q_a_norm.weight", q_lora)
            b.blk(il, "attn_q_b.weight", q_lora, n_head * (nope + rope))
        else:  # DeepSeek-V2-Lite: plain q projection
            b.blk(il, "attn_q.weight", n_embd, n_head * (nope + rope))
        b.blk(il, "attn_kv_a_mqa.weight", n_embd, kv_lora + rope)
        b.blk(il, "attn_kv_a_norm.weight", kv_lora)
        b.blk(il, "attn_k_b.weight", nope, kv_lora, n_head)
        b.blk(il, "attn_v_b.weight", kv_lora, v_head, n_head)
        b.blk(il, "attn_output.weight", n_head * v_head, n_embd)
        b.blk(il, "ffn_norm.weight", n_embd)
        if index_dim and (il >= arch.n_layers or arch.layer_has_indexer(il)):
            b.blk(il, "indexer.k_norm.weight", index_dim)
            b.blk(il, "indexer.k_norm.bias", index_dim)
            b.blk(il, "indexer.proj.weight", n_embd, index_heads)
            b.blk(il, "indexer.attn_k.weight", n_embd, index_dim)
            b.blk(il, "indexer.attn_q_b.weight", q_lora, index_heads * index_dim)
        if moe:
            _moe_ffn(b, arch, il)
            if probs_bias:
                b.blk(il, "exp_probs_b.bias", arch.n_experts)
        else:  # the first_k_dense_replace leading layers
            _dense_ffn(b, arch, il, arch.ffn_size[il])

    for il in range(arch.n_layers):
        block(il, _layer_is_moe(arch, il))
    for il in range(arch.n_layers, arch.n_layers + arch.nextn_layers):
        block(il, True)
        b.blk(il, "nextn.eh_proj.weight", 2 * n_embd, n_embd)
        b.blk(il, "nextn.embed_tokens.weight", n_embd, arch.vocab_size)
        b.blk(il, "nextn.enorm.weight", n_embd)
        b.blk(il, "nextn.hnorm.weight", n_embd)
        b.blk(il, "nextn.shared_head_head.weight", n_embd, arch.vocab_size)
        b.blk(il, "nextn.shared_head_norm.weight", n_embd)


def _layers_deepseek4(b: _Builder, arch: Architecture) -> None:
    """LLM_ARCH_DEEPSEEK4 (src/models/deepseek4.cpp load_arch_tensors at 0c1e57098; conversion/deepseek.py
    DeepseekV4Model): per layer the attention (sinks, q_a / q_a_norm / q_b, one K head wkv {n_embd, head_dim} and its
    norm, the grouped output attn_output_a {n_head x head_dim / o_groups, o_lora_rank x o_groups} as the file holds
    it and attn_output_b), the hyper-connection mixers of attention and FFN, the compressor where compress_ratios
    says so (ratio 4: 2 x head_dim wide plus the lightning indexer and its compressor of 2 x index_head_dim; ratio
    128: head_dim wide; ape {width, ratio}), and a MoE block with one shared expert whose router is hash-routed in
    the first num_hash_layers layers (ffn_gate_tid2eid, I32, {n_expert_used, n_vocab}) and bias-corrected after
    (exp_probs_b). The checkpoint's MTP block is not in the file (DeepseekV4Model.filter_tensors skips mtp.*)."""
    n_embd, vocab = arch.hidden_size, arch.vocab_size
    head, q_lora = arch.head_dim_k, arch.q_lora_rank
    index_heads, index_dim = arch.indexer_heads, arch.indexer_head_dim
    hc_dim, hc_mix = arch.hc_mult * n_embd, (2 + arch.hc_mult) * arch.hc_mult
    for il in range(arch.n_layers):
        n_head = arch.n_heads[il]
        b.blk(il, "attn_norm.weight", n_embd)
        b.blk(il, "attn_sinks.weight", n_head)
        b.blk(il, "attn_q_a.weight", n_embd, q_lora)
        b.blk(il, "attn_q_a_norm.weight", q_lora)
        b.blk(il, "attn_q_b.weight", q_lora, n_head * head)
        b.blk(il, "attn_kv.weight", n_embd, head)
        b.blk(il, "attn_kv_a_norm.weight", head)
        b.blk(il, "attn_output_a.weight", n_head * head // arch.o_groups, arch.o_lora_rank * arch.o_groups)
        b.blk(il, "attn_output_b.weight", arch.o_groups * arch.o_lora_rank, n_embd)
        for part in ("attn", "ffn"):
            b.blk(il, f"hc_{part}_fn.weight", hc_dim, hc_mix)
            b.blk(il, f"hc_{part}_base.weight", hc_mix)
            b.blk(il, f"hc_{part}_scale.weight", 3)
        ratio = arch.compress_ratios[il]
        if ratio:
            width = (2 if ratio == 4 else 1) * head
            b.blk(il, "attn_compressor_kv.weight", n_embd, width)
            b.blk(il, "attn_compressor_gate.weight", n_embd, width)
            b.blk(il, "attn_compressor_ape.weight", width, ratio)
            b.blk(il, "attn_compressor_norm.weight", head)
        if ratio == 4:
            b.blk(il, "indexer.proj.weight", n_embd, index_heads)
            b.blk(il, "indexer.attn_q_b.weight", q_lora, index_heads * index_dim)
            b.blk(il, "indexer_compressor_kv.weight", n_embd, 2 * index_dim)
            b.blk(il, "indexer_compressor_gate.weight", n_embd, 2 * index_dim)
            b.blk(il, "indexer_compressor_ape.weight", 2 * index_dim, ratio)
            b.blk(il, "indexer_compressor_norm.weight", index_dim)
        if il < arch.hash_layers:
            b.blk(il, "ffn_gate_tid2eid.weight", arch.n_experts_used, vocab, source=GgmlType.I32)
        else:
            b.blk(il, "exp_probs_b.bias", arch.n_experts)
        b.blk(il, "ffn_norm.weight", n_embd)
        _moe_ffn(b, arch, il)  # with ffn_gate_inp {n_embd, n_expert}
    b.add("output_hc_fn.weight", hc_dim, arch.hc_mult)
    b.add("output_hc_base.weight", arch.hc_mult)
    b.add("output_hc_scale.weight", 1)


def _layers_gpt_oss(b: _Builder, arch: Architecture) -> None:
    """LLM_ARCH_OPENAI_MOE: biased attention with per-head sinks; biased experts (MXFP4 in OpenAI's checkpoints)."""
    n_embd, n_exp, n_ff = arch.hidden_size, arch.n_experts, arch.expert_ffn_size
    # OpenAI's checkpoints store experts as MXFP4 blocks and the converter repacks them unchanged; a 16-bit
    # checkpoint (no quantization_config) gets its experts quantized like any other tensor.
    experts = GgmlType.MXFP4 if arch.experts_mxfp4 else GgmlType.F16
    for il in range(arch.n_layers):
        b.blk(il, "attn_norm.weight", n_embd)
        _attention(b, arch, il, q_bias=True, kv_bias=True, o_bias=True)
        b.blk(il, "attn_sinks.weight", arch.n_heads[il])
        b.blk(il, "post_attention_norm.weight", n_embd)
        b.blk(il, "ffn_gate_inp.weight", n_embd, n_exp)
        b.blk(il, "ffn_gate_inp.bias", n_exp)
        b.blk(il, "ffn_gate_exps.weight", n_embd, n_ff, n_exp, source=experts)
        b.blk(il, "ffn_up_exps.weight", n_embd, n_ff, n_exp, source=experts)
        b.blk(il, "ffn_down_exps.weight", n_ff, n_embd, n_exp, source=experts)
        b.blk(il, "ffn_gate_exps.bias", n_ff, n_exp)
        b.blk(il, "ffn_up_exps.bias", n_ff, n_exp)
        b.blk(il, "ffn_down_exps.bias", n_embd, n_exp)


def _layers_cohere(b: _Builder, arch: Architecture) -> None:
    """command-r (parallel attention+FFN, one norm per layer; q/k layer norms from 64 layers up) and cohere2."""
    bias = arch.attention_bias
    for il in range(arch.n_layers):
        b.blk(il, "attn_norm.weight", arch.hidden_size)
        if arch.arch == "command-r" and arch.n_layers >= 64:
            # llama.cpp creates per-head q/k norms when n_layer >= 64 (Command R+ use_qk_norm); 2-D but "_norm".
            b.blk(il, "attn_q_norm.weight", arch.head_dim_k, arch.n_heads[il])
            b.blk(il, "attn_k_norm.weight", arch.head_dim_k, arch.n_kv_heads[il])
        _attention(b, arch, il, q_bias=bias, kv_bias=bias, o_bias=bias)
        _dense_ffn(b, arch, il, arch.ffn_size[il])


def _layers_post_norm(b: _Builder, arch: Architecture) -> None:
    """exaone4 and olmo2 (src/models/olmo2.cpp at 0c1e57098, measured: LLAMACPP.md): no pre-norms, q/k norms,
    post-attention and post-ffw norms."""
    for il in range(arch.n_layers):
        if arch.arch == "olmo2":
            _attention(b, arch, il)
            b.blk(il, "attn_q_norm.weight", arch.n_heads[il] * arch.head_dim_k)  # OLMo2 normalises all of q / k
            b.blk(il, "attn_k_norm.weight", arch.n_kv_heads[il] * arch.head_dim_k)
        else:
            _attention(b, arch, il, qk_norm=True)
        b.blk(il, "post_attention_norm.weight", arch.hidden_size)
        _dense_ffn(b, arch, il, arch.ffn_size[il])
        b.blk(il, "post_ffw_norm.weight", arch.hidden_size)


def _layers_glm4(b: _Builder, arch: Architecture) -> None:
    """LLM_ARCH_GLM4 (GLM-4-0414): biased q/k/v, sandwich norms, fused gate+up as ffn_up {n_embd, 2·n_ff}."""
    n_embd = arch.hidden_size
    for il in range(arch.n_layers):
        b.blk(il, "attn_norm.weight", n_embd)
        _attention(b, arch, il, q_bias=arch.attention_bias, kv_bias=arch.attention_bias)
        b.blk(il, "post_attention_norm.weight", n_embd)
        b.blk(il, "ffn_norm.weight", n_embd)
        b.blk(il, "ffn_up.weight", n_embd, 2 * arch.ffn_size[il])
        b.blk(il, "ffn_down.weight", arch.ffn_size[il], n_embd)
        b.blk(il, "post_ffw_norm.weight", n_embd)


def _layers_glm4moe(b: _Builder, arch: Architecture) -> None:
    """LLM_ARCH_GLM4_MOE (GLM-4.5, GLM-4.5-Air; conversion/glm.py Glm4MoeModel, src/models/glm4-moe.cpp): biased
    q/k/v, optional per-head q/k norms (GLM-4.5's use_qk_norm), post_attention_norm before the FFN (no ffn_norm),
    first_k_dense_replace dense blocks, then sigmoid-routed experts with the exp_probs_b routing bias and one
    shared expert; the converter appends num_nextn_predict_layers MTP blocks (a full MoE block plus the nextn
    tensors, with their own embed_tokens and shared_head_head of n_embd × n_vocab) that llama.cpp skips on load."""
    n_embd, vocab, head = arch.hidden_size, arch.vocab_size, arch.head_dim_k
    bias = arch.attention_bias

    def block(il: int, heads: int, kv_heads: int, moe: bool) -> None:
        b.blk(il, "attn_norm.weight", n_embd)
        b.blk(il, "attn_q.weight", n_embd, heads * head)
        b.blk(il, "attn_k.weight", n_embd, kv_heads * head)
        b.blk(il, "attn_v.weight", n_embd, kv_heads * arch.head_dim_v)
        if bias:
            b.blk(il, "attn_q.bias", heads * head)
            b.blk(il, "attn_k.bias", kv_heads * head)
            b.blk(il, "attn_v.bias", kv_heads * arch.head_dim_v)
        b.blk(il, "attn_output.weight", heads * arch.head_dim_v, n_embd)
        if arch.qk_norm:
            b.blk(il, "attn_q_norm.weight", head)
            b.blk(il, "attn_k_norm.weight", head)
        b.blk(il, "post_attention_norm.weight", n_embd)
        if moe:
            _moe_ffn(b, arch, il)
            b.blk(il, "exp_probs_b.bias", arch.n_experts)
        else:
            _dense_ffn(b, arch, il, arch.ffn_size[il])

    for il in range(arch.n_layers):
        block(il, arch.n_heads[il], arch.n_kv_heads[il], _layer_is_moe(arch, il))
    for il in range(arch.n_layers, arch.n_layers + arch.nextn_layers):
        block(il, max(arch.n_heads), max(arch.n_kv_heads), True)
        b.blk(il, "nextn.eh_proj.weight", 2 * n_embd, n_embd)
        b.blk(il, "nextn.embed_tokens.weight", n_embd, vocab)
        b.blk(il, "nextn.enorm.weight", n_embd)
        b.blk(il, "nextn.hnorm.weight", n_embd)
        b.blk(il, "nextn.shared_head_head.weight", n_embd, vocab)
        b.blk(il, "nextn.shared_head_norm.weight", n_embd)


def _layers_minimax_m2(b: _Builder, arch: Architecture) -> None:
    """LLM_ARCH_MINIMAX_M2 (MiniMax M2 to M2.7; conversion/minimax.py MiniMaxM2Model, src/models/minimax-m2.cpp):
    unbiased q/k/v/output, q/k RMS norms over the whole projection rather than per head (attn_q_norm of n_head ×
    head_dim, attn_k_norm of n_embd_k_gqa), ffn_norm, then sigmoid-routed experts with the exp_probs_b routing
    bias in every block and no shared expert. Partial rotary (rotary_dim) changes no shape; no MTP tensors."""
    n_embd = arch.hidden_size
    for il in range(arch.n_layers):
        b.blk(il, "attn_norm.weight", n_embd)
        _attention(b, arch, il)
        b.blk(il, "attn_q_norm.weight", arch.n_heads[il] * arch.head_dim_k)
        b.blk(il, "attn_k_norm.weight", arch.n_kv_heads[il] * arch.head_dim_k)
        b.blk(il, "ffn_norm.weight", n_embd)
        _moe_ffn(b, arch, il)
        b.blk(il, "exp_probs_b.bias", arch.n_experts)


def _layers_biased_layernorm(b: _Builder, arch: Architecture) -> None:
    """starcoder2 and phimoe (approximate): LayerNorms with biases and fully biased attention."""
    n_embd = arch.hidden_size
    for il in range(arch.n_layers):
        b.blk(il, "attn_norm.weight", n_embd)
        b.blk(il, "attn_norm.bias", n_embd)
        _attention(b, arch, il, q_bias=True, kv_bias=True, o_bias=True)
        b.blk(il, "ffn_norm.weight", n_embd)
        b.blk(il, "ffn_norm.bias", n_embd)
        if _layer_is_moe(arch, il):
            _moe_ffn(b, arch, il)
        else:  # StarCoder2: plain GELU MLP c_fc / c_proj with biases
            b.blk(il, "ffn_up.weight", n_embd, arch.ffn_size[il])
            b.blk(il, "ffn_up.bias", arch.ffn_size[il])
            b.blk(il, "ffn_down.weight", arch.ffn_size[il], n_embd)
            b.blk(il, "ffn_down.bias", n_embd)


def _layers_qwen35(b: _Builder, arch: Architecture) -> None:
    """LLM_ARCH_QWEN35 / QWEN35MOE / QWEN3NEXT (Qwen3.5 and 3.6, Qwen3-Next; convert_hf_to_gguf.py Qwen3_5TextModel /
    Qwen3_5MoeTextModel / Qwen3NextModel, src/models/qwen35.cpp, qwen35moe.cpp, qwen3next.cpp): three Gated DeltaNet
    layers (fused qkv, z gate, conv1d, alpha/beta, A, dt bias) to one gated-attention layer (q carries the output
    gate, so attn_q is 2 × heads × head_dim wide), a dense FFN or routed experts with a gated shared expert, then the
    converter's multi-token-prediction blocks."""
    n_embd = arch.hidden_size
    key_dim = arch.ssm_groups * arch.ssm_state_size
    value_dim, n_v = arch.ssm_inner_size, arch.ssm_heads
    conv_dim = 2 * key_dim + value_dim
    head = arch.head_dim_k

    def attention(il: int, heads: int, kv_heads: int) -> None:
        b.blk(il, "attn_q.weight", n_embd, 2 * head * heads)
        b.blk(il, "attn_k.weight", n_embd, head * kv_heads)
        b.blk(il, "attn_v.weight", n_embd, head * kv_heads)
        b.blk(il, "attn_output.weight", head * heads, n_embd)
        b.blk(il, "attn_q_norm.weight", head)
        b.blk(il, "attn_k_norm.weight", head)

    for il in range(arch.n_layers):
        b.blk(il, "attn_norm.weight", n_embd)
        b.blk(il, "post_attention_norm.weight", n_embd)
        if arch.layer_is_recurrent(il):
            b.blk(il, "attn_qkv.weight", n_embd, conv_dim)
            b.blk(il, "attn_gate.weight", n_embd, value_dim)
            b.blk(il, "ssm_conv1d.weight", arch.ssm_conv_kernel, conv_dim, source=GgmlType.F32)
            b.blk(il, "ssm_dt.bias", n_v)
            b.blk(il, "ssm_a", n_v)
            if arch.arch == "qwen3next":  # Qwen3NextModel keeps beta and alpha in one projection
                b.blk(il, "ssm_ba.weight", n_embd, 2 * n_v)
            else:
                b.blk(il, "ssm_beta.weight", n_embd, n_v)
                b.blk(il, "ssm_alpha.weight", n_embd, n_v)
            b.blk(il, "ssm_norm.weight", value_dim // n_v)
            b.blk(il, "ssm_out.weight", value_dim, n_embd)
        else:
            attention(il, arch.n_heads[il], arch.n_kv_heads[il])
        _ffn(b, arch, il, shared_gate=True)
    heads, kv_heads = max(arch.n_heads), max(arch.n_kv_heads)
    for il in range(arch.n_layers, arch.n_layers + arch.nextn_layers):  # a full-attention block + the nextn tensors
        b.blk(il, "attn_norm.weight", n_embd)
        b.blk(il, "post_attention_norm.weight", n_embd)
        attention(il, heads, kv_heads)
        if arch.is_moe:
            _moe_ffn(b, arch, il, shared_gate=True)
        else:
            _dense_ffn(b, arch, il, max(arch.ffn_size))
        b.blk(il, "nextn.eh_proj.weight", 2 * n_embd, n_embd)
        b.blk(il, "nextn.enorm.weight", n_embd)
        b.blk(il, "nextn.hnorm.weight", n_embd)
        b.blk(il, "nextn.shared_head_norm.weight", n_embd)


def _layers_gemma4(b: _Builder, arch: Architecture) -> None:
    """LLM_ARCH_GEMMA4 (Gemma 4 31B and 26B-A4B; conversion/gemma.py Gemma4Model, src/models/gemma4.cpp at
    0c1e57098): sliding layers of head size 256 with their own V, global layers of head size 512 whose V is the K
    projection (no attn_v), q/k norms, sandwich norms, a one-value layer_output_scale; one rope_freqs for the global
    layers' proportional RoPE is added after the blocks.

    In an expert block the dense ffn_gate/up/down stay (the loader's "normal FFN as shared expert", here the shared
    expert's width) and the loader adds the router ffn_gate_inp {n_embd, n_expert} with its ffn_gate_inp.scale
    {n_embd} (router.scale), pre_ffw_norm_2, post_ffw_norm_1/2, the checkpoint's fused ffn_gate_up_exps {n_embd,
    2 × n_ff_exp, n_expert}, ffn_down_exps and the per-expert ffn_down_exps.scale {n_expert} (router.per_expert_scale,
    loaded by llama-model.cpp's generic pass of optional scales)."""
    n_embd = arch.hidden_size
    for il in range(arch.n_layers):
        head, _ = arch.layer_head_dims(il)
        heads, kv_heads = arch.n_heads[il], arch.n_kv_heads[il]
        b.blk(il, "attn_norm.weight", n_embd)
        b.blk(il, "attn_q.weight", n_embd, head * heads)
        b.blk(il, "attn_k.weight", n_embd, head * kv_heads)
        if arch.layer_is_swa(il):  # attention_k_eq_v: global layers read V from the K projection
            b.blk(il, "attn_v.weight", n_embd, head * kv_heads)
        b.blk(il, "attn_output.weight", head * heads, n_embd)
        b.blk(il, "attn_q_norm.weight", head)
        b.blk(il, "attn_k_norm.weight", head)
        b.blk(il, "post_attention_norm.weight", n_embd)
        b.blk(il, "layer_output_scale.weight", 1)
        b.blk(il, "ffn_norm.weight", n_embd)
        moe = _layer_is_moe(arch, il)
        _dense_ffn(b, arch, il, arch.shared_expert_ffn_size if moe else arch.ffn_size[il])
        b.blk(il, "post_ffw_norm.weight", n_embd)
        if moe:
            n_exp, n_ff = arch.n_experts, arch.expert_ffn_size
            b.blk(il, "ffn_gate_inp.weight", n_embd, n_exp)
            b.blk(il, "ffn_gate_inp.scale", n_embd)
            b.blk(il, "pre_ffw_norm_2.weight", n_embd)
            b.blk(il, "post_ffw_norm_1.weight", n_embd)
            b.blk(il, "post_ffw_norm_2.weight", n_embd)
            b.blk(il, "ffn_gate_up_exps.weight", n_embd, 2 * n_ff, n_exp)
            b.blk(il, "ffn_down_exps.weight", n_ff, n_embd, n_exp)
            b.blk(il, "ffn_down_exps.scale", n_exp)


def _layers_granitehybrid(b: _Builder, arch: Architecture) -> None:
    """LLM_ARCH_GRANITE_HYBRID (Granite 4.0 H dense; convert_hf_to_gguf.py GraniteHybridModel): Mamba2 layers
    (ssm_in, conv1d with bias, dt bias, A, D, grouped norm, ssm_out) and NoPE attention layers, each with the shared
    MLP written as ffn_gate/up/down."""
    n_embd = arch.hidden_size
    for il in range(arch.n_layers):
        b.blk(il, "attn_norm.weight", n_embd)
        if arch.layer_is_recurrent(il):
            _mamba2(b, arch, il)
        else:
            _attention(b, arch, il)
        b.blk(il, "ffn_norm.weight", n_embd)
        _dense_ffn(b, arch, il, arch.ffn_size[il])


def _mamba2(b: _Builder, arch: Architecture, il: int) -> None:
    """A Mamba2 mixer as GraniteHybridModel / NemotronHModel write it (ssm_in, conv1d with bias, dt bias, A, D,
    grouped norm, ssm_out), shaped as src/models/granite-hybrid.cpp and nemotron-h.cpp create it."""
    n_embd = arch.hidden_size
    inner, groups, state, heads = arch.ssm_inner_size, arch.ssm_groups, arch.ssm_state_size, arch.ssm_heads
    conv_channels = inner + 2 * groups * state
    b.blk(il, "ssm_in.weight", n_embd, 2 * inner + 2 * groups * state + heads)
    b.blk(il, "ssm_conv1d.weight", arch.ssm_conv_kernel, conv_channels, source=GgmlType.F32)
    b.blk(il, "ssm_conv1d.bias", conv_channels)
    b.blk(il, "ssm_dt.bias", heads)
    b.blk(il, "ssm_a", 1, heads)
    b.blk(il, "ssm_d", 1, heads)
    b.blk(il, "ssm_norm.weight", inner // groups, groups)
    b.blk(il, "ssm_out.weight", inner, n_embd)


def _layers_nemotron_h(b: _Builder, arch: Architecture) -> None:
    """LLM_ARCH_NEMOTRON_H / NEMOTRON_H_MOE (Nemotron Nano 9B v2, Nemotron 3 Nano 30B-A3B; conversion/nemotron.py
    NemotronHModel, src/models/nemotron-h.cpp load_arch_tensors): one mixer per block after its attn_norm, as the
    layer's kind says. Recurrent: Mamba2. With KV heads: NoPE attention (biases with attention_bias). Otherwise a
    relu² MLP without gate: ffn_up/ffn_down (nemotron_h), or the routed experts ffn_up_exps/ffn_down_exps with the
    sigmoid router, its exp_probs_b bias and the ungated shared expert ffn_up_shexp/ffn_down_shexp
    (nemotron_h_moe)."""
    n_embd, bias = arch.hidden_size, arch.attention_bias
    for il in range(arch.n_layers):
        b.blk(il, "attn_norm.weight", n_embd)
        if arch.layer_is_recurrent(il):
            _mamba2(b, arch, il)
        elif arch.n_kv_heads[il]:
            _attention(b, arch, il, q_bias=bias, kv_bias=bias, o_bias=bias)
        elif _layer_is_moe(arch, il):
            n_exp, n_ff, n_sh = arch.n_experts, arch.expert_ffn_size, arch.shared_expert_ffn_size
            b.blk(il, "ffn_gate_inp.weight", n_embd, n_exp)
            b.blk(il, "exp_probs_b.bias", n_exp)
            b.blk(il, "ffn_up_exps.weight", n_embd, n_ff, n_exp)
            b.blk(il, "ffn_down_exps.weight", n_ff, n_embd, n_exp)
            b.blk(il, "ffn_up_shexp.weight", n_embd, n_sh)
            b.blk(il, "ffn_down_shexp.weight", n_sh, n_embd)
        else:
            b.blk(il, "ffn_up.weight", n_embd, arch.ffn_size[il])
            b.blk(il, "ffn_down.weight", arch.ffn_size[il], n_embd)


def _layers_lfm2(b: _Builder, arch: Architecture) -> None:
    """LLM_ARCH_LFM2 (convert_hf_to_gguf.py LFM2Model, src/models/lfm2.cpp): gated short-convolution layers
    (in_proj 3 × n_embd, depthwise conv of conv_L_cache taps, out_proj) and GQA layers with q/k norms."""
    n_embd = arch.hidden_size
    for il in range(arch.n_layers):
        b.blk(il, "ffn_norm.weight", n_embd)
        _dense_ffn(b, arch, il, arch.ffn_size[il])
        b.blk(il, "attn_norm.weight", n_embd)
        if arch.layer_is_recurrent(il):
            b.blk(il, "shortconv.conv.weight", arch.ssm_conv_kernel, n_embd, source=GgmlType.F32)
            b.blk(il, "shortconv.in_proj.weight", n_embd, 3 * n_embd)
            b.blk(il, "shortconv.out_proj.weight", n_embd, n_embd)
        else:
            _attention(b, arch, il, qk_norm=True)


@lru_cache(maxsize=1024)
def gguf_tensors(arch: Architecture) -> tuple[TensorSpec, ...]:
    """Every tensor of the GGUF file for ``arch``: token_embd, the blocks in layer order, then the output part."""
    b = _Builder()
    n_embd, vocab = arch.hidden_size, arch.vocab_size
    b.add("token_embd.weight", n_embd, vocab)
    name = arch.arch
    if name in ("qwen2", "qwen2moe", "qwen3", "qwen3moe"):
        _layers_qwen(b, arch)
    elif name in ("gemma", "gemma2", "gemma3"):
        _layers_gemma(b, arch)
    elif name in ("phi3",):
        _layers_phi3(b, arch)
    elif name in ("deepseek2", "deepseek32", "glm-dsa"):
        _layers_deepseek2(b, arch)
    elif name == "deepseek4":
        _layers_deepseek4(b, arch)
    elif name == "gpt-oss":
        _layers_gpt_oss(b, arch)
    elif name in ("command-r", "cohere2"):
        _layers_cohere(b, arch)
    elif name in ("exaone4", "olmo2"):
        _layers_post_norm(b, arch)
    elif name == "glm4":
        _layers_glm4(b, arch)
    elif name == "glm4moe":
        _layers_glm4moe(b, arch)
    elif name == "minimax-m2":
        _layers_minimax_m2(b, arch)
    elif name in ("starcoder2", "phimoe"):
        _layers_biased_layernorm(b, arch)
    elif name in ("qwen35", "qwen35moe", "qwen3next"):
        _layers_qwen35(b, arch)
    elif name == "granitehybrid":
        _layers_granitehybrid(b, arch)
    elif name in ("nemotron_h", "nemotron_h_moe"):
        _layers_nemotron_h(b, arch)
    elif name == "gemma4":
        _layers_gemma4(b, arch)
    elif name == "lfm2":
        _layers_lfm2(b, arch)
    elif name in ("llama", "granite", "exaone", "smollm3", "llama4"):  # the same tensor set (llama4: a shared expert)
        _layers_llama(b, arch)
    else:  # from_hf_config refuses these first; an Architecture built by hand must not be sized as another layout
        raise UnsupportedArchitectureError(f"no tensor layout for {name!r}", subject=name, field="arch")
    # LFM2 normalises after the last layer with token_embd_norm and has no output_norm.
    b.add("token_embd_norm.weight" if name == "lfm2" else "output_norm.weight", n_embd)
    if name in ("starcoder2", "phimoe"):
        b.add("output_norm.bias", n_embd)
    if has_output_tensor(arch):
        b.add("output.weight", n_embd, vocab)
        if name == "phimoe":
            b.add("output.bias", vocab)
    rope_len = arch.head_dim_k // 2  # one factor per rotated pair (n_rot / 2)
    if arch.rope_factor_tensors == 2 and arch.rope_factor_length:
        rope_len = arch.rope_factor_length  # partial rotary (Phi-4-mini): the converter's rope_dims / 2
    if name == "gemma4":
        # Gemma4Model.generate_extra_tensors: the proportional RoPE of the global layers.
        b.add("rope_freqs.weight", rope_len)
    elif arch.rope_factor_tensors == 1:
        b.add("rope_freqs.weight", rope_len)
    elif arch.rope_factor_tensors == 2:
        b.add("rope_factors_long.weight", rope_len)
        b.add("rope_factors_short.weight", rope_len)
    return tuple(b.specs)


def loaded_past_layers(arch: Architecture) -> tuple[str, ...]:
    """Tensors of the MTP blocks that llama.cpp loads in an ordinary context: DeepSeek V3.2's and GLM-5's routing
    bias, which src/models/deepseek32.cpp and src/models/glm-dsa.cpp (0c1e57098) create with TENSOR_NOT_REQUIRED
    instead of the block's skip flags."""
    return (".exp_probs_b.bias",) if arch.arch in ("deepseek32", "glm-dsa") else ()


def count_params(arch: Architecture) -> int:
    """``llama_model_n_params``: elements of every tensor in the file (a tied output head is not counted twice)."""
    return sum(spec.n_elements for spec in gguf_tensors(arch))
