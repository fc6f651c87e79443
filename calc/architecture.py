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

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from vramfit.calc.errors import BadConfigError, BadFileError, UnsupportedArchitectureError
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
    "gemma4": "gemma4",
    "gemma4_text": "gemma4",
    "phi3": "phi3",
    "phimoe": "phimoe",
    "deepseek_v2": "deepseek2",
    "deepseek_v3": "deepseek2",
    "kimi_k2": "deepseek2",
    # Kimi K2.5's wrapper: its text_config (model_type kimi_k2, DeepseekV3ForCausalLM) is what llama.cpp converts, as
    # deepseek2 (conversion/deepseek.py DeepseekV2Model); the vision tower goes to the mmproj file (kimivl.py).
    "kimi_k25": "deepseek2",
    "gpt_oss": "gpt-oss",
    "cohere": "command-r",
    "cohere2": "cohere2",
    "exaone": "exaone",
    "exaone4": "exaone4",
    "glm4": "glm4",
    "glm4_moe": "glm4moe",  # GLM-4.5 / GLM-4.5-Air (conversion/glm.py Glm4MoeModel)
    "minimax_m2": "minimax-m2",  # MiniMax M2 / M2.1 / M2.5 / M2.7 (conversion/minimax.py MiniMaxM2Model)
    "mistral3": "llama",
    # Ministral 3 / Devstral Small 2 text models: LLM_ARCH_MISTRAL3 (conversion/mistral3.py Ministral3Model) with
    # llama's tensors, YaRN and an attention temperature, none of which changes memory.
    "ministral3": "llama",
    "olmo2": "olmo2",
    "smollm3": "smollm3",  # SmolLM3: llama tensors; every 4th layer skips RoPE (no_rope_layer_interval), same memory
    "starcoder2": "starcoder2",
    # Hybrid models: attention layers with a KV cache, the rest with a fixed recurrent state (calc/recurrent.py).
    "qwen3_5": "qwen35",
    "qwen3_5_text": "qwen35",
    "qwen3_5_moe": "qwen35moe",
    "qwen3_5_moe_text": "qwen35moe",
    "qwen3_next": "qwen3next",
    "granitemoehybrid": "granitehybrid",
    "lfm2": "lfm2",
    "deepseek_v32": "deepseek32",  # DeepSeek V3.2 (conversion/deepseek.py DeepseekV32Model): MLA + DSA indexer
    "glm_moe_dsa": "glm-dsa",  # GLM-5 / 5.1 / 5.2 (conversion/glm.py GlmMoeDsaModel): DeepSeek V3.2's layout
    # DeepSeek V4 Flash / Pro (conversion/deepseek.py DeepseekV4Model): a 128-token window plus compressed KV
    # (calc/kv.py _dsv4_cache), hyper-connections, hash-routed first layers.
    "deepseek_v4": "deepseek4",
    "llama4": "llama4",  # Llama 4 Scout / Maverick (conversion/llama.py Llama4Model)
    "llama4_text": "llama4",
    # Nemotron-H; nemotron_h_moe when the config has num_experts_per_tok (conversion/nemotron.py NemotronHModel).
    "nemotron_h": "nemotron_h",
}

# The llama.cpp architectures whose tensors, caches and buffers the calculator models (calc/tensors.py builds each).
SUPPORTED_ARCHS: frozenset[str] = frozenset(HF_TO_LLAMA_ARCH.values()) | {"nemotron_h_moe"}


def unsupported(name: str, *, field: str) -> UnsupportedArchitectureError:
    """The error for an architecture the calculator does not model, naming it and what it does model."""
    supported = sorted(HF_TO_LLAMA_ARCH) if field == "model_type" else sorted(SUPPORTED_ARCHS)
    return UnsupportedArchitectureError(
        f"vramfit does not model the architecture {name!r} yet",
        subject=name[:80],
        field=field,
        supported=", ".join(supported),
    )


# Architectures whose sliding-window layers llama.cpp sizes by the window (llama_hparams::set_swa_pattern callers).
# Everything else stores the full context in every layer, even when config.json names a window (Mistral v0.1,
# Phi-3: llama.cpp logs "Phi SWA is currently disabled" and keeps full-size caches).
SWA_PATTERN_BY_ARCH: dict[str, int] = {
    "gemma2": 2,  # even layers slide: il % 2 < 1
    "gemma3": 6,  # five sliding layers, then one global
    "gemma4": 6,
    "cohere2": 4,
    "gpt-oss": 2,
    "exaone4": 4,
    "llama4": 4,  # three chunked-attention layers, then one full (src/models/llama4.cpp load_swa_pattern(ml, 4))
}

# Llama 4's attention chunk: llama.cpp sets n_swa = 8192 (LLAMA_SWA_TYPE_CHUNKED) whatever attention_chunk_size says
# (src/models/llama4.cpp at 0c1e57098); the converter writes sliding_window 0 only for an all-full model (MobileLLM).
LLAMA4_CHUNK = 8192


