"""LLM_ARCH_GEMMA4 (Gemma 4 31B, 26B-A4B, E2B, E4B): sliding layers of head size 256 with their own V, global layers
of head size 512 whose V is the K projection (attention_k_eq_v; the E-models project V on every layer), q/k norms,
sandwich norms; in 26B-A4B an expert block beside the dense MLP of every layer; in the E-models per-layer embeddings
(a table of every layer's inputs kept on the host like token_embd, and three tensors a layer) and KV-sharing layers
(the last num_kv_shared_layers own no cache: llama.cpp's n_layer_kv_from_start; in E2B their MLP is twice as wide).

Mirrors llama.cpp 0c1e57098: src/models/gemma4.cpp, conversion/gemma.py Gemma4Model; measured: Gemma 4 31B, the
26B-A4B expert block and Gemma 4 E4B whole (LLAMACPP.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vramfit.calc.architecture import Architecture
from vramfit.calc.config_fields import ConfigFields, layer_kinds, require_experts
from vramfit.calc.errors import BadConfigError
from vramfit.calc.families.family import Family, GgufMeta
from vramfit.calc.limits import MAX_EXPERTS, MAX_FFN, MAX_HEAD_DIM, MAX_HEADS
from vramfit.calc.tensor_specs import TensorList, dense_ffn, layer_is_moe

# The spellings Gemma4Model's find_hparam accepts, Gemma 4's own first (a GGUF header reads back as the generic ones).
_GEMMA4_EXPERTS = ("num_experts", "num_local_experts")
_GEMMA4_EXPERTS_USED = ("top_k_experts", "num_experts_per_tok")
_GEMMA4_EXPERT_FFN = ("expert_intermediate_size", "moe_intermediate_size")


def gemma4_kv_heads(fields: ConfigFields, n_layers: int, n_kv_heads: tuple[int, ...]) -> tuple[tuple[int, ...], int]:
    """Gemma 4's per-layer KV heads and the sliding layers' head size (convert_hf_to_gguf.py Gemma4Model: head_count_kv
    is num_key_value_heads on sliding layers and num_global_key_value_heads on full ones; key_length_swa is
    head_dim, key_length global_head_dim)."""
    kinds = layer_kinds(fields.config, n_layers, ("sliding_attention",))
    if kinds is None:
        raise BadConfigError("config.json lacks layer_types", field="layer_types")
    global_kv = fields.number("num_global_key_value_heads", default=0, high=MAX_HEADS)
    heads = tuple(kv if sliding or not global_kv else global_kv for sliding, kv in zip(kinds, n_kv_heads, strict=True))
    return heads, fields.number("head_dim", low=1, high=MAX_HEAD_DIM)


def gemma4_experts(fields: ConfigFields, n_layers: int) -> dict[str, Any]:
    """Gemma 4's expert block (Gemma 4 26B-A4B) as llama.cpp 0c1e57098 loads it.

    HF's ``enable_moe_block`` gives every decoder layer a router and ``num_experts`` experts beside its dense MLP.
    conversion/gemma.py Gemma4Model writes TextModel's expert_count / expert_used_count (num_experts, top_k_experts)
    and expert_feed_forward_length (moe_intermediate_size); the checkpoint's fused experts.gate_up_proj stays one
    ffn_gate_up_exps. src/models/gemma4.cpp load_arch_tensors keeps the dense ffn_gate/up/down of intermediate_size
    in every layer ("for expert layers, we use normal FFN as shared expert"), so it is modelled as one shared expert
    of that width. Without the block the layers are dense whatever num_experts says (no ffn_gate_inp is written)."""
    model_type = str(fields.config.get("model_type") or "gemma4")
    if not fields.config.get("enable_moe_block"):
        return {}
    require_experts(
        fields,
        model_type,
        (
            (_GEMMA4_EXPERTS, MAX_EXPERTS),
            (_GEMMA4_EXPERTS_USED, MAX_EXPERTS),
            (_GEMMA4_EXPERT_FFN, MAX_FFN),
        ),
    )
    return {
        "n_experts": fields.number(*_GEMMA4_EXPERTS, high=MAX_EXPERTS),
        "n_experts_used": fields.number(*_GEMMA4_EXPERTS_USED, high=MAX_EXPERTS),
        "expert_ffn_size": fields.number(*_GEMMA4_EXPERT_FFN, high=MAX_FFN),
        "moe_layers": (True,) * n_layers,
        "ffn_size": (0,) * n_layers,
        "n_shared_experts": 1,
        "shared_expert_ffn_size": fields.number("intermediate_size", low=1, high=MAX_FFN),
    }


def gemma4_layers(b: TensorList, arch: Architecture) -> None:
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
        if arch.layer_is_swa(il) or not arch.v_is_k:  # attention_k_eq_v: global layers read V from K
            b.blk(il, "attn_v.weight", n_embd, head * kv_heads)
        b.blk(il, "attn_output.weight", head * heads, n_embd)
        b.blk(il, "attn_q_norm.weight", head)
        b.blk(il, "attn_k_norm.weight", head)
        b.blk(il, "post_attention_norm.weight", n_embd)
        b.blk(il, "layer_output_scale.weight", 1)
        b.blk(il, "ffn_norm.weight", n_embd)
        moe = layer_is_moe(arch, il)
        dense_ffn(b, arch, il, arch.shared_expert_ffn_size if moe else arch.ffn_size[il])
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
        if arch.per_layer_input_size:  # per_layer_input_gate, per_layer_projection, post_per_layer_input_norm
            b.blk(il, "inp_gate.weight", n_embd, arch.per_layer_input_size)
            b.blk(il, "proj.weight", arch.per_layer_input_size, n_embd)
            b.blk(il, "post_norm.weight", n_embd)
    if arch.per_layer_input_size:  # the per-layer embeddings: one table of every layer's inputs, and its projection
        width = arch.per_layer_input_size * arch.n_layers
        b.add("per_layer_token_embd.weight", width, arch.vocab_size)
        b.add("per_layer_model_proj.weight", n_embd, width)
        b.add("per_layer_proj_norm.weight", arch.per_layer_input_size)


class Gemma4(Family, arch="gemma4", swa_pattern=6, tied_by_default=True, always_tied=True, qk_norm=True,
             query_tensors=2):  # fmt: skip
    """Mirrors src/models/gemma4.cpp, conversion/gemma.py Gemma4Model (0c1e57098). A rope_freqs tensor always:
    Gemma4Model.generate_extra_tensors: the global layers' proportional RoPE."""

    model_types = ("gemma4", "gemma4_text")
    rope_freqs_always = True

    def kv_heads(self, fields: ConfigFields, n_layers: int, n_kv_heads: tuple[int, ...]) -> tuple[tuple[int, ...], int]:
        return gemma4_kv_heads(fields, n_layers, n_kv_heads)

    def key_head_dim(self, fields: ConfigFields, head_k: int) -> int:
        """llama.cpp's key_length is the global layers' size; key_length_swa the rest."""
        return fields.number("global_head_dim", default=0, high=MAX_HEAD_DIM) or head_k

    def layout(self, fields: ConfigFields, shape: dict[str, Any]) -> dict[str, Any]:
        n_layers = shape["n_layers"]
        shared = fields.number("num_kv_shared_layers", default=0, high=n_layers - 1)
        edge = {
            # E2B/E4B: the last num_kv_shared_layers reuse the cache of the last layer of their kind before them
            # (llama.cpp's n_layer_kv_from_start), and every layer reads a slice of the per-layer embeddings.
            "kv_shared_layers": shared,
            "per_layer_input_size": fields.number("hidden_size_per_layer_input", default=0, high=MAX_HEAD_DIM),
            "v_is_k": bool(fields.config.get("attention_k_eq_v", True)),
        }
        experts = gemma4_experts(fields, n_layers)
        if not experts:  # dense whatever num_experts says
            ffn_keys = ("intermediate_size", "n_inner", "ffn_hidden_size")
            hidden = shape["hidden_size"]
            ffn = fields.per_layer(*ffn_keys, n_layers=shape["n_layers"], default=4 * hidden, high=MAX_FFN)
            if fields.config.get("use_double_wide_mlp") is True:
                # E2B: the KV-sharing layers' MLP is twice as wide (conversion/gemma.py Gemma4Model writes
                # feed_forward_length per layer, intermediate_size × 2 from block_count − num_kv_shared_layers on;
                # src/models/gemma4.cpp reads hparams.n_ff(i))
                ffn = tuple(size if il < n_layers - shared else 2 * size for il, size in enumerate(ffn))
            experts = {"ffn_size": ffn}
        return {
            "n_experts": 0,
            "n_experts_used": 0,
            "expert_ffn_size": 0,
            "moe_layers": (),
            "n_shared_experts": 0,
            "shared_expert_ffn_size": 0,
            **experts,
            **edge,
        }

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        gemma4_layers(tensors, arch)

    def gguf_keys(self, meta: GgufMeta, config: Mapping[str, Any], names: set[str]) -> dict[str, Any]:
        """Gemma4Model's two head sizes, its shared KV layers, and the expert block: a layer has it when its router
        (ffn_gate_inp) is in the file (src/models/gemma4.cpp)."""
        out = {
            "global_head_dim": config.get("head_dim"),
            "head_dim": meta("attention.key_length_swa"),
            "num_kv_shared_layers": meta("attention.shared_kv_layers", 0),
            "hidden_size_per_layer_input": meta("embedding_length_per_layer_input", 0),
            "enable_moe_block": "blk.0.ffn_gate_inp.weight" in names,
            # a global layer without attn_v reads V from its K projection
            "attention_k_eq_v": sum(name.endswith(".attn_v.weight") for name in names) < config["num_hidden_layers"],
        }
        return {k: v for k, v in out.items() if v is not None}
