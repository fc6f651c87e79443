"""The measuring tool of ``tests/data/groundtruth/llamacpp_cpu.jsonl`` (``tools/llamacpp_truth``, LLAMACPP.md).

Every row names the writer that made its GGUF (``writer``); each writer must exist in the tool, be the one the row's
model selects, and write what it means: a tiny GGUF of its architecture (few layers, small widths) is read back with
gguf-py's GGUFReader and its architecture, key metadata and tensors compared with what llama.cpp's converter writes
and its loader (``src/models/<arch>.cpp``) creates, counted here by hand. Needs the ``gguf`` package (the ``gguf``
extra), never llama-cpp-python or the network.
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.groundtruth import REPO_ROOT, llamacpp_rows

gguf = pytest.importorskip("gguf")

TOOL = REPO_ROOT / "tools" / "llamacpp_truth"


@pytest.fixture(scope="module")
def tool() -> Iterator[dict[str, ModuleType]]:
    """archs, arch_builders and gen_gguf as the tool's scripts import each other (flat module names)."""
    sys.path.insert(0, str(TOOL))
    log = logging.getLogger("gguf")
    level = log.level
    log.setLevel(logging.ERROR)  # the converters' own "Duplicated key name" overwrites
    try:
        yield {name: importlib.import_module(name) for name in ("archs", "arch_builders", "gen_gguf")}
    finally:
        log.setLevel(level)
        sys.path.remove(str(TOOL))
        for name in ("archs", "arch_builders", "gen_gguf"):
            sys.modules.pop(name, None)


# ----------------------------------------------------------------------------------------------------------------
# (a) every row names a writer the tool has


def test_every_row_names_the_writer_its_model_selects(tool: dict[str, ModuleType]) -> None:
    archs, builders, gen = tool["archs"], tool["arch_builders"], tool["gen_gguf"]
    rows = llamacpp_rows()
    assert rows and all("writer" in row for row in rows)
    by_name = {fn.__name__: fn for fn in builders.BUILDERS.values()}
    for row in rows:
        module, _, fn = row["writer"].partition(".")
        if module == "arch_builders":
            assert fn in by_name and getattr(builders, fn) is by_name[fn], row["writer"]
        else:
            assert row["writer"] == gen.GENERIC, row["writer"]
        name = row["arch_model"]
        assert name in archs.ARCHS, name
        assert row["config"] == archs.row_config(archs.ARCHS[name]), name  # the numbers the writer was given
        assert gen.writer_for(archs.model_config(name))[0] == row["writer"], name


# ----------------------------------------------------------------------------------------------------------------
# (b) each writer writes what it means

E, H, KV, HD, FF, V = 64, 4, 2, 16, 128, 320  # widths of the tiny models (V: 256 byte tokens + a few, a multiple of 8)
NE, NU, FE = 4, 2, 32  # experts, experts used, expert width
# Whether this gguf-py knows deepseek2's NextN tensors (llama.cpp's own at 0c1e57098 does; PyPI's 0.19 does not).
DEEPSEEK2_MTP = int(
    getattr(gguf.MODEL_TENSOR, "NEXTN_EH_PROJ", None) in gguf.MODEL_TENSORS.get(gguf.MODEL_ARCH.DEEPSEEK2, [])
)
BASE = {
    "hidden_size": E,
    "num_attention_heads": H,
    "num_key_value_heads": KV,
    "head_dim": HD,
    "intermediate_size": FF,
    "vocab_size": V,
    "max_position_embeddings": 4096,
    "rope_theta": 10000.0,
    "rms_norm_eps": 1e-6,
}
MLA = {
    "q_lora_rank": 32,
    "kv_lora_rank": 32,
    "qk_nope_head_dim": 16,
    "qk_rope_head_dim": 8,
    "v_head_dim": 16,
    "n_routed_experts": NE,
    "num_experts_per_tok": NU,
    "moe_intermediate_size": FE,
    "n_shared_experts": 1,
    "routed_scaling_factor": 2.5,
    "norm_topk_prob": True,
    "scoring_func": "sigmoid",
    "topk_method": "noaux_tc",
    "tie_word_embeddings": False,
}
QWEN_LINEAR = {
    "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 16,
    "linear_value_head_dim": 16,
    "linear_num_key_heads": 2,
    "linear_num_value_heads": 4,
    "full_attention_interval": 4,
    "tie_word_embeddings": False,
    "layer_types": ["linear_attention"] * 3 + ["full_attention"],
    "num_hidden_layers": 4,
}


def cfg(arch: str, *more: dict[str, Any], **kw: Any) -> dict[str, Any]:
    out: dict[str, Any] = {**BASE, "llama_arch": arch}
    for m in more:
        out.update(m)
    out.update(kw)
    return out


