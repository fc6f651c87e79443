"""LLM_ARCH_DEEPSEEK4 (DeepSeek V4 Flash, Pro): a 128-token window plus compressed KV in every layer (calc/kv.py's
compressed caches), hyper-connections, a grouped low-rank output, hash-routed first layers.

Mirrors llama.cpp 0c1e57098: src/models/deepseek4.cpp, src/llama-kv-cache-dsv4.cpp, conversion/deepseek.py
DeepseekV4Model; measured on copies (LLAMACPP.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vramfit.calc.architecture import DSV4_CSA_RATIO, DSV4_HCA_RATIO, Architecture
from vramfit.calc.config_fields import ConfigFields
from vramfit.calc.errors import BadConfigError
from vramfit.calc.families.family import Family, not_modelled
from vramfit.calc.ggml import GgmlType
from vramfit.calc.limits import MAX_CONTEXT_LENGTH, MAX_HEAD_DIM, MAX_HEADS, MAX_HIDDEN, MAX_LAYERS
from vramfit.calc.tensor_specs import TensorList, moe_ffn


def deepseek4_layout(fields: ConfigFields, n_layers: int, n_heads: tuple[int, ...]) -> dict[str, Any]:
    """DeepSeek V4 as llama.cpp 0c1e57098 loads it (src/models/deepseek4.cpp; conversion/deepseek.py DeepseekV4Model,
    the text-model registration: the second DeepseekV4ForCausalLM registration is the vision variant's mmproj).

    * Attention: one K-only head of ``head_dim`` per token (the loader's wkv {n_embd, head_dim}; the caches are made
      K-only with dsv4_make_k_only), 128-token sliding window in every layer (load_arch_hparams: set_swa_pattern(0)).
    * ``compress_ratios`` per layer: 0 window only; 4 "CSA", a compressor (wkv/wgate of 2 x head_dim, ape {2 x
      head_dim, 4}) and the lightning indexer with its own compressor; 128 "HCA", a compressor of head_dim. The
      converter writes the list as config.json gives it (one entry more than the trunk: the MTP block's); the
      loader needs at least one per block and refuses other ratios, and so does this.
    * ``hc_mult`` hyper-connections: hc_attn/hc_ffn fn {hc_mult x n_embd, (2 + hc_mult) x hc_mult}, base, scale {3}
      per layer, and output_hc_fn / base / scale at the head.
    * Grouped low-rank output: attn_output_a {n_head x head_dim / o_groups, o_lora_rank x o_groups}, attn_output_b.
    * MoE in every layer with one shared expert; the first ``num_hash_layers`` route by token id (ffn_gate_tid2eid,
      I32 {n_expert_used, n_vocab}; modify_tensors drops their gate.bias), the rest carry exp_probs_b. The loader
      accepts sqrtsoftplus scoring only.
    * The checkpoint's MTP block (mtp.*) is skipped by filter_tensors unless the converter runs with --mtp-only, which
      writes it to a separate mtp-*.gguf: the main file has num_hidden_layers blocks and no nextn key.
    """
    ratios = (
        fields.int_list("compress_ratios", MAX_LAYERS)
        if isinstance(fields.config.get("compress_ratios"), Sequence)
        else ()
    )
    if len(ratios) < n_layers:
        raise BadConfigError(
            f"config.json: compress_ratios must list a ratio for each of the {n_layers} layers", field="compress_ratios"
        )
    bad = sorted({r for r in ratios[:n_layers] if r not in (0, DSV4_CSA_RATIO, DSV4_HCA_RATIO)})
    if bad:
        raise not_modelled(f"deepseek_v4 with compression ratio {bad[0]}", field="compress_ratios")
    scoring = str(fields.config.get("scoring_func") or "sqrtsoftplus")
    if scoring != "sqrtsoftplus":
        raise not_modelled(f"deepseek_v4 with {scoring} scoring", field="scoring_func")
    groups = fields.number("o_groups", low=1, high=MAX_HEADS)
    head_dim = fields.number("head_dim", low=1, high=MAX_HEAD_DIM)
    if any(h and (h * head_dim) % groups for h in n_heads):
        raise BadConfigError("config.json: o_groups must divide num_attention_heads x head_dim", field="o_groups")
    return {
        "compress_ratios": ratios[:n_layers],
        "hc_mult": fields.number("hc_mult", low=1, high=64),
        "hash_layers": fields.number("num_hash_layers", default=0, high=MAX_LAYERS),
        "o_groups": groups,
        "o_lora_rank": fields.number("o_lora_rank", low=1, high=MAX_HIDDEN),
        "indexer_heads": fields.number("index_n_heads", low=1, high=MAX_HEADS),
        "indexer_head_dim": fields.number("index_head_dim", low=1, high=MAX_HEAD_DIM),
        "indexer_layers": tuple(r == DSV4_CSA_RATIO for r in ratios[:n_layers]),
        "sliding_window": fields.number("sliding_window", low=1, high=MAX_CONTEXT_LENGTH),
        "swa_layers": (True,) * n_layers,
        "q_lora_rank": fields.number("q_lora_rank", low=1, high=MAX_HIDDEN),
        "n_kv_heads": tuple(1 if h else 0 for h in n_heads),
        "moe_layers": (True,) * n_layers,
        "ffn_size": (0,) * n_layers,
    }


def deepseek4_layers(b: TensorList, arch: Architecture) -> None:
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
        moe_ffn(b, arch, il)  # with ffn_gate_inp {n_embd, n_expert}
    b.add("output_hc_fn.weight", hc_dim, arch.hc_mult)
    b.add("output_hc_base.weight", arch.hc_mult)
    b.add("output_hc_scale.weight", 1)


class Deepseek4(Family, arch="deepseek4", model_types=("deepseek_v4",), mtp_graph=True, rs_rollback=True):
    """Mirrors src/models/deepseek4.cpp, conversion/deepseek.py DeepseekV4Model (0c1e57098)."""

    def layout(self, fields: ConfigFields, shape: dict[str, Any]) -> dict[str, Any]:
        layout = deepseek4_layout(fields, shape["n_layers"], shape["n_heads"])
        if not (shape["n_experts"] and shape["n_experts_used"] and shape["expert_ffn_size"]):
            raise BadConfigError(
                "config.json: a deepseek_v4 model needs n_routed_experts, num_experts_per_tok and "
                "moe_intermediate_size",
                field="n_routed_experts",
            )
        return layout

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        deepseek4_layers(tensors, arch)
