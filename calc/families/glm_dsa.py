"""LLM_ARCH_GLM_DSA (GLM-5, 5.1, 5.2): DeepSeek V3.2's layout with a per-layer indexer (GLM-5.2's "shared" layers
reuse the previous full layer's top-k and hold no indexer keys).

Mirrors llama.cpp 0c1e57098: src/models/glm-dsa.cpp, conversion/glm.py GlmMoeDsaModel; measured on copies of GLM-5
and GLM-5.2 (LLAMACPP.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vramfit.calc.architecture import Architecture
from vramfit.calc.config_fields import ROUTED_EXPERT_KEYS, ConfigFields, require_experts
from vramfit.calc.errors import BadConfigError
from vramfit.calc.families.deepseek2 import dsa_indexer, mla_layers
from vramfit.calc.families.deepseek32 import dsa_gguf_keys
from vramfit.calc.families.family import Family, GgufMeta, not_modelled
from vramfit.calc.limits import MAX_LAYERS
from vramfit.calc.tensor_specs import TensorList

# llama.cpp's rule for a GLM-DSA file without attention.indexer.types (src/models/glm-dsa.cpp at 0c1e57098,
# llama_model_glm_dsa::load_arch_hparams): every layer full when n_ctx_train < 1048576 (GLM-5, 5.1), else
# GLM_5_2_DEFAULT_INDEXER_TYPES, GLM-5.2's pattern.
GLM_DSA_PRE_52_CONTEXT = 1048576


def glm52_default_indexer_types(n_layers: int) -> tuple[bool, ...]:
    """GLM_5_2_DEFAULT_INDEXER_TYPES cut to ``n_layers``: layers 0, 1 and then every fourth from 2 are full, the
    rest shared; past its 78 entries the array is zero (shared)."""
    return tuple(il < 78 and (il < 2 or (il - 2) % 4 == 0) for il in range(n_layers))


def glm_dsa_layout(fields: ConfigFields, kv_lora_rank: int, n_layers: int, context: int) -> dict[str, Any]:
    """GLM-5 / GLM-5.1 / GLM-5.2 as llama.cpp loads them (src/models/glm-dsa.cpp, conversion/glm.py GlmMoeDsaModel
    at 0c1e57098): DeepSeek V3.2's blocks (MLA only: "GLM_DSA architecture requires MLA"; the converter is
    DeepseekV2Model's, first_k_dense_replace dense blocks then sigmoid-routed experts with the noaux_tc bias and one
    shared expert; the NextN/MTP block appended past num_hidden_layers, in the file, not loaded), with two
    differences that change memory:

    * the indexer is per layer: config.json's ``indexer_types`` (GLM-5.2: "full" on layers 0, 1, 2, 6, 10, ..., 74,
      "shared" on the other 57), which GlmMoeDsaModel writes as attention.indexer.types. llama.cpp caches indexer
      keys only on full layers (llama-model.cpp create_memory: ``filter_lid`` = ``il < n_layer && is_indexer_full(il)``
      for LLM_ARCH_GLM_DSA) and creates the indexer tensors TENSOR_NOT_REQUIRED; the checkpoint ships them only on
      full layers and the MTP block (a shared layer reuses the previous full layer's top-k). Without the key every
      layer is full (GLM-5, 5.1: ``is_pre_5_2``, n_ctx_train below 1048576).
    * the loader asserts n_expert > 0 and n_expert_used > 0 on the MoE layers, so a config without experts is not a
      GLM-5 llama.cpp can load.

    A config with a 1,048,576-token context and no indexer_types is refused: llama.cpp would cache GLM-5.2's default
    pattern, but which layers of such a checkpoint carry indexer weights is not known. ``mlp_layer_types`` (GLM-5.2)
    is not read by the converter: first_k_dense_replace decides the dense blocks, as for DeepSeek."""
    dsa = dsa_indexer(fields, kv_lora_rank, "glm_moe_dsa")
    require_experts(fields, "glm_moe_dsa", ROUTED_EXPERT_KEYS)
    kinds = fields.config.get("indexer_types")
    layers: tuple[bool, ...] = ()
    if kinds is None and context >= GLM_DSA_PRE_52_CONTEXT:
        raise not_modelled("glm_moe_dsa with a 1M context and no indexer_types", field="indexer_types")
    if kinds is not None:
        if not isinstance(kinds, Sequence) or isinstance(kinds, str) or len(kinds) != n_layers:
            raise BadConfigError(
                f"config.json: indexer_types must list 'full' or 'shared' for each of the {n_layers} layers",
                field="indexer_types",
            )
        if any(kind not in ("full", "shared") for kind in kinds):
            raise BadConfigError("config.json: indexer_types may hold only 'full' and 'shared'", field="indexer_types")
        if kinds[0] != "full":  # glm-dsa.cpp: GGML_ASSERT(prev_top_k != nullptr) on a shared layer with no full one
            raise BadConfigError("config.json: indexer_types must start with a 'full' layer", field="indexer_types")
        layers = tuple(kind == "full" for kind in kinds)
    return {**dsa, "indexer_layers": () if all(layers) else layers}


def glm_dsa_indexer_types(meta: GgufMeta, config: Mapping[str, Any]) -> list[str] | None:
    """Which trunk layers of a GLM-DSA file have a full indexer, as llama_model_glm_dsa::load_arch_hparams decides
    (src/models/glm-dsa.cpp at 0c1e57098): attention.indexer.types when the file has it, else every layer below a
    1,048,576-token n_ctx_train and GLM_5_2_DEFAULT_INDEXER_TYPES from there (the loader's fallback)."""
    layers, context = config.get("num_hidden_layers"), config.get("max_position_embeddings")
    if not isinstance(layers, int) or not isinstance(context, int) or not 0 < layers <= MAX_LAYERS:
        return None
    types = meta("attention.indexer.types")
    if isinstance(types, list):
        full = tuple(bool(v) for v in types)
    elif context < GLM_DSA_PRE_52_CONTEXT:
        full = (True,) * layers
    else:
        full = glm52_default_indexer_types(layers)
    return ["full" if f else "shared" for f in full]


class GlmDsa(Family, arch="glm-dsa", model_types=("glm_moe_dsa",), routing_bias=True, mtp_graph=True):
    """Mirrors src/models/glm-dsa.cpp, conversion/glm.py GlmMoeDsaModel (0c1e57098). The MTP block's routing bias, which
    glm-dsa.cpp creates with TENSOR_NOT_REQUIRED instead of the skip flags."""

    loaded_past_layers = (".exp_probs_b.bias",)
    noaux_tc_model_types = ("glm_moe_dsa",)

    def layout(self, fields: ConfigFields, shape: dict[str, Any]) -> dict[str, Any]:
        return glm_dsa_layout(fields, shape["kv_lora_rank"], shape["n_layers"], shape["context_length"])

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        mla_layers(tensors, arch)

    def gguf_keys(self, meta: GgufMeta, config: Mapping[str, Any], names: set[str]) -> dict[str, Any]:
        out = dsa_gguf_keys(meta, config)
        out["indexer_types"] = glm_dsa_indexer_types(meta, {**config, **out})
        return out
