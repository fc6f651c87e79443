"""GGUF metadata + tensor lists for the late-2025/2026 architectures (hybrid, SWA, MLA, ...).

One builder per llama.cpp architecture. Each builder writes the `{arch}.*` metadata that
llama.cpp's own converter (convert_hf_to_gguf.py / conversion/*.py in the vendored
llama.cpp of llama-cpp-python 0.3.36) writes for that architecture, and returns the list of
tensors the converter would emit, as (gguf_name, ne) with ne in ggml order
(ne0 = innermost, as in llama.cpp's create_tensor calls in src/models/<arch>.cpp).

Tensor types follow the converter's rule for an F16 conversion (conversion/base.py):
F32 for 1-D tensors, names ending in "_norm.weight", tensors whose name does not end in
".weight" (biases, ssm_a, ssm_d), ffn_gate_inp(_shexp), ssm_conv1d and shortconv.conv;
I32 for DeepSeek V4's hash routing table; F16 for the rest.

Every builder reads the flat text-model hyperparameters of archs.model_config(name) (the HF
config.json keys; for multimodal checkpoints the keys of `text_config`).

Each builder's docstring names the llama.cpp files it follows (llama.cpp 0c1e57098, vendored in
llama-cpp-python 0.3.36). Where the committed rows' files had a header that differs from the
converter's (a key more or less; the rows' logs and header sizes show it), the builder writes what the
measured file had and says so: header keys change the file size by bytes, never a buffer.
"""

from statistics import NormalDist

import gguf
from gguf import MODEL_TENSOR as T

# conversion/base.py prepare_tensors: FFN_GATE_INP, FFN_GATE_INP_SHEXP, SSM_CONV1D and SHORTCONV_CONV are always F32
# (besides 1-D tensors, norms and names that do not end in ".weight"). The converter makes INDEXER_PROJ F32 too; the
# measured DSA files had it F16 (the rows' quantizer logs give the F16 source's size), and llama.cpp's quantizer
# quantizes it either way, so the quantized files are the same.
F32_FORCED = (
    ".ffn_gate_inp.weight",
    ".ffn_gate_inp_shexp.weight",
    ".ssm_conv1d.weight",
    ".shortconv.conv.weight",
)
# conversion/deepseek.py DeepseekV4Model._write_hash_routing_tensors: the token -> expert table is I32
I32_TENSORS = (".ffn_gate_tid2eid.weight",)


def tensor_dtype(name, ne):
    if name.endswith(I32_TENSORS):
        return "I32"
    if len(ne) <= 1 or name.endswith("_norm.weight") or not name.endswith(".weight") or name.endswith(F32_FORCED):
        return "F32"
    return "F16"


class TL:
    """tensor list with name validation against gguf-py's MODEL_TENSORS[arch]"""

    def __init__(self, arch_name):
        ae = next(k for k, v in gguf.MODEL_ARCH_NAMES.items() if v == arch_name)
        self.allowed = set(gguf.MODEL_TENSORS[ae])
        self.arch = arch_name
        self.items = []

    def add(self, t, ne, bid=None, suffix="weight"):
        assert t in self.allowed, f"{t} not in MODEL_TENSORS[{self.arch}]"
        name = gguf.TENSOR_NAMES[t]
        if bid is not None:
            name = name.format(bid=bid)
        if suffix:
            name = f"{name}.{suffix}"
        ne = tuple(int(x) for x in ne)
        self.items.append((name, ne, tensor_dtype(name, ne)))


def _add_bool_array(w, method, key, flags):
    """GGUFWriter.<method>(flags), or the key written by its llama-arch.cpp name with gguf-py releases that predate the
    method (PyPI gguf 0.19 has neither add_recurrent_layers nor add_indexer_types)"""
    if hasattr(w, method):
        getattr(w, method)(flags)
    else:
        w.add_array(key.format(arch=w.arch), flags)


def _add_recurrent_layers(w, flags):
    _add_bool_array(
        w, "add_recurrent_layers", "{arch}.attention.recurrent_layers", flags
    )  # LLM_KV_ATTENTION_RECURRENT_LAYERS


def _rope_params(c):
    return c.get("rope_parameters") or {}


def _rope_theta(c, default=10000.0):
    rp = _rope_params(c)
    if "rope_theta" in c:
        return float(c["rope_theta"])
    if "rope_theta" in rp:
        return float(rp["rope_theta"])
    if "full_attention" in rp:
        return float(rp["full_attention"].get("rope_theta", default))
    return float(default)


def _dense_dims(c):
    """hidden, layers, heads, KV heads, FFN width and vocabulary, the six sizes every dense builder starts from."""
    return tuple(
        c[k]
        for k in (
            "hidden_size",
            "num_hidden_layers",
            "num_attention_heads",
            "num_key_value_heads",
            "intermediate_size",
            "vocab_size",
        )
    )


def _common(w, c, n_ff=None, n_head_kv=None, block_count=None, ctx=None):
    w.add_block_count(block_count if block_count is not None else c["num_hidden_layers"])
    w.add_context_length(ctx if ctx is not None else c["max_position_embeddings"])
    w.add_embedding_length(c["hidden_size"])
    w.add_feed_forward_length(n_ff if n_ff is not None else c["intermediate_size"])
    w.add_head_count(c["num_attention_heads"])
    w.add_head_count_kv(n_head_kv if n_head_kv is not None else c["num_key_value_heads"])


def _ffn(tl, i, E, FF):
    tl.add(T.FFN_GATE, (E, FF), i)
    tl.add(T.FFN_UP, (E, FF), i)
    tl.add(T.FFN_DOWN, (FF, E), i)


def _head(tl, c, E, V, tied_default=False):
    tl.add(T.TOKEN_EMBD, (E, V))
    tl.add(T.OUTPUT_NORM, (E,))
    if not c.get("tie_word_embeddings", tied_default):
        tl.add(T.OUTPUT, (E, V))


# --------------------------------------------------------------------------------------
# qwen35: Qwen3.5 dense (Gated DeltaNet linear attention x3 + gated full attention x1)
# conversion/qwen.py Qwen3_5TextModel (Qwen3NextModel + _QwenMtpMixin); src/models/qwen35.cpp
def build_qwen35(w, c):
    E, L, H, KV, hd = (
        c["hidden_size"],
        c["num_hidden_layers"],
        c["num_attention_heads"],
        c["num_key_value_heads"],
        c["head_dim"],
    )
    FF, V = c["intermediate_size"], c["vocab_size"]
    n_mtp = c.get("gguf_mtp_layers", c.get("mtp_num_hidden_layers", 0))
    NL = L + n_mtp
    rp = _rope_params(c)
    _common(w, c, block_count=NL)
    w.add_rope_freq_base(_rope_theta(c))
    w.add_layer_norm_rms_eps(c["rms_norm_eps"])
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_rope_dimension_sections([*rp.get("mrope_section", [11, 11, 10]), 0, 0, 0, 0][:4])
    w.add_ssm_conv_kernel(c["linear_conv_kernel_dim"])
    w.add_ssm_state_size(c["linear_key_head_dim"])
    w.add_ssm_group_count(c["linear_num_key_heads"])
    w.add_ssm_time_step_rank(c["linear_num_value_heads"])
    w.add_ssm_inner_size(c["linear_value_head_dim"] * c["linear_num_value_heads"])
    lt = c.get("layer_types") or [
        ("full_attention" if (i + 1) % c["full_attention_interval"] == 0 else "linear_attention") for i in range(L)
    ]
    _add_recurrent_layers(w, [t == "linear_attention" for t in lt] + [False] * n_mtp)
    w.add_full_attention_interval(c.get("full_attention_interval", 4))
    w.add_rope_dimension_count(int(hd * rp.get("partial_rotary_factor", 0.25)))
    if n_mtp:
        w.add_nextn_predict_layers(n_mtp)

    tl = TL("qwen35")
    _head(tl, c, E, V)
    dk, dv = c["linear_key_head_dim"], c["linear_value_head_dim"]
    nk, nv = c["linear_num_key_heads"], c["linear_num_value_heads"]
    key_dim, value_dim = dk * nk, dv * nv
    conv_dim = 2 * key_dim + value_dim

    def attn(i):
        tl.add(T.ATTN_Q, (E, hd * H * 2), i)  # query + output gate (attn_output_gate)
        tl.add(T.ATTN_K, (E, hd * KV), i)
        tl.add(T.ATTN_V, (E, hd * KV), i)
        tl.add(T.ATTN_OUT, (hd * H, E), i)
        tl.add(T.ATTN_Q_NORM, (hd,), i)
        tl.add(T.ATTN_K_NORM, (hd,), i)

    for i in range(L):
        tl.add(T.ATTN_NORM, (E,), i)
        tl.add(T.ATTN_POST_NORM, (E,), i)
        if lt[i] == "linear_attention":
            tl.add(T.ATTN_QKV, (E, conv_dim), i)
            tl.add(T.ATTN_GATE, (E, value_dim), i)
            tl.add(T.SSM_CONV1D, (c["linear_conv_kernel_dim"], conv_dim), i)
            tl.add(T.SSM_DT, (nv,), i, "bias")
            tl.add(T.SSM_A, (nv,), i, None)
            tl.add(T.SSM_BETA, (E, nv), i)
            tl.add(T.SSM_ALPHA, (E, nv), i)
            tl.add(T.SSM_NORM, (dv,), i)
            tl.add(T.SSM_OUT, (value_dim, E), i)
        else:
            attn(i)
        _ffn(tl, i, E, FF)
    for i in range(L, NL):  # MTP block: a full-attention decoder block + nextn tensors
        tl.add(T.ATTN_NORM, (E,), i)
        tl.add(T.ATTN_POST_NORM, (E,), i)
        attn(i)
        _ffn(tl, i, E, FF)
        tl.add(T.NEXTN_EH_PROJ, (2 * E, E), i)
        tl.add(T.NEXTN_ENORM, (E,), i)
        tl.add(T.NEXTN_HNORM, (E,), i)
        tl.add(T.NEXTN_SHARED_HEAD_NORM, (E,), i)
    return tl.items


