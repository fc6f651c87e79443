"""Reading a Hugging Face ``config.json`` into an :class:`~vramfit.calc.architecture.Architecture`.

:func:`from_hf_config` is the one place that knows the many spellings those configs use. It reads what every
architecture shares (layers, heads, widths, experts, windows, RoPE scaling) and asks the model's family
(calc/families/) for the rest: the converter's defaults, which layers slide, are recurrent or have experts, and the
fields only that family has. A ``model_type`` or ``llama_arch`` no family answers to is ``unsupported_architecture``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from vramfit.calc.architecture import Architecture
from vramfit.calc.config_fields import ConfigFields
from vramfit.calc.errors import BadConfigError, BadFileError, UnsupportedArchitectureError
from vramfit.calc.families import family_for_model_type, family_of, supported_names, unsupported
from vramfit.calc.families.family import Family
from vramfit.calc.limits import (
    MAX_CONTEXT_LENGTH,
    MAX_EXPERTS,
    MAX_FFN,
    MAX_HEAD_DIM,
    MAX_HEADS,
    MAX_HIDDEN,
    MAX_LAYERS,
    MAX_VOCAB,
)


def _quant_method(config: Mapping[str, Any]) -> str:
    """The checkpoint's own quantization (config.json ``quantization_config.quant_method``), if any."""
    quantization = config.get("quantization_config")
    return str(quantization.get("quant_method", "")) if isinstance(quantization, Mapping) else ""


def _moe_layers(fields: ConfigFields, n_layers: int, n_experts: int) -> tuple[bool, ...]:
    if n_experts == 0:
        return ()
    first_dense = fields.number("first_k_dense_replace", default=0, high=MAX_LAYERS)
    step = fields.number("moe_layer_freq", "decoder_sparse_step", default=1, high=MAX_LAYERS) or 1
    dense_only = set(fields.int_list("mlp_only_layers", MAX_LAYERS))
    return tuple(il >= first_dense and il not in dense_only and (il % step == 0 or step == 1) for il in range(n_layers))


def _longrope_factor_length(config: Mapping[str, Any], hidden: int, heads: Any) -> int:
    """Entries of the long/short RoPE factor tensors Phi3MiniModel.generate_extra_tensors writes (conversion/phi.py,
    llama.cpp 0c1e57098): ``rope_dims = int(partial_rotary_factor * n_embd) // n_head``, one factor per rotated pair,
    ``rope_dims / 2`` (the converter refuses factor lists of another length; phi3.cpp loads them as ``n_rot / 2``).
    Phi-4-mini rotates 0.75 of its 128-wide heads: 48 factors each, not 64. 0 (head_dim / 2) without a partial
    rotary factor or with a per-layer head count."""
    params = config.get("rope_parameters")
    fraction = config.get("partial_rotary_factor")
    if fraction is None and isinstance(params, Mapping):
        fraction = params.get("partial_rotary_factor")
    if isinstance(fraction, bool) or not isinstance(fraction, int | float) or not 0 < fraction < 1:
        return 0
    if isinstance(heads, bool) or not isinstance(heads, int) or heads <= 0:
        return 0
    return int(fraction * hidden) // heads // 2


def _rope_scaling(scaling: Any, rope_type: str, context: int) -> dict[str, Any]:
    """The RoPE scaling a config declares, and for YaRN the context it reaches: original_max_position_embeddings
    times the factor, as vLLM derives its max_model_len (vllm/config.py ``_get_and_verify_max_len``). Qwen's "add YaRN
    ×4 for 128K" config reaches 131,072 from 32,768; DeepSeek V3's 40 × 4,096 is its own 163,840. The other kinds
    extend nothing here: llama3/longrope configs give the scaled length as max_position_embeddings already, and
    Gemma 3's linear ×8 is inside its 131,072. Malformed numbers declare nothing (no longer context is guessed)."""
    if not isinstance(scaling, Mapping) or not rope_type or rope_type == "default":
        return {}
    factor = scaling.get("factor")
    factor = float(factor) if isinstance(factor, int | float) and not isinstance(factor, bool) else 0.0
    if not 0.0 < factor <= 1024.0:
        return {}
    declared: dict[str, Any] = {"rope_scaling_type": rope_type[:40], "rope_scaling_factor": factor}
    original = scaling.get("original_max_position_embeddings")
    if rope_type == "yarn" and isinstance(original, int) and not isinstance(original, bool) and original > 0:
        reached = int(original * factor)
        if reached > context:
            declared["rope_scaled_context"] = min(reached, MAX_CONTEXT_LENGTH)
    return declared


