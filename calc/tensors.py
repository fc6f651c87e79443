"""The tensors of a GGUF file, predicted from the architecture alone.

:func:`gguf_tensors` lists every tensor ``convert_hf_to_gguf.py`` writes for a model, named and shaped as
llama.cpp's loader (``llama_model::load_tensors`` / ``src/models/*.cpp``) expects them (calc/tensor_specs.py's
:class:`~vramfit.calc.tensor_specs.TensorSpec`): token_embd, the blocks the model's family writes
(:meth:`Family.layers <vramfit.calc.families.family.Family.layers>`), then the head.

How sure each layout is. Read in llama.cpp's sources: the quantizer's walk (llama-quant.cpp, the loader's
weight_name_comparer), deepseek2 (graph in src/models/deepseek2.cpp; convert_hf_to_gguf.py splitting kv_b_proj into
attn_k_b / attn_v_b) and the qwen2 loader. Reproduced to the byte by llama.cpp logs or files: llama (Llama
2/3/3.1/3.2/3.3 incl. 70B and rope_freqs), qwen2, qwen3moe, gemma2, phi3 (Phi-3.5-mini, Phi-4, Phi-4-mini), glm4,
glm4moe (GLM-4.5 and -Air), minimax-m2 (MiniMax M2.7), nemotron_h_moe (Nemotron 3 Nano), llama4 (Llama 4 Scout,
Maverick), deepseek32 (DeepSeek V3.2), glm-dsa (GLM-5, and GLM-5.2 with its shared indexers), gemma4 (Gemma 4 31B
and 26B-A4B's expert block), smollm3 (SmolLM3-3B), exaone4 and gpt-oss (EXAONE 4.0 32B, gpt-oss-20b and -120b),
gemma3 (Gemma 3 4B, 12B and 27B), qwen3 (Qwen3 0.6B and 8B), exaone (EXAONE 3.5 7.8B), the big ones on copies with
fewer layers or experts, command-r and cohere2 (Command R 35B and Command R7B on copies with 4 layers) and deepseek2
(Kimi K2 and DeepSeek V3.1 on copies with 4 layers and 16 experts; the V2 files predate the kv_b split; with that
one tensor swapped they match), olmo2 (OLMo 2 7B, and 32B on a copy with 8 layers).
Written from llama.cpp's loader as recalled, not checked against a file: gemma, qwen2moe, granite. Approximate:
starcoder2 and phimoe.
"""

from __future__ import annotations

from functools import lru_cache

from vramfit.calc.architecture import Architecture
from vramfit.calc.families import family_of
from vramfit.calc.tensor_specs import TensorList, TensorSpec


def has_output_tensor(arch: Architecture) -> bool:
    """False when the model is tied: no ``output.weight``, token_embd doubles as the output head."""
    return not (arch.tied_embeddings or family_of(arch.arch).always_tied)


@lru_cache(maxsize=1024)
def gguf_tensors(arch: Architecture) -> tuple[TensorSpec, ...]:
    """Every tensor of the GGUF file for ``arch``: token_embd, the blocks in layer order, then the output part."""
    family = family_of(arch.arch)  # an Architecture built by hand must not be sized as another layout
    b = TensorList()
    n_embd, vocab = arch.hidden_size, arch.vocab_size
    b.add("token_embd.weight", n_embd, vocab)
    family.layers(b, arch)
    b.add(family.final_norm, n_embd)
    if family.final_norm_bias:
        b.add("output_norm.bias", n_embd)
    if has_output_tensor(arch):
        b.add("output.weight", n_embd, vocab)
        if family.output_bias:
            b.add("output.bias", vocab)
    rope_len = arch.head_dim_k // 2  # one factor per rotated pair (n_rot / 2)
    if arch.rope_factor_tensors == 2 and arch.rope_factor_length:
        rope_len = arch.rope_factor_length  # partial rotary (Phi-4-mini): the converter's rope_dims / 2
    if family.rope_freqs_always or arch.rope_factor_tensors == 1:
        b.add("rope_freqs.weight", rope_len)
    elif arch.rope_factor_tensors == 2:
        b.add("rope_factors_long.weight", rope_len)
        b.add("rope_factors_short.weight", rope_len)
    return tuple(b.specs)


def loaded_past_layers(arch: Architecture) -> tuple[str, ...]:
    """Tensors of the MTP blocks that llama.cpp loads in an ordinary context (DeepSeek V3.2's and GLM-5's routing
    bias: the family says)."""
    return family_of(arch.arch).loaded_past_layers


def count_params(arch: Architecture) -> int:
    """``llama_model_n_params``: elements of every tensor in the file (a tied output head is not counted twice)."""
    return sum(spec.n_elements for spec in gguf_tensors(arch))