# --------------------------------------------------------------------------------------
# gemma4: Gemma 4 (E2B/E4B: per-layer embeddings, KV sharing; 31B: per-layer KV heads, K = V on the global layers;
# 26B-A4B: the expert block beside the dense MLP). conversion/gemma.py Gemma4Model (on Gemma3Model);
# src/models/gemma4.cpp load_arch_tensors, plus llama-model.cpp's generic pass of optional ".scale" tensors
def build_gemma4(w, c):
    E, L, H, KV = c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"], c["num_key_value_heads"]
    FF, V = c["intermediate_size"], c.get("gguf_vocab_size", c["vocab_size"])
    hd_swa, hd_full = c["head_dim"], c["global_head_dim"]
    KV_full = c.get("num_global_key_value_heads")
    n_shared = c.get("num_kv_shared_layers", 0)
    first_shared = L - n_shared
    lt = c["layer_types"]
    is_swa = [t == "sliding_attention" for t in lt]
    rp = _rope_params(c)
    n_ff = [FF if i < first_shared else 2 * FF for i in range(L)] if c.get("use_double_wide_mlp") else FF
    moe = bool(c.get("enable_moe_block"))
    NE, FE = c.get("num_experts") or 0, c.get("moe_intermediate_size") or c.get("expert_intermediate_size")
    _common(w, c, n_ff=n_ff)
    w.add_layer_norm_rms_eps(c["rms_norm_eps"])
    if moe:  # TextModel: num_experts, top_k_experts
        w.add_expert_count(NE)
        w.add_expert_used_count(c["top_k_experts"])
    w.add_key_length(hd_full)
    w.add_value_length(hd_full)
    w.add_rope_freq_base(float(rp.get("full_attention", {}).get("rope_theta", 1e6)))
    w.add_rope_freq_base_swa(float(rp.get("sliding_attention", {}).get("rope_theta", 1e4)))
    if c.get("final_logit_softcapping"):
        w.add_final_logit_softcapping(c["final_logit_softcapping"])
    w.add_sliding_window(c["sliding_window"])
    w.add_shared_kv_layers(n_shared)
    n_pl = c.get("hidden_size_per_layer_input") or 0
    w.add_embedding_length_per_layer_input(n_pl)
    w.add_sliding_window_pattern(is_swa)
    w.add_key_length_swa(hd_swa)
    w.add_value_length_swa(hd_swa)
    if FE is not None:
        w.add_expert_feed_forward_length(FE)
    if KV_full is not None:  # per-layer KV heads: num_key_value_heads on sliding layers, the global count elsewhere
        w.add_head_count_kv([KV if swa else KV_full for swa in is_swa])
    w.add_rope_dimension_count(hd_full)
    w.add_rope_dimension_count_swa(int(hd_swa * rp.get("partial_rotary_factor", 1.0)))

    tl = TL("gemma4")
    _head(tl, c, E, V)
    if n_pl > 0:
        tl.add(T.PER_LAYER_TOKEN_EMBD, (n_pl * L, V))
        tl.add(T.PER_LAYER_MODEL_PROJ, (E, n_pl * L))
        tl.add(T.PER_LAYER_PROJ_NORM, (n_pl,))
    tl.add(T.ROPE_FREQS, (hd_full // 2,))  # proportional rope of the full-attention layers
    for i in range(L):
        hd = hd_swa if is_swa[i] else hd_full
        kv = KV if (is_swa[i] or KV_full is None) else KV_full
        has_kv = i < first_shared
        ff = n_ff[i] if isinstance(n_ff, list) else n_ff
        tl.add(T.ATTN_NORM, (E,), i)
        tl.add(T.ATTN_Q, (E, hd * H), i)
        if has_kv:  # KV-shared layers have no k/v projections (they read an earlier layer's cache)
            tl.add(T.ATTN_K, (E, hd * kv), i)
            # attention_k_eq_v: the global layers' checkpoints have no v_proj (V = K); sliding layers keep theirs
            if is_swa[i] or not c.get("attention_k_eq_v"):
                tl.add(T.ATTN_V, (E, hd * kv), i)
        tl.add(T.ATTN_OUT, (hd * H, E), i)
        tl.add(T.ATTN_Q_NORM, (hd,), i)
        if has_kv:
            tl.add(T.ATTN_K_NORM, (hd,), i)
        tl.add(T.ATTN_POST_NORM, (E,), i)
        tl.add(T.LAYER_OUT_SCALE, (1,), i)
        tl.add(T.FFN_PRE_NORM, (E,), i)  # "blk.N.ffn_norm" (gguf-py lists it as FFN_PRE_NORM for gemma)
        _ffn(tl, i, E, ff)
        tl.add(T.FFN_POST_NORM, (E,), i)
        if moe:  # router.proj / router.scale, the checkpoint's fused gate_up experts, router.per_expert_scale
            tl.add(T.FFN_GATE_INP, (E, NE), i)
            tl.add(T.FFN_GATE_INP, (E,), i, "scale")
            tl.add(T.FFN_PRE_NORM_2, (E,), i)
            tl.add(T.FFN_POST_NORM_1, (E,), i)
            tl.add(T.FFN_POST_NORM_2, (E,), i)
            tl.add(T.FFN_GATE_UP_EXP, (E, 2 * FE, NE), i)
            tl.add(T.FFN_DOWN_EXP, (FE, E, NE), i)
            tl.add(T.FFN_DOWN_EXP, (NE,), i, "scale")
        if n_pl > 0:
            tl.add(T.PER_LAYER_INP_GATE, (E, n_pl), i)
            tl.add(T.PER_LAYER_PROJ, (n_pl, E), i)
            tl.add(T.PER_LAYER_POST_NORM, (E,), i)
    return tl.items


# --------------------------------------------------------------------------------------
# granitehybrid: Granite 4.0 H (Mamba2 + attention, NoPE). conversion/granite.py GraniteHybridModel
def _granite_hybrid_keys(w, c, d_inner, n_group, d_state, d_conv, n_ssm_head):
    """GraniteModel's scales, GraniteMoeModel's shared expert width and GraniteHybridModel's Mamba2 sizes and NoPE
    switch (conversion/granite.py), in the order both granite-hybrid writers write them"""
    w.add_attention_scale(c["attention_multiplier"])
    w.add_embedding_scale(c["embedding_multiplier"])
    w.add_residual_scale(c["residual_multiplier"])
    w.add_logit_scale(c["logits_scaling"])
    if c.get("shared_intermediate_size"):
        w.add_expert_shared_feed_forward_length(c["shared_intermediate_size"])
    w.add_ssm_conv_kernel(d_conv)
    w.add_ssm_state_size(d_state)
    w.add_ssm_group_count(n_group)
    w.add_ssm_inner_size(d_inner)
    w.add_ssm_time_step_rank(n_ssm_head)
    w.add_rope_scaling_finetuned(False)


def _granite_hybrid_tensors(c, E, V, attn_layers, d_inner, n_group, d_state, d_conv, n_ssm_head, n_exp, FF):
    """GraniteHybridModel's tensors (src/models/granite-hybrid.cpp): Mamba2 or NoPE attention per layer, then the
    shared MLP, dense (ffn_gate/up/down) or beside the routed experts (conversion/granite.py GraniteMoeModel: the
    block_sparse_moe input_linear split into gate/up experts, the shared_mlp into ffn_*_shexp)"""
    L, H, KV = c["num_hidden_layers"], c["num_attention_heads"], c["num_key_value_heads"]
    tl = TL("granitehybrid")
    _head(tl, c, E, V)
    hd = E // H
    d_in_proj = 2 * d_inner + 2 * n_group * d_state + n_ssm_head
    conv_ch = d_inner + 2 * n_group * d_state
    for i in range(L):
        tl.add(T.ATTN_NORM, (E,), i)
        if i in attn_layers:
            tl.add(T.ATTN_Q, (E, hd * H), i)
            tl.add(T.ATTN_K, (E, hd * KV), i)
            tl.add(T.ATTN_V, (E, hd * KV), i)
            tl.add(T.ATTN_OUT, (hd * H, E), i)
        else:
            tl.add(T.SSM_IN, (E, d_in_proj), i)
            tl.add(T.SSM_CONV1D, (d_conv, conv_ch), i)
            if c.get("mamba_conv_bias", True):
                tl.add(T.SSM_CONV1D, (conv_ch,), i, "bias")
            tl.add(T.SSM_DT, (n_ssm_head,), i, "bias")
            tl.add(T.SSM_A, (1, n_ssm_head), i, None)
            tl.add(T.SSM_D, (1, n_ssm_head), i, None)
            tl.add(T.SSM_NORM, (d_inner // n_group, n_group), i)
            tl.add(T.SSM_OUT, (d_inner, E), i)
        tl.add(T.FFN_NORM, (E,), i)
        if n_exp:
            # GraniteMoeModel.modify_tensors: block_sparse_moe.input_linear [NE, 2*FF, E] split into gate/up exps;
            # block_sparse_moe.output_linear -> ffn_down_exps; router.layer -> ffn_gate_inp;
            # shared_mlp.input_linear split into gate/up shexp (has_experts); shared_mlp.output_linear -> ffn_down_shexp
            tl.add(T.FFN_GATE_INP, (E, n_exp), i)
            tl.add(T.FFN_GATE_EXP, (E, FF, n_exp), i)
            tl.add(T.FFN_UP_EXP, (E, FF, n_exp), i)
            tl.add(T.FFN_DOWN_EXP, (FF, E, n_exp), i)
            SFF = c.get("shared_intermediate_size")
            if SFF:
                tl.add(T.FFN_GATE_SHEXP, (E, SFF), i)
                tl.add(T.FFN_UP_SHEXP, (E, SFF), i)
                tl.add(T.FFN_DOWN_SHEXP, (SFF, E), i)
        else:
            # dense: shared_mlp -> ffn_gate/up/down with shared_intermediate_size rows
            _ffn(tl, i, E, c.get("shared_intermediate_size") or FF)
    return tl.items


def build_granitehybrid(w, c):
    E, L, KV = c["hidden_size"], c["num_hidden_layers"], c["num_key_value_heads"]
    FF, V = c["intermediate_size"], c["vocab_size"]
    V = -(V // -8) * 8  # Mamba2Model.set_vocab pads to a multiple of 8 for hybrid models
    lt = c["layer_types"]
    attn_layers = [i for i, t in enumerate(lt) if t == "attention"]
    n_exp = c.get("num_local_experts") or 0
    d_head, n_ssm_head = c["mamba_d_head"], c["mamba_n_heads"]
    d_inner = n_ssm_head * d_head  # converter: d_inner = mamba_n_heads * mamba_d_head
    n_group, d_state, d_conv = c["mamba_n_groups"], c["mamba_d_state"], c["mamba_d_conv"]
    # GraniteMoeModel/GraniteModel parameters
    _common(w, c, n_head_kv=[KV if i in attn_layers else 0 for i in range(L)], ctx=2**20)  # NoPE -> 2**20
    w.add_rope_freq_base(_rope_theta(c))
    w.add_layer_norm_rms_eps(c["rms_norm_eps"])
    w.add_expert_count(n_exp)
    w.add_expert_used_count(c.get("num_experts_per_tok") or 0)
    _granite_hybrid_keys(w, c, d_inner, n_group, d_state, d_conv, n_ssm_head)
    w.add_vocab_size(V)

    if n_exp:
        raise NotImplementedError("granitehybrid MoE variants: build_granitehybrid_moe")
    return _granite_hybrid_tensors(c, E, V, attn_layers, d_inner, n_group, d_state, d_conv, n_ssm_head, n_exp, FF)


# --------------------------------------------------------------------------------------
# lfm2: LFM2 (gated short convolutions + GQA). conversion/lfm2.py LFM2Model; src/models/lfm2.cpp
def lfm2_layer_types(c):
    if c.get("layer_types"):
        return c["layer_types"]
    idx = set(c["full_attn_idxs"])
    return ["full_attention" if i in idx else "conv" for i in range(c["num_hidden_layers"])]


def lfm2_ff(c):
    ff = c.get("block_ff_dim", c.get("intermediate_size"))
    if c.get("block_auto_adjust_ff_dim"):
        ff = int(2 * ff / 3)
        if c.get("block_ffn_dim_multiplier") is not None:
            ff = int(c["block_ffn_dim_multiplier"] * ff)
        m = c["block_multiple_of"]
        ff = m * ((ff + m - 1) // m)
    return ff


def build_lfm2(w, c):
    E, L, H, KV, V = (
        c["hidden_size"],
        c["num_hidden_layers"],
        c["num_attention_heads"],
        c["num_key_value_heads"],
        c["vocab_size"],
    )
    lt = lfm2_layer_types(c)
    FF = lfm2_ff(c)
    _common(w, c, n_ff=FF, n_head_kv=[KV if t != "conv" else 0 for t in lt])
    w.add_rope_freq_base(_rope_theta(c, 1e6))
    w.add_vocab_size(V)
    w.add_shortconv_l_cache(c["conv_L_cache"])
    w.add_layer_norm_rms_eps(c["norm_eps"])

    tl = TL("lfm2")
    tl.add(T.TOKEN_EMBD, (E, V))
    tl.add(T.OUTPUT_NORM_LFM2 if hasattr(T, "OUTPUT_NORM_LFM2") else T.TOKEN_EMBD_NORM, (E,))
    hd = E // H
    for i in range(L):
        tl.add(T.FFN_NORM, (E,), i)
        _ffn(tl, i, E, FF)
        tl.add(T.ATTN_NORM, (E,), i)
        if lt[i] != "conv":
            tl.add(T.ATTN_Q_NORM, (hd,), i)
            tl.add(T.ATTN_K_NORM, (hd,), i)
            tl.add(T.ATTN_Q, (E, E), i)
            tl.add(T.ATTN_K, (E, hd * KV), i)
            tl.add(T.ATTN_V, (E, hd * KV), i)
            tl.add(T.ATTN_OUT, (E, E), i)
        else:
            tl.add(T.SHORTCONV_CONV, (c["conv_L_cache"], E), i)
            tl.add(T.SHORTCONV_INPROJ, (E, 3 * E), i)
            tl.add(T.SHORTCONV_OUTPROJ, (E, E), i)
    return tl.items


# --------------------------------------------------------------------------------------
# deepseek2: DeepSeek-V2(-Lite) / V3 / Kimi K2 MLA + MoE.
# conversion/deepseek.py DeepseekV2Model; src/models/deepseek2.cpp
def _deepseek_topk_method(c):
    """The router's topk_method; DeepseekV3Config (model_type deepseek_v3, kimi_k2) defaults to noaux_tc, whose
    checkpoints carry e_score_correction_bias (exp_probs_b in the GGUF); DeepSeek-V2's greedy routers have none."""
    return c.get("topk_method", "noaux_tc" if c.get("model_type") in ("deepseek_v3", "kimi_k2") else "greedy")


def _mla_keys(w, q_lora, kv_lora, nope, rope_d, vd):
    """DeepseekV2Model's MLA keys: the LoRA ranks, and the latent cache's key (kv_lora_rank + rope dims) and value
    (kv_lora_rank) lengths beside the per-head ones (_mla)"""
    if q_lora:
        w.add_q_lora_rank(q_lora)
    w.add_kv_lora_rank(kv_lora)
    w.add_key_length(kv_lora + rope_d)
    w.add_value_length(kv_lora)
    w.add_key_length_mla(nope + rope_d)
    w.add_value_length_mla(vd)


def _deepseek2_header(w, c, block_count=None):
    """the {arch}.* keys of DeepseekV2Model.set_gguf_parameters as the deepseek2 rows were written (no yarn beta_fast /
    beta_slow, no expert group counts: the rows' logs show n_expert_groups = 0)"""
    V = c["vocab_size"]
    kv_lora, q_lora = c["kv_lora_rank"], c.get("q_lora_rank")
    nope, rope_d, vd = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    NE, NU, NS = c["n_routed_experts"], c["num_experts_per_tok"], c["n_shared_experts"]
    FE = c["moe_intermediate_size"]
    lead = c["first_k_dense_replace"]
    rs = c.get("rope_scaling") or {}
    _common(w, c, n_head_kv=1, block_count=block_count)  # MLA: one latent "head"
    w.add_rope_freq_base(_rope_theta(c))
    w.add_layer_norm_rms_eps(c["rms_norm_eps"])
    w.add_expert_count(NE)
    w.add_expert_used_count(NU)
    w.add_vocab_size(V)
    _mla_keys(w, q_lora, kv_lora, nope, rope_d, vd)
    w.add_leading_dense_block_count(lead)
    w.add_expert_feed_forward_length(FE)
    w.add_expert_shared_count(NS)
    w.add_expert_weights_scale(c.get("routed_scaling_factor", 1.0))
    if c.get("norm_topk_prob"):
        w.add_expert_weights_norm(True)
    w.add_expert_gating_func(
        gguf.ExpertGatingFuncType.SOFTMAX
        if c.get("scoring_func", "softmax") == "softmax"
        else gguf.ExpertGatingFuncType.SIGMOID
    )
    w.add_rope_dimension_count(rope_d)
    if rs.get("type", rs.get("rope_type")) == "yarn":
        w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        w.add_rope_scaling_factor(rs["factor"])
        w.add_rope_scaling_orig_ctx_len(rs["original_max_position_embeddings"])
        w.add_rope_scaling_yarn_log_mul(0.1 * rs["mscale_all_dim"])


def _mla_blocks(tl, c, n_trunk, n_blocks, probs_b):
    """DeepseekV2Model's blocks (src/models/deepseek2.cpp): MLA (q_lora, kv_b split into attn_k_b / attn_v_b), the
    first_k_dense_replace dense FFNs, then routed experts (with the exp_probs_b router bias when ``probs_b``) and the
    shared experts; blocks past ``n_trunk`` are NextN/MTP blocks with their eh_proj, embed_tokens, enorm, hnorm,
    shared_head.head and shared_head.norm (conversion/glm.py Glm4MoeLiteModel)"""
    E, H, V = c["hidden_size"], c["num_attention_heads"], c["vocab_size"]
    kv_lora, q_lora = c.get("kv_lora_rank", 512), c.get("q_lora_rank")
    nope, rope_d, vd = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    NE, NS = c["n_routed_experts"], c.get("n_shared_experts", 0)
    FE, FF = c["moe_intermediate_size"], c["intermediate_size"]
    lead = c["first_k_dense_replace"]
    for i in range(n_blocks):
        tl.add(T.ATTN_NORM, (E,), i)
        if q_lora:
            tl.add(T.ATTN_Q_A_NORM, (q_lora,), i)
            tl.add(T.ATTN_Q_A, (E, q_lora), i)
            tl.add(T.ATTN_Q_B, (q_lora, H * (nope + rope_d)), i)
        else:
            tl.add(T.ATTN_Q, (E, H * (nope + rope_d)), i)
        tl.add(T.ATTN_KV_A_NORM, (kv_lora,), i)
        tl.add(T.ATTN_KV_A_MQA, (E, kv_lora + rope_d), i)
        tl.add(T.ATTN_K_B, (nope, kv_lora, H), i)
        tl.add(T.ATTN_V_B, (kv_lora, vd, H), i)
        tl.add(T.ATTN_OUT, (H * vd, E), i)
        tl.add(T.FFN_NORM, (E,), i)
        if i < lead:
            _ffn(tl, i, E, FF)
        else:
            tl.add(T.FFN_GATE_INP, (E, NE), i)
            if probs_b:
                tl.add(T.FFN_EXP_PROBS_B, (NE,), i, "bias")
            tl.add(T.FFN_GATE_EXP, (E, FE, NE), i)
            tl.add(T.FFN_UP_EXP, (E, FE, NE), i)
            tl.add(T.FFN_DOWN_EXP, (FE, E, NE), i)
            tl.add(T.FFN_GATE_SHEXP, (E, FE * NS), i)
            tl.add(T.FFN_UP_SHEXP, (E, FE * NS), i)
            tl.add(T.FFN_DOWN_SHEXP, (FE * NS, E), i)
        if i >= n_trunk:
            tl.add(T.NEXTN_EH_PROJ, (2 * E, E), i)
            tl.add(T.NEXTN_EMBED_TOKENS, (E, V), i)
            tl.add(T.NEXTN_ENORM, (E,), i)
            tl.add(T.NEXTN_HNORM, (E,), i)
            tl.add(T.NEXTN_SHARED_HEAD_HEAD, (E, V), i)
            tl.add(T.NEXTN_SHARED_HEAD_NORM, (E,), i)


def build_deepseek2(w, c):
    E, L, V = c["hidden_size"], c["num_hidden_layers"], c["vocab_size"]
    _deepseek2_header(w, c)  # DeepseekV2Model.skip_mtp: the MTP layer of V3 checkpoints is not converted

    tl = TL("deepseek2")
    _head(tl, c, E, V)
    _mla_blocks(tl, c, L, L, _deepseek_topk_method(c) == "noaux_tc")
    return tl.items


# --------------------------------------------------------------------------------------
# plain decoder families (llama-style tensors with small twists)
def _llama_like(w, c, arch, *, head_lengths, tied_default):
    """llama's tensors and keys (conversion/llama.py LlamaModel): the explicit key/value lengths where head_dim is not
    hidden / heads (``head_lengths``), the tie a config that does not say defaults to"""
    E, L, H, KV, FF, V = _dense_dims(c)
    hd = c.get("head_dim") or E // H
    _common(w, c)
    w.add_rope_freq_base(_rope_theta(c))
    w.add_layer_norm_rms_eps(c["rms_norm_eps"])
    if head_lengths:
        w.add_key_length(hd)
        w.add_value_length(hd)
    w.add_vocab_size(V)
    w.add_rope_dimension_count(hd)
    tl = TL(arch)
    _head(tl, c, E, V, tied_default=tied_default)
    for i in range(L):
        tl.add(T.ATTN_NORM, (E,), i)
        tl.add(T.ATTN_Q, (E, hd * H), i)
        tl.add(T.ATTN_K, (E, hd * KV), i)
        tl.add(T.ATTN_V, (E, hd * KV), i)
        tl.add(T.ATTN_OUT, (hd * H, E), i)
        tl.add(T.FFN_NORM, (E,), i)
        _ffn(tl, i, E, FF)
    return tl.items


def build_smollm3(w, c):
    """SmolLM3 (src/models/smollm3.cpp): llama's tensors; SmolLM3Config defaults tie_word_embeddings to true"""
    return _llama_like(w, c, "smollm3", head_lengths=False, tied_default=True)


def build_llama_hd(w, c):
    """llama arch with explicit head_dim (Mistral-Nemo: head_dim 128 != 5120/32)"""
    return _llama_like(w, c, "llama", head_lengths=True, tied_default=False)


def build_exaone4(w, c):
    """EXAONE 4.0 (QK-norm, post-norms, no pre-attention norm). conversion/exaone.py Exaone4Model"""
    E, L, H, KV, FF, V = _dense_dims(c)
    hd = c.get("head_dim") or E // H
    _common(w, c)
    w.add_rope_freq_base(_rope_theta(c))
    w.add_layer_norm_rms_eps(c["rms_norm_eps"])
    if c.get("head_dim"):
        w.add_key_length(hd)
        w.add_value_length(hd)
    w.add_vocab_size(V)
    if c.get("sliding_window") is not None:
        w.add_sliding_window(c["sliding_window"])
        w.add_sliding_window_pattern([t == "sliding_attention" for t in c["layer_types"]])
    rs = c.get("rope_scaling") or {}
    tl = TL("exaone4")
    _head(tl, c, E, V)
    if rs.get("rope_type") == "llama3":
        tl.add(T.ROPE_FREQS, (hd // 2,))
    for i in range(L):
        tl.add(T.ATTN_Q, (E, hd * H), i)
        tl.add(T.ATTN_K, (E, hd * KV), i)
        tl.add(T.ATTN_V, (E, hd * KV), i)
        tl.add(T.ATTN_OUT, (hd * H, E), i)
        tl.add(T.ATTN_POST_NORM, (E,), i)
        tl.add(T.ATTN_Q_NORM, (hd,), i)
        tl.add(T.ATTN_K_NORM, (hd,), i)
        _ffn(tl, i, E, FF)
        tl.add(T.FFN_POST_NORM, (E,), i)
    return tl.items


def build_gpt_oss(w, c):
    """gpt-oss (MoE with biases, attention sinks, alternating 128-token SWA / full layers, YaRN).
    conversion/gpt_oss.py GptOssModel. The converter copies the checkpoint's MXFP4 experts as-is; here the
    experts are written F16 like every other tensor and llama.cpp's quantizer produces the MXFP4 form
    (ftype MXFP4_MOE: experts MXFP4, other tensors Q8_0) or any other quant type."""
    E, L, H, KV, V = (
        c["hidden_size"],
        c["num_hidden_layers"],
        c["num_attention_heads"],
        c["num_key_value_heads"],
        c["vocab_size"],
    )
    hd, FF, NE = c["head_dim"], c["intermediate_size"], c["num_local_experts"]
    rs = c.get("rope_scaling") or {}
    _common(w, c)
    w.add_rope_freq_base(_rope_theta(c))
    w.add_layer_norm_rms_eps(c["rms_norm_eps"])
    w.add_expert_count(NE)
    w.add_expert_used_count(c["num_experts_per_tok"])
    w.add_key_length(hd)
    w.add_value_length(hd)
    if rs.get("rope_type") == "yarn":
        w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        w.add_rope_scaling_factor(rs["factor"])
        w.add_rope_scaling_orig_ctx_len(rs["original_max_position_embeddings"])
        w.add_rope_scaling_yarn_beta_fast(rs["beta_fast"])
        w.add_rope_scaling_yarn_beta_slow(rs["beta_slow"])
    w.add_sliding_window(c["sliding_window"])
    w.add_expert_feed_forward_length(FF)
    tl = TL("gpt-oss")
    tl.add(T.TOKEN_EMBD, (E, V))
    tl.add(T.OUTPUT_NORM, (E,))
    tl.add(T.OUTPUT, (E, V))
    for i in range(L):
        tl.add(T.ATTN_NORM, (E,), i)
        tl.add(T.ATTN_POST_NORM, (E,), i)
        for t, n in ((T.ATTN_Q, H * hd), (T.ATTN_K, KV * hd), (T.ATTN_V, KV * hd)):
            tl.add(t, (E, n), i)
            tl.add(t, (n,), i, "bias")
        tl.add(T.ATTN_OUT, (H * hd, E), i)
        tl.add(T.ATTN_OUT, (E,), i, "bias")
        tl.add(T.ATTN_SINKS, (H,), i)
        tl.add(T.FFN_GATE_INP, (E, NE), i)
        tl.add(T.FFN_GATE_INP, (NE,), i, "bias")
        tl.add(T.FFN_GATE_EXP, (E, FF, NE), i)
        tl.add(T.FFN_GATE_EXP, (FF, NE), i, "bias")
        tl.add(T.FFN_UP_EXP, (E, FF, NE), i)
        tl.add(T.FFN_UP_EXP, (FF, NE), i, "bias")
        tl.add(T.FFN_DOWN_EXP, (FF, E, NE), i)
        tl.add(T.FFN_DOWN_EXP, (E, NE), i, "bias")
    return tl.items


def build_olmo2(w, c):
    """OLMo 2 (post-norms only, QK-norm over the full projection). conversion/olmo.py Olmo2Model"""
    E, L, H, KV, FF, V = _dense_dims(c)
    hd = E // H
    _common(w, c)
    w.add_rope_freq_base(_rope_theta(c))
    w.add_layer_norm_rms_eps(c["rms_norm_eps"])
    tl = TL("olmo2")
    _head(tl, c, E, V)
    for i in range(L):
        tl.add(T.ATTN_Q, (E, E), i)
        tl.add(T.ATTN_K, (E, KV * hd), i)
        tl.add(T.ATTN_V, (E, KV * hd), i)
        tl.add(T.ATTN_OUT, (E, E), i)
        tl.add(T.ATTN_Q_NORM, (E,), i)
        tl.add(T.ATTN_K_NORM, (KV * hd,), i)
        tl.add(T.ATTN_POST_NORM, (E,), i)
        _ffn(tl, i, E, FF)
        tl.add(T.FFN_POST_NORM, (E,), i)
    return tl.items


def build_phi3_v2(w, c):
    """Phi-3/Phi-4-mini with fused qkv / gate_up, partial rotary and LongRoPE factor tensors.
    conversion/phi.py Phi3MiniModel (llama.cpp disables Phi SWA, so the cache is full length)."""
    E, L, H, KV, FF, V = _dense_dims(c)
    hd = E // H
    rot = int(c.get("partial_rotary_factor", 1.0) * E) // H
    w.add_context_length(c["max_position_embeddings"])
    w.add_rope_scaling_orig_ctx_len(c["original_max_position_embeddings"])
    w.add_embedding_length(E)
    w.add_feed_forward_length(FF)
    w.add_block_count(L)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    w.add_layer_norm_rms_eps(c["rms_norm_eps"])
    w.add_rope_dimension_count(rot)
    w.add_rope_freq_base(_rope_theta(c))
    w.add_sliding_window(c.get("sliding_window") or 0)
    rs = c.get("rope_scaling") or {}
    tl = TL("phi3")
    _head(tl, c, E, V)
    if rs.get("type", rs.get("rope_type")) in ("longrope", "su"):
        import math

        scale = c["max_position_embeddings"] / c["original_max_position_embeddings"]
        w.add_rope_scaling_attn_factors(
            math.sqrt(1 + math.log(scale) / math.log(c["original_max_position_embeddings"]))
        )
        tl.add(T.ROPE_FACTORS_LONG, (rot // 2,))
        tl.add(T.ROPE_FACTORS_SHORT, (rot // 2,))
    for i in range(L):
        tl.add(T.ATTN_NORM, (E,), i)
        tl.add(T.ATTN_QKV, (E, E + 2 * KV * hd), i)
        tl.add(T.ATTN_OUT, (E, E), i)
        tl.add(T.FFN_NORM, (E,), i)
        tl.add(T.FFN_UP, (E, 2 * FF), i)
        tl.add(T.FFN_DOWN, (FF, E), i)
    return tl.items


def build_glm4(w, c):
    """GLM-4-0414 (sandwich norms, fused gate/up, q/k/v biases, partial rotary 0.5). conversion/glm.py Glm4Model"""
    E, L, H, KV, FF, V = _dense_dims(c)
    hd = c.get("head_dim") or E // H
    _common(w, c)
    w.add_rope_freq_base(_rope_theta(c))
    w.add_layer_norm_rms_eps(c["rms_norm_eps"])
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_rope_dimension_count(int(hd * c.get("partial_rotary_factor", 0.5)))
    tl = TL("glm4")
    _head(tl, c, E, V)
    for i in range(L):
        tl.add(T.ATTN_NORM, (E,), i)
        for t, n in ((T.ATTN_Q, H * hd), (T.ATTN_K, KV * hd), (T.ATTN_V, KV * hd)):
            tl.add(t, (E, n), i)
            if c.get("attention_bias"):
                tl.add(t, (n,), i, "bias")
        tl.add(T.ATTN_OUT, (H * hd, E), i)
        tl.add(T.ATTN_POST_NORM, (E,), i)
        tl.add(T.FFN_NORM, (E,), i)
        tl.add(T.FFN_UP, (E, 2 * FF), i)  # gate_up_proj kept fused
        tl.add(T.FFN_DOWN, (FF, E), i)
        tl.add(T.FFN_POST_NORM, (E,), i)
    return tl.items


# ======================================================================================
# Writers added for the 2026-12 rows. Each follows llama.cpp 0c1e57098 (vendored in llama-cpp-python 0.3.36): the
# header as the converter class named in its docstring writes it (conversion/<file>.py), the tensors as the loader
# creates them (src/models/<arch>.cpp load_arch_tensors). Keys the converter gets from TextModel.set_gguf_parameters
# come from _text_model, a transcription of it.
def _find(h, keys, default=None):
    """ModelBase.find_hparam: the first of keys present in the config"""
    return next((h[k] for k in keys if k in h), default)


def _rope_parameters(h):
    """TextModel.__init__: rope_parameters (or rope_scaling) with the global rope settings mirrored into it"""
    rp = dict(h.get("rope_parameters") or h.get("rope_scaling") or {})
    theta = _find(h, ["global_rope_theta", "rope_global_theta", "rope_theta_global", "rope_theta", "rotary_emb_base"])
    local = _find(
        h, ["local_rope_theta", "rope_local_theta", "rope_theta_local", "swa_rope_theta", "rope_local_base_freq"]
    )
    prf = _find(h, ["partial_rotary_factor", "rope_pct", "rope_percent"])
    orig = _find(h, ["original_max_position_embeddings"])
    if "full_attention" not in rp and "sliding_attention" not in rp:
        if local is not None:
            rp["sliding_attention"] = {"rope_theta": local}
        if "rope_theta" not in rp and theta is not None:
            rp["rope_theta"] = theta
        if "rope_type" not in rp and rp.get("type") is not None:
            rp["rope_type"] = rp["type"]
        if "partial_rotary_factor" not in rp and prf is not None:
            rp["partial_rotary_factor"] = prf
        if "original_max_position_embeddings" not in rp and orig is not None:
            rp["original_max_position_embeddings"] = orig
    return rp


def _text_model(w, h, block_count=None, rp=None):
    """conversion/base.py TextModel.set_gguf_parameters (general.file_type is written by gen_gguf.py)"""
    w.add_block_count(
        block_count if block_count is not None else _find(h, ["n_layers", "num_hidden_layers", "n_layer", "num_layers"])
    )
    keys = [
        (
            w.add_context_length,
            [
                "max_position_embeddings",
                "n_ctx",
                "n_positions",
                "max_length",
                "max_sequence_length",
                "model_max_length",
            ],
        ),
        (w.add_embedding_length, ["hidden_size", "n_embd", "dim"]),
        (
            w.add_feed_forward_length,
            ["prefix_dense_intermediate_size", "dense_intermediate_size", "intermediate_size", "n_inner", "hidden_dim"],
        ),
        (w.add_head_count, ["num_attention_heads", "n_head", "n_heads"]),
        (w.add_head_count_kv, ["num_key_value_heads", "n_kv_heads"]),
    ]
    for add, ks in keys:
        if (v := _find(h, ks)) is not None:
            add(v)
    if h.get("is_causal") is False:
        w.add_causal_attention(False)
    rp = _rope_parameters(h) if rp is None else rp
    rpf = rp.get("full_attention", rp)
    rope_type, factor = rpf.get("rope_type"), rpf.get("factor")
    if rope_type == "linear" and factor is not None:
        w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        w.add_rope_scaling_factor(factor)
    elif rope_type == "yarn" and factor is not None:
        w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        w.add_rope_scaling_factor(factor)
        w.add_rope_scaling_orig_ctx_len(rpf["original_max_position_embeddings"])
        if (v := rpf.get("extrapolation_factor")) is not None:
            w.add_rope_scaling_yarn_ext_factor(v)
        if (v := rpf.get("attention_factor", rpf.get("attn_factor"))) is not None:
            w.add_rope_scaling_yarn_attn_factor(v)
        if (v := rpf.get("beta_fast")) is not None:
            w.add_rope_scaling_yarn_beta_fast(v)
        if (v := rpf.get("beta_slow")) is not None:
            w.add_rope_scaling_yarn_beta_slow(v)
    elif rope_type in ("su", "longrope"):
        w.add_rope_scaling_type(gguf.RopeScalingType.LONGROPE)
    if "mrope_section" in rp:
        w.add_rope_dimension_sections([*rp["mrope_section"], 0, 0, 0, 0][:4])
    if (v := rpf.get("rope_theta")) is not None:
        w.add_rope_freq_base(v)
    if (v := rp.get("sliding_attention", {}).get("rope_theta")) is not None:
        w.add_rope_freq_base_swa(v)
    if (v := _find(h, ["rms_norm_eps", "norm_eps"])) is not None:
        w.add_layer_norm_rms_eps(v)
    if (v := _find(h, ["layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"])) is not None:
        w.add_layer_norm_eps(v)
    if (v := _find(h, ["num_local_experts", "num_experts", "n_routed_experts"])) is not None:
        w.add_expert_count(v)
    if (v := _find(h, ["num_experts_per_tok", "num_experts_per_token", "top_k_experts"])) is not None:
        w.add_expert_used_count(v)
    if (v := h.get("n_group")) is not None:
        w.add_expert_group_count(v)
    if (v := h.get("topk_group")) is not None:
        w.add_expert_group_used_count(v)
    score = _find(
        h,
        [
            "score_function",
            "scoring_func",
            "score_func",
            "moe_router_activation",
            "moe_router_activation_func",
            "expert_selection_fn",
        ],
    )
    if score is not None:
        if score not in ("sigmoid", "softmax", "sqrtsoftplus"):
            raise ValueError(f"Unsupported expert score gating function value: {score}")
        w.add_expert_gating_func(getattr(gguf.ExpertGatingFuncType, score.upper()))
    if (v := h.get("head_dim")) is not None:
        w.add_key_length(v)
        w.add_value_length(v)


def _llama3_rope_freqs(tl, h, rp):
    """LlamaModel/ExaoneModel.generate_extra_tensors: the llama3 rope factors as rope_freqs ({head_dim / 2})"""
    rpf = rp.get("full_attention", rp)
    if str(rpf.get("rope_type", "")).lower() == "llama3":
        hd = h.get("head_dim") or h["hidden_size"] // h["num_attention_heads"]
        tl.add(T.ROPE_FREQS, (hd // 2,))


def _attn(tl, i, E, n_q, n_kv, bias=False):
    """create_tensor_qkv (llama-model.cpp) with separate q/k/v, plus attn_output"""
    for t, n in ((T.ATTN_Q, n_q), (T.ATTN_K, n_kv), (T.ATTN_V, n_kv)):
        tl.add(t, (E, n), i)
        if bias:
            tl.add(t, (n,), i, "bias")
    tl.add(T.ATTN_OUT, (n_q, E), i)


def _moe(tl, i, E, FE, NE, probs_b=False, gate=True):
    """routed experts as one 3-D tensor each (the converters stack the per-expert matrices)"""
    tl.add(T.FFN_GATE_INP, (E, NE), i)
    if probs_b:
        tl.add(T.FFN_EXP_PROBS_B, (NE,), i, "bias")
    if gate:
        tl.add(T.FFN_GATE_EXP, (E, FE, NE), i)
    tl.add(T.FFN_DOWN_EXP, (FE, E, NE), i)
    tl.add(T.FFN_UP_EXP, (E, FE, NE), i)


def _shexp(tl, i, E, FS, gate=True):
    if gate:
        tl.add(T.FFN_GATE_SHEXP, (E, FS), i)
    tl.add(T.FFN_DOWN_SHEXP, (FS, E), i)
    tl.add(T.FFN_UP_SHEXP, (E, FS), i)


def _nextn(tl, i, E, V, embed=False, head=False, head_norm=True):
    """the NextN/MTP block's own tensors (loaders: eh_proj, enorm, hnorm, optional embed_tokens /
    shared_head_head / shared_head_norm)"""
    tl.add(T.NEXTN_EH_PROJ, (2 * E, E), i)
    tl.add(T.NEXTN_ENORM, (E,), i)
    tl.add(T.NEXTN_HNORM, (E,), i)
    if embed:
        tl.add(T.NEXTN_EMBED_TOKENS, (E, V), i)
    if head:
        tl.add(T.NEXTN_SHARED_HEAD_HEAD, (E, V), i)
    if head_norm:
        tl.add(T.NEXTN_SHARED_HEAD_NORM, (E,), i)


# --------------------------------------------------------------------------------------
def build_exaone(w, c):
    """EXAONE 3.x: the llama layout under ExaoneForCausalLM names. conversion/exaone.py ExaoneModel;
    src/models/exaone.cpp (output absent when tied; rope_freqs only when rope_scaling says llama3)"""
    E, H, KV, FF, V = (
        c[k] for k in ("hidden_size", "num_attention_heads", "num_key_value_heads", "intermediate_size", "vocab_size")
    )
    L = _find(c, ["n_layers", "num_hidden_layers", "n_layer", "num_layers"])
    rp = _rope_parameters(c)
    # TextModel's keys, with the config's layer_norm_epsilon written as attention.layer_norm_rms_epsilon, which
    # src/models/exaone.cpp requires (EXAONE's norms are RMSNorms), and vocab_size, as in the measured file (its
    # header size pins the set)
    _text_model(w, {k: v for k, v in c.items() if k != "layer_norm_epsilon"}, rp=rp)
    w.add_layer_norm_rms_eps(c["layer_norm_epsilon"])
    w.add_vocab_size(V)
    w.add_rope_dimension_count(int((rp.get("partial_rotary_factor") or 1.0) * (E // H)))
    hd = c.get("head_dim") or E // H
    tl = TL("exaone")
    _head(tl, c, E, V)
    _llama3_rope_freqs(tl, c, rp)
    for i in range(L):
        tl.add(T.ATTN_NORM, (E,), i)
        _attn(tl, i, E, hd * H, hd * KV)
        tl.add(T.FFN_NORM, (E,), i)
        _ffn(tl, i, E, FF)
    return tl.items


def build_command_r(w, c):
    """Command R (Cohere): one LayerNorm before the parallel attention + FFN, head tied to token_embd (loaded as its
    duplicate), q/k norms only from 64 layers on. conversion/command_r.py CommandR2Model; src/models/command-r.cpp"""
    h = dict(c)
    h["max_position_embeddings"] = _find(c, ["model_max_length", "max_position_embeddings"])
    E, L, H, KV, FF, V = _dense_dims(h)
    _text_model(w, h)
    w.add_logit_scale(h["logit_scale"])
    w.add_rope_scaling_type(gguf.RopeScalingType.NONE)
    hd = E // H
    tl = TL("command-r")
    tl.add(T.TOKEN_EMBD, (E, V))
    tl.add(T.OUTPUT_NORM, (E,))
    for i in range(L):
        tl.add(T.ATTN_NORM, (E,), i)
        if L >= 64:
            tl.add(T.ATTN_Q_NORM, (hd, H), i)
            tl.add(T.ATTN_K_NORM, (hd, KV), i)
        _attn(tl, i, E, E, hd * KV)
        _ffn(tl, i, E, FF)
    return tl.items


def build_cohere2(w, c):
    """Command R7B (cohere2): sliding-window layers (llama.cpp's default pattern of 4: three SWA, one global), Cohere's
    parallel block, head tied to token_embd; the checkpoint's zero biases are skipped.
    conversion/command_r.py Cohere2Model; src/models/cohere2.cpp"""
    E, L, H, KV, FF, V = _dense_dims(c)
    _text_model(w, c)
    w.add_logit_scale(c["logit_scale"])
    w.add_sliding_window(c["sliding_window"])
    w.add_vocab_size(V)
    # rotary_pct: Cohere2Config's default 1.0 when the config omits it
    w.add_rope_dimension_count(int(c.get("rotary_pct", 1.0) * (E // H)))
    w.add_rope_scaling_type(gguf.RopeScalingType.NONE)
    hd = c.get("head_dim") or E // H
    tl = TL("cohere2")
    tl.add(T.TOKEN_EMBD, (E, V))
    tl.add(T.OUTPUT_NORM, (E,))
    for i in range(L):
        tl.add(T.ATTN_NORM, (E,), i)
        _attn(tl, i, E, E, hd * KV)
        _ffn(tl, i, E, FF)
    return tl.items


def build_llama4(w, c):
    """Llama 4 (chunked attention on three of four layers, MoE with a shared expert every interleave_moe_layer_step
    layers). conversion/llama.py Llama4Model (on LlamaModel: intermediate_size_mlp is feed_forward_length, the
    experts' width intermediate_size); src/models/llama4.cpp"""
    h = dict(c)
    h["intermediate_size_moe"] = h["intermediate_size"]
    h["intermediate_size"] = h["intermediate_size_mlp"]
    E, L, H, KV, FF, V = _dense_dims(h)
    FE, NE, step = h["intermediate_size_moe"], h["num_local_experts"], h["interleave_moe_layer_step"]
    hd = h.get("head_dim") or E // H
    rp = _rope_parameters(h)
    _text_model(w, h, rp=rp)
    w.add_vocab_size(V)  # LlamaModel
    w.add_rope_dimension_count(hd)
    w.add_interleave_moe_layer_step(step)
    w.add_expert_feed_forward_length(FE)
    if "layer_types" in h and all(t == "full_attention" for t in h["layer_types"]):
        w.add_sliding_window(0)
    tl = TL("llama4")
    _head(tl, h, E, V)
    _llama3_rope_freqs(tl, h, rp)
    for i in range(L):
        tl.add(T.ATTN_NORM, (E,), i)
        _attn(tl, i, E, hd * H, hd * KV)
        tl.add(T.FFN_NORM, (E,), i)
        if step > 0 and (i + 1) % step == 0:
            _moe(tl, i, E, FE, NE)
            _shexp(tl, i, E, FE)
        else:
            _ffn(tl, i, E, FF)
    return tl.items


def build_nemotron_h(w, c):
    """NVIDIA Nemotron-H / Nemotron 3 (nemotron_h, nemotron_h_moe): per layer one block as hybrid_override_pattern
    says (M Mamba2, * attention, - MLP, E relu^2 experts without gate + ungated shared expert), each with attn_norm
    only. conversion/nemotron.py NemotronHModel (on GraniteHybridModel, GraniteMoeModel, GraniteModel, LlamaModel);
    src/models/nemotron-h.cpp (nemotron_h_moe reuses its loader)"""
    h = dict(c)
    h.pop("head_dim", None)  # GraniteModel pops head_dim before LlamaModel/TextModel see it
    hd = c.get("head_dim", c.get("attention_head_dim"))
    E, L, H, KV, V = (
        h[k] for k in ("hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "vocab_size")
    )
    V = -(V // -8) * 8  # set_vocab pads the vocabulary to a multiple of 8
    moe = "num_experts_per_tok" in c
    pattern = c.get("hybrid_override_pattern")
    ssm = [i for i, x in enumerate(pattern) if x == "M"]
    attn = [i for i, x in enumerate(pattern) if x == "*"]
    mlp = [i for i, x in enumerate(pattern) if x == ("E" if moe else "-")]

    def hp(keys):  # GraniteHybridModel.find_hparam also tries the "mamba_"-prefixed keys
        return _find(h, list(keys) + ["mamba_" + k for k in keys])

    d_head = hp(["mamba_head_dim", "hidden_size", "d_model"])
    n_group, d_state, d_conv = (
        hp(["n_groups", "num_groups"]),
        hp(["state_size", "d_state", "state_dim", "ssm_state_size"]),
        hp(["conv_kernel", "d_conv"]),
    )
    n_ssm_head = hp(["num_heads"])
    d_inner = n_ssm_head * d_head  # NemotronHModel: num_heads * mamba_head_dim (not expand)
    # TextModel, LlamaModel, GraniteModel, GraniteMoeModel; as the measured file had them (its header size pins the
    # set): the norm epsilon as attention.layer_norm_epsilon only (the loader takes it for the RMS epsilon too), no
    # expert_group_used_count and no rope.dimension_count (NoPE attention: neither changes a buffer)
    _text_model(w, {k: v for k, v in h.items() if k not in ("norm_eps", "rms_norm_eps", "topk_group")})
    w.add_vocab_size(V)
    # GraniteHybridModel
    w.add_ssm_conv_kernel(d_conv)
    w.add_ssm_state_size(d_state)
    w.add_ssm_group_count(n_group)
    w.add_ssm_inner_size(d_inner)
    w.add_ssm_time_step_rank(hp(["n_heads", "num_heads"]))
    w.add_head_count_kv([KV if i in attn else 0 for i in range(L)])
    use_rope = "BambaForCausalLM" in c.get("architectures", []) or not ssm
    w.add_rope_scaling_finetuned(use_rope)
    if not use_rope:
        w.add_context_length(2**20)
    # NemotronHModel
    w.add_key_length(hd)
    w.add_value_length(hd)
    if not moe:
        w.add_feed_forward_length([c["intermediate_size"] if i in mlp else 0 for i in range(L)])
    else:
        FE = c["moe_intermediate_size"]
        w.add_feed_forward_length([FE if i in mlp else 0 for i in range(L)])
        w.add_expert_used_count(c["num_experts_per_tok"])
        w.add_expert_feed_forward_length(FE)
        w.add_expert_shared_feed_forward_length(c["moe_shared_expert_intermediate_size"])
        w.add_expert_count(c["n_routed_experts"])
        w.add_expert_shared_count(c["n_shared_experts"])
        w.add_expert_weights_norm(c["norm_topk_prob"])
        w.add_expert_weights_scale(c["routed_scaling_factor"])
        w.add_expert_group_count(c["n_group"])
        if (v := c.get("moe_latent_size")) is not None:
            w.add_moe_latent_size(v)

    tl = TL(c["llama_arch"])
    _head(tl, c, E, V)
    d_in_proj = 2 * d_inner + 2 * n_group * d_state + n_ssm_head
    conv_ch = d_inner + 2 * n_group * d_state
    for i in range(L):
        tl.add(T.ATTN_NORM, (E,), i)
        if i in ssm:
            tl.add(T.SSM_IN, (E, d_in_proj), i)
            tl.add(T.SSM_CONV1D, (d_conv, conv_ch), i)
            if c.get("use_conv_bias", True):
                tl.add(T.SSM_CONV1D, (conv_ch,), i, "bias")
            tl.add(T.SSM_DT, (n_ssm_head,), i, "bias")
            tl.add(T.SSM_A, (1, n_ssm_head), i, None)
            tl.add(T.SSM_D, (1, n_ssm_head), i, None)
            tl.add(T.SSM_NORM, (d_inner // n_group, n_group), i)
            tl.add(T.SSM_OUT, (d_inner, E), i)
        elif i in attn:
            _attn(tl, i, E, hd * H, hd * KV, bias=c.get("attention_bias", False))
        elif moe:
            NE, FE, FS = c["n_routed_experts"], c["moe_intermediate_size"], c["moe_shared_expert_intermediate_size"]
            _moe(tl, i, E, FE, NE, probs_b=True, gate=False)
            _shexp(tl, i, E, FS, gate=False)
        else:
            tl.add(T.FFN_DOWN, (c["intermediate_size"], E), i)
            tl.add(T.FFN_UP, (E, c["intermediate_size"]), i)
    return tl.items


def build_minimax_m2(w, c):
    """MiniMax M2 (every block MoE with sigmoid routing and exp_probs_b, q/k RMS norms over the whole projection,
    partial rotary). conversion/minimax.py MiniMaxM2Model (no MTP export); src/models/minimax-m2.cpp"""
    E, L, H, KV, FF, V = _dense_dims(c)
    hd, NE = c["head_dim"], c["num_local_experts"]
    _text_model(w, c)
    w.add_expert_feed_forward_length(FF)
    w.add_rope_dimension_count(c["rotary_dim"])
    tl = TL("minimax-m2")
    _head(tl, c, E, V)
    for i in range(L):
        _attn(tl, i, E, hd * H, hd * KV)
        tl.add(T.ATTN_NORM, (E,), i)
        tl.add(T.ATTN_Q_NORM, (hd * H,), i)
        tl.add(T.ATTN_K_NORM, (hd * KV,), i)
        tl.add(T.FFN_NORM, (E,), i)
        _moe(tl, i, E, FF, NE, probs_b=True)
    return tl.items


def build_glm4moe(w, c):
    """GLM-4.5 family: q/k/v biases, optional q/k norms, first_k_dense_replace dense blocks, sigmoid-routed experts with
    exp_probs_b and shared experts, the NextN/MTP block appended to block_count. conversion/glm.py Glm4MoeModel;
    src/models/glm4-moe.cpp"""
    E, L, H, KV, FF, V = _dense_dims(c)
    n_mtp = c.get("num_nextn_predict_layers", 0)
    NL = L + n_mtp
    hd = c.get("head_dim") or E // H
    NE, FE, NS, lead = (
        c["n_routed_experts"],
        c["moe_intermediate_size"],
        c.get("n_shared_experts", 0),
        c.get("first_k_dense_replace", 0),
    )
    rp = _rope_parameters(c)
    # TextModel's keys without n_group / topk_group: the rows' logs show n_expert_groups = 0 (GLM-4.5's single group
    # changes nothing in llama.cpp)
    _text_model(w, {k: v for k, v in c.items() if k not in ("n_group", "topk_group")}, block_count=NL, rp=rp)
    w.add_rope_dimension_count(int(hd * rp.get("partial_rotary_factor", 0.5)))
    w.add_expert_count(NE)
    w.add_expert_feed_forward_length(FE)
    if c.get("n_shared_experts") is not None:
        w.add_expert_shared_count(NS)
    if c.get("first_k_dense_replace") is not None:
        w.add_leading_dense_block_count(lead)
    w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
    if c.get("routed_scaling_factor") is not None:
        w.add_expert_weights_scale(c["routed_scaling_factor"])
    if c.get("norm_topk_prob") is not None:
        w.add_expert_weights_norm(c["norm_topk_prob"])
    if n_mtp:
        w.add_nextn_predict_layers(n_mtp)
    tl = TL("glm4moe")
    _head(tl, c, E, V)
    for i in range(NL):
        tl.add(T.ATTN_NORM, (E,), i)
        _attn(tl, i, E, hd * H, hd * KV, bias=c.get("attention_bias", False))
        if c.get("use_qk_norm"):
            tl.add(T.ATTN_Q_NORM, (hd,), i)
            tl.add(T.ATTN_K_NORM, (hd,), i)
        tl.add(T.ATTN_POST_NORM, (E,), i)
        if i >= lead:
            _moe(tl, i, E, FE, NE, probs_b=True)
            if NS > 0:
                _shexp(tl, i, E, FE * NS)
        else:
            _ffn(tl, i, E, FF)
        if i >= L:  # the MTP checkpoint ships embed_tokens, shared_head.head and shared_head.norm
            _nextn(tl, i, E, V, embed=True, head=True)
    return tl.items


def _qwen_linear_attention(tl, i, c, E, fused_ba):
    """a Gated DeltaNet layer as src/models/qwen3next.cpp / qwen35*.cpp load it (in_proj_qkvz split into attn_qkv and
    attn_gate by Qwen3NextModel.modify_tensors; Qwen3-Next keeps beta/alpha fused in ssm_ba)"""
    dk, dv = c["linear_key_head_dim"], c["linear_value_head_dim"]
    nk, nv = c["linear_num_key_heads"], c["linear_num_value_heads"]
    key_dim, value_dim = dk * nk, dv * nv
    conv_dim = 2 * key_dim + value_dim
    tl.add(T.ATTN_QKV, (E, conv_dim), i)
    tl.add(T.ATTN_GATE, (E, value_dim), i)
    tl.add(T.SSM_CONV1D, (c["linear_conv_kernel_dim"], conv_dim), i)
    tl.add(T.SSM_DT, (nv,), i, "bias")
    tl.add(T.SSM_A, (nv,), i, None)
    if fused_ba:
        tl.add(T.SSM_BETA_ALPHA, (E, 2 * nv), i)
    else:
        tl.add(T.SSM_BETA, (E, nv), i)
        tl.add(T.SSM_ALPHA, (E, nv), i)
    tl.add(T.SSM_NORM, (dv,), i)
    tl.add(T.SSM_OUT, (value_dim, E), i)


def _qwen_gated_attention(tl, i, E, H, KV, hd):
    tl.add(T.ATTN_Q, (E, hd * H * 2), i)  # query + output gate
    tl.add(T.ATTN_K, (E, hd * KV), i)
    tl.add(T.ATTN_V, (E, hd * KV), i)
    tl.add(T.ATTN_OUT, (hd * H, E), i)
    tl.add(T.ATTN_Q_NORM, (hd,), i)
    tl.add(T.ATTN_K_NORM, (hd,), i)


def _qwen_moe_ffn(tl, i, c, E):
    """routed experts (gate and up as separate 3-D tensors) and the sigmoid-gated shared expert"""
    NE, FE, FS = c["num_experts"], c["moe_intermediate_size"], c["shared_expert_intermediate_size"]
    tl.add(T.FFN_GATE_INP, (E, NE), i)
    tl.add(T.FFN_DOWN_EXP, (FE, E, NE), i)
    tl.add(T.FFN_GATE_EXP, (E, FE, NE), i)
    tl.add(T.FFN_UP_EXP, (E, FE, NE), i)
    tl.add(T.FFN_GATE_INP_SHEXP, (E,), i)
    _shexp(tl, i, E, FS)


def _qwen_hybrid_moe(w, c, arch, fused_ba, n_mtp):
    """Qwen3-Next / Qwen3.5-MoE: conversion/qwen.py Qwen3NextModel (+ _QwenMtpMixin, Qwen2MoeModel, TextModel)"""
    E, L, H, KV, hd, V = (
        c[k]
        for k in (
            "hidden_size",
            "num_hidden_layers",
            "num_attention_heads",
            "num_key_value_heads",
            "head_dim",
            "vocab_size",
        )
    )
    NL = L + n_mtp
    rp = _rope_parameters(c)
    _text_model(w, c, block_count=NL, rp=rp)
    # feed_forward_length = the experts' width, as the measured files had it (the rows' logs: n_ff = 512; Qwen3-Next's
    # converter would write intermediate_size, which llama.cpp does not use once the shared width is set)
    w.add_feed_forward_length(c["moe_intermediate_size"])
    # Qwen2MoeModel
    w.add_expert_feed_forward_length(c["moe_intermediate_size"])
    w.add_expert_shared_feed_forward_length(c["shared_expert_intermediate_size"])
    # _QwenMtpMixin
    if n_mtp:
        w.add_nextn_predict_layers(n_mtp)
    # Qwen3NextModel
    w.add_ssm_conv_kernel(c["linear_conv_kernel_dim"])
    w.add_ssm_state_size(c["linear_key_head_dim"])
    w.add_ssm_group_count(c["linear_num_key_heads"])
    w.add_ssm_time_step_rank(c["linear_num_value_heads"])
    w.add_ssm_inner_size(c["linear_value_head_dim"] * c["linear_num_value_heads"])
    interval = c.get("full_attention_interval", 4)
    lt = c.get("layer_types") or ["full_attention" if (i + 1) % interval == 0 else "linear_attention" for i in range(L)]
    # written even when config.json has no layer_types (Qwen3-Next), as in the measured file; the loader derives the
    # same pattern from full_attention_interval without it
    _add_recurrent_layers(w, [t == "linear_attention" for t in lt] + [False] * n_mtp)
    w.add_full_attention_interval(interval)
    w.add_rope_dimension_count(int(hd * rp.get("partial_rotary_factor", 0.25)))
    tl = TL(arch)
    _head(tl, c, E, V)
    for i in range(NL):
        tl.add(T.ATTN_NORM, (E,), i)
        tl.add(T.ATTN_POST_NORM, (E,), i)
        if i < L and lt[i] == "linear_attention":
            _qwen_linear_attention(tl, i, c, E, fused_ba)
        else:  # full attention; the MTP block is a full-attention block
            _qwen_gated_attention(tl, i, E, H, KV, hd)
        _qwen_moe_ffn(tl, i, c, E)
        if i >= L:  # mtp.fc / pre_fc_norm_embedding / pre_fc_norm_hidden / norm
            _nextn(tl, i, E, V, embed=c.get("mtp_use_dedicated_embeddings", False))
    return tl.items


def build_qwen35moe(w, c):
    """Qwen3.5 MoE (Gated DeltaNet x3 + gated attention x1, 256 experts + gated shared expert, MTP block).
    conversion/qwen.py Qwen3_5MoeTextModel (_Qwen35MRopeMixin: rope sections); src/models/qwen35moe.cpp"""
    n_mtp = c.get("gguf_mtp_layers", c.get("mtp_num_hidden_layers", 0))
    return _qwen_hybrid_moe(w, c, "qwen35moe", fused_ba=False, n_mtp=n_mtp)


def build_qwen3next(w, c):
    """Qwen3-Next (Gated DeltaNet x3 + gated attention x1, 512 experts, beta and alpha in one ssm_ba).
    conversion/qwen.py Qwen3NextModel; src/models/qwen3next.cpp. Its config.json does not name the checkpoint's MTP
    block (the converter counts mtp.* tensors): gguf_mtp_layers gives it."""
    n_mtp = c.get("gguf_mtp_layers", c.get("mtp_num_hidden_layers", 0))
    return _qwen_hybrid_moe(w, c, "qwen3next", fused_ba=True, n_mtp=n_mtp)


def _mla_header(w, c, block_count, rope_dim=None):
    """conversion/deepseek.py DeepseekV2Model.set_gguf_parameters (MLA as MQA with one latent head)"""
    h = dict(c)
    h["num_key_value_heads"] = 1
    h["rms_norm_eps"] = h.get("rms_norm_eps", 1e-6)
    rp = _rope_parameters(h)
    _text_model(w, h, block_count=block_count, rp=rp)
    has_moe = h.get("n_routed_experts") is not None
    lead = h.get("first_k_dense_replace")
    w.add_leading_dense_block_count(lead if lead is not None else (h["num_hidden_layers"] if not has_moe else 0))
    kv_lora = h.get("kv_lora_rank", 512)
    w.add_vocab_size(h["vocab_size"])
    if h.get("q_lora_rank") is not None:
        w.add_q_lora_rank(h["q_lora_rank"])
    w.add_kv_lora_rank(kv_lora)
    w.add_key_length(kv_lora + h["qk_rope_head_dim"])
    w.add_value_length(kv_lora)
    w.add_key_length_mla(h["qk_nope_head_dim"] + h["qk_rope_head_dim"])
    w.add_value_length_mla(h["v_head_dim"])
    w.add_expert_feed_forward_length(_find(h, ["moe_intermediate_size", "intermediate_size"]))
    if has_moe:
        w.add_expert_count(h["n_routed_experts"])
    w.add_expert_shared_count(h.get("n_shared_experts", 0))
    if h.get("routed_scaling_factor") is not None:
        w.add_expert_weights_scale(h["routed_scaling_factor"])
    if h.get("norm_topk_prob"):
        w.add_expert_weights_norm(True)
    w.add_rope_dimension_count(h["qk_rope_head_dim"])
    if (v := rp.get("mscale_all_dim")) is not None:
        w.add_rope_scaling_yarn_log_mul(0.1 * v)
    return rp


def _dsa_blocks(tl, c, L, NL, indexer_full):
    """DeepSeek V3.2 / GLM-5 blocks: MLA (q_lora, kv_b split into attn_k_b / attn_v_b), the DSA lightning indexer where
    indexer_full(i), dense FFN for the first first_k_dense_replace blocks, then sigmoid-routed experts with exp_probs_b
    and shared experts; the MTP block (i >= L) with its own embed_tokens / shared_head."""
    E, H, V = c["hidden_size"], c["num_attention_heads"], c["vocab_size"]
    q_lora, kv_lora = c["q_lora_rank"], c["kv_lora_rank"]
    nope, rope_d, vd = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    NE, FE, NS, FF = c["n_routed_experts"], c["moe_intermediate_size"], c["n_shared_experts"], c["intermediate_size"]
    lead = c["first_k_dense_replace"]
    ihd, inh = c["index_head_dim"], c["index_n_heads"]
    for i in range(NL):
        tl.add(T.ATTN_NORM, (E,), i)
        tl.add(T.ATTN_Q_A_NORM, (q_lora,), i)
        tl.add(T.ATTN_KV_A_NORM, (kv_lora,), i)
        tl.add(T.ATTN_Q_A, (E, q_lora), i)
        tl.add(T.ATTN_Q_B, (q_lora, H * (nope + rope_d)), i)
        tl.add(T.ATTN_KV_A_MQA, (E, kv_lora + rope_d), i)
        tl.add(T.ATTN_K_B, (nope, kv_lora, H), i)
        tl.add(T.ATTN_V_B, (kv_lora, vd, H), i)
        tl.add(T.ATTN_OUT, (H * vd, E), i)
        tl.add(T.FFN_NORM, (E,), i)
        if indexer_full(i):
            tl.add(T.INDEXER_K_NORM, (ihd,), i)
            tl.add(T.INDEXER_K_NORM, (ihd,), i, "bias")
            tl.add(T.INDEXER_PROJ, (E, inh), i)
            tl.add(T.INDEXER_ATTN_K, (E, ihd), i)
            tl.add(T.INDEXER_ATTN_Q_B, (q_lora, inh * ihd), i)
        if i < lead:
            _ffn(tl, i, E, FF)
        else:
            _moe(tl, i, E, FE, NE, probs_b=_deepseek_topk_method(c) == "noaux_tc")
            _shexp(tl, i, E, FE * NS)
        if i >= L:
            _nextn(tl, i, E, V, embed=True, head=True)


def build_deepseek32(w, c):
    """DeepSeek V3.2 (MLA + the DSA lightning indexer in every block, MTP block appended).
    conversion/deepseek.py DeepseekV32Model (on DeepseekV2Model); src/models/deepseek32.cpp"""
    L = c["num_hidden_layers"]
    n_mtp = c.get("num_nextn_predict_layers", 0)
    # the deepseek2 writer's keys (the row's log: n_expert_groups = 0; file size as measured), MTP block counted
    _deepseek2_header(w, c, block_count=L + n_mtp)
    if c.get("num_nextn_predict_layers") is not None:
        w.add_nextn_predict_layers(n_mtp)
    w.add_indexer_head_count(c["index_n_heads"])
    w.add_indexer_key_length(c["index_head_dim"])
    w.add_indexer_top_k(c["index_topk"])
    tl = TL("deepseek32")
    _head(tl, c, c["hidden_size"], c["vocab_size"])
    _dsa_blocks(tl, c, L, L + n_mtp, lambda i: True)
    return tl.items


def build_glm_dsa(w, c):
    """GLM-5 family (glm_moe_dsa: DeepSeek V3.2's blocks; the indexer only in the "full" layers of indexer_types, every
    layer when the config has none, and in the MTP block). conversion/glm.py GlmMoeDsaModel (on DeepseekV2Model);
    src/models/glm-dsa.cpp"""
    L = c["num_hidden_layers"]
    n_mtp = c.get("num_nextn_predict_layers", 0)
    rp = _mla_header(w, c, L + n_mtp)
    w.add_rope_dimension_count(int(c["qk_rope_head_dim"] * rp.get("partial_rotary_factor", 1.0)))
    if c.get("num_nextn_predict_layers") is not None:
        w.add_nextn_predict_layers(n_mtp)
    w.add_indexer_head_count(c["index_n_heads"])
    w.add_indexer_key_length(c["index_head_dim"])
    w.add_indexer_top_k(c["index_topk"])
    types = c.get("indexer_types")
    if types is not None:
        _add_bool_array(w, "add_indexer_types", "{arch}.attention.indexer.types", [t == "full" for t in types])
    tl = TL("glm-dsa")
    _head(tl, c, c["hidden_size"], c["vocab_size"])
    _dsa_blocks(tl, c, L, L + n_mtp, lambda i: types is None or i >= L or types[i] == "full")
    return tl.items


def build_deepseek4(w, c):
    """DeepSeek V4 (sliding-window MLA-like attention with per-layer KV compression: ratio 4 = CSA with the lightning
    indexer, 128 = HCA; hyper-connections; hash-routed first layers with an I32 token -> expert table).
    conversion/deepseek.py DeepseekV4Model (the text-model registration; MTP left out of the main file, only --mtp
    writes it); src/models/deepseek4.cpp. Experts are written F16 (the real converter repacks them as MXFP4)."""
    h = dict(c)
    rp = _rope_parameters(h)
    # DeepseekV4Model.__init__: rope_scaling's "type" mirrored as rope_type (transformers 5.x workaround)
    if rp.get("full_attention", rp).get("rope_type") is None and (rs := c.get("rope_scaling")) is not None:
        rp.update(rs)
        if "rope_type" not in rs and rs.get("type") is not None:
            rp["rope_type"] = rs["type"]
    E, L, H, V = h["hidden_size"], h["num_hidden_layers"], h["num_attention_heads"], h["vocab_size"]
    hd, q_lora, NE, FE, NS = (
        h["head_dim"],
        h["q_lora_rank"],
        h["n_routed_experts"],
        h["moe_intermediate_size"],
        h["n_shared_experts"],
    )
    o_groups, o_lora, hc = h["o_groups"], h["o_lora_rank"], h["hc_mult"]
    ratios, n_hash = h["compress_ratios"], h["num_hash_layers"]
    ihd, inh = h["index_head_dim"], h["index_n_heads"]
    _text_model(w, h, block_count=L, rp=rp)
    w.add_rope_dimension_count(h["qk_rope_head_dim"])
    w.add_q_lora_rank(q_lora)
    w.add_sliding_window(h["sliding_window"])
    w.add_expert_feed_forward_length(FE)
    w.add_expert_shared_count(NS)
    w.add_expert_weights_scale(h["routed_scaling_factor"])
    w.add_expert_weights_norm(h["norm_topk_prob"])
    w.add_swiglu_clamp_exp([h["swiglu_limit"]] * L)
    w.add_swiglu_clamp_shexp([h["swiglu_limit"]] * L)
    w.add_indexer_head_count(inh)
    w.add_indexer_key_length(ihd)
    w.add_indexer_top_k(h["index_topk"])
    w.add_attention_output_group_count(o_groups)
    w.add_attention_output_lora_rank(o_lora)
    w.add_attention_compress_ratios(ratios)
    w.add_attention_compress_rope_freq_base(h["compress_rope_theta"])
    w.add_hyper_connection_count(hc)
    w.add_hyper_connection_sinkhorn_iterations(h["hc_sinkhorn_iters"])
    w.add_hyper_connection_epsilon(h["hc_eps"])
    w.add_hash_layer_count(n_hash)
    w.add_embedding_length_out(E * hc)

    hc_dim, hc_mix = hc * E, (2 + hc) * hc
    tl = TL("deepseek4")
    tl.add(T.TOKEN_EMBD, (E, V))
    tl.add(T.OUTPUT_NORM, (E,))
    tl.add(T.OUTPUT, (E, V))
    tl.add(T.HC_HEAD_FN, (hc_dim, hc))
    tl.add(T.HC_HEAD_BASE, (hc,))
    tl.add(T.HC_HEAD_SCALE, (1,))
    for i in range(L):
        tl.add(T.ATTN_NORM, (E,), i)
        tl.add(T.ATTN_SINKS, (H,), i)
        tl.add(T.ATTN_Q_A, (E, q_lora), i)
        tl.add(T.ATTN_Q_A_NORM, (q_lora,), i)
        tl.add(T.ATTN_Q_B, (q_lora, H * hd), i)
        tl.add(T.ATTN_KV, (E, hd), i)
        tl.add(T.ATTN_KV_NORM, (hd,), i)
        # the loader's shape (n_head * head_dim / o_groups, o_lora_rank, o_groups), as the measured file had it (its
        # header size pins the 3-D tensor info); the converter writes it 2-D, which TENSOR_ALLOW_RESHAPE also accepts
        # (same elements, same quantized bytes)
        tl.add(T.ATTN_OUT_A, (H * hd // o_groups, o_lora, o_groups), i)
        tl.add(T.ATTN_OUT_B, (o_groups * o_lora, E), i)
        for fn, base, scale in (
            (T.HC_ATTN_FN, T.HC_ATTN_BASE, T.HC_ATTN_SCALE),
            (T.HC_FFN_FN, T.HC_FFN_BASE, T.HC_FFN_SCALE),
        ):
            tl.add(fn, (hc_dim, hc_mix), i)
            tl.add(base, (hc_mix,), i)
            tl.add(scale, (3,), i)
        ratio = ratios[i]
        if ratio:
            coff = 2 if ratio == 4 else 1
            tl.add(T.ATTN_COMPRESSOR_WKV, (E, coff * hd), i)
            tl.add(T.ATTN_COMPRESSOR_WGATE, (E, coff * hd), i)
            tl.add(T.ATTN_COMPRESSOR_APE, (coff * hd, ratio), i)
            tl.add(T.ATTN_COMPRESSOR_NORM, (hd,), i)
            if ratio == 4:
                tl.add(T.INDEXER_PROJ, (E, inh), i)
                tl.add(T.INDEXER_ATTN_Q_B, (q_lora, inh * ihd), i)
                tl.add(T.INDEXER_COMPRESSOR_WKV, (E, 2 * ihd), i)
                tl.add(T.INDEXER_COMPRESSOR_WGATE, (E, 2 * ihd), i)
                tl.add(T.INDEXER_COMPRESSOR_APE, (2 * ihd, ratio), i)
                tl.add(T.INDEXER_COMPRESSOR_NORM, (ihd,), i)
        tl.add(T.FFN_GATE_INP, (E, NE), i)
        if i < n_hash:  # ffn.gate.tid2eid (the converter skips these layers' unused gate.bias)
            tl.add(T.FFN_GATE_TID2EID, (h["num_experts_per_tok"], V), i)
        else:
            tl.add(T.FFN_EXP_PROBS_B, (NE,), i, "bias")
        tl.add(T.FFN_NORM, (E,), i)
        tl.add(T.FFN_GATE_EXP, (E, FE, NE), i)
        tl.add(T.FFN_DOWN_EXP, (FE, E, NE), i)
        tl.add(T.FFN_UP_EXP, (E, FE, NE), i)
        _shexp(tl, i, E, FE * NS)
    return tl.items


def build_lfm2moe(w, c):
    E, L, H, KV, V = (
        c["hidden_size"],
        c["num_hidden_layers"],
        c["num_attention_heads"],
        c["num_key_value_heads"],
        c["vocab_size"],
    )
    lt = lfm2_layer_types(c)
    FF, FE = c["intermediate_size"], c["moe_intermediate_size"]
    NE, NU = c["num_experts"], c["num_experts_per_tok"]
    lead = c["num_dense_layers"]
    # TextModel.set_gguf_parameters (conversion/base.py): num_key_value_heads was replaced by a per-layer list
    # (8 on "full_attention" layers, 0 elsewhere) in LFM2MoeModel.set_gguf_parameters before this call
    _common(w, c, n_ff=FF, n_head_kv=[KV if t == "full_attention" else 0 for t in lt])
    w.add_rope_freq_base(_rope_theta(c, 1e6))  # rope_parameters.rope_theta; rope_type "default" writes nothing
    w.add_layer_norm_rms_eps(c["norm_eps"])  # find_hparam(["rms_norm_eps", "norm_eps"])
    w.add_expert_count(NE)  # num_experts
    w.add_expert_used_count(NU)  # num_experts_per_tok
    # LFM2MoeModel.set_gguf_parameters
    w.add_expert_feed_forward_length(FE)
    w.add_leading_dense_block_count(lead)
    w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
    w.add_vocab_size(V)
    w.add_shortconv_l_cache(c["conv_L_cache"])

    tl = TL("lfm2moe")
    tl.add(T.TOKEN_EMBD, (E, V))
    # model.embedding_norm -> "token_embd_norm" (llama.cpp loads it as LLM_TENSOR_OUTPUT_NORM_LFM2, the final norm)
    tl.add(T.TOKEN_EMBD_NORM, (E,))
    if not c.get("tie_word_embeddings", True):
        tl.add(T.OUTPUT, (E, V))
    hd = E // H
    for i in range(L):
        tl.add(T.FFN_NORM, (E,), i)
        if i < lead:
            _ffn(tl, i, E, FF)
        else:
            tl.add(T.FFN_GATE_INP, (E, NE), i)  # feed_forward.gate (router), F32
            tl.add(T.FFN_GATE_EXP, (E, FE, NE), i)  # experts.*.w1 stacked
            tl.add(T.FFN_DOWN_EXP, (FE, E, NE), i)  # experts.*.w2 stacked
            tl.add(T.FFN_UP_EXP, (E, FE, NE), i)  # experts.*.w3 stacked
            if c.get("use_expert_bias", True):
                tl.add(T.FFN_EXP_PROBS_B, (NE,), i, "bias")  # feed_forward.expert_bias -> exp_probs_b.bias, F32
        tl.add(T.ATTN_NORM, (E,), i)  # operator_norm
        if lt[i] == "full_attention":
            tl.add(T.ATTN_Q_NORM, (hd,), i)
            tl.add(T.ATTN_K_NORM, (hd,), i)
            tl.add(T.ATTN_Q, (E, E), i)
            tl.add(T.ATTN_K, (E, hd * KV), i)
            tl.add(T.ATTN_V, (E, hd * KV), i)
            tl.add(T.ATTN_OUT, (E, E), i)
        else:
            tl.add(T.SHORTCONV_CONV, (c["conv_L_cache"], E), i)  # conv.conv squeezed to 2-D, F32
            tl.add(T.SHORTCONV_INPROJ, (E, 3 * E), i)
            tl.add(T.SHORTCONV_OUTPROJ, (E, E), i)
    return tl.items


# Falcon-H1 (conversion/falcon_h1.py FalconH1Model, src/models/falcon-h1.cpp): attention and Mamba2 in every layer.
def build_falcon_h1(w, c):
    E, L, H, KV = c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"], c["num_key_value_heads"]
    FF, V, hd = (
        c["intermediate_size"],
        c["vocab_size"],
        c["head_dim"],
    )  # no vocab padding (set_vocab -> _set_vocab_gpt2)
    d_ssm = c["mamba_d_ssm"]  # FalconH1Model: d_inner = find_hparam(["mamba_d_ssm"])
    d_head = c["mamba_d_head"]  # find_hparam(["d_head"]) -> "mamba_d_head"
    n_group = c["mamba_n_groups"]  # find_hparam(["n_groups"]) -> "mamba_n_groups" (required)
    d_state = c.get("mamba_d_state") or 128  # Mamba2Model: ["state_size","d_state"] (+ "mamba_" prefix), default 128
    d_conv = c.get("mamba_d_conv") or 4  # Mamba2Model: ["conv_kernel","d_conv"] (+ "mamba_" prefix), default 4
    n_ssm_head = d_ssm // d_head  # ssm.time_step_rank = d_inner // head_dim
    # Mamba2Model.set_gguf_parameters, then FalconH1Model overrides
    w.add_context_length(c.get("max_position_embeddings", 0))
    w.add_embedding_length(E)
    w.add_feed_forward_length(FF)
    w.add_head_count(H)
    w.add_block_count(L)
    w.add_ssm_conv_kernel(d_conv)
    w.add_ssm_inner_size(d_ssm)
    w.add_ssm_state_size(d_state)
    w.add_ssm_time_step_rank(n_ssm_head)
    w.add_ssm_group_count(n_group)
    w.add_layer_norm_rms_eps(c.get("rms_norm_eps") or 1e-5)
    w.add_vocab_size(V)
    w.add_head_count_kv(KV)
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_rope_freq_base(float(c.get("rope_theta", 1e11)))

    tl = TL("falcon-h1")
    _head(tl, c, E, V)
    conv_dim = d_ssm + 2 * n_group * d_state
    d_in_proj = d_ssm + conv_dim + n_ssm_head  # = 2*d_ssm + 2*G*N + n_heads
    for i in range(L):
        tl.add(T.ATTN_NORM, (E,), i)  # input_layernorm (shared by attention and mamba)
        tl.add(T.ATTN_Q, (E, hd * H), i)
        tl.add(T.ATTN_K, (E, hd * KV), i)
        tl.add(T.ATTN_V, (E, hd * KV), i)
        tl.add(T.ATTN_OUT, (hd * H, E), i)
        tl.add(T.SSM_IN, (E, d_in_proj), i)
        tl.add(T.SSM_CONV1D, (d_conv, conv_dim), i)
        if c.get("mamba_conv_bias", True):
            tl.add(T.SSM_CONV1D, (conv_dim,), i, "bias")
        tl.add(T.SSM_DT, (n_ssm_head,), i, "bias")  # mamba.dt_bias -> dt_proj.bias
        tl.add(T.SSM_A, (1, n_ssm_head), i, None)
        tl.add(T.SSM_D, (1, n_ssm_head), i, None)
        if c.get("mamba_rms_norm", False):
            tl.add(T.SSM_NORM, (d_ssm // n_group, n_group), i)
        tl.add(T.SSM_OUT, (d_ssm, E), i)
        # pre_ff_layernorm.weight maps (exact-name match) to FFN_PRE_NORM = "blk.N.ffn_norm", WITHOUT ".weight"
        tl.add(T.FFN_PRE_NORM, (E,), i, None)
        _ffn(tl, i, E, FF)
    return tl.items


# Granite 4.0 H with experts (granitemoehybrid: Tiny, Small). The writer the Tiny's rows were measured with: the dense
# writer above plus the MoE layers (conversion/granite.py GraniteMoeModel: gate/up experts split, the shared MLP as
# ffn_*_shexp), rope.dimension_count, rope.freq_base only when the config has one, ssm.inner_size = mamba_expand x
# hidden_size as GraniteHybridModel computes it. Kept beside build_granitehybrid so the 350M's rows stay reproducible.
def build_granitehybrid_moe(w, c):
    E, L, H, KV = c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"], c["num_key_value_heads"]
    FF, V = c["intermediate_size"], c["vocab_size"]
    V = -(V // -8) * 8  # GraniteHybridModel.set_vocab: pad_vocab_size_multiple = 8 (hybrid) -> Mamba2Model.set_vocab
    lt = c["layer_types"]
    attn_layers = [i for i, t in enumerate(lt) if t == "attention"]
    n_exp = c.get("num_local_experts") or 0
    n_ssm_head = c["mamba_n_heads"]
    # converter: d_model = hidden_size (no "mamba_head_dim" key), d_inner = mamba_expand * hidden_size
    d_inner = c.get("mamba_expand", 2) * E
    n_group, d_state, d_conv = c["mamba_n_groups"], c["mamba_d_state"], c["mamba_d_conv"]
    # TextModel.set_gguf_parameters (via GraniteMoeModel -> GraniteModel -> LlamaModel)
    _common(w, c, n_head_kv=[KV if i in attn_layers else 0 for i in range(L)], ctx=2**20)  # NoPE -> 2**20
    if "rope_theta" in c or "rope_parameters" in c:
        w.add_rope_freq_base(_rope_theta(c))
    w.add_layer_norm_rms_eps(c["rms_norm_eps"])
    if n_exp:
        w.add_expert_count(n_exp)
    if c.get("num_experts_per_tok") is not None:
        w.add_expert_used_count(c["num_experts_per_tok"])
    w.add_vocab_size(V)  # LlamaModel.set_gguf_parameters
    w.add_rope_dimension_count(E // H)  # LlamaModel: head_dim absent -> hidden/heads
    _granite_hybrid_keys(w, c, d_inner, n_group, d_state, d_conv, n_ssm_head)

    return _granite_hybrid_tensors(c, E, V, attn_layers, d_inner, n_group, d_state, d_conv, n_ssm_head, n_exp, FF)


# GLM-4.7-Flash (glm4_moe_lite, converted as deepseek2 by conversion/glm.py Glm4MoeLiteModel): the writer its rows were
# measured with: build_deepseek2 plus expert group counts, the gating function and weight scale when the config has
# them, the exp_probs_b router bias for topk_method noaux_tc, and the NextN/MTP block (gguf_mtp_layers) appended past
# num_hidden_layers, counted in block_count and said in nextn_predict_layers. Kept beside build_deepseek2 so the
# Kimi K2 and DeepSeek V3.1 rows stay reproducible.
def build_glm4_moe_lite(w, c):
    E, L, V = c["hidden_size"], c["num_hidden_layers"], c["vocab_size"]
    kv_lora, q_lora = c.get("kv_lora_rank", 512), c.get("q_lora_rank")
    nope, rope_d, vd = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    NE, NU, NS = c["n_routed_experts"], c["num_experts_per_tok"], c.get("n_shared_experts", 0)
    FE = c["moe_intermediate_size"]
    lead = c["first_k_dense_replace"]
    n_mtp = c.get("gguf_mtp_layers", 0)
    NL = L + n_mtp
    rs = c.get("rope_scaling") or {}
    # TextModel.set_gguf_parameters (num_key_value_heads forced to 1 by DeepseekV2Model)
    _common(w, c, n_head_kv=1, block_count=NL)  # MLA: one latent "head"
    w.add_rope_freq_base(_rope_theta(c))
    w.add_layer_norm_rms_eps(c.get("rms_norm_eps", 1e-6))
    w.add_expert_count(NE)
    w.add_expert_used_count(NU)
    if c.get("n_group") is not None:
        w.add_expert_group_count(c["n_group"])
    if c.get("topk_group") is not None:
        w.add_expert_group_used_count(c["topk_group"])
    if "scoring_func" in c:
        w.add_expert_gating_func(
            gguf.ExpertGatingFuncType.SOFTMAX if c["scoring_func"] == "softmax" else gguf.ExpertGatingFuncType.SIGMOID
        )
    # DeepseekV2Model.set_gguf_parameters
    w.add_leading_dense_block_count(lead)
    w.add_vocab_size(V)
    _mla_keys(w, q_lora, kv_lora, nope, rope_d, vd)
    w.add_expert_feed_forward_length(FE)
    w.add_expert_shared_count(NS)
    if c.get("routed_scaling_factor") is not None:
        w.add_expert_weights_scale(c["routed_scaling_factor"])
    if c.get("norm_topk_prob"):
        w.add_expert_weights_norm(True)
    w.add_rope_dimension_count(rope_d)
    if rs.get("type", rs.get("rope_type")) == "yarn":
        w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        w.add_rope_scaling_factor(rs["factor"])
        w.add_rope_scaling_orig_ctx_len(rs["original_max_position_embeddings"])
        w.add_rope_scaling_yarn_log_mul(0.1 * rs["mscale_all_dim"])
    if n_mtp:
        w.add_nextn_predict_layers(n_mtp)  # Glm4MoeLiteModel.set_gguf_parameters

    # noaux_tc routers carry mlp.gate.e_score_correction_bias -> blk.N.exp_probs_b.bias (F32)
    tl = TL("deepseek2")
    _head(tl, c, E, V)
    _mla_blocks(tl, c, L, NL, c.get("topk_method") == "noaux_tc")
    return tl.items


# --------------------------------------------------------------------------------------
# gemma4 E-models (Gemma 4 E2B / E4B): per-layer embeddings (PLE) and KV-sharing layers, no experts, no K = V.
# A literal transcription, kept apart from build_gemma4 so the rows that writer made stay reproducible:
#   conversion/base.py TextModel.set_gguf_parameters:1434-1546,
#   conversion/gemma.py Gemma3Model.set_gguf_parameters:141-159
#   and Gemma4Model.set_gguf_parameters:671-733 / generate_extra_tensors:735-761 (keys, in the converter's order; a key
#   written twice keeps its first position with the last value: gguf-py GGUFWriter.add_key_value);
#   src/models/gemma4.cpp load_arch_hparams:4-35 and load_arch_tensors:37-142 (tensors and ne, in the loader's order);
#   Gemma4TextDecoderLayer (transformers modeling_gemma4.py): per_layer_input_gate, per_layer_projection,
#   post_per_layer_input_norm, layer_scalar on every layer; v_norm has no weight (with_scale=False).
#   KV-shared layers (il >= L - num_kv_shared_layers): the published checkpoints carry k_proj / v_proj / k_norm on
#   them too (current transformers builds none there and drops them on load), and the converter writes what the
#   checkpoint has: public GGUFs of google/gemma-4-E4B-it have 720 tensors (Q4_K_M: f32 339, q4_K 336, q6_K 44,
#   bf16 1; llama.cpp prints "model params = 7.52 B") and of E2B 601 (f32 283 = 35 x 8 + 3) -- 42 x 17 + 6 and
#   35 x 17 + 6, i.e. attn_k, attn_v, attn_k_norm on every layer. llama.cpp loads them (gemma4.cpp:74,83-84,89:
#   TENSOR_NOT_REQUIRED on the shared layers = loaded when present) and never reads them (gemma4.cpp:233-274).
#   gguf_shared_kv_weights: False writes the layout current transformers would save (no K/V on shared layers).
def build_gemma4_e(w, c):
    E, L, H, KV = c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"], c["num_key_value_heads"]
    FF, V = c["intermediate_size"], c.get("gguf_vocab_size", c["vocab_size"])
    hd_swa, hd_full = c["head_dim"], c["global_head_dim"]
    n_pl = c.get("hidden_size_per_layer_input") or 0
    n_shared = c["num_kv_shared_layers"]
    lt = c["layer_types"]
    assert len(lt) == L
    is_swa = [t == "sliding_attention" for t in lt]
    first_shared = L - n_shared  # llama.cpp hparams.n_layer_kv_from_start (gemma4.cpp:11)
    # the E-model layout this writer is for (the converter handles the others; build_gemma4 writes them)
    assert n_pl > 0 and n_shared > 0, "build_gemma4_e: per-layer embeddings and KV sharing expected"
    assert not c.get("enable_moe_block") and not c.get("attention_k_eq_v"), "build_gemma4_e: no experts, no K = V"
    assert c.get("num_global_key_value_heads") is None and c.get("per_layer_config") is None
    # llama-model.cpp create_memory (reuse callback): shared sliding layers read layer first_shared - 2, shared full
    # layers layer first_shared - 1 (GGML_ASSERT(n_layer_kv_from_start >= 2)); holds for E2B/E4B
    assert first_shared >= 2 and not is_swa[first_shared - 1] and is_swa[first_shared - 2]
    rp = _rope_params(c)
    rp_full = rp["full_attention"]
    assert rp_full["rope_type"] == "proportional"  # generate_extra_tensors asserts it
    double_wide = bool(c.get("use_double_wide_mlp", False))
    n_ff = [FF if il < first_shared else 2 * FF for il in range(L)] if double_wide else FF

    # TextModel.set_gguf_parameters (conversion/base.py:1434-1546)
    w.add_block_count(L)
    w.add_context_length(c["max_position_embeddings"])
    w.add_embedding_length(E)
    w.add_feed_forward_length(FF)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    # rope_type "proportional" of the full layers: "Unknown RoPE type" warning, no scaling key (base.py:1493-1495)
    w.add_rope_freq_base(float(rp_full["rope_theta"]))
    w.add_rope_freq_base_swa(float(rp["sliding_attention"]["rope_theta"]))
    w.add_layer_norm_rms_eps(c["rms_norm_eps"])
    # num_experts / top_k_experts are null in the E configs: find_hparam returns None, no expert keys (base.py:1517-22)
    # head_dim first (base.py:1541), then Gemma3Model's head_dim, then Gemma4's global_head_dim
    w.add_key_length(hd_full)
    w.add_value_length(hd_full)
    # Gemma3Model.set_gguf_parameters (gemma.py:141-159): context length, heads, eps, rope base again (same values)
    if c.get("final_logit_softcapping"):
        w.add_final_logit_softcapping(c["final_logit_softcapping"])
    w.add_sliding_window(c["sliding_window"])  # sliding_window_pattern is absent (!= 1)
    # Gemma4Model.set_gguf_parameters (gemma.py:671-733)
    w.add_shared_kv_layers(n_shared)
    w.add_embedding_length_per_layer_input(n_pl)
    w.add_sliding_window_pattern(is_swa)
    w.add_key_length_swa(hd_swa)
    w.add_value_length_swa(hd_swa)
    # expert_intermediate_size / moe_intermediate_size: null -> no expert_feed_forward_length
    if double_wide:
        w.add_feed_forward_length(n_ff)
    # num_global_key_value_heads null -> no per-layer head_count_kv array
    w.add_rope_dimension_count(hd_full)  # "proportional" rope: the whole head, rope_freqs masks 3/4 of it
    w.add_rope_dimension_count_swa(int(hd_swa * rp.get("partial_rotary_factor", 1.0)))  # top level: none -> 1.0

    tl = TL("gemma4")
    # global tensors, loader order (gemma4.cpp:50-64); tied embeddings: no output.weight, token_embd duplicated
    if not c.get("tie_word_embeddings", True):
        tl.add(T.OUTPUT, (E, V))
    tl.add(T.TOKEN_EMBD, (E, V))
    tl.add(T.PER_LAYER_TOKEN_EMBD, (n_pl * L, V))  # embed_tokens_per_layer [vocab_size_per_layer_input, L * n_pl]
    tl.add(T.PER_LAYER_MODEL_PROJ, (E, n_pl * L))  # per_layer_model_projection
    tl.add(T.PER_LAYER_PROJ_NORM, (n_pl,))  # per_layer_projection_norm
    tl.add(T.OUTPUT_NORM, (E,))
    # gemma.py:735-761: one rope_freqs of global_head_dim / 2 (1.0 for the rotated quarter, 1e30 for the rest)
    tl.add(T.ROPE_FREQS, (hd_full // 2,))
    for il in range(L):
        hd = hd_swa if is_swa[il] else hd_full
        ff = n_ff[il] if isinstance(n_ff, list) else n_ff
        has_kv = il < first_shared or c.get("gguf_shared_kv_weights", True)  # K/V weights in the file, not KV cache
        tl.add(T.ATTN_NORM, (E,), il)  # input_layernorm
        tl.add(T.ATTN_Q, (E, hd * H), il)
        if has_kv:
            tl.add(T.ATTN_K, (E, hd * KV), il)
            tl.add(T.ATTN_V, (E, hd * KV), il)
        tl.add(T.ATTN_OUT, (hd * H, E), il)
        tl.add(T.ATTN_Q_NORM, (hd,), il)
        if has_kv:
            tl.add(T.ATTN_K_NORM, (hd,), il)
        tl.add(T.ATTN_POST_NORM, (E,), il)  # post_attention_layernorm
        tl.add(T.LAYER_OUT_SCALE, (1,), il)  # layer_scalar -> blk.N.layer_output_scale
        tl.add(T.FFN_PRE_NORM, (E,), il)  # pre_feedforward_layernorm -> blk.N.ffn_norm
        _ffn(tl, il, E, ff)
        tl.add(T.FFN_POST_NORM, (E,), il)  # post_feedforward_layernorm
        tl.add(T.PER_LAYER_INP_GATE, (E, n_pl), il)  # per_layer_input_gate -> blk.N.inp_gate
        tl.add(T.PER_LAYER_PROJ, (n_pl, E), il)  # per_layer_projection -> blk.N.proj
        tl.add(T.PER_LAYER_POST_NORM, (E,), il)  # post_per_layer_input_norm -> blk.N.post_norm
    return tl.items



# --------------------------------------------------------------------------------------
# gemma3n (Gemma 3n E2B / E4B): AltUp (4 streams, 3 projections in and out), Laurel (rank 64), per-layer embeddings
# and KV sharing (layers from 20 on own no cache). A literal transcription:
#   conversion/base.py TextModel.set_gguf_parameters, conversion/gemma.py Gemma3Model.set_gguf_parameters:141-159
#   and Gemma3NModel (gemma.py:489-629: set_vocab pads the vocabulary to vocab_size, 262400; modify_tensors pads
#   embed_tokens and embed_tokens_per_layer to it and stacks the three altup (un)embedding projections);
#   src/models/gemma3n.cpp load_arch_hparams:3-19 (n_layer_kv_from_start = 20, whatever shared_kv_layers says;
#   n_altup 4, laurel_rank 64, n_embd_altup 256 are llama-hparams.h defaults) and load_arch_tensors:21-76 (tensors
#   and ne, in the loader's order; every layer has attn_k / attn_v / attn_k_norm, shared or not; tied output).
def build_gemma3n(w, c):
    E, L, H, KV = c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"], c["num_key_value_heads"]
    FF, V = c["intermediate_size"], c.get("gguf_vocab_size", c["vocab_size"])
    hd = c.get("head_dim", 256)
    n_pl = c["hidden_size_per_layer_input"]
    n_altup, laurel = c["altup_num_inputs"], c["laurel_rank"]
    assert n_altup == 4 and laurel == 64 and n_pl == 256, "llama.cpp reads these as llama-hparams.h defaults"
    lt = c["layer_types"]
    assert len(lt) == L and L - c["num_kv_shared_layers"] == 20, "gemma3n.cpp: n_layer_kv_from_start = 20"
    is_swa = [t == "sliding_attention" for t in lt]
    n_ff = FF if isinstance(FF, list) else [FF] * L
    # TextModel.set_gguf_parameters, then Gemma3Model's (same keys again), then Gemma3NModel's
    w.add_block_count(L)
    w.add_context_length(c.get("max_position_embeddings", 131072))
    w.add_embedding_length(E)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    w.add_rope_freq_base(float(c.get("rope_theta", 1_000_000.0)))
    w.add_layer_norm_rms_eps(c.get("rms_norm_eps", 1e-6))
    w.add_key_length(hd)
    w.add_value_length(hd)
    if c.get("final_logit_softcapping"):
        w.add_final_logit_softcapping(c["final_logit_softcapping"])
    w.add_sliding_window(c["sliding_window"])
    w.add_altup_active_idx(c["altup_active_idx"])
    w.add_altup_num_inputs(n_altup)
    w.add_embedding_length_per_layer_input(n_pl)
    w.add_shared_kv_layers(c["num_kv_shared_layers"])
    # Normal(0, 1).icdf(s) as the converter computes it in float32 (-inf for 0.0); no memory depends on it
    sparsity = c["activation_sparsity_pattern"]
    w.add_activation_sparsity_scale([NormalDist().inv_cdf(s) if s else float("-inf") for s in sparsity])
    w.add_sliding_window_pattern(is_swa)

    tl = TL("gemma3n")
    if not c.get("tie_word_embeddings", True):
        tl.add(T.OUTPUT, (E, V))
    tl.add(T.TOKEN_EMBD, (E, V))
    tl.add(T.ALTUP_PROJ, (E, E, n_altup - 1))
    tl.add(T.ALTUP_UNEMBD_PROJ, (E, E, n_altup - 1))
    tl.add(T.PER_LAYER_TOKEN_EMBD, (n_pl * L, V))
    tl.add(T.PER_LAYER_MODEL_PROJ, (E, n_pl * L))
    tl.add(T.PER_LAYER_PROJ_NORM, (n_pl,))
    tl.add(T.OUTPUT_NORM, (E,))
    for il in range(L):
        tl.add(T.ATTN_NORM, (E,), il)
        tl.add(T.ATTN_Q, (E, hd * H), il)
        tl.add(T.ATTN_K, (E, hd * KV), il)
        tl.add(T.ATTN_V, (E, hd * KV), il)
        tl.add(T.ATTN_OUT, (hd * H, E), il)
        tl.add(T.ATTN_Q_NORM, (hd,), il)
        tl.add(T.ATTN_K_NORM, (hd,), il)
        tl.add(T.ATTN_POST_NORM, (E,), il)
        tl.add(T.FFN_PRE_NORM, (E,), il)  # "blk.N.ffn_norm" (gguf-py lists it as FFN_PRE_NORM for gemma3n)
        _ffn(tl, il, E, n_ff[il])
        tl.add(T.FFN_POST_NORM, (E,), il)
        tl.add(T.PER_LAYER_INP_GATE, (E, n_pl), il)
        tl.add(T.PER_LAYER_PROJ, (n_pl, E), il)
        tl.add(T.PER_LAYER_POST_NORM, (E,), il)
        tl.add(T.ALTUP_CORRECT_COEF, (n_altup, n_altup), il)
        tl.add(T.ALTUP_CORRECT_SCALE, (E,), il)
        tl.add(T.ALTUP_PREDICT_COEF, (n_altup, n_altup * n_altup), il)
        tl.add(T.ALTUP_ROUTER, (E, n_altup), il)
        tl.add(T.ALTUP_ROUTER_NORM, (E,), il)
        tl.add(T.LAUREL_L, (E, laurel), il)
        tl.add(T.LAUREL_R, (laurel, E), il)
        tl.add(T.LAUREL_POST_NORM, (E,), il)
    return tl.items


BUILDERS = {
    "gemma3n": build_gemma3n,
    "gemma4_e": build_gemma4_e,
    "lfm2moe": build_lfm2moe,
    "falcon-h1": build_falcon_h1,
    "granitehybrid_moe": build_granitehybrid_moe,
    "glm4_moe_lite": build_glm4_moe_lite,
    "glm4": build_glm4,
    "olmo2": build_olmo2,
    "phi3_v2": build_phi3_v2,
    "gpt-oss": build_gpt_oss,
    "exaone4": build_exaone4,
    "qwen35": build_qwen35,
    "gemma4": build_gemma4,
    "granitehybrid": build_granitehybrid,
    "lfm2": build_lfm2,
    "deepseek2": build_deepseek2,
    "smollm3": build_smollm3,
    "llama_hd": build_llama_hd,
    # added for the 2026-12 rows
    "exaone": build_exaone,
    "command-r": build_command_r,
    "cohere2": build_cohere2,
    "llama4": build_llama4,
    "nemotron_h": build_nemotron_h,
    "minimax-m2": build_minimax_m2,
    "glm4moe": build_glm4moe,
    "qwen35moe": build_qwen35moe,
    "qwen3next": build_qwen3next,
    "deepseek32": build_deepseek32,
    "glm-dsa": build_glm_dsa,
    "deepseek4": build_deepseek4,
}
