"""LLM_ARCH_DEEPSEEK32 (DeepSeek V3.2): DeepSeek V3's MLA blocks with the DSA lightning indexer, whose keys are cached
beside the latent.

Mirrors llama.cpp 0c1e57098: src/models/deepseek32.cpp, conversion/deepseek.py DeepseekV32Model; measured on a copy
(LLAMACPP.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vramfit.calc.architecture import Architecture
from vramfit.calc.config_fields import ConfigFields
from vramfit.calc.families.deepseek2 import dsa_indexer, mla_layers
from vramfit.calc.families.family import Family, GgufMeta
from vramfit.calc.tensor_specs import TensorList


def deepseek32_layout(fields: ConfigFields, kv_lora_rank: int) -> dict[str, Any]:
    """DeepSeek V3.2 as llama.cpp loads it (src/models/deepseek32.cpp, conversion/deepseek.py DeepseekV32Model at
    0c1e57098): MLA only ("DEEPSEEK32 architecture requires MLA"), a lightning indexer in every block whose one key
    head of index_head_dim is cached per token beside the latent (llama_kv_cache_dsa's second cache), and the
    converter's NextN/MTP block appended past num_hidden_layers (skip_mtp False), in the file but not loaded by an
    ordinary context; the noaux_tc routing bias is expert_probs_bias, as for DeepSeek V3."""
    return dsa_indexer(fields, kv_lora_rank, "deepseek_v32")


def dsa_gguf_keys(meta: GgufMeta, config: Mapping[str, Any]) -> dict[str, Any]:
    """DeepseekV32Model and GlmMoeDsaModel count their NextN/MTP block in block_count (nextn_predict_layers says how
    many) and write the indexer's sizes."""
    out: dict[str, Any] = {}
    nextn = meta("nextn_predict_layers", 0)
    blocks = config["num_hidden_layers"]
    if isinstance(blocks, int) and isinstance(nextn, int):
        out["num_hidden_layers"] = blocks - nextn
        out["num_nextn_predict_layers"] = nextn
    out["index_n_heads"] = meta("attention.indexer.head_count")
    out["index_head_dim"] = meta("attention.indexer.key_length")
    out["index_topk"] = meta("attention.indexer.top_k", 2048)
    return out


class Deepseek32(Family, arch="deepseek32", model_types=("deepseek_v32",), routing_bias=True, mtp_graph=True):
    """Mirrors src/models/deepseek32.cpp, conversion/deepseek.py DeepseekV32Model (0c1e57098). The MTP block's routing
    bias, which deepseek32.cpp creates with TENSOR_NOT_REQUIRED instead of the skip flags."""

    loaded_past_layers = (".exp_probs_b.bias",)
    noaux_tc_model_types = ("deepseek_v32",)

    def layout(self, fields: ConfigFields, shape: dict[str, Any]) -> dict[str, Any]:
        return deepseek32_layout(fields, shape["kv_lora_rank"])

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        mla_layers(tensors, arch)

    def gguf_keys(self, meta: GgufMeta, config: Mapping[str, Any], names: set[str]) -> dict[str, Any]:
        return dsa_gguf_keys(meta, config)
