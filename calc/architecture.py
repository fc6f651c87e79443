"""The shape of a transformer, as the memory model needs it.

`Architecture` is a frozen description of one model: layer count, attention geometry per layer (heads, KV heads,
key and value head sizes, sliding window, MLA latent), feed-forward sizes (dense and mixture-of-experts) and the
vocabulary. It is built from a Hugging Face ``config.json`` mapping by :func:`from_hf_config`, which is the one
place that knows the many spellings those configs use, and is named after llama.cpp's architecture names
(``general.architecture`` in a GGUF file) because llama.cpp's per-architecture rules decide tensor layout,
sliding-window layers and which tensors are fused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from calc.errors import BadFileError

# Hugging Face `model_type` → llama.cpp architecture (convert_hf_to_gguf.py registers these).
HF_TO_LLAMA_ARCH: dict[str, str] = {
    "llama": "llama",
    "mistral": "llama",  # converted as LLM_ARCH_LLAMA; llama.cpp ignores Mistral's sliding window
    "mixtral": "llama",  # Mixtral is llama with ffn_*_exps tensors
    "solar": "llama",
    "hyperclovax": "llama",
    "granite": "granite",
    "qwen2": "qwen2",
    "qwen2_moe": "qwen2moe",
    "qwen3": "qwen3",
    "qwen3_moe": "qwen3moe",
    "gemma": "gemma",
    "gemma2": "gemma2",
    "gemma3": "gemma3",
    "gemma3_text": "gemma3",
    "phi3": "phi3",
    "phimoe": "phimoe",
    "deepseek_v2": "deepseek2",
    "deepseek_v3": "deepseek2",
    "kimi_k2": "deepseek2",
    "gpt_oss": "gpt-oss",
    "cohere": "command-r",
    "cohere2": "cohere2",
    "exaone": "exaone",
    "exaone4": "exaone4",
    "glm4": "glm4",
    "mistral3": "llama",
    "olmo2": "olmo2",
    "starcoder2": "starcoder2",
}

# Architectures whose sliding-window layers llama.cpp sizes by the window (llama_hparams::set_swa_pattern callers).
# Everything else stores the full context in every layer, even when config.json names a window (Mistral v0.1,
# Phi-3: llama.cpp logs "Phi SWA is currently disabled" and keeps full-size caches).
SWA_PATTERN_BY_ARCH: dict[str, int] = {
    "gemma2": 2,  # even layers slide: il % 2 < 1
    "gemma3": 6,  # five sliding layers, then one global
    "cohere2": 4,
    "gpt-oss": 2,
    "exaone4": 4,
}


class Architecture(BaseModel):
    """Memory-relevant shape of a decoder-only transformer (per-layer values are tuples of length ``n_layers``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    arch: str = Field(description="llama.cpp architecture name, e.g. 'llama', 'qwen2', 'gemma2', 'deepseek2'")
    n_layers: int = Field(gt=0)
    hidden_size: int = Field(gt=0)
    n_heads: tuple[int, ...] = Field(description="query heads per layer (0: no attention in that layer)")
    n_kv_heads: tuple[int, ...] = Field(description="KV heads per layer (0: the layer holds no KV cache)")
    head_dim_k: int = Field(gt=0, description="key head size (often not hidden_size / heads)")
    head_dim_v: int = Field(gt=0, description="value head size")
    ffn_size: tuple[int, ...] = Field(description="dense feed-forward width per layer (0 where the layer is MoE)")
    vocab_size: int = Field(gt=0)
    tied_embeddings: bool = False
    context_length: int = Field(default=4096, gt=0, description="training context (max_position_embeddings)")
    sliding_window: int = Field(default=0, ge=0, description="0: no sliding-window attention")
    swa_layers: tuple[bool, ...] = Field(default=(), description="True where the layer uses the sliding window")
    # Mixture of experts.
    n_experts: int = Field(default=0, ge=0)
    n_experts_used: int = Field(default=0, ge=0)
    expert_ffn_size: int = Field(default=0, ge=0)
    n_shared_experts: int = Field(default=0, ge=0)
    shared_expert_ffn_size: int = Field(default=0, ge=0, description="width of the shared expert block")
    moe_layers: tuple[bool, ...] = Field(default=(), description="True where the layer's FFN is a MoE block")
    experts_mxfp4: bool = Field(
        default=False, description="the checkpoint ships expert weights as MXFP4 (gpt-oss); GGUFs keep them so"
    )
    # Multi-head latent attention (DeepSeek V2/V3).
    kv_lora_rank: int = Field(default=0, ge=0)
    q_lora_rank: int = Field(default=0, ge=0)
    qk_rope_head_dim: int = Field(default=0, ge=0)
    qk_nope_head_dim: int = Field(default=0, ge=0)
    v_head_dim: int = Field(default=0, ge=0)
    # Small tensors that change byte counts (biases, norms).
    attention_bias: bool = False
    qk_norm: bool = False
    # 1-D RoPE factor tensors convert_hf_to_gguf.py writes: rope_freqs (llama3 scaling) or long+short (longrope).
    rope_factor_tensors: int = Field(default=0, ge=0, le=2)

    @model_validator(mode="after")
    def _per_layer_lengths(self) -> Architecture:
        for name in ("n_heads", "n_kv_heads", "ffn_size"):
            if len(getattr(self, name)) != self.n_layers:
                raise ValueError(f"{name} must have one value per layer ({self.n_layers})")
        for name in ("swa_layers", "moe_layers"):
            value = getattr(self, name)
            if value and len(value) != self.n_layers:
                raise ValueError(f"{name} must be empty or have one value per layer ({self.n_layers})")
        return self

    @property
    def is_mla(self) -> bool:
        """DeepSeek-style latent attention: llama.cpp caches one latent of kv_lora_rank + rope dims per token."""
        return self.kv_lora_rank > 0

    @property
    def is_moe(self) -> bool:
        return self.n_experts > 0

    def layer_is_swa(self, layer: int) -> bool:
        return bool(self.swa_layers) and self.sliding_window > 0 and self.swa_layers[layer]

    def layer_is_moe(self, layer: int) -> bool:
        return bool(self.moe_layers) and self.moe_layers[layer]

    @property
    def max_heads(self) -> int:
        return max(self.n_heads)

    @property
    def kv_layers(self) -> int:
        """Layers that hold a KV cache."""
        return sum(1 for h in self.n_kv_heads if h > 0)

    @property
    def typical_kv_heads(self) -> int:
        """The KV head count people quote (the largest per-layer value)."""
        return max(self.n_kv_heads)


def _per_layer(value: Any, n_layers: int, name: str) -> tuple[int, ...]:
    if isinstance(value, Sequence) and not isinstance(value, str):
        if len(value) != n_layers:
            raise BadFileError(f"config.json: {name} has {len(value)} entries for {n_layers} layers")
        return tuple(int(v) for v in value)
    return (int(value),) * n_layers


def _get(config: Mapping[str, Any], *keys: str, default: Any = None) -> Any:
    for key in keys:
        value = config.get(key)
        if value is not None:
            return value
    return default


def _swa_layers(config: Mapping[str, Any], arch: str, n_layers: int) -> tuple[bool, ...]:
    if arch not in SWA_PATTERN_BY_ARCH:
        return ()  # llama.cpp keeps full-size caches for this architecture whatever config.json says
    layer_types = config.get("layer_types")
    if isinstance(layer_types, Sequence) and not isinstance(layer_types, str) and len(layer_types) == n_layers:
        return tuple(str(t) in ("sliding_attention", "sliding", "local") for t in layer_types)
    pattern = config.get("sliding_window_pattern") or SWA_PATTERN_BY_ARCH.get(arch, 0)
    if not isinstance(pattern, int) or pattern <= 1:
        return ()
    # llama.cpp llama_hparams::set_swa_pattern: layer il slides when il % pattern < pattern - 1.
    return tuple(il % pattern < pattern - 1 for il in range(n_layers))


def _quant_method(config: Mapping[str, Any]) -> str:
    """The checkpoint's own quantization (config.json ``quantization_config.quant_method``), if any."""
    quantization = config.get("quantization_config")
    return str(quantization.get("quant_method", "")) if isinstance(quantization, Mapping) else ""


def _moe_layers(config: Mapping[str, Any], n_layers: int, n_experts: int) -> tuple[bool, ...]:
    if n_experts == 0:
        return ()
    first_dense = int(config.get("first_k_dense_replace") or 0)
    step = int(config.get("moe_layer_freq") or config.get("decoder_sparse_step") or 1)
    dense_only = {int(i) for i in config.get("mlp_only_layers") or ()}
    return tuple(il >= first_dense and il not in dense_only and (il % step == 0 or step == 1) for il in range(n_layers))


def from_hf_config(config: Mapping[str, Any]) -> Architecture:
    """Build an :class:`Architecture` from a Hugging Face config.json mapping (text_config is used when present)."""
    if not isinstance(config, Mapping):
        raise BadFileError("config.json must be a JSON object")
    text = config.get("text_config")
    if isinstance(text, Mapping) and "num_hidden_layers" in text:
        merged = dict(text)
        merged.setdefault("model_type", config.get("model_type"))
        config = merged
    model_type = str(config.get("model_type") or "llama")
    # A config written by vramfit's own tools may name the llama.cpp architecture directly.
    arch = str(config.get("llama_arch") or HF_TO_LLAMA_ARCH.get(model_type, model_type))
    try:
        n_layers = int(_get(config, "num_hidden_layers", "n_layer", "num_layers"))
        hidden = int(_get(config, "hidden_size", "n_embd", "d_model"))
        heads_raw = _get(config, "num_attention_heads", "n_head")
        vocab = int(_get(config, "vocab_size"))
    except (TypeError, ValueError) as exc:
        raise BadFileError(f"config.json lacks a required field ({exc})") from exc
    n_heads = _per_layer(heads_raw, n_layers, "num_attention_heads")
    kv_raw = _get(config, "num_key_value_heads", "n_head_kv", default=heads_raw)
    n_kv_heads = _per_layer(kv_raw, n_layers, "num_key_value_heads")
    max_heads = max(n_heads) or 1

    kv_lora_rank = int(config.get("kv_lora_rank") or 0)
    if kv_lora_rank:
        rope = int(config.get("qk_rope_head_dim") or 64)
        nope = int(config.get("qk_nope_head_dim") or 128)
        v_head = int(config.get("v_head_dim") or 128)
        # llama.cpp (since the MLA rework) stores the latent as one "head" of kv_lora_rank + rope dims, K only.
        head_k = kv_lora_rank + rope
        head_v = kv_lora_rank
        n_kv_heads = tuple(1 if h else 0 for h in n_heads)
    else:
        rope = nope = v_head = 0
        head_k = int(config.get("head_dim") or hidden // max_heads)
        head_v = int(config.get("v_head_dim") or head_k)

    n_experts = int(_get(config, "num_local_experts", "num_experts", "n_routed_experts", default=0) or 0)
    n_used = int(_get(config, "num_experts_per_tok", "num_experts_per_token", "moe_topk", default=0) or 0)
    dense_ffn_raw = _get(config, "intermediate_size", "n_inner", "ffn_hidden_size", default=4 * hidden)
    moe_layers = _moe_layers(config, n_layers, n_experts)
    if n_experts and (model_type in ("mixtral", "gpt_oss", "phimoe") or arch in ("gpt-oss", "phimoe")):
        # These configs give the per-expert width as intermediate_size and have no dense layers.
        expert_ffn = int(dense_ffn_raw)
        dense_ffn = (0,) * n_layers
    else:
        expert_ffn = int(config.get("moe_intermediate_size") or 0)
        dense_ffn = _per_layer(dense_ffn_raw, n_layers, "intermediate_size")
        if moe_layers:
            dense_ffn = tuple(0 if moe else f for moe, f in zip(moe_layers, dense_ffn, strict=True))
    n_shared = int(config.get("n_shared_experts") or 0)
    shared_ffn = int(config.get("shared_expert_intermediate_size") or 0)
    if n_shared and not shared_ffn:
        shared_ffn = n_shared * expert_ffn  # DeepSeek: the shared experts form one FFN of n_shared × expert width
    if shared_ffn and not n_shared:
        n_shared = 1

    window = int(config.get("sliding_window") or 0)
    if config.get("use_sliding_window") is False:
        window = 0
    swa = _swa_layers(config, arch, n_layers) if window else ()
    if not any(swa):
        swa, window = (), 0

    tied = config.get("tie_word_embeddings")
    if tied is None:
        tied = arch in ("gemma", "gemma2", "gemma3")  # transformers' default for these configs
    context = int(_get(config, "max_position_embeddings", "n_positions", "seq_length", default=4096))
    scaling = config.get("rope_scaling")
    rope_type = str(scaling.get("rope_type") or scaling.get("type") or "") if isinstance(scaling, Mapping) else ""
    # LlamaModel/ExaoneModel write one rope_freqs tensor for llama3 scaling; Phi3MiniModel writes long+short factors.
    rope_factor_tensors = 1 if rope_type == "llama3" else 2 if rope_type in ("longrope", "su") else 0

    return Architecture(
        arch=arch,
        n_layers=n_layers,
        hidden_size=hidden,
        n_heads=n_heads,
        n_kv_heads=n_kv_heads,
        head_dim_k=head_k,
        head_dim_v=head_v,
        ffn_size=dense_ffn,
        vocab_size=vocab,
        tied_embeddings=bool(tied),
        context_length=context,
        sliding_window=window,
        swa_layers=swa,
        n_experts=n_experts,
        n_experts_used=n_used,
        expert_ffn_size=expert_ffn,
        n_shared_experts=n_shared,
        shared_expert_ffn_size=shared_ffn,
        moe_layers=moe_layers,
        experts_mxfp4=_quant_method(config) == "mxfp4",
        kv_lora_rank=kv_lora_rank,
        q_lora_rank=int(config.get("q_lora_rank") or 0),
        qk_rope_head_dim=rope,
        qk_nope_head_dim=nope,
        v_head_dim=v_head,
        # Qwen2 configs omit attention_bias although the checkpoints carry q/k/v biases.
        attention_bias=bool(config.get("attention_bias") or arch in ("qwen2", "qwen2moe")),
        qk_norm=arch in ("qwen3", "qwen3moe", "gemma3", "olmo2"),
        rope_factor_tensors=rope_factor_tensors,
    )
