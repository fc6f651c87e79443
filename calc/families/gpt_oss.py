"""LLM_ARCH_OPENAI_MOE (gpt-oss-20b, gpt-oss-120b): biased attention with per-head sinks, every other layer
sliding, biased experts in every layer (MXFP4 in OpenAI's checkpoints) whose width config.json gives as
intermediate_size.

Mirrors llama.cpp 0c1e57098 src/models/openai-moe.cpp and conversion/gpt_oss.py GptOssModel; measured (LLAMACPP.md).
"""

from __future__ import annotations

from vramfit.calc.architecture import Architecture
from vramfit.calc.families.family import Family
from vramfit.calc.ggml import GgmlType
from vramfit.calc.tensor_specs import TensorList, attention


def gpt_oss_layers(b: TensorList, arch: Architecture) -> None:
    """LLM_ARCH_OPENAI_MOE: biased attention with per-head sinks; biased experts (MXFP4 in OpenAI's checkpoints)."""
    n_embd, n_exp, n_ff = arch.hidden_size, arch.n_experts, arch.expert_ffn_size
    # OpenAI's checkpoints store experts as MXFP4 blocks and the converter repacks them unchanged; a 16-bit
    # checkpoint (no quantization_config) gets its experts quantized like any other tensor.
    experts = GgmlType.MXFP4 if arch.experts_mxfp4 else GgmlType.F16
    for il in range(arch.n_layers):
        b.blk(il, "attn_norm.weight", n_embd)
        attention(b, arch, il, q_bias=True, kv_bias=True, o_bias=True)
        b.blk(il, "attn_sinks.weight", arch.n_heads[il])
        b.blk(il, "post_attention_norm.weight", n_embd)
        b.blk(il, "ffn_gate_inp.weight", n_embd, n_exp)
        b.blk(il, "ffn_gate_inp.bias", n_exp)
        b.blk(il, "ffn_gate_exps.weight", n_embd, n_ff, n_exp, source=experts)
        b.blk(il, "ffn_up_exps.weight", n_embd, n_ff, n_exp, source=experts)
        b.blk(il, "ffn_down_exps.weight", n_ff, n_embd, n_exp, source=experts)
        b.blk(il, "ffn_gate_exps.bias", n_ff, n_exp)
        b.blk(il, "ffn_up_exps.bias", n_ff, n_exp)
        b.blk(il, "ffn_down_exps.bias", n_embd, n_exp)


class GptOss(
    Family, arch="gpt-oss", model_types=("gpt_oss",), swa_pattern=2, ollama_flash_attention=True, attention_sinks=True
):
    """Mirrors src/models/openai-moe.cpp, conversion/gpt_oss.py GptOssModel (0c1e57098). Ollama runs it with flash
    attention by default (ollama/ollama#11996)."""

    expert_width_is_intermediate_size = True

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        gpt_oss_layers(tensors, arch)
