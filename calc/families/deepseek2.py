"""LLM_ARCH_DEEPSEEK2 (DeepSeek V2, V3, V3.1, Kimi K2 and K2.5, GLM-4.7-Flash): multi-head latent attention (MLA),
leading dense layers then routed experts with shared experts, and DeepSeek-V3's routing bias.

Mirrors llama.cpp 0c1e57098: src/models/deepseek2.cpp, conversion/deepseek.py DeepseekV2Model (kv_b_proj split into
attn_k_b / attn_v_b). Kimi K2.5's wrapper: its text_config (model_type kimi_k2, DeepseekV3ForCausalLM) is what
llama.cpp converts; the vision tower goes to the mmproj file (kimivl.py). The MLA block and the DSA indexer below are
shared with DeepSeek V3.2 and GLM-5 (calc/families/deepseek32.py, glm_dsa.py). Measured: Kimi K2 and DeepSeek V3.1 on
copies with 4 layers and 16 experts, GLM-4.7-Flash whole with its MTP block in the file (LLAMACPP.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vramfit.calc.architecture import Architecture
from vramfit.calc.config_fields import ConfigFields
from vramfit.calc.errors import BadConfigError
from vramfit.calc.families.family import Family, GgufMeta
from vramfit.calc.limits import MAX_CONTEXT_LENGTH, MAX_HEAD_DIM, MAX_HEADS, MAX_LAYERS
from vramfit.calc.tensor_specs import TensorList, dense_ffn, layer_is_moe, moe_ffn


def mla_layers(b: TensorList, arch: Architecture) -> None:
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
            moe_ffn(b, arch, il)
            if probs_bias:
                b.blk(il, "exp_probs_b.bias", arch.n_experts)
        else:  # the first_k_dense_replace leading layers
            dense_ffn(b, arch, il, arch.ffn_size[il])

    for il in range(arch.n_layers):
        block(il, layer_is_moe(arch, il))
    for il in range(arch.n_layers, arch.n_layers + arch.nextn_layers):
        block(il, True)
        b.blk(il, "nextn.eh_proj.weight", 2 * n_embd, n_embd)
        b.blk(il, "nextn.embed_tokens.weight", n_embd, arch.vocab_size)
        b.blk(il, "nextn.enorm.weight", n_embd)
        b.blk(il, "nextn.hnorm.weight", n_embd)
        b.blk(il, "nextn.shared_head_head.weight", n_embd, arch.vocab_size)
        b.blk(il, "nextn.shared_head_norm.weight", n_embd)


def dsa_indexer(fields: ConfigFields, kv_lora_rank: int, model_type: str) -> dict[str, Any]:
    """The DSA numbers both DSA loaders need (MLA, the indexer's heads and key size, the MTP blocks)."""
    if not kv_lora_rank:
        raise BadConfigError(f"config.json: a {model_type} model needs kv_lora_rank (MLA)", field="kv_lora_rank")
    return {
        "indexer_heads": fields.number("index_n_heads", low=1, high=MAX_HEADS),
        "indexer_head_dim": fields.number("index_head_dim", low=1, high=MAX_HEAD_DIM),
        # DeepseekV32Config's and GlmMoeDsaConfig's default; the converter writes it as attention.indexer.top_k
        "indexer_top_k": fields.number("index_topk", default=2048, low=1, high=MAX_CONTEXT_LENGTH),
        "nextn_layers": fields.number("num_nextn_predict_layers", default=0, high=MAX_LAYERS),
    }


class Deepseek2(Family, arch="deepseek2", routing_bias=True, mtp_graph=True):
    """Mirrors src/models/deepseek2.cpp, conversion/deepseek.py DeepseekV2Model (0c1e57098). DeepSeek-V3's router adds
    e_score_correction_bias before its top-k (topk_method "noaux_tc", DeepseekV3Config's default; V2's "greedy" has
    none). The expert count says nothing about it: a 16-expert copy of Kimi K2 has the bias, DeepSeek-V2's 160 experts
    do not."""

    model_types = ("deepseek_v2", "deepseek_v3", "kimi_k2", "kimi_k25", "glm4_moe_lite")
    noaux_tc_model_types = ("deepseek_v3", "kimi_k2", "kimi_k25")

    def mtp(self, fields: ConfigFields) -> dict[str, Any]:
        """The NextN/MTP blocks in the file. DeepseekV2Model skips the checkpoint's (skip_mtp); GLM-4.7-Flash's
        converter (conversion/glm.py Glm4MoeLiteModel: skip_mtp False) writes num_nextn_predict_layers of them past
        the trunk, counted in block_count and said in nextn_predict_layers, which a header read back gives (no
        model_type); src/models/deepseek2.cpp skips them on load unless an MTP context asks."""
        model_type = str(fields.config.get("model_type") or "")
        if model_type not in _MTP_IN_FILE:
            return {}
        return {"nextn_layers": fields.number("num_nextn_predict_layers", default=0, high=MAX_LAYERS)}

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        mla_layers(tensors, arch)

    def gguf_keys(self, meta: GgufMeta, config: Mapping[str, Any], names: set[str]) -> dict[str, Any]:
        nextn, blocks = meta("nextn_predict_layers", 0), config.get("num_hidden_layers")
        if not (nextn and isinstance(nextn, int) and isinstance(blocks, int)):
            return {}
        return {"num_hidden_layers": blocks - nextn, "num_nextn_predict_layers": nextn}


# The configs whose converter writes the MTP blocks: GLM-4.7-Flash's, and a GGUF header read back (no model_type).
_MTP_IN_FILE = ("glm4_moe_lite", "")