class Architecture(BaseModel):
    """Memory-relevant shape of a decoder-only transformer (per-layer values are tuples of length ``n_layers``)."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    arch: str = Field(description="llama.cpp architecture name, e.g. 'llama', 'qwen2', 'gemma2', 'deepseek2'")
    n_layers: int = Field(gt=0)
    hidden_size: int = Field(gt=0)
    n_heads: tuple[int, ...] = Field(description="query heads per layer (0: no attention in that layer)")
    n_kv_heads: tuple[int, ...] = Field(description="KV heads per layer (0: the layer holds no KV cache)")
    head_dim_k: int = Field(gt=0, description="key head size (often not hidden_size / heads)")
    head_dim_v: int = Field(gt=0, description="value head size")
    swa_head_dim: int = Field(
        default=0, ge=0, description="head size of the sliding-window layers when it differs (Gemma 4); 0: the same"
    )
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
    expert_probs_bias: bool = Field(
        default=False, description="the router's exp_probs_b bias (DeepSeek-V3/V3.2, Kimi K2: topk_method noaux_tc)"
    )
    experts_mxfp4: bool = Field(
        default=False, description="the checkpoint ships expert weights as MXFP4 (gpt-oss); GGUFs keep them so"
    )
    # Multi-head latent attention (DeepSeek V2/V3).
    kv_lora_rank: int = Field(default=0, ge=0)
    q_lora_rank: int = Field(default=0, ge=0)
    qk_rope_head_dim: int = Field(default=0, ge=0)
    qk_nope_head_dim: int = Field(default=0, ge=0)
    v_head_dim: int = Field(default=0, ge=0)
    # Recurrent layers (llama_memory_recurrent): Mamba2, Gated DeltaNet and short-convolution blocks hold a state of
    # fixed size per sequence instead of a KV cache. Named as llama_hparams names them (ssm_d_conv, ssm_d_inner, ...).
    recurrent_layers: tuple[bool, ...] = Field(default=(), description="True where the layer is recurrent")
    ssm_conv_kernel: int = Field(default=0, ge=0, description="ssm_d_conv (LFM2: conv_L_cache)")
    ssm_inner_size: int = Field(default=0, ge=0, description="ssm_d_inner")
    ssm_state_size: int = Field(default=0, ge=0, description="ssm_d_state (Gated DeltaNet: key head size)")
    ssm_groups: int = Field(default=0, ge=0, description="ssm_n_group (Gated DeltaNet: key heads)")
    ssm_heads: int = Field(default=0, ge=0, description="ssm_dt_rank (Mamba2 heads; Gated DeltaNet: value heads)")
    nextn_layers: int = Field(default=0, ge=0, description="multi-token-prediction blocks in the file, never loaded")
    # DeepSeek V3.2's sparse attention (DSA): a lightning indexer per layer whose keys are cached beside the latent.
    indexer_heads: int = Field(default=0, ge=0, description="indexer query heads (index_n_heads)")
    indexer_head_dim: int = Field(default=0, ge=0, description="indexer key size, one cached head (index_head_dim)")
    indexer_layers: tuple[bool, ...] = Field(
        default=(),
        description="True where the layer has its own indexer (GLM-5.2's 'full' layers); empty: every layer has one",
    )
    # DeepSeek V4 (LLM_ARCH_DEEPSEEK4): per-layer KV compression, hyper-connections, grouped low-rank output.
    compress_ratios: tuple[int, ...] = Field(
        default=(),
        description="DeepSeek V4's compress_ratios per trunk layer: 0 window only, 4 CSA (+ indexer), 128 HCA",
    )
    hc_mult: int = Field(default=0, ge=0, description="hyper-connection copies of the residual stream (hc_mult)")
    hash_layers: int = Field(default=0, ge=0, description="leading layers routed by token id (num_hash_layers)")
    o_groups: int = Field(default=0, ge=0, description="grouped output projection: groups (o_groups)")
    o_lora_rank: int = Field(default=0, ge=0, description="grouped output projection: rank per group (o_lora_rank)")
    # Small tensors that change byte counts (biases, norms).
    attention_bias: bool = False
    qk_norm: bool = False
    # 1-D RoPE factor tensors convert_hf_to_gguf.py writes: rope_freqs (llama3 scaling) or long+short (longrope).
    rope_factor_tensors: int = Field(default=0, ge=0, le=2)
    rope_factor_length: int = Field(
        default=0, ge=0, description="entries of each RoPE factor tensor (n_rot / 2); 0: head_dim_k / 2"
    )
    # RoPE scaling the config declares (calc.model_limits): its kind as config.json names it, and its factor.
    rope_scaling_type: str = Field(default="", max_length=40)
    rope_scaling_factor: float = Field(default=0.0, ge=0.0, le=1024.0)
    rope_scaled_context: int = Field(
        default=0, ge=0, description="the context that scaling reaches by vLLM's rule (0: no scaling that extends)"
    )

    @model_validator(mode="after")
    def _per_layer_lengths(self) -> Architecture:
        for name in ("n_heads", "n_kv_heads", "ffn_size"):
            if len(getattr(self, name)) != self.n_layers:
                raise ValueError(f"{name} must have one value per layer ({self.n_layers})")
        for name in ("swa_layers", "moe_layers", "recurrent_layers", "indexer_layers", "compress_ratios"):
            value = getattr(self, name)
            if value and len(value) != self.n_layers:
                raise ValueError(f"{name} must be empty or have one value per layer ({self.n_layers})")
        return self

    @property
    def context_limit(self) -> int:
        """The longest context the model is declared for: its training context, or what its RoPE scaling reaches."""
        return max(self.context_length, self.rope_scaled_context)

    @property
    def is_mla(self) -> bool:
        """DeepSeek-style latent attention: llama.cpp caches one latent of kv_lora_rank + rope dims per token."""
        return self.kv_lora_rank > 0

    @property
    def is_moe(self) -> bool:
        return self.n_experts > 0

    def layer_is_swa(self, layer: int) -> bool:
        return bool(self.swa_layers) and self.sliding_window > 0 and self.swa_layers[layer]

    def layer_head_dims(self, layer: int) -> tuple[int, int]:
        """Key and value head sizes of one layer (``n_embd_head_k(il)``: Gemma 4's sliding layers are narrower)."""
        if self.swa_head_dim and self.layer_is_swa(layer):
            return self.swa_head_dim, self.swa_head_dim
        return self.head_dim_k, self.head_dim_v

    def layer_is_moe(self, layer: int) -> bool:
        return bool(self.moe_layers) and self.moe_layers[layer]

    def layer_is_recurrent(self, layer: int) -> bool:
        return bool(self.recurrent_layers) and self.recurrent_layers[layer]

    def layer_has_indexer(self, layer: int) -> bool:
        """Whether a trunk layer has a DSA indexer of its own, with weights in the file and keys in the cache.

        llama.cpp 0c1e57098 caches indexer keys only where ``llama_hparams::is_indexer_full(il)`` (llama-model.cpp,
        create_memory's ``filter_lid`` for LLM_ARCH_GLM_DSA; every layer for LLM_ARCH_DEEPSEEK32); GLM-5.2's
        "shared" layers reuse the top-k of the last full layer (src/models/glm-dsa.cpp) and hold neither."""
        return self.indexer_head_dim > 0 and (not self.indexer_layers or self.indexer_layers[layer])

    @property
    def recurrent_layer_count(self) -> int:
        return sum(self.recurrent_layers)

    @property
    def state_r_values(self) -> int:
        """``llama_hparams::n_embd_r``: the convolution state of one recurrent layer and sequence, in values."""
        if self.arch == "lfm2":
            return self.hidden_size * (self.ssm_conv_kernel - 1)  # LFM2: n_embd × (L_cache − 1)
        # Mamba's conv_states without the column shifted out: (d_conv − 1) × (d_inner + 2 × n_group × d_state)
        return max(self.ssm_conv_kernel - 1, 0) * (self.ssm_inner_size + 2 * self.ssm_groups * self.ssm_state_size)

    @property
    def state_s_values(self) -> int:
        """``llama_hparams::n_embd_s``: the SSM (or delta-rule) state of one recurrent layer and sequence."""
        return self.ssm_state_size * self.ssm_inner_size

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


_REQUIRED: Any = object()


class _ConfigFields:
    """Reads whole numbers out of a config.json, naming the field of any value that is not one.

    Sizes and counts must be whole numbers within :mod:`calc.limits`; a string, a fraction, a boolean, ``1e309`` or a
    count of ten million layers is a :class:`BadConfigError` that names the field, before anything is sized from it.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = config

    def first(self, *keys: str) -> tuple[str, Any]:
        """The first of ``keys`` that is set (not None), and its value; (keys[0], None) when none is."""
        for key in keys:
            value = self.config.get(key)
            if value is not None:
                return key, value
        return keys[0], None

    @staticmethod
    def whole(key: str, value: Any, low: int, high: int) -> int:
        number: int | None = None
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, float) and value.is_integer():
            number = int(value)
        if number is None or not low <= number <= high:
            shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "…"
            raise BadConfigError(
                f"config.json: {key} must be a whole number from {low} to {high:,}, not {shown}", field=key
            )
        return number

    def number(self, *keys: str, default: Any = _REQUIRED, low: int = 0, high: int) -> int:
        key, value = self.first(*keys)
        if value is None:
            if default is _REQUIRED:
                raise BadConfigError(f"config.json lacks {key}", field=key)
            return int(default)
        return self.whole(key, value, low, high)

    def per_layer(
        self, *keys: str, n_layers: int, default: Any = _REQUIRED, low: int = 0, high: int
    ) -> tuple[int, ...]:
        """One value per layer: a list of ``n_layers`` numbers, or one number for every layer."""
        key, value = self.first(*keys)
        if value is None:
            if default is _REQUIRED:
                raise BadConfigError(f"config.json lacks {key}", field=key)
            value = default
        if isinstance(value, Sequence) and not isinstance(value, str):
            if len(value) != n_layers:
                raise BadConfigError(f"config.json: {key} has {len(value)} entries for {n_layers} layers", field=key)
            return tuple(self.whole(key, v, low, high) for v in value)
        return (self.whole(key, value, low, high),) * n_layers

    def int_list(self, key: str, high: int) -> tuple[int, ...]:
        value = self.config.get(key)
        if value is None:
            return ()
        if not isinstance(value, Sequence) or isinstance(value, str) or len(value) > high + 1:
            raise BadConfigError(f"config.json: {key} must be a list of layer numbers", field=key)
        return tuple(self.whole(key, v, 0, high) for v in value)


def _swa_layers(fields: _ConfigFields, arch: str, n_layers: int) -> tuple[bool, ...]:
    """Which layers llama.cpp gives a sliding-window cache (empty: every layer caches the whole context).

    EXAONE 4.0 slides only in its 64-layer 32B form: llama_model_exaone4::load_arch_hparams (src/models/exaone4.cpp
    at llama.cpp 0c1e57098) sets swa_type and loads the layer pattern inside ``if (n_layer() == 64)``; any other layer
    count keeps full-size caches in every layer whatever config.json and the GGUF say (measured on a 4-layer copy).
    """
    if arch not in SWA_PATTERN_BY_ARCH or (arch == "exaone4" and n_layers != 64):
        return ()  # llama.cpp keeps full-size caches for this architecture whatever config.json says
    layer_types = fields.config.get("layer_types")
    if isinstance(layer_types, Sequence) and not isinstance(layer_types, str) and len(layer_types) == n_layers:
        return tuple(str(t) in ("sliding_attention", "sliding", "local") for t in layer_types)
    pattern = fields.number("sliding_window_pattern", default=0, high=MAX_LAYERS) or SWA_PATTERN_BY_ARCH.get(arch, 0)
    if pattern <= 1:
        return ()
    # llama.cpp llama_hparams::set_swa_pattern: layer il slides when il % pattern < pattern - 1.
    return tuple(il % pattern < pattern - 1 for il in range(n_layers))


def _quant_method(config: Mapping[str, Any]) -> str:
    """The checkpoint's own quantization (config.json ``quantization_config.quant_method``), if any."""
    quantization = config.get("quantization_config")
    return str(quantization.get("quant_method", "")) if isinstance(quantization, Mapping) else ""


def _moe_layers(fields: _ConfigFields, n_layers: int, n_experts: int) -> tuple[bool, ...]:
    if n_experts == 0:
        return ()
    first_dense = fields.number("first_k_dense_replace", default=0, high=MAX_LAYERS)
    step = fields.number("moe_layer_freq", "decoder_sparse_step", default=1, high=MAX_LAYERS) or 1
    dense_only = set(fields.int_list("mlp_only_layers", MAX_LAYERS))
    return tuple(il >= first_dense and il not in dense_only and (il % step == 0 or step == 1) for il in range(n_layers))


def _layer_kinds(config: Mapping[str, Any], n_layers: int, recurrent_names: tuple[str, ...]) -> tuple[bool, ...] | None:
    """``layer_types`` (or Granite's ``layers_block_type``) as True where the layer is recurrent; None if absent."""
    for key in ("layer_types", "layers_block_type"):
        kinds = config.get(key)
        if isinstance(kinds, Sequence) and not isinstance(kinds, str):
            if len(kinds) != n_layers:
                raise BadConfigError(f"config.json: {key} has {len(kinds)} entries for {n_layers} layers", field=key)
            return tuple(str(kind) in recurrent_names for kind in kinds)
    return None


_NEMOTRON_H = ("nemotron_h", "nemotron_h_moe")

# The config.json keys the converters turn into ssm_d_conv, ssm_d_state, ssm_n_group, ssm_dt_rank and the head size
# whose product with ssm_dt_rank is ssm_d_inner (Qwen3NextModel / GraniteHybridModel.set_gguf_parameters).
_GATED_DELTANET_KEYS = (
    "linear_conv_kernel_dim",
    "linear_key_head_dim",
    "linear_num_key_heads",
    "linear_num_value_heads",
    "linear_value_head_dim",
)
_STATE_KEYS: dict[str, tuple[str, str, str, str, str]] = {
    "qwen35": _GATED_DELTANET_KEYS,
    "qwen35moe": _GATED_DELTANET_KEYS,
    "qwen3next": _GATED_DELTANET_KEYS,
    "granitehybrid": ("mamba_d_conv", "mamba_d_state", "mamba_n_groups", "mamba_n_heads", "mamba_d_head"),
    # NemotronHModel (a GraniteHybridModel): d_model = mamba_head_dim, d_inner = mamba_num_heads × d_model.
    "nemotron_h": ("conv_kernel", "ssm_state_size", "n_groups", "mamba_num_heads", "mamba_head_dim"),
}


def _ssm_state(fields: _ConfigFields, arch: str) -> dict[str, int]:
    conv_key, state_key, groups_key, heads_key, head_key = _STATE_KEYS["nemotron_h" if arch in _NEMOTRON_H else arch]
    groups = fields.number(groups_key, default=1 if arch == "granitehybrid" else _REQUIRED, low=1, high=MAX_HEADS)
    heads = fields.number(heads_key, low=1, high=MAX_HEADS)
    if heads % groups:
        raise BadConfigError(f"config.json: {heads} {heads_key} cannot form {groups} groups evenly", field=heads_key)
    return {
        "ssm_conv_kernel": fields.number(conv_key, low=1, high=64),
        "ssm_state_size": fields.number(state_key, low=1, high=MAX_HEAD_DIM),
        "ssm_groups": groups,
        "ssm_heads": heads,
        "ssm_inner_size": heads * fields.number(head_key, low=1, high=MAX_HEAD_DIM),
        # Qwen3-Next's config.json does not say; its checkpoints carry one MTP block, which the converter exports.
        "nextn_layers": fields.number(
            "mtp_num_hidden_layers", default=1 if arch == "qwen3next" else 0, high=MAX_LAYERS
        ),
    }


def _recurrent(fields: _ConfigFields, arch: str, n_layers: int) -> dict[str, Any]:
    """Which layers are recurrent and the state sizes llama.cpp's converter writes for them (ssm_* GGUF keys).

    qwen35 (convert_hf_to_gguf.py Qwen3NextModel): ssm_d_state = linear_key_head_dim, ssm_n_group =
    linear_num_key_heads, ssm_dt_rank = linear_num_value_heads, ssm_d_inner = value head size × value heads; a layer
    is full attention every ``full_attention_interval``-th layer. granitehybrid (GraniteHybridModel): Mamba2 with
    d_inner = mamba_n_heads × mamba_d_head. lfm2 (LFM2Model): conv layers with conv_L_cache taps.
    """
    config = fields.config
    if arch in ("qwen35", "qwen35moe", "qwen3next"):
        kinds = _layer_kinds(config, n_layers, ("linear_attention",))
        if kinds is None:
            interval = fields.number("full_attention_interval", default=4, low=1, high=MAX_LAYERS)
            kinds = tuple((il + 1) % interval != 0 for il in range(n_layers))
        return {"recurrent_layers": kinds, **_ssm_state(fields, arch)}
    if arch == "granitehybrid":
        kinds = _layer_kinds(config, n_layers, ("mamba",))
        if kinds is None:
            raise BadConfigError("config.json lacks layer_types", field="layer_types")
        return {"recurrent_layers": kinds, **_ssm_state(fields, arch)}
    if arch in _NEMOTRON_H:
        kinds = tuple(kind == "M" for kind in _nemotron_h_pattern(fields, arch, n_layers))
        return {"recurrent_layers": kinds, **_ssm_state(fields, arch)}
    if arch == "lfm2":
        kinds = _layer_kinds(config, n_layers, ("conv",))
        if kinds is None:
            attention = set(fields.int_list("full_attn_idxs", MAX_LAYERS))
            if not attention:
                raise BadConfigError("config.json lacks layer_types", field="layer_types")
            kinds = tuple(il not in attention for il in range(n_layers))
        return {"recurrent_layers": kinds, "ssm_conv_kernel": fields.number("conv_L_cache", low=2, high=64)}
    return {}


def _require_experts(fields: _ConfigFields, model_type: str, keys: Sequence[tuple[tuple[str, ...], int]]) -> None:
    """A BadConfigError naming the first of ``keys`` (spellings, upper bound) that is missing or 0, and one when more
    experts are used per token than there are (llama-model.cpp:1362 asserts ``n_expert_used_max <= n_expert``)."""
    numbers = []
    for names, high in keys:
        number = fields.number(*names, default=0, high=high)
        if not number:
            raise BadConfigError(f"config.json: a {model_type} model needs {names[0]} above 0", field=names[0])
        numbers.append(number)
    if numbers[1] > numbers[0]:
        raise BadConfigError(
            f"config.json: {keys[1][0][0]} ({numbers[1]}) is more than {keys[0][0][0]} ({numbers[0]})",
            field=keys[1][0][0],
        )


# layers_block_type (the list form of the pattern) as NemotronHModel reads it: _SSM/_ATTN/_MLP_LAYER_TYPES.
_NEMOTRON_H_KINDS = {"mamba": "M", "linear_attention": "M", "attention": "*", "full_attention": "*", "moe": "E"}


def _nemotron_h_pattern(fields: _ConfigFields, arch: str, n_layers: int) -> str:
    """Nemotron-H's one kind of block per layer: ``hybrid_override_pattern`` ('M' Mamba2, '*' attention, '-' a dense
    MLP; 'E' routed experts in nemotron_h_moe), or ``layers_block_type`` as a list.

    conversion/nemotron.py NemotronHModel asserts the pattern has block_count entries and writes head_count_kv only
    on '*' layers and feed_forward_length only on the FFN layers ('E' in the MoE model, '-' otherwise);
    src/models/nemotron-h.cpp makes a layer recurrent when it has neither, so any other letter would be loaded as
    a Mamba2 layer without its tensors. Such a pattern is refused, as is one of the wrong length.
    """
    key, value = fields.first("hybrid_override_pattern", "layers_block_type")
    if isinstance(value, Sequence) and not isinstance(value, str):
        value = "".join(_NEMOTRON_H_KINDS.get(str(kind), "?") for kind in value)
    if not isinstance(value, str):
        raise BadConfigError(f"config.json lacks {key}", field=key)
    if len(value) != n_layers:
        raise BadConfigError(f"config.json: {key} has {len(value)} entries for {n_layers} layers", field=key)
    allowed = "M*E" if arch == "nemotron_h_moe" else "M*-"
    if any(kind not in allowed for kind in value):
        raise BadConfigError(f"config.json: {key} may hold only {', '.join(allowed)} for {arch}", field=key)
    return value


def _nemotron_h_moe(fields: _ConfigFields) -> None:
    """The expert numbers NemotronHModel.set_gguf_parameters reads as required (hparams[...]) and the MoE loader of
    src/models/nemotron-h.cpp creates tensors from (routed experts, top-k, expert width, the shared expert's
    width). The latent MoE (moe_latent_size: ffn_latent_down/up, Nemotron 3 Super) and the MTP head
    (num_nextn_predict_layers) are not modelled: they are refused rather than sized as something else."""
    for keys, high in (
        (("n_routed_experts",), MAX_EXPERTS),
        (("num_experts_per_tok",), MAX_EXPERTS),
        (("moe_intermediate_size",), MAX_FFN),
        (("moe_shared_expert_intermediate_size",), MAX_FFN),
    ):
        if not fields.number(*keys, default=0, high=high):
            raise BadConfigError(f"config.json: a nemotron_h MoE model needs {keys[0]} above 0", field=keys[0])
    for key in ("moe_latent_size", "num_nextn_predict_layers"):
        if fields.number(key, default=0, high=MAX_HIDDEN):
            raise unsupported(f"nemotron_h with {key}", field="model_type")


# The expert numbers DeepSeek-style loaders cannot do without (routed experts, used per token, their width), with the
# spellings a config.json or a GGUF header (read back by calc.gguf) gives them.
_ROUTED_EXPERT_KEYS = (
    (("n_routed_experts", "num_experts"), MAX_EXPERTS),
    (("num_experts_per_tok",), MAX_EXPERTS),
    (("moe_intermediate_size",), MAX_FFN),
)


def _glm4moe(fields: _ConfigFields) -> dict[str, Any]:
    """GLM-4.5's multi-token-prediction blocks and the MoE numbers its loader cannot do without.

    conversion/glm.py Glm4MoeModel adds num_nextn_predict_layers to block_count and writes those blocks (a full MoE
    decoder block plus nextn.eh_proj / embed_tokens / enorm / hnorm / shared_head_head / shared_head_norm);
    src/models/glm4-moe.cpp creates them with TENSOR_SKIP unless an MTP context asks for them, and the KV cache of
    an ordinary context filters them out (llama-model.cpp: ``il < n_layer()``). The loader asserts n_expert > 0
    and n_expert_used > 0 (glm4-moe.cpp:42-43): a config without them is not a GLM-4.5 llama.cpp can load.
    """
    _require_experts(fields, "glm4_moe", _ROUTED_EXPERT_KEYS)
    return {"nextn_layers": fields.number("num_nextn_predict_layers", default=0, high=MAX_LAYERS)}


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


def _llama4(fields: _ConfigFields, n_layers: int, n_experts: int) -> dict[str, Any]:
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


def _deepseek32(fields: _ConfigFields, kv_lora_rank: int) -> dict[str, Any]:
    """DeepSeek V3.2 as llama.cpp loads it (src/models/deepseek32.cpp, conversion/deepseek.py DeepseekV32Model at
    0c1e57098): MLA only ("DEEPSEEK32 architecture requires MLA"), a lightning indexer in every block whose one key
    head of index_head_dim is cached per token beside the latent (llama_kv_cache_dsa's second cache), and the
    converter's NextN/MTP block appended past num_hidden_layers (skip_mtp False), in the file but not loaded by an
    ordinary context; the noaux_tc routing bias is expert_probs_bias, as for DeepSeek V3."""
    return _dsa_indexer(fields, kv_lora_rank, "deepseek_v32")


def _dsa_indexer(fields: _ConfigFields, kv_lora_rank: int, model_type: str) -> dict[str, Any]:
    """The DSA numbers both DSA loaders need (MLA, the indexer's heads and key size, the MTP blocks)."""
    if not kv_lora_rank:
        raise BadConfigError(f"config.json: a {model_type} model needs kv_lora_rank (MLA)", field="kv_lora_rank")
    return {
        "indexer_heads": fields.number("index_n_heads", low=1, high=MAX_HEADS),
        "indexer_head_dim": fields.number("index_head_dim", low=1, high=MAX_HEAD_DIM),
        "nextn_layers": fields.number("num_nextn_predict_layers", default=0, high=MAX_LAYERS),
    }


# DeepSeek V4's two compressions (src/llama-kv-cache-dsv4.cpp at 0c1e57098: DSV4_CSA_RATIO, DSV4_HCA_RATIO); the loader
# refuses any other nonzero ratio ("DeepSeek-V4 loader only supports compression ratios 0, 4, and 128").
DSV4_CSA_RATIO = 4
DSV4_HCA_RATIO = 128


def _deepseek4(fields: _ConfigFields, n_layers: int, n_heads: tuple[int, ...]) -> dict[str, Any]:
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
        raise unsupported(f"deepseek_v4 with compression ratio {bad[0]}", field="compress_ratios")
    scoring = str(fields.config.get("scoring_func") or "sqrtsoftplus")
    if scoring != "sqrtsoftplus":
        raise unsupported(f"deepseek_v4 with {scoring} scoring", field="scoring_func")
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


# The DeepSeek-style MLA architectures whose router may carry the noaux_tc routing bias (exp_probs_b).
_DSA_LIKE = ("deepseek2", "deepseek32", "glm-dsa")

# llama.cpp's rule for a GLM-DSA file without attention.indexer.types (src/models/glm-dsa.cpp at 0c1e57098,
# llama_model_glm_dsa::load_arch_hparams): every layer full when n_ctx_train < 1048576 (GLM-5, 5.1), else
# GLM_5_2_DEFAULT_INDEXER_TYPES, GLM-5.2's pattern.
GLM_DSA_PRE_52_CONTEXT = 1048576


def glm52_default_indexer_types(n_layers: int) -> tuple[bool, ...]:
    """GLM_5_2_DEFAULT_INDEXER_TYPES cut to ``n_layers``: layers 0, 1 and then every fourth from 2 are full, the
    rest shared; past its 78 entries the array is zero (shared)."""
    return tuple(il < 78 and (il < 2 or (il - 2) % 4 == 0) for il in range(n_layers))


def _glm_dsa(fields: _ConfigFields, kv_lora_rank: int, n_layers: int, context: int) -> dict[str, Any]:
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
    dsa = _dsa_indexer(fields, kv_lora_rank, "glm_moe_dsa")
    _require_experts(fields, "glm_moe_dsa", _ROUTED_EXPERT_KEYS)
    kinds = fields.config.get("indexer_types")
    layers: tuple[bool, ...] = ()
    if kinds is None and context >= GLM_DSA_PRE_52_CONTEXT:
        raise unsupported("glm_moe_dsa with a 1M context and no indexer_types", field="indexer_types")
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


def _minimax_m2(fields: _ConfigFields) -> dict[str, Any]:
    """MiniMax M2's experts, which every block of it is made of (llama.cpp 0c1e57098).

    src/models/minimax-m2.cpp creates ffn_gate_inp {n_embd, n_expert} and the merged experts {n_embd, n_ff,
    n_expert} in every layer with no dense alternative, so a config without experts (num_local_experts or
    num_experts_per_tok 0) or without their width (intermediate_size, which MiniMaxM2Model writes as both
    feed_forward_length and expert_feed_forward_length) is not a model llama.cpp can load. The MTP modules a
    config announces (use_mtp, num_mtp_modules) are not exported: MiniMaxM2Model has no MTP export and
    MODEL_TENSORS[MINIMAXM2] no NextN tensors, so block_count stays num_hidden_layers and nothing MTP is in the file.
    """
    _require_experts(
        fields,
        "minimax_m2",
        (
            (("num_local_experts", "num_experts"), MAX_EXPERTS),
            (("num_experts_per_tok",), MAX_EXPERTS),
            (("intermediate_size",), MAX_FFN),
        ),
    )
    return {}


def _gemma4_attention(fields: _ConfigFields, n_layers: int, n_kv_heads: tuple[int, ...]) -> tuple[tuple[int, ...], int]:
    """Gemma 4's per-layer KV heads and the sliding layers' head size (convert_hf_to_gguf.py Gemma4Model: head_count_kv
    is num_key_value_heads on sliding layers and num_global_key_value_heads on full ones; key_length_swa is
    head_dim, key_length global_head_dim)."""
    kinds = _layer_kinds(fields.config, n_layers, ("sliding_attention",))
    if kinds is None:
        raise BadConfigError("config.json lacks layer_types", field="layer_types")
    global_kv = fields.number("num_global_key_value_heads", default=0, high=MAX_HEADS)
    heads = tuple(kv if sliding or not global_kv else global_kv for sliding, kv in zip(kinds, n_kv_heads, strict=True))
    return heads, fields.number("head_dim", low=1, high=MAX_HEAD_DIM)


# The spellings Gemma4Model's find_hparam accepts, Gemma 4's own first (a GGUF header reads back as the generic ones).
_GEMMA4_EXPERTS = ("num_experts", "num_local_experts")
_GEMMA4_EXPERTS_USED = ("top_k_experts", "num_experts_per_tok")
_GEMMA4_EXPERT_FFN = ("expert_intermediate_size", "moe_intermediate_size")


def _gemma4_experts(fields: _ConfigFields, n_layers: int) -> dict[str, Any]:
    """Gemma 4's expert block (Gemma 4 26B-A4B) as llama.cpp 0c1e57098 loads it.

    HF's ``enable_moe_block`` gives every decoder layer a router and ``num_experts`` experts beside its dense MLP.
    conversion/gemma.py Gemma4Model writes TextModel's expert_count / expert_used_count (num_experts, top_k_experts)
    and expert_feed_forward_length (moe_intermediate_size); the checkpoint's fused experts.gate_up_proj stays one
    ffn_gate_up_exps. src/models/gemma4.cpp load_arch_tensors keeps the dense ffn_gate/up/down of intermediate_size
    in every layer ("for expert layers, we use normal FFN as shared expert"), so it is modelled as one shared expert
    of that width. Without the block the layers are dense whatever num_experts says (no ffn_gate_inp is written).
    E2B/E4B's shared KV layers (num_kv_shared_layers) are refused: not modelled."""
    model_type = str(fields.config.get("model_type") or "gemma4")
    if fields.number("num_kv_shared_layers", default=0, high=MAX_LAYERS):
        raise unsupported(f"{model_type} with shared KV layers", field="num_kv_shared_layers")
    if not fields.config.get("enable_moe_block"):
        return {}
    _require_experts(
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


def _lfm2_ffn(fields: _ConfigFields) -> int:
    """LFM2's feed-forward width as LFM2Model writes it: block_ff_dim, shrunk to 2/3 (times the multiplier) and
    rounded up to block_multiple_of when block_auto_adjust_ff_dim is set."""
    width = fields.number("block_ff_dim", "intermediate_size", low=1, high=MAX_FFN)
    if fields.config.get("block_auto_adjust_ff_dim"):
        width = int(2 * width / 3)
        multiplier = fields.config.get("block_ffn_dim_multiplier")
        if isinstance(multiplier, int | float) and not isinstance(multiplier, bool):
            width = int(multiplier * width)
        multiple = fields.number("block_multiple_of", default=256, low=1, high=MAX_FFN)
        width = multiple * -(-width // multiple)
    return width


# What llama.cpp's converter writes for a Gemma 3 config.json that omits a key (conversion/gemma.py Gemma3Model at
# 0c1e57098): set_gguf_parameters falls back to context 131072, 8 heads, 4 KV heads and head size 256, and without a
# vocab_size the SentencePiece vocabulary is the tokenizer's own 262,144 pieces (_create_vocab_sentencepiece: the
# hparam, else tokenizer.vocab_size()), to which modify_tensors cuts token_embd (its 262,208 rows include 64 unused).
# The official multimodal config.json of Gemma 3 4B/12B/27B names few keys in its text_config (4B: not even the head
# counts), so without these a --config of the real file was refused ("lacks vocab_size").
_GEMMA3_CONVERTER_DEFAULTS: dict[str, Any] = {
    "max_position_embeddings": 131072,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "head_dim": 256,
    "vocab_size": 262144,
}


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
    if not isinstance(config, Mapping):
        raise BadFileError("config.json must be a JSON object")
    config = text_model_config(config)
    model_type = str(config.get("model_type") or "")
    # A config written by vramfit's own tools (or read from a GGUF header) names the llama.cpp architecture directly.
    if config.get("llama_arch") is not None:
        arch = str(config["llama_arch"])
        if arch not in SUPPORTED_ARCHS:
            raise unsupported(arch, field="general.architecture")
    elif not model_type:
        raise BadConfigError("config.json lacks model_type", field="model_type")
    elif model_type in HF_TO_LLAMA_ARCH:
        arch = HF_TO_LLAMA_ARCH[model_type]
        if arch == "nemotron_h" and "num_experts_per_tok" in config:
            arch = "nemotron_h_moe"  # NemotronHModel.__init__: has_moe_params = "num_experts_per_tok" in llm_config
    else:
        raise unsupported(model_type, field="model_type")
    if arch == "gemma3":
        config = {**_GEMMA3_CONVERTER_DEFAULTS, **{k: v for k, v in config.items() if v is not None}}
    f = _ConfigFields(config)
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
    swa_head_dim = 0
    if arch == "gemma4":  # its global layers' KV heads are checked too
        n_kv_heads, swa_head_dim = _gemma4_attention(f, n_layers, n_kv_heads)
    for heads, kv_heads in zip(n_heads, n_kv_heads, strict=True):
        if kv_heads > heads or (kv_heads and heads % kv_heads):
            # llama.cpp shares each KV head among n_head / n_head_kv query heads (llama_hparams::n_gqa).
            raise BadConfigError(
                f"config.json: {heads} attention heads cannot share {kv_heads} KV heads evenly",
                field="num_key_value_heads",
            )
    if arch == "nemotron_h_moe":
        _nemotron_h_moe(f)
    recurrent = _recurrent(f, arch, n_layers)
    mtp = _glm4moe(f) if arch == "glm4moe" else _minimax_m2(f) if arch == "minimax-m2" else {}
    if arch in _NEMOTRON_H:
        # Only the '*' layers have attention (NemotronHModel writes head_count_kv 0 elsewhere); FFN layers hold no
        # cache (llama_model::create_memory's filter_attn: not recurrent and n_ff(il) == 0).
        pattern = _nemotron_h_pattern(f, arch, n_layers)
        n_heads = tuple(h if kind == "*" else 0 for kind, h in zip(pattern, n_heads, strict=True))
        n_kv_heads = tuple(h if kind == "*" else 0 for kind, h in zip(pattern, n_kv_heads, strict=True))
    if recurrent:
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
        if arch == "gemma4":  # llama.cpp's key_length is the global layers' size; key_length_swa the rest
            head_k = f.number("global_head_dim", default=0, high=MAX_HEAD_DIM) or head_k
        head_v = f.number("v_head_dim", default=0, high=MAX_HEAD_DIM) or head_k

    n_experts = f.number("num_local_experts", "num_experts", "n_routed_experts", default=0, high=MAX_EXPERTS)
    n_used = f.number("num_experts_per_tok", "num_experts_per_token", "moe_topk", default=0, high=MAX_EXPERTS)
    ffn_keys = ("intermediate_size", "n_inner", "ffn_hidden_size")
    if arch == "nemotron_h":
        n_experts = n_used = 0  # the dense converter writes no expert keys, whatever else the config holds
    moe_layers = _moe_layers(f, n_layers, n_experts)
    if n_experts and arch in ("granitehybrid", "lfm2", "qwen35"):
        # Granite 4.0 H Tiny/Small and LFM2-MoE lay their experts out differently; not modelled yet.
        raise unsupported(f"{model_type} with experts", field="model_type")
    if n_experts and (model_type in ("mixtral", "gpt_oss", "phimoe") or arch in ("gpt-oss", "phimoe", "minimax-m2")):
        # These configs give the per-expert width as intermediate_size and have no dense layers (MiniMax M2: the
        # loader shapes its experts with n_ff, feed_forward_length, which MiniMaxM2Model sets to intermediate_size).
        expert_ffn = f.number(*ffn_keys, default=4 * hidden, high=MAX_FFN)
        dense_ffn = (0,) * n_layers
    else:
        expert_ffn = f.number("moe_intermediate_size", default=0, high=MAX_FFN)
        dense_ffn = f.per_layer(*ffn_keys, n_layers=n_layers, default=4 * hidden, high=MAX_FFN)
        if moe_layers:
            dense_ffn = tuple(0 if moe else width for moe, width in zip(moe_layers, dense_ffn, strict=True))
    if arch == "granitehybrid":
        # The dense Granite 4.0 H MLP is the "shared" MLP, written as ffn_gate/up/down of shared_intermediate_size.
        dense_ffn = (f.number("shared_intermediate_size", *ffn_keys, high=MAX_FFN),) * n_layers
    elif arch == "lfm2":
        dense_ffn = (_lfm2_ffn(f),) * n_layers
    elif arch in _NEMOTRON_H:
        # feed_forward_length per layer: intermediate_size on the '-' layers; the 'E' layers are the MoE ones.
        pattern = _nemotron_h_pattern(f, arch, n_layers)
        moe_layers = tuple(kind == "E" for kind in pattern) if arch == "nemotron_h_moe" else ()
        width = 0 if arch == "nemotron_h_moe" else f.number(*ffn_keys, low=1, high=MAX_FFN)
        dense_ffn = tuple(width if kind == "-" else 0 for kind in pattern)
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
    swa = _swa_layers(f, arch, n_layers) if window else ()
    if not any(swa):
        swa, window = (), 0

    tied = config.get("tie_word_embeddings")
    if tied is None:
        # transformers' default for these configs (SmolLM3Config too: SmolLM3-3B's config.json does not say it)
        tied = arch in ("gemma", "gemma2", "gemma3", "gemma4", "lfm2", "smollm3")
    if arch in ("granitehybrid", *_NEMOTRON_H):
        # Mamba2Model.set_vocab (and NemotronHModel.set_vocab) pad a hybrid model's vocabulary to a multiple of 8
        vocab = -(-vocab // 8) * 8
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
    # DeepSeek-V3's router adds e_score_correction_bias before its top-k (topk_method "noaux_tc", DeepseekV3Config's
    # default; V2's "greedy" has none). convert_hf_to_gguf.py writes it as blk.N.exp_probs_b.bias, which the deepseek2
    # loader creates when present (llama.cpp 0c1e57098). The expert count says nothing about it: a 16-expert copy of
    # Kimi K2 has the bias, DeepSeek-V2's 160 experts do not.
    topk_method = config.get("topk_method") or (
        "noaux_tc" if model_type in ("deepseek_v3", "kimi_k2", "kimi_k25", "deepseek_v32", "glm_moe_dsa") else ""
    )
    expert_probs_bias = arch in _DSA_LIKE and bool(n_experts) and topk_method == "noaux_tc"
    if arch == "deepseek32":
        mtp = _deepseek32(f, kv_lora_rank)
    elif arch == "glm-dsa":
        mtp = _glm_dsa(f, kv_lora_rank, n_layers, context)
    if arch == "llama4":
        llama4 = _llama4(f, n_layers, n_experts)
        moe_layers, dense_ffn, expert_ffn = llama4["moe_layers"], llama4["ffn_size"], llama4["expert_ffn_size"]
        n_shared, shared_ffn = llama4["n_shared_experts"], llama4["shared_expert_ffn_size"]
        window, swa = llama4["sliding_window"], llama4["swa_layers"]
    dsv4: dict[str, Any] = {}
    if arch == "deepseek4":
        dsv4 = _deepseek4(f, n_layers, n_heads)
        n_kv_heads, moe_layers, dense_ffn = dsv4.pop("n_kv_heads"), dsv4.pop("moe_layers"), dsv4.pop("ffn_size")
        window, swa, q_lora_rank = dsv4.pop("sliding_window"), dsv4.pop("swa_layers"), dsv4.pop("q_lora_rank")
        if not (n_experts and n_used and expert_ffn):
            raise BadConfigError(
                "config.json: a deepseek_v4 model needs n_routed_experts, num_experts_per_tok and "
                "moe_intermediate_size",
                field="n_routed_experts",
            )
    if arch == "gemma4":
        gemma4 = _gemma4_experts(f, n_layers)
        n_experts, n_used = gemma4.get("n_experts", 0), gemma4.get("n_experts_used", 0)
        expert_ffn, moe_layers = gemma4.get("expert_ffn_size", 0), gemma4.get("moe_layers", ())
        if gemma4:
            dense_ffn = gemma4["ffn_size"]
        else:  # dense whatever num_experts says
            dense_ffn = f.per_layer(*ffn_keys, n_layers=n_layers, default=4 * hidden, high=MAX_FFN)
        n_shared, shared_ffn = gemma4.get("n_shared_experts", 0), gemma4.get("shared_expert_ffn_size", 0)

    try:
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
            swa_head_dim=swa_head_dim if swa else 0,
            n_experts=n_experts,
            n_experts_used=n_used,
            expert_ffn_size=expert_ffn,
            n_shared_experts=n_shared,
            shared_expert_ffn_size=shared_ffn,
            moe_layers=moe_layers,
            expert_probs_bias=expert_probs_bias,
            experts_mxfp4=_quant_method(config) == "mxfp4",
            kv_lora_rank=kv_lora_rank,
            q_lora_rank=q_lora_rank,
            qk_rope_head_dim=rope,
            qk_nope_head_dim=nope,
            v_head_dim=v_head,
            # Qwen2 configs omit attention_bias although the checkpoints carry q/k/v biases.
            attention_bias=bool(config.get("attention_bias") or arch in ("qwen2", "qwen2moe")),
            qk_norm=arch
            in ("qwen3", "qwen3moe", "gemma3", "gemma4", "olmo2", "qwen35", "qwen35moe", "qwen3next", "lfm2")
            or (arch == "glm4moe" and bool(config.get("use_qk_norm")))
            or arch == "minimax-m2",  # required: q_norm of n_head × head_dim and k_norm of n_kv × head_dim
            rope_factor_tensors=rope_factor_tensors,
            rope_factor_length=rope_factor_length,
            **rope_scaling,
            **recurrent,
            **mtp,
            **dsv4,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first.get("loc", ())) or "config"
        raise BadConfigError(f"config.json: {field}: {first.get('msg', 'invalid')}", field=field) from exc
