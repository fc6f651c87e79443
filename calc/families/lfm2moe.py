"""LLM_ARCH_LFM2MOE (LFM2-8B-A1B, LFM2-24B-A2B): LFM2's short-convolution and GQA layers, with routed experts in
every layer from ``num_dense_layers`` on.

Mirrors llama.cpp 0c1e57098: src/models/lfm2moe.cpp (load_arch_tensors; its graph is LFM2's, src/models/lfm2.cpp) and
conversion/lfm2.py LFM2MoeModel:

* the converter writes head_count_kv per layer (0 on conv layers), feed_forward_length = intermediate_size (the dense
  layers' width), expert_feed_forward_length = moe_intermediate_size, leading_dense_block_count = num_dense_layers,
  sigmoid gating, shortconv.l_cache = conv_L_cache, and no output.weight (token_embd is the head);
* the blocks are LFM2's (calc/families/lfm2.py writes both); a layer is MoE when ``il >=
  leading_dense_block_count``: ffn_gate_inp {n_embd, n_expert}, ffn_gate/up_exps {n_embd, n_ff_exp, n_expert},
  ffn_down_exps {n_ff_exp, n_embd, n_expert} and the routing bias exp_probs_b {n_expert}, which the loader requires
  (the checkpoint's expert_bias); no shared expert;
* the conv layers hold LFM2's state (n_embd × (L_cache − 1) per layer and sequence), the attention layers the KV cache.

Measured: LFM2-8B-A1B, all 24 layers, Q4_K_M and Q8_0 (tests/data/groundtruth/LLAMACPP.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vramfit.calc.config_fields import ConfigFields, require_experts
from vramfit.calc.families.family import GgufMeta
from vramfit.calc.families.lfm2 import Lfm2
from vramfit.calc.limits import MAX_EXPERTS, MAX_FFN, MAX_LAYERS

# The expert numbers LFM2MoeModel reads as required (hparams[...], find_hparam) and the loader shapes its experts from.
_EXPERT_KEYS = (
    (("num_experts", "num_local_experts"), MAX_EXPERTS),
    (("num_experts_per_tok",), MAX_EXPERTS),
    (("moe_intermediate_size",), MAX_FFN),
)


class Lfm2Moe(Lfm2, arch="lfm2moe", model_types=("lfm2_moe",), experts_modelled=True):
    """Mirrors src/models/lfm2moe.cpp, conversion/lfm2.py LFM2MoeModel (0c1e57098)."""

    def check(self, fields: ConfigFields) -> None:
        require_experts(fields, "lfm2_moe", _EXPERT_KEYS)

    def ffn(
        self, fields: ConfigFields, n_layers: int, dense_ffn: tuple[int, ...], moe_layers: tuple[bool, ...]
    ) -> tuple[tuple[int, ...], tuple[bool, ...]]:
        """The first num_dense_layers layers are dense, of intermediate_size; the rest are MoE."""
        leading = fields.number("num_dense_layers", "first_k_dense_replace", high=MAX_LAYERS)
        width = fields.number("intermediate_size", low=1, high=MAX_FFN)
        moe = tuple(il >= leading for il in range(n_layers))
        return tuple(0 if is_moe else width for is_moe in moe), moe

    def gguf_keys(self, meta: GgufMeta, config: Mapping[str, Any], names: set[str]) -> dict[str, Any]:
        out = super().gguf_keys(meta, config, names)
        out["num_dense_layers"] = config.get("first_k_dense_replace")  # leading_dense_block_count
        return {k: v for k, v in out.items() if v is not None}
