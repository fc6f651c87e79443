"""LLM_ARCH_GEMMA, GEMMA2, GEMMA3: Gemma (pre-norms), Gemma 2 (+ post-attention and post-ffw norms, every other
layer sliding), Gemma 3 (+ per-head q/k norms, five sliding layers to one global).

Mirrors llama.cpp 0c1e57098: src/models/gemma.cpp, gemma2.cpp, gemma3.cpp; conversion/gemma.py. The converter never
writes output.weight (token_embd is the head) and the vocabulary is SentencePiece (no merges in the header).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from vramfit.calc.architecture import Architecture
from vramfit.calc.families.family import Family
from vramfit.calc.tensor_specs import TensorList, attention, dense_ffn


def gemma_layers(b: TensorList, arch: Architecture, *, post_norms: bool, qk_norm: bool) -> None:
    """gemma (pre-norms), gemma2 (+ post-attention/post-ffw norms), gemma3 (+ per-head q/k norms)."""
    for il in range(arch.n_layers):
        b.blk(il, "attn_norm.weight", arch.hidden_size)
        attention(b, arch, il, qk_norm=qk_norm)
        if post_norms:
            b.blk(il, "post_attention_norm.weight", arch.hidden_size)
        b.blk(il, "ffn_norm.weight", arch.hidden_size)
        dense_ffn(b, arch, il, arch.ffn_size[il])
        if post_norms:
            b.blk(il, "post_ffw_norm.weight", arch.hidden_size)


class Gemma(Family, arch="gemma", model_types=("gemma",), tied_by_default=True, always_tied=True):
    """Mirrors src/models/gemma.cpp, conversion/gemma.py GemmaModel (0c1e57098)."""

    sentencepiece_vocab = True

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        gemma_layers(tensors, arch, post_norms=False, qk_norm=False)


class Gemma2(Gemma, arch="gemma2", model_types=("gemma2",), swa_pattern=2):
    """Mirrors src/models/gemma2.cpp, conversion/gemma.py Gemma2Model (0c1e57098). Sliding window pattern: even layers
    slide: il % 2 < 1."""

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        gemma_layers(tensors, arch, post_norms=True, qk_norm=False)


class Gemma3(Gemma, arch="gemma3", swa_pattern=6, qk_norm=True, ollama_flash_attention=True):
    """Mirrors src/models/gemma3.cpp, conversion/gemma.py Gemma3Model (0c1e57098). Sliding window pattern: five sliding
    layers, then one global. Ollama runs it with flash attention by default (ollama/ollama#12639)."""

    model_types = ("gemma3", "gemma3_text")
    # What the converter writes for a config.json that omits a key (Gemma3Model.set_gguf_parameters): context 131072,
    # 8 heads, 4 KV heads and head size 256, and without a vocab_size the SentencePiece vocabulary is the tokenizer's
    # own 262,144 pieces (_create_vocab_sentencepiece: the hparam, else tokenizer.vocab_size()), to which
    # modify_tensors cuts token_embd (its 262,208 rows include 64 unused). The official multimodal config.json of
    # Gemma 3 4B/12B/27B names few keys in its text_config (4B: not even the head counts), so without these a
    # --config of the real file was refused ("lacks vocab_size").
    converter_defaults: ClassVar[Mapping[str, Any]] = {
        "max_position_embeddings": 131072,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 256,
        "vocab_size": 262144,
    }

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        gemma_layers(tensors, arch, post_norms=True, qk_norm=True)