# writer -> (config, tensors the loader creates, metadata {key without "<arch>.": value}); the tensor counts are
# worked out from src/models/<arch>.cpp: head tensors + per-layer tensors
CASES: dict[str, tuple[dict[str, Any], int, dict[str, Any]]] = {
    # gen_gguf.py's generic writer
    "generic-qwen2": (
        cfg("qwen2", num_hidden_layers=2, tie_word_embeddings=True, attention_bias=True),
        2 + 2 * 12,  # token_embd, output_norm; attn_norm, q/k/v (+ biases), o, ffn_norm, gate/up/down
        {"block_count": 2, "attention.head_count_kv": KV},
    ),
    "generic-llama": (
        cfg(
            "llama",
            num_hidden_layers=2,
            tie_word_embeddings=False,
            rope_scaling={
                "rope_type": "llama3",
                "factor": 32.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192,
            },
        ),
        4 + 2 * 9,  # + output, rope_freqs
        {"block_count": 2, "rope.dimension_count": HD},
    ),
    "generic-gemma2": (
        cfg(
            "gemma2",
            num_hidden_layers=2,
            tie_word_embeddings=True,
            sliding_window=32,
            attn_logit_softcapping=50.0,
            final_logit_softcapping=30.0,
        ),
        2 + 2 * 11,  # + post-attention norm, ffn_norm (pre), ffn post norm
        {"attention.sliding_window": 32, "attn_logit_softcapping": 50.0},
    ),
    "generic-qwen3": (
        cfg("qwen3", num_hidden_layers=2, tie_word_embeddings=True),
        2 + 2 * 11,  # + q/k norms
        {"attention.key_length": HD},
    ),
    "generic-qwen3moe": (
        cfg(
            "qwen3moe",
            num_hidden_layers=2,
            tie_word_embeddings=False,
            num_experts=NE,
            num_experts_per_tok=NU,
            moe_intermediate_size=FE,
        ),
        3 + 2 * 12,  # experts: gate_inp, gate/up/down_exps
        {"expert_count": NE, "expert_used_count": NU, "expert_feed_forward_length": FE},
    ),
    # arch_builders.py
    "qwen35": (
        cfg(
            "qwen35",
            QWEN_LINEAR,
            tie_word_embeddings=True,
            mtp_num_hidden_layers=0,
            rope_parameters={"mrope_section": [11, 11, 10], "rope_theta": 1e7, "partial_rotary_factor": 0.25},
        ),
        2 + 3 * 14 + 11,  # Gated DeltaNet layer 11 + FFN 3; gated attention layer 8 + FFN 3
        {"block_count": 4, "ssm.inner_size": 64, "ssm.group_count": 2, "full_attention_interval": 4},
    ),
    "qwen35moe": (
        cfg(
            "qwen35moe",
            QWEN_LINEAR,
            num_experts=NE,
            num_experts_per_tok=NU,
            moe_intermediate_size=FE,
            shared_expert_intermediate_size=FE,
            mtp_num_hidden_layers=0,
        ),
        3 + 3 * 19 + 16,  # MoE: gate_inp, down/gate/up_exps, gate_inp_shexp, gate/up/down_shexp
        {"block_count": 4, "expert_count": NE, "expert_shared_feed_forward_length": FE},
    ),
    "qwen3next": (
        cfg(
            "qwen3next",
            QWEN_LINEAR,
            num_experts=NE,
            num_experts_per_tok=NU,
            moe_intermediate_size=FE,
            shared_expert_intermediate_size=FE,
            gguf_mtp_layers=0,
            layer_types=None,
        ),
        3 + 3 * 18 + 16,  # beta and alpha in one ssm_ba
        {"block_count": 4, "expert_count": NE, "ssm.time_step_rank": 4},
    ),
    "gemma4": (
        cfg(
            "gemma4",
            num_hidden_layers=2,
            layer_types=["sliding_attention", "full_attention"],
            global_head_dim=32,
            num_global_key_value_heads=1,
            attention_k_eq_v=True,
            sliding_window=32,
            num_kv_shared_layers=0,
            hidden_size_per_layer_input=0,
            final_logit_softcapping=30.0,
            tie_word_embeddings=True,
            enable_moe_block=True,
            num_experts=NE,
            top_k_experts=NU,
            moe_intermediate_size=FE,
            rope_parameters={
                "full_attention": {"partial_rotary_factor": 0.25, "rope_theta": 1e6, "rope_type": "proportional"},
                "sliding_attention": {"rope_theta": 1e4, "rope_type": "default"},
            },
        ),
        3 + 22 + 21,  # token_embd, output_norm, rope_freqs; the global layer has no attn_v (K = V)
        {
            "attention.head_count_kv": [KV, 1],
            "attention.key_length": 32,
            "attention.key_length_swa": HD,
            "expert_count": NE,
            "expert_feed_forward_length": FE,
        },
    ),
    "granitehybrid": (
        cfg(
            "granitehybrid",
            num_hidden_layers=3,
            layer_types=["mamba", "attention", "mamba"],
            mamba_d_head=8,
            mamba_n_heads=8,
            mamba_n_groups=1,
            mamba_d_state=16,
            mamba_d_conv=4,
            shared_intermediate_size=FF,
            attention_multiplier=0.25,
            embedding_multiplier=12,
            residual_multiplier=0.25,
            logits_scaling=3,
            tie_word_embeddings=True,
        ),
        2 + 2 * 13 + 9,  # Mamba2 layer 9 + FFN 4; attention layer 5 + FFN 4
        {"attention.head_count_kv": [0, KV, 0], "context_length": 2**20, "ssm.inner_size": 64},
    ),
    "lfm2": (
        cfg(
            "lfm2",
            num_hidden_layers=3,
            full_attn_idxs=[1],
            block_ff_dim=FF,
            block_auto_adjust_ff_dim=False,
            conv_L_cache=3,
            norm_eps=1e-5,
        ),
        2 + 2 * 8 + 11,  # short-conv layer: conv, in_proj, out_proj; attention layer with q/k norms
        {"attention.head_count_kv": [0, KV, 0], "shortconv.l_cache": 3},
    ),
    "deepseek2": (
        cfg("deepseek2", MLA, num_hidden_layers=2, first_k_dense_replace=1, model_type="deepseek_v3"),
        3 + 13 + 18,  # MLA attention 9 + ffn_norm; dense FFN 3 / routed + exp_probs_b + shared experts 8
        {"attention.key_length": 32 + 8, "attention.value_length": 32, "attention.head_count_kv": 1},
    ),
    "smollm3": (cfg("smollm3", num_hidden_layers=2), 2 + 2 * 9, {"rope.dimension_count": HD}),  # tied by default
    "llama_hd": (
        cfg("llama", builder="llama_hd", num_hidden_layers=2, head_dim=32, tie_word_embeddings=False),
        3 + 2 * 9,
        {"attention.key_length": 32},
    ),
    "exaone4": (
        cfg(
            "exaone4",
            num_hidden_layers=4,
            sliding_window=32,
            tie_word_embeddings=False,
            layer_types=["sliding_attention"] * 3 + ["full_attention"],
            rope_scaling={"rope_type": "llama3", "factor": 16.0, "original_max_position_embeddings": 8192},
        ),
        4 + 4 * 11,  # + rope_freqs; q/k norms, post-attention and post-FFN norms, no pre-norms
        {"attention.sliding_window": 32, "attention.sliding_window_pattern": [True, True, True, False]},
    ),
    "gpt-oss": (
        cfg(
            "gpt-oss",
            num_hidden_layers=2,
            layer_types=["sliding_attention", "full_attention"],
            sliding_window=8,
            num_local_experts=NE,
            num_experts_per_tok=NU,
            intermediate_size=FE,
        ),
        3 + 2 * 19,  # biased attention + sinks, router + biased experts
        {"expert_count": NE, "attention.sliding_window": 8},
    ),
    "olmo2": (cfg("olmo2", num_hidden_layers=2, tie_word_embeddings=False), 3 + 2 * 11, {"block_count": 2}),
    "phi3_v2": (
        cfg(
            "phi3",
            builder="phi3_v2",
            num_hidden_layers=2,
            tie_word_embeddings=True,
            partial_rotary_factor=0.75,
            original_max_position_embeddings=4096,
            max_position_embeddings=131072,
            rope_scaling={"type": "longrope", "long_factor": [1.0] * 6, "short_factor": [1.0] * 6},
        ),
        4 + 2 * 6,  # + rope_factors_long/short; fused attn_qkv and gate|up
        {"rope.dimension_count": 12},
    ),
    "glm4": (
        cfg("glm4", num_hidden_layers=2, tie_word_embeddings=False, attention_bias=True, partial_rotary_factor=0.5),
        3 + 2 * 13,  # sandwich norms, fused gate|up
        {"rope.dimension_count": 8},
    ),
    "exaone": (
        {
            k: v
            for k, v in cfg(
                "exaone", num_layers=2, tie_word_embeddings=False, layer_norm_epsilon=1e-5, activation_function="silu"
            ).items()
            if k not in ("rms_norm_eps", "head_dim")
        },
        3 + 2 * 9,
        {"block_count": 2, "attention.layer_norm_rms_epsilon": 1e-5},
    ),
    "command-r": (
        {
            k: v
            for k, v in cfg(
                "command-r", num_hidden_layers=2, logit_scale=0.0625, layer_norm_eps=1e-5, tie_word_embeddings=True
            ).items()
            if k not in ("rms_norm_eps", "head_dim")
        },
        2 + 2 * 8,  # one LayerNorm per block, head tied to token_embd
        {"logit_scale": 0.0625},
    ),
    "cohere2": (
        {
            k: v
            for k, v in cfg(
                "cohere2",
                num_hidden_layers=4,
                logit_scale=0.25,
                layer_norm_eps=1e-5,
                sliding_window=32,
                tie_word_embeddings=True,
            ).items()
            if k != "rms_norm_eps"
        },
        2 + 4 * 8,
        {"attention.sliding_window": 32, "vocab_size": V},
    ),
    "llama4": (
        cfg(
            "llama4",
            num_hidden_layers=2,
            intermediate_size=FE,
            intermediate_size_mlp=FF,
            num_local_experts=NE,
            num_experts_per_tok=1,
            interleave_moe_layer_step=2,
            tie_word_embeddings=False,
            rope_scaling={
                "rope_type": "llama3",
                "factor": 16.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 1.0,
                "original_max_position_embeddings": 8192,
            },
        ),
        4 + 9 + 13,  # + rope_freqs; dense layer 0, MoE layer 1 (experts + shared expert)
        {"feed_forward_length": FF, "expert_feed_forward_length": FE, "interleave_moe_layer_step": 2},
    ),
    "nemotron_h": (
        {
            k: v
            for k, v in cfg(
                "nemotron_h_moe",
                builder="nemotron_h",
                num_hidden_layers=3,
                hybrid_override_pattern="M*E",
                mamba_head_dim=8,
                mamba_num_heads=8,
                n_groups=2,
                ssm_state_size=16,
                conv_kernel=4,
                use_conv_bias=True,
                n_routed_experts=NE,
                num_experts_per_tok=NU,
                moe_intermediate_size=FE,
                moe_shared_expert_intermediate_size=48,
                n_shared_experts=1,
                n_group=1,
                topk_group=1,
                norm_topk_prob=True,
                routed_scaling_factor=2.5,
                layer_norm_epsilon=1e-5,
                norm_eps=1e-5,
                tie_word_embeddings=False,
                architectures=["NemotronHForCausalLM"],
            ).items()
            if k != "rms_norm_eps"
        },
        3 + 9 + 5 + 7,  # Mamba2 block; attention block; relu^2 experts without gate + ungated shared expert
        {"attention.head_count_kv": [0, KV, 0], "feed_forward_length": [0, 0, FE], "ssm.inner_size": 64},
    ),
    "minimax-m2": (
        cfg(
            "minimax-m2",
            num_hidden_layers=2,
            intermediate_size=FE,
            num_local_experts=NE,
            num_experts_per_tok=NU,
            rotary_dim=8,
            scoring_func="sigmoid",
            tie_word_embeddings=False,
        ),
        3 + 2 * 13,
        {"rope.dimension_count": 8, "expert_feed_forward_length": FE},
    ),
    "glm4moe": (
        cfg(
            "glm4moe",
            num_hidden_layers=2,
            first_k_dense_replace=1,
            n_routed_experts=NE,
            num_experts_per_tok=NU,
            moe_intermediate_size=FE,
            n_shared_experts=1,
            num_nextn_predict_layers=1,
            attention_bias=True,
            use_qk_norm=True,
            partial_rotary_factor=0.5,
            norm_topk_prob=True,
            routed_scaling_factor=1.0,
            tie_word_embeddings=False,
        ),
        3 + 14 + 19 + 25,  # dense block, MoE block, MTP block (MoE + eh_proj, enorm, hnorm, embed/head/head_norm)
        {"block_count": 3, "nextn_predict_layers": 1, "leading_dense_block_count": 1},
    ),
    "glm-dsa": (
        cfg(
            "glm-dsa",
            MLA,
            num_hidden_layers=3,
            first_k_dense_replace=1,
            num_nextn_predict_layers=1,
            index_head_dim=16,
            index_n_heads=2,
            index_topk=64,
            indexer_types=["full", "shared", "full"],
            rope_parameters={"rope_theta": 1e6, "rope_type": "default"},
        ),
        3 + 18 + 18 + 23 + 29,  # the indexer (5 tensors) only in "full" layers and the MTP block
        {"block_count": 4, "attention.indexer.types": [True, False, True], "attention.indexer.head_count": 2},
    ),
    "deepseek32": (
        cfg(
            "deepseek32",
            MLA,
            num_hidden_layers=2,
            first_k_dense_replace=1,
            num_nextn_predict_layers=1,
            index_head_dim=16,
            index_n_heads=2,
            index_topk=64,
            model_type="deepseek_v32",
        ),
        3 + 18 + 23 + 29,
        {"block_count": 3, "attention.indexer.key_length": 16},
    ),
    "deepseek4": (
        cfg(
            "deepseek4",
            num_hidden_layers=2,
            num_key_value_heads=1,
            q_lora_rank=32,
            qk_rope_head_dim=8,
            n_routed_experts=NE,
            num_experts_per_tok=NU,
            moe_intermediate_size=FE,
            n_shared_experts=1,
            routed_scaling_factor=1.5,
            norm_topk_prob=True,
            scoring_func="sqrtsoftplus",
            swiglu_limit=10.0,
            sliding_window=8,
            index_head_dim=16,
            index_n_heads=2,
            index_topk=16,
            o_groups=2,
            o_lora_rank=16,
            compress_ratios=[0, 4, 0],
            compress_rope_theta=160000,
            hc_mult=2,
            hc_sinkhorn_iters=20,
            hc_eps=1e-6,
            num_hash_layers=1,
            tie_word_embeddings=False,
            intermediate_size=None,
        ),
        6 + 24 + 34,  # + hyper-connection head; layer 0 hash-routed (I32 tid2eid); layer 1 CSA: compressor + indexer
        {"attention.compress_ratios": [0, 4, 0], "hash_layer_count": 1, "embedding_length_out": 2 * E},
    ),
    # The writers added with LFM2-MoE, Falcon-H1, Granite 4.0 H with experts and GLM-4.7-Flash (2026-12-02).
    "lfm2moe": (
        cfg(
            "lfm2moe",
            num_hidden_layers=3,
            layer_types=["conv", "full_attention", "conv"],
            moe_intermediate_size=FE,
            num_experts=NE,
            num_experts_per_tok=NU,
            num_dense_layers=1,
            conv_L_cache=3,
            norm_eps=1e-5,
            tie_word_embeddings=True,
        ),
        # token_embd, token_embd_norm; dense conv layer 8; MoE attention layer 13 (router, 3 experts, exp_probs_b, q/k
        # norms); MoE conv layer 10 (src/models/lfm2moe.cpp)
        2 + 8 + 13 + 10,
        {"leading_dense_block_count": 1, "expert_feed_forward_length": FE, "attention.head_count_kv": [0, KV, 0]},
    ),
    "falcon-h1": (
        cfg(
            "falcon-h1",
            num_hidden_layers=2,
            mamba_d_ssm=64,
            mamba_d_head=16,
            mamba_n_groups=1,
            mamba_d_state=16,
            mamba_d_conv=4,
            mamba_rms_norm=True,
            tie_word_embeddings=False,
        ),
        3 + 2 * 17,  # attention 5, Mamba2 8 (with its norm), the suffixless ffn_norm, gate/up/down (falcon-h1.cpp)
        {"ssm.inner_size": 64, "ssm.time_step_rank": 4, "attention.head_count_kv": KV},
    ),
    "granitehybrid_moe": (
        cfg(
            "granitehybrid",
            builder="granitehybrid_moe",
            num_hidden_layers=3,
            layer_types=["mamba", "attention", "mamba"],
            mamba_n_heads=8,
            mamba_n_groups=1,
            mamba_d_state=16,
            mamba_d_conv=4,
            mamba_expand=2,
            intermediate_size=FE,
            shared_intermediate_size=FF,
            num_local_experts=NE,
            num_experts_per_tok=NU,
            attention_multiplier=0.25,
            embedding_multiplier=12,
            residual_multiplier=0.25,
            logits_scaling=3,
            tie_word_embeddings=True,
        ),
        2 + 3 * 9 + 2 * 8 + 4,  # every layer: norms, router, 3 experts, 3 shared; Mamba2 8; attention 4
        {"expert_shared_feed_forward_length": FF, "feed_forward_length": FE, "ssm.inner_size": 2 * E},
    ),
    "gemma4_e": (
        cfg(
            "gemma4",
            builder="gemma4_e",
            num_hidden_layers=4,
            layer_types=["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
            global_head_dim=32,
            num_global_key_value_heads=None,
            attention_k_eq_v=False,
            sliding_window=32,
            num_kv_shared_layers=2,
            hidden_size_per_layer_input=8,
            final_logit_softcapping=30.0,
            tie_word_embeddings=True,
            enable_moe_block=False,
            use_double_wide_mlp=False,
            rope_theta=None,
            rope_parameters={
                "full_attention": {"partial_rotary_factor": 0.25, "rope_theta": 1e6, "rope_type": "proportional"},
                "sliding_attention": {"rope_theta": 1e4, "rope_type": "default"},
            },
        ),
        # token_embd, per_layer_token_embd / model_proj / proj_norm, output_norm, rope_freqs; 17 a layer (the shared
        # layers keep attn_k / attn_v / attn_k_norm, as the published checkpoints do)
        6 + 4 * 17,
        {"attention.shared_kv_layers": 2, "embedding_length_per_layer_input": 8, "attention.key_length": 32},
    ),
    "gemma3n": (
        cfg(
            "gemma3n",
            num_hidden_layers=22,
            num_kv_shared_layers=2,  # gemma3n.cpp reads n_layer_kv_from_start = 20 whatever the file says
            layer_types=["full_attention" if (i + 1) % 5 == 0 else "sliding_attention" for i in range(22)],
            intermediate_size=[FF] * 22,
            sliding_window=32,
            hidden_size_per_layer_input=256,  # n_embd_altup, laurel_rank and n_altup: llama-hparams.h defaults
            altup_num_inputs=4,
            altup_active_idx=0,
            laurel_rank=64,
            activation_sparsity_pattern=[0.95] * 10 + [0.0] * 12,
            final_logit_softcapping=30.0,
            tie_word_embeddings=True,
        ),
        # token_embd, altup_proj, altup_unembd_proj, per_layer_token_embd / model_proj / proj_norm, output_norm; 24 a
        # layer (attention 7, norms 4, FFN 3, per-layer input 3, AltUp 5, Laurel 3)
        7 + 22 * 24,
        {"attention.shared_kv_layers": 2, "embedding_length_per_layer_input": 256, "altup.num_inputs": 4},
    ),
    "glm4_moe_lite": (
        cfg(
            "deepseek2",
            MLA,
            builder="glm4_moe_lite",
            num_hidden_layers=2,
            first_k_dense_replace=1,
            gguf_mtp_layers=DEEPSEEK2_MTP,
            n_group=1,
            topk_group=1,
        ),
        # deepseek2's two layers, then the MTP block: a MoE block and its six nextn tensors (PyPI's gguf 0.19 has no
        # deepseek2 nextn tensors: the tiny file leaves the block out there)
        3 + 13 + 18 + DEEPSEEK2_MTP * (18 + 6),
        {"block_count": 2 + DEEPSEEK2_MTP, "leading_dense_block_count": 1}
        | ({"nextn_predict_layers": 1} if DEEPSEEK2_MTP else {}),
    ),
}


def _field(reader: Any, key: str) -> Any:
    return reader.fields[key].contents()


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_writer_writes_the_architecture_it_means(case: str, tool: dict[str, ModuleType], tmp_path: Path) -> None:
    gen, builders = tool["gen_gguf"], tool["arch_builders"]
    c, n_tensors, meta = CASES[case]
    c = {k: v for k, v in c.items() if v is not None}
    arch = c["llama_arch"]
    if arch not in gguf.MODEL_ARCH_NAMES.values():
        pytest.skip(f"gguf {_gguf_version()} has no {arch!r} architecture (llama.cpp's own gguf-py at 0c1e57098 has)")
    name, expected_writer = (
        f"tiny-{case}",
        (gen.GENERIC if case.startswith("generic-") else f"arch_builders.{builders.BUILDERS[case].__name__}"),
    )
    _, tensors, writer = gen.build(name, str(tmp_path / "x.gguf"), c)
    assert writer == expected_writer
    path = tmp_path / f"{case}.gguf"
    info = gen.write_gguf(name, str(path), c)
    assert info["n_tensors"] == n_tensors == len(tensors)

    reader = gguf.GGUFReader(str(path))
    assert _field(reader, "general.architecture") == arch
    assert _field(reader, f"{arch}.embedding_length") == E
    assert _field(reader, f"{arch}.attention.head_count") == H
    for key, value in meta.items():
        got = _field(reader, f"{arch}.{key}")
        assert got == pytest.approx(value) if isinstance(value, float) else got == value, key
    layers = meta.get("block_count", c.get("num_hidden_layers", c.get("num_layers")))
    assert _field(reader, f"{arch}.block_count") == layers
    assert len(_field(reader, "tokenizer.ggml.tokens")) == _embd_rows(tensors)
    # the tensors the writer listed, in ggml order (ne0 first) and with its types, zero-filled
    type_name = {dt: name for name, dt in gen.NP_DTYPES.items()}
    read = {t.name: ([int(x) for x in t.shape], t.tensor_type.name) for t in reader.tensors}
    wrote = {n: (list(reversed(shape)), type_name[dt]) for n, shape, dt in tensors}
    assert read == wrote
    assert all(n.startswith(("blk.", "token_embd", "output", "rope_", "per_layer_", "altup_")) for n in read)


def _embd_rows(tensors: list[tuple[str, tuple[int, ...], Any]]) -> int:
    return next(shape[0] for n, shape, _ in tensors if n == "token_embd.weight")


def _gguf_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gguf")
    except PackageNotFoundError:
        return "(unknown version)"


def test_gemma3_wrapper_configs_get_the_converters_defaults(tool: dict[str, ModuleType]) -> None:
    """An official multimodal gemma-3 config.json names few text_config keys: the row records the file itself, the
    writer reads its text_config with Gemma3Model's fallbacks (8 heads, 4 KV heads, head size 256, the tokenizer's
    262,144 pieces when vocab_size is absent)."""
    archs, gen = tool["archs"], tool["gen_gguf"]
    entry = archs.ARCHS["Gemma-3-4B-it"]
    assert archs.row_config(entry) is entry["hf_config"] and "llama_arch" not in entry["hf_config"]
    flat = gen.generic_config(archs.model_config("Gemma-3-4B-it"))
    assert flat["llama_arch"] == "gemma3" and flat["hidden_size"] == 2560 and flat["num_hidden_layers"] == 34
    assert (flat["num_attention_heads"], flat["num_key_value_heads"], flat["head_dim"]) == (8, 4, 256)
    assert flat["gguf_vocab_size"] == 262144
    assert "gguf_vocab_size" not in gen.generic_config(archs.model_config("Gemma-3-27B-6L"))  # has vocab_size


def _written_projector(kind: str, n_embd_text: int, tmp_path: Path) -> tuple[dict[str, Any], Any]:
    """measure_mmproj.write_mmproj's file for ``kind``, read back: its keys and the reader (for the tensors)."""
    sys.path.insert(0, str(TOOL))
    try:
        measure = importlib.import_module("measure_mmproj")
    finally:
        sys.path.remove(str(TOOL))
    path = tmp_path / "mmproj.gguf"
    measure.write_mmproj(str(path), kind, n_embd_text, gguf)
    reader = gguf.GGUFReader(str(path))
    fields = {name: field.contents() for name, field in reader.fields.items() if not name.startswith("GGUF.")}
    return fields, reader


def test_the_projector_writer_writes_what_clip_loads(tmp_path: Path) -> None:
    """measure_mmproj.py's Gemma 3 projector: the keys MmprojModel and Gemma3VisionModel write (conversion/base.py,
    conversion/gemma.py at 0c1e57098) and the 439 tensors clip.cpp loads for it, counted by hand: the patch
    embedding and its bias, the position table, 27 blocks of 16 (q, k, v, out, two norms, up, down: weight and bias
    each), the post-norm's two, and the projector's input projection and soft-embedding norm."""
    fields, reader = _written_projector("gemma3", 2560, tmp_path)
    assert fields["general.architecture"] == "clip" and fields["clip.projector_type"] == "gemma3"
    assert fields["clip.vision.projection_dim"] == 2560 and fields["clip.vision.image_size"] == 896
    assert (fields["clip.vision.block_count"], fields["clip.vision.embedding_length"]) == (27, 1152)
    names = {t.name: [int(n) for n in t.shape] for t in reader.tensors}
    assert len(names) == 2 + 1 + 27 * 16 + 2 + 2 == 439
    assert names["mm.input_projection.weight"] == [2560, 1152]  # ggml ne: siglip.cpp multiplies by its transpose
    assert names["v.position_embd.weight"] == [1152, (896 // 14) ** 2]


def test_the_qwen35_projector_writer_writes_the_qwen3vl_merger(tmp_path: Path) -> None:
    """Qwen3.5's small tower as Qwen3VLVisionModel writes it: the Conv3D's two temporal slices, its bias and 2,304
    position embeddings (4), 24 blocks of 12 (fused QKV, out, two norms, up, down: weight and bias each), the merger's
    norm (2) and two layers (4): 298 tensors; the merger takes 2 × 2 patches of 1,024 to the text width."""
    fields, reader = _written_projector("qwen35-small", 2560, tmp_path)
    assert fields["clip.projector_type"] == "qwen3vl_merger" and fields["clip.vision.spatial_merge_size"] == 2
    assert fields["clip.vision.image_size"] == 768 == int(2304**0.5) * 16
    names = {t.name: [int(n) for n in t.shape] for t in reader.tensors}
    assert len(names) == 4 + 24 * 12 + 2 + 4 == 298
    assert names["v.blk.0.attn_qkv.weight"] == [1024, 3 * 1024] and names["mm.2.weight"] == [4 * 1024, 2560]


def test_the_pixtral_projector_writer_writes_what_clip_loads(tmp_path: Path) -> None:
    """Pixtral as LlavaVisionModel writes it and clip.cpp loads it: the patch convolution and the pre-norm (2), 24
    blocks of 9 (q, k, v, out, two RMS norms, gate, up, down; no biases), the merger's norm and 2 × 2 merge, the two
    projector layers and the [IMG_BREAK] embedding (5): 223 tensors."""
    fields, reader = _written_projector("pixtral", 5120, tmp_path)
    assert fields["clip.projector_type"] == "pixtral" and fields["clip.use_silu"] is True
    names = {t.name: [int(n) for n in t.shape] for t in reader.tensors}
    assert len(names) == 2 + 24 * 9 + 5 == 223
    assert names["mm.patch_merger.weight"] == [4 * 1024, 1024] and names["v.token_embd.img_break"] == [5120]


def test_the_gemma4_projector_writer_writes_what_clip_loads(tmp_path: Path) -> None:
    """Gemma 4's large tower as Gemma4VisionAudioModel and tensor_mapping.py name it: the patch projection and the x
    and y position tables (2), 27 blocks of 14 (q, k, v, out, q and k norms, four RMS norms, gate, up, down and the
    layer scalar), the standardizer's bias and scale and the projection (3): 383 tensors, the vision projector type
    under clip.vision."""
    fields, reader = _written_projector("gemma4v", 5376, tmp_path)
    assert fields["clip.vision.projector_type"] == "gemma4v" and "clip.projector_type" not in fields
    names = {t.name: [int(n) for n in t.shape] for t in reader.tensors}
    assert len(names) == 2 + 27 * 14 + 3 == 383
    assert names["v.position_embd.weight"] == [1152, 10240, 2] and names["v.blk.0.attn_q_norm.weight"] == [72]


def test_the_gemma4_e_projector_writer_writes_both_towers(tmp_path: Path) -> None:
    """Gemma 4 E2B's and E4B's file as Gemma4VisionAudioModel writes it (conversion/gemma.py at 0c1e57098): the vision
    tower with every linear clipped (4 bounds of one F32 each beside q, k, v, out, gate, up and down) and neither layer
    scalar nor standardizer: 2 + 16 × (13 + 7 × 4) + 1 = 659 tensors; the audio conformer: 2 convolutions and their
    norms, the input projection, the output projection and its bias, mm.a's projection (8) and 12 blocks of 22 tensors
    and 10 clipped linears (q, k, v, out, up and down of both FFN halves, two pointwise convolutions): 8 + 12 × (22 +
    10 × 4) = 752; 1,411 in all. Their F16 and F32 bytes, each padded to 32, add up to 985,569,408 for E2B's width
    (1,536), 84,672 bytes under the published mmproj-F16.gguf (985,654,080): that file's header of 1,411 tensor records
    and its keys. The file written here, header and all, is 736 bytes short of the published one: its general.* keys
    (name, license, ...), which the writer leaves out."""
    fields, reader = _written_projector("gemma4e", 1536, tmp_path)
    assert fields["clip.vision.projector_type"] == "gemma4v" and fields["clip.audio.projector_type"] == "gemma4a"
    assert fields["clip.has_audio_encoder"] is True and fields["clip.audio.projection_dim"] == 1536
    assert (fields["clip.audio.block_count"], fields["clip.audio.feed_forward_length"]) == (12, 4 * 1024)
    assert fields["clip.audio.num_mel_bins"] == 128
    names = {t.name: [int(n) for n in t.shape] for t in reader.tensors}
    assert sum(name.startswith("v.") or name.startswith("mm.input") for name in names) == 2 + 16 * (13 + 7 * 4) + 1
    assert sum(name.startswith("a.") or name.startswith("mm.a.") for name in names) == 8 + 12 * (22 + 10 * 4)
    assert names["a.input_projection.weight"] == [32 * 128 // 4, 1024] and names["a.blk.0.conv_dw.weight"] == [5, 1024]
    assert names["mm.a.input_projection.weight"] == [1536, 1536] and names["v.blk.0.attn_q.input_max"] == [1]
    padded = sum((int(t.n_bytes) + 31) // 32 * 32 for t in reader.tensors)
    assert padded == 985_569_408 == 985_654_080 - 84_672
    assert 985_654_080 - (tmp_path / "mmproj.gguf").stat().st_size == 736


def test_the_llama4_projector_writer_writes_what_clip_loads(tmp_path: Path) -> None:
    """Llama 4's tower as Llama4VisionModel writes it: the unfold convolution as one matrix, the class embedding, the
    position table of 24 × 24 patches and the class token, the pre-norm's two (5), 34 blocks of 16 (q, k, v, out,
    two LayerNorms, up, down: weight and bias each), the post-norm's two and the adapter's and projector's three
    matrices (5): 554 tensors."""
    fields, reader = _written_projector("llama4", 5120, tmp_path)
    assert fields["clip.projector_type"] == "llama4" and fields["clip.vision.projector.scale_factor"] == 2
    names = {t.name: [int(n) for n in t.shape] for t in reader.tensors}
    assert len(names) == 5 + 34 * 16 + 5 == 554
    assert names["v.position_embd.weight"] == [1408, 24 * 24 + 1] and names["mm.model.fc.weight"] == [4096, 5120]
