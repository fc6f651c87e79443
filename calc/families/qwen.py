"""LLM_ARCH_QWEN2, QWEN2MOE, QWEN3, QWEN3MOE: Qwen 2 / 2.5 (q/k/v biases, no o bias) and Qwen 3 (per-head q/k RMS
norms, no biases), dense and with experts (Qwen2-MoE's shared expert has a sigmoid gate).

Mirrors llama.cpp 0c1e57098: src/models/qwen2.cpp, qwen2moe.cpp, qwen3.cpp, qwen3moe.cpp; conversion/qwen.py.
Qwen2 configs omit attention_bias although the checkpoints carry q/k/v biases.
"""

from __future__ import annotations

from vramfit.calc.architecture import Architecture
from vramfit.calc.families.family import Family
from vramfit.calc.tensor_specs import TensorList, attention, ffn


def qwen_layers(b: TensorList, arch: Architecture, *, qwen3: bool, shared_gate: bool = False) -> None:
    """qwen2/qwen2moe (q/k/v biases, no o bias) and qwen3/qwen3moe (per-head q/k RMS norms, no biases)."""
    bias = arch.attention_bias and not qwen3
    for il in range(arch.n_layers):
        b.blk(il, "attn_norm.weight", arch.hidden_size)
        attention(b, arch, il, q_bias=bias, kv_bias=bias, qk_norm=qwen3)
        b.blk(il, "ffn_norm.weight", arch.hidden_size)
        ffn(b, arch, il, shared_gate=shared_gate)


class Qwen2(Family, arch="qwen2", model_types=("qwen2",), attention_bias_always=True):
    """Mirrors src/models/qwen2.cpp, conversion/qwen.py Qwen2Model (0c1e57098)."""

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        qwen_layers(tensors, arch, qwen3=False)

    def is_70b(self, arch: Architecture) -> bool:
        return arch.n_layers == 80  # llama-model.cpp load_hparams: an 80-layer Qwen2 is LLM_TYPE_70B


class Qwen2Moe(Family, arch="qwen2moe", model_types=("qwen2_moe",), attention_bias_always=True):
    """Mirrors src/models/qwen2moe.cpp, conversion/qwen.py Qwen2MoeModel (0c1e57098)."""

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        qwen_layers(tensors, arch, qwen3=False, shared_gate=True)


class Qwen3(Family, arch="qwen3", model_types=("qwen3",), qk_norm=True, ollama_flash_attention=True):
    """Mirrors src/models/qwen3.cpp, conversion/qwen.py Qwen3Model (0c1e57098). Ollama runs it with flash attention by
    default (ollama/ollama#12482)."""

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        qwen_layers(tensors, arch, qwen3=True)


class Qwen3Moe(Family, arch="qwen3moe", model_types=("qwen3_moe",), qk_norm=True, ollama_flash_attention=True):
    """Mirrors src/models/qwen3moe.cpp, conversion/qwen.py Qwen3MoeModel (0c1e57098). Ollama runs it with flash
    attention by default (ollama/ollama#12482)."""

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        qwen_layers(tensors, arch, qwen3=True)