def text_model_config(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """The text model's keys of a config.json: a multimodal checkpoint's ``text_config`` with the wrapper's
    ``model_type`` and ``tie_word_embeddings`` where it lacks them (Qwen3.5 says the latter beside text_config), or
    the config itself."""
    text = config.get("text_config")
    if not (isinstance(text, Mapping) and "num_hidden_layers" in text):
        return config
    merged = dict(text)
    merged.setdefault("model_type", config.get("model_type"))
    if config.get("tie_word_embeddings") is not None:
        merged.setdefault("tie_word_embeddings", config["tie_word_embeddings"])
    return merged


def declares_vision_encoder(config: Mapping[str, Any]) -> bool:
    """Whether a config.json describes a vision encoder beside its text model (a ``vision_config``: Kimi K2.5, Gemma 3,
    Qwen3.5, Llama 4 Maverick). llama.cpp's converter writes the encoder and its projector to a separate mmproj file
    (conversion/base.py MmprojModel, 0c1e57098) and the text model alone to the GGUF that is sized here, so the encoder
    is in none of the numbers."""
    vision = config.get("vision_config")
    return isinstance(vision, Mapping) and bool(vision)


def from_hf_config(config: Mapping[str, Any]) -> Architecture:
    """Build an :class:`Architecture` from a Hugging Face config.json mapping (text_config is used when present)."""
    try:
        return _read(config)
    except UnsupportedArchitectureError as error:
        # A family refuses a variant it does not model; the error lists what the calculator does model.
        error.details.setdefault("supported", supported_names(str(error.details.get("field", ""))))
        raise


def _family(config: Mapping[str, Any], model_type: str) -> Family:
    # A config written by vramfit's own tools (or read from a GGUF header) names the llama.cpp architecture directly.
    if config.get("llama_arch") is not None:
        return family_of(str(config["llama_arch"]))
    if not model_type:
        raise BadConfigError("config.json lacks model_type", field="model_type")
    return family_for_model_type(model_type, config)


def _read(config: Mapping[str, Any]) -> Architecture:
    if not isinstance(config, Mapping):
        raise BadFileError("config.json must be a JSON object")
    config = text_model_config(config)
    model_type = str(config.get("model_type") or "")
    family = _family(config, model_type)
    arch = family.arch
    config = family.prepare(config)
    f = ConfigFields(config)
    n_layers = f.number("num_hidden_layers", "n_layer", "num_layers", low=1, high=MAX_LAYERS)
    hidden = f.number("hidden_size", "n_embd", "d_model", low=1, high=MAX_HIDDEN)
    heads_key, heads_raw = f.first("num_attention_heads", "n_head")
    if heads_raw is None:
        raise BadConfigError(f"config.json lacks {heads_key}", field=heads_key)
    vocab = f.number("vocab_size", low=1, high=MAX_VOCAB)
    n_heads = f.per_layer("num_attention_heads", "n_head", n_layers=n_layers, high=MAX_HEADS)
    n_kv_heads = f.per_layer("num_key_value_heads", "n_head_kv", n_layers=n_layers, default=heads_raw, high=MAX_HEADS)
    if not any(n_heads):
        raise BadConfigError(f"config.json: {heads_key} is 0 in every layer", field=heads_key)
    n_kv_heads, swa_head_dim = family.kv_heads(f, n_layers, n_kv_heads)
    for heads, kv_heads in zip(n_heads, n_kv_heads, strict=True):
        if kv_heads > heads or (kv_heads and heads % kv_heads):
            # llama.cpp shares each KV head among n_head / n_head_kv query heads (llama_hparams::n_gqa).
            raise BadConfigError(
                f"config.json: {heads} attention heads cannot share {kv_heads} KV heads evenly",
                field="num_key_value_heads",
            )
    family.check(f)
    recurrent = family.recurrent(f, n_layers)
    mtp = family.mtp(f)
    n_heads, n_kv_heads = family.attention_layers(f, n_layers, n_heads, n_kv_heads)
    if recurrent and not family.parallel_hybrid:
        kinds = recurrent["recurrent_layers"]
        if all(kinds) or not any(kinds):
            raise BadConfigError(
                "config.json: a hybrid model needs both attention and recurrent layers", field="layer_types"
            )
        n_heads = tuple(0 if rec else h for rec, h in zip(kinds, n_heads, strict=True))
        n_kv_heads = tuple(0 if rec else h for rec, h in zip(kinds, n_kv_heads, strict=True))
    max_heads = max(n_heads)

    kv_lora_rank = f.number("kv_lora_rank", default=0, high=MAX_HEAD_DIM)
    if kv_lora_rank:
        rope = f.number("qk_rope_head_dim", default=0, high=MAX_HEAD_DIM) or 64
        nope = f.number("qk_nope_head_dim", default=0, high=MAX_HEAD_DIM) or 128
        v_head = f.number("v_head_dim", default=0, high=MAX_HEAD_DIM) or 128
        # llama.cpp (since the MLA rework) stores the latent as one "head" of kv_lora_rank + rope dims, K only.
        head_k = kv_lora_rank + rope
        head_v = kv_lora_rank
        n_kv_heads = tuple(1 if h else 0 for h in n_heads)
    else:
        rope = nope = v_head = 0
        head_k = f.number("head_dim", default=0, high=MAX_HEAD_DIM) or hidden // max_heads
        head_k = family.key_head_dim(f, head_k)
        head_v = f.number("v_head_dim", default=0, high=MAX_HEAD_DIM) or head_k

    n_experts = f.number("num_local_experts", "num_experts", "n_routed_experts", default=0, high=MAX_EXPERTS)
    n_used = f.number("num_experts_per_tok", "num_experts_per_token", "moe_topk", default=0, high=MAX_EXPERTS)
    ffn_keys = ("intermediate_size", "n_inner", "ffn_hidden_size")
    n_experts, n_used = family.experts(n_experts, n_used)
    moe_layers = _moe_layers(f, n_layers, n_experts)
    if n_experts and not family.experts_modelled:
        # Granite 4.0 H Tiny/Small lay their experts out differently (not modelled yet); LFM2-MoE is its own family.
        raise unsupported(f"{model_type} with experts", field="model_type")
    if n_experts and family.expert_width_from_intermediate_size(model_type):
        # These configs give the per-expert width as intermediate_size and have no dense layers.
        expert_ffn = f.number(*ffn_keys, default=4 * hidden, high=MAX_FFN)
        dense_ffn = (0,) * n_layers
    else:
        expert_ffn = f.number("moe_intermediate_size", default=0, high=MAX_FFN)
        dense_ffn = f.per_layer(*ffn_keys, n_layers=n_layers, default=4 * hidden, high=MAX_FFN)
        if moe_layers:
            dense_ffn = tuple(0 if moe else width for moe, width in zip(moe_layers, dense_ffn, strict=True))
    dense_ffn, moe_layers = family.ffn(f, n_layers, dense_ffn, moe_layers)
    n_shared = f.number("n_shared_experts", default=0, high=MAX_EXPERTS)
    shared_keys = ("shared_expert_intermediate_size", "moe_shared_expert_intermediate_size")  # the latter: Nemotron-H
    shared_ffn = f.number(*shared_keys, default=0, high=MAX_FFN)
    if n_shared and not shared_ffn:
        shared_ffn = n_shared * expert_ffn  # DeepSeek: the shared experts form one FFN of n_shared × expert width
    if shared_ffn and not n_shared:
        n_shared = 1

    window = f.number("sliding_window", default=0, high=MAX_CONTEXT_LENGTH)
    if config.get("use_sliding_window") is False:
        window = 0
    swa = family.swa_layers(f, n_layers) if window else ()
    if not any(swa):
        swa, window = (), 0

    tied = config.get("tie_word_embeddings")
    if tied is None:
        tied = family.tied_by_default  # transformers' default for these configs
    vocab = -(-vocab // family.vocab_multiple) * family.vocab_multiple
    context = f.number(
        "max_position_embeddings", "n_positions", "seq_length", default=4096, low=1, high=MAX_CONTEXT_LENGTH
    )
    scaling = config.get("rope_scaling")
    rope_type = str(scaling.get("rope_type") or scaling.get("type") or "") if isinstance(scaling, Mapping) else ""
    rope_scaling = _rope_scaling(scaling, rope_type, context)
    # LlamaModel/ExaoneModel write one rope_freqs tensor for llama3 scaling; Phi3MiniModel writes long+short factors.
    rope_factor_tensors = 1 if rope_type == "llama3" else 2 if rope_type in ("longrope", "su") else 0
    rope_factor_length = _longrope_factor_length(config, hidden, heads_raw) if rope_factor_tensors == 2 else 0
    q_lora_rank = f.number("q_lora_rank", default=0, high=MAX_HIDDEN)
    # DeepSeek-V3's router adds e_score_correction_bias before its top-k when topk_method is noaux_tc;
    # convert_hf_to_gguf.py writes it as blk.N.exp_probs_b.bias, which the deepseek2 loader creates when present.
    topk_method = config.get("topk_method") or ("noaux_tc" if model_type in family.noaux_tc_model_types else "")
    expert_probs_bias = family.routing_bias and bool(n_experts) and topk_method == "noaux_tc"

    shape: dict[str, Any] = {
        "arch": arch,
        "n_layers": n_layers,
        "hidden_size": hidden,
        "n_heads": n_heads,
        "n_kv_heads": n_kv_heads,
        "head_dim_k": head_k,
        "head_dim_v": head_v,
        "ffn_size": dense_ffn,
        "vocab_size": vocab,
        "tied_embeddings": bool(tied),
        "context_length": context,
        "sliding_window": window,
        "swa_layers": swa,
        "swa_head_dim": swa_head_dim,
        "n_experts": n_experts,
        "n_experts_used": n_used,
        "expert_ffn_size": expert_ffn,
        "n_shared_experts": n_shared,
        "shared_expert_ffn_size": shared_ffn,
        "moe_layers": moe_layers,
        "expert_probs_bias": expert_probs_bias,
        "experts_mxfp4": _quant_method(config) == "mxfp4",
        "kv_lora_rank": kv_lora_rank,
        "q_lora_rank": q_lora_rank,
        "qk_rope_head_dim": rope,
        "qk_nope_head_dim": nope,
        "v_head_dim": v_head,
        "attention_bias": bool(config.get("attention_bias") or family.attention_bias_always),
        "qk_norm": family.has_qk_norm(config),
        "rope_factor_tensors": rope_factor_tensors,
        "rope_factor_length": rope_factor_length,
        **rope_scaling,
        **recurrent,
        **mtp,
    }
    shape.update(family.layout(f, shape))
    if not shape["swa_layers"]:
        shape["swa_head_dim"] = 0
    try:
        return Architecture(**shape)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first.get("loc", ())) or "config"
        raise BadConfigError(f"config.json: {field}: {first.get('msg', 'invalid')}", field=field) from exc
