"""LLM_ARCH_GLM4_MOE (GLM-4.5, GLM-4.5-Air, GLM-4.6, GLM-4.7): biased q/k/v, optional q/k norms, leading dense
blocks then sigmoid-routed experts with the routing bias and one shared expert, and the converter's MTP blocks.

Mirrors llama.cpp 0c1e57098: src/models/glm4-moe.cpp, conversion/glm.py Glm4MoeModel; measured (LLAMACPP.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vramfit.calc.architecture import Architecture
from vramfit.calc.config_fields import ROUTED_EXPERT_KEYS, ConfigFields, require_experts
from vramfit.calc.families.family import Family, GgufMeta
from vramfit.calc.limits import MAX_LAYERS
from vramfit.calc.tensor_specs import TensorList, dense_ffn, layer_is_moe, moe_ffn


def glm4moe_mtp(fields: ConfigFields) -> dict[str, Any]:
    """GLM-4.5's multi-token-prediction blocks and the MoE numbers its loader cannot do without.

    conversion/glm.py Glm4MoeModel adds num_nextn_predict_layers to block_count and writes those blocks (a full MoE
    decoder block plus nextn.eh_proj / embed_tokens / enorm / hnorm / shared_head_head / shared_head_norm);
    src/models/glm4-moe.cpp creates them with TENSOR_SKIP unless an MTP context asks for them, and the KV cache of
    an ordinary context filters them out (llama-model.cpp: ``il < n_layer()``). The loader asserts n_expert > 0
    and n_expert_used > 0 (glm4-moe.cpp:42-43): a config without them is not a GLM-4.5 llama.cpp can load.
    """
    require_experts(fields, "glm4_moe", ROUTED_EXPERT_KEYS)
    return {"nextn_layers": fields.number("num_nextn_predict_layers", default=0, high=MAX_LAYERS)}


def glm4moe_layers(b: TensorList, arch: Architecture) -> None:
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
            moe_ffn(b, arch, il)
            b.blk(il, "exp_probs_b.bias", arch.n_experts)
        else:
            dense_ffn(b, arch, il, arch.ffn_size[il])

    for il in range(arch.n_layers):
        block(il, arch.n_heads[il], arch.n_kv_heads[il], layer_is_moe(arch, il))
    for il in range(arch.n_layers, arch.n_layers + arch.nextn_layers):
        block(il, max(arch.n_heads), max(arch.n_kv_heads), True)
        b.blk(il, "nextn.eh_proj.weight", 2 * n_embd, n_embd)
        b.blk(il, "nextn.embed_tokens.weight", n_embd, vocab)
        b.blk(il, "nextn.enorm.weight", n_embd)
        b.blk(il, "nextn.hnorm.weight", n_embd)
        b.blk(il, "nextn.shared_head_head.weight", n_embd, vocab)
        b.blk(il, "nextn.shared_head_norm.weight", n_embd)


class Glm4Moe(Family, arch="glm4moe", model_types=("glm4_moe",), mtp_graph=True):
    """Mirrors src/models/glm4-moe.cpp, conversion/glm.py Glm4MoeModel (0c1e57098)."""

    def mtp(self, fields: ConfigFields) -> dict[str, Any]:
        return glm4moe_mtp(fields)

    def has_qk_norm(self, config: Mapping[str, Any]) -> bool:
        return bool(config.get("use_qk_norm"))  # GLM-4.5's use_qk_norm

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        glm4moe_layers(tensors, arch)

    def gguf_keys(self, meta: GgufMeta, config: Mapping[str, Any], names: set[str]) -> dict[str, Any]:
        """Glm4MoeModel counts its NextN/MTP blocks in block_count and says how many in nextn_predict_layers; the q/k
        norms (GLM-4.5's use_qk_norm) and q/k/v biases are known only from the tensors themselves."""
        out: dict[str, Any] = {}
        nextn = meta("nextn_predict_layers", 0)
        blocks = config.get("num_hidden_layers")
        if isinstance(blocks, int) and isinstance(nextn, int):
            out["num_hidden_layers"] = blocks - nextn
            out["num_nextn_predict_layers"] = nextn
        out["use_qk_norm"] = "blk.0.attn_q_norm.weight" in names
        out["attention_bias"] = "blk.0.attn_q.bias" in names
        return out
