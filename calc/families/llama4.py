"""LLM_ARCH_LLAMA4 (Llama 4 Scout, Maverick): llama's tensors with interleaved expert layers, one shared expert, and
chunked attention in three layers of four, cached as a sliding window is.

Mirrors llama.cpp 0c1e57098: src/models/llama4.cpp (load_swa_pattern(ml, 4), n_swa = 8192 whatever
attention_chunk_size says), conversion/llama.py Llama4Model; measured on copies of Scout and Maverick (LLAMACPP.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vramfit.calc.config_fields import ConfigFields
from vramfit.calc.errors import BadConfigError
from vramfit.calc.families.family import Family, GgufMeta
from vramfit.calc.limits import MAX_FFN, MAX_LAYERS

# Llama 4's attention chunk: llama.cpp sets n_swa = 8192 (LLAMA_SWA_TYPE_CHUNKED) whatever attention_chunk_size says
# (src/models/llama4.cpp at 0c1e57098); the converter writes sliding_window 0 only for an all-full model (MobileLLM).
LLAMA4_CHUNK = 8192


def llama4_layout(fields: ConfigFields, n_layers: int, n_experts: int) -> dict[str, Any]:
    """Llama 4's layout as llama.cpp loads it (src/models/llama4.cpp, conversion/llama.py Llama4Model, 0c1e57098).

    The converter swaps the config's widths: ``intermediate_size`` is the experts' (and the one shared expert's)
    width, ``intermediate_size_mlp`` the dense layers'. Layer ``il`` is MoE when ``(il + 1) %
    interleave_moe_layer_step == 0`` (every layer in Scout, every second in Maverick). Three of four layers use
    chunked attention of 8192 tokens, cached as a sliding window is (llama_kv_cache_iswa), unless every entry of
    ``layer_types`` is full attention. The loader refuses a model without experts ("cannot have zero experts")."""
    if not n_experts:
        raise BadConfigError("config.json: a llama4 model needs num_local_experts above 0", field="num_local_experts")
    step = fields.number("interleave_moe_layer_step", default=1, high=MAX_LAYERS)
    moe = tuple(step > 0 and (il + 1) % step == 0 for il in range(n_layers))
    expert_ffn = fields.number("intermediate_size", low=1, high=MAX_FFN)
    dense = fields.number("intermediate_size_mlp", default=expert_ffn, low=1, high=MAX_FFN)
    layer_types = fields.config.get("layer_types")
    all_full = isinstance(layer_types, Sequence) and all(str(t) == "full_attention" for t in layer_types)
    return {
        "moe_layers": moe,
        "ffn_size": tuple(0 if m else dense for m in moe),
        "expert_ffn_size": expert_ffn,
        "n_shared_experts": 1,
        "shared_expert_ffn_size": expert_ffn,
        "sliding_window": 0 if all_full else LLAMA4_CHUNK,
        "swa_layers": () if all_full else tuple(il % 4 < 3 for il in range(n_layers)),
    }


class Llama4(Family, arch="llama4", model_types=("llama4", "llama4_text"), swa_pattern=4, gguf_reads_swa_pattern=False):
    """Mirrors src/models/llama4.cpp, conversion/llama.py Llama4Model (0c1e57098). Sliding window pattern: three
    chunked-attention layers, then one full."""

    def layout(self, fields: ConfigFields, shape: dict[str, Any]) -> dict[str, Any]:
        return llama4_layout(fields, shape["n_layers"], shape["n_experts"])

    def gguf_keys(self, meta: GgufMeta, config: Mapping[str, Any], names: set[str]) -> dict[str, Any]:
        """Llama4Model writes the dense width as feed_forward_length and the experts' as expert_feed_forward_length,
        the reverse of config.json's naming; sliding_window 0 marks an all-full-attention model."""
        out: dict[str, Any] = {
            "intermediate_size_mlp": config["intermediate_size"],
            "intermediate_size": config["moe_intermediate_size"],
            "interleave_moe_layer_step": meta("interleave_moe_layer_step", 1),
        }
        blocks = config["num_hidden_layers"]
        if meta("attention.sliding_window") == 0 and isinstance(blocks, int) and 0 < blocks <= 4096:
            out["layer_types"] = ["full_attention"] * blocks
        return out
