"""The shape of a transformer, as the memory model needs it.

`Architecture` is a frozen description of one model: layer count, attention geometry per layer (heads, KV heads,
key and value head sizes, sliding window, MLA latent), feed-forward sizes (dense and mixture-of-experts), recurrent
state sizes and the vocabulary. It is named after llama.cpp's architecture names (``general.architecture`` in a GGUF
file) because llama.cpp's per-architecture rules decide tensor layout, sliding-window layers and which tensors are
fused; those rules live in the architecture's family (calc/families/). calc/hf_config.py builds one from a
config.json, calc/gguf.py from a GGUF header.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

# DeepSeek V4's two compressions (src/llama-kv-cache-dsv4.cpp at 0c1e57098: DSV4_CSA_RATIO, DSV4_HCA_RATIO), the values
# of ``compress_ratios`` besides 0; the loader refuses any other nonzero ratio ("DeepSeek-V4 loader only supports
# compression ratios 0, 4, and 128").
DSV4_CSA_RATIO = 4
DSV4_HCA_RATIO = 128


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
    ssm_group_norm: bool = Field(
        default=True, description="the Mamba2 mixer carries its grouped RMS norm (Falcon-H1's mamba_rms_norm)"
    )
    nextn_layers: int = Field(default=0, ge=0, description="multi-token-prediction blocks in the file, never loaded")
    # Gemma 4 E2B/E4B: per-layer embeddings and layers that reuse another layer's KV cache.
    kv_shared_layers: int = Field(
        default=0, ge=0, description="the last N layers read an earlier layer's KV cache and own none (llama.cpp)"
    )
    per_layer_input_size: int = Field(
        default=0, ge=0, description="per-layer embedding width (hidden_size_per_layer_input); 0: none"
    )
    v_is_k: bool = Field(default=False, description="global layers read V from the K projection (attention_k_eq_v)")
    # DeepSeek V3.2's sparse attention (DSA): a lightning indexer per layer whose keys are cached beside the latent.
    indexer_heads: int = Field(default=0, ge=0, description="indexer query heads (index_n_heads)")
    indexer_head_dim: int = Field(default=0, ge=0, description="indexer key size, one cached head (index_head_dim)")
    indexer_layers: tuple[bool, ...] = Field(
        default=(),
        description="True where the layer has its own indexer (GLM-5.2's 'full' layers); empty: every layer has one",
    )
    indexer_top_k: int = Field(
        default=2048, ge=1, description="cells each token attends to, as the indexer picks them (index_topk)"
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
    def embedding_table_params(self) -> int:
        """Parameters of token_embd and the per-layer embedding table (Gemma 3n/4 E-models), which llama.cpp keeps in
        system RAM: what the models' "effective" size leaves out (Gemma 3n E4B: 6.87 B in the file, 3.98 B without)."""
        return self.vocab_size * (self.hidden_size + self.per_layer_input_size * self.n_layers)

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
