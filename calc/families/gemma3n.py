"""LLM_ARCH_GEMMA3N (Gemma 3n E2B, E4B): Gemma 3's attention (q/k norms, sandwich norms, four sliding layers of 512
tokens to one global) with AltUp (the residual stream kept as four copies: three projections in and out and a small
router per layer), Laurel (a rank-64 side branch per layer), per-layer embeddings (a table of every layer's inputs kept
on the host like token_embd) and KV sharing (layers from the 20th on read an earlier layer's cache and own none).

Mirrors llama.cpp 0c1e57098: src/models/gemma3n.cpp (load_arch_hparams sets n_layer_kv_from_start = 20 whatever the
header's shared_kv_layers says; n_altup 4, laurel_rank 64 and n_embd_altup 256 are llama-hparams.h defaults, read
from no key), conversion/gemma.py Gemma3NModel (the vocabulary and both embedding tables padded to vocab_size, 262,400
rows; the three altup projections stacked into one tensor each); llama-quant.cpp keeps altup, laurel and
per_layer_model_proj tensors unquantized. Measured: Gemma 3n E2B and E4B (LLAMACPP.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from vramfit.calc.architecture import Architecture
from vramfit.calc.config_fields import ConfigFields
from vramfit.calc.errors import BadConfigError
from vramfit.calc.families.family import Family, GgufMeta
from vramfit.calc.limits import MAX_HEAD_DIM
from vramfit.calc.tensor_specs import TensorList, attention, dense_ffn

# llama-hparams.h defaults gemma3n.cpp reads (no GGUF key sets them): the AltUp copies of the residual stream, the
# Laurel rank and the per-layer embedding width. A config with other numbers would load with these and fail.
GEMMA3N_ALTUP_INPUTS = 4
GEMMA3N_LAUREL_RANK = 64
GEMMA3N_PER_LAYER_INPUT = 256
# gemma3n.cpp load_arch_hparams: hparams.n_layer_kv_from_start = 20.
GEMMA3N_KV_LAYERS = 20


def gemma3n_layers(b: TensorList, arch: Architecture) -> None:
    """src/models/gemma3n.cpp load_arch_tensors: every layer keeps attn_k/attn_v and its k norm, shared or not; the
    global AltUp and per-layer-embedding tensors follow the blocks (their order changes no byte)."""
    n_embd, n_altup, rank, per_layer = (
        arch.hidden_size,
        GEMMA3N_ALTUP_INPUTS,
        GEMMA3N_LAUREL_RANK,
        arch.per_layer_input_size,
    )
    for il in range(arch.n_layers):
        b.blk(il, "attn_norm.weight", n_embd)
        attention(b, arch, il, qk_norm=True)
        b.blk(il, "post_attention_norm.weight", n_embd)
        b.blk(il, "ffn_norm.weight", n_embd)
        dense_ffn(b, arch, il, arch.ffn_size[il])
        b.blk(il, "post_ffw_norm.weight", n_embd)
        b.blk(il, "inp_gate.weight", n_embd, per_layer)
        b.blk(il, "proj.weight", per_layer, n_embd)
        b.blk(il, "post_norm.weight", n_embd)
        b.blk(il, "altup_correct_coef.weight", n_altup, n_altup)
        b.blk(il, "altup_correct_scale.weight", n_embd)
        b.blk(il, "altup_predict_coef.weight", n_altup, n_altup * n_altup)
        b.blk(il, "altup_router.weight", n_embd, n_altup)
        b.blk(il, "altup_router_norm.weight", n_embd)
        b.blk(il, "laurel_l.weight", n_embd, rank)
        b.blk(il, "laurel_r.weight", rank, n_embd)
        b.blk(il, "laurel_post_norm.weight", n_embd)
    b.add("altup_proj.weight", n_embd, n_embd, n_altup - 1)
    b.add("altup_unembd_proj.weight", n_embd, n_embd, n_altup - 1)
    width = per_layer * arch.n_layers
    b.add("per_layer_token_embd.weight", width, arch.vocab_size)
    b.add("per_layer_model_proj.weight", n_embd, width)
    b.add("per_layer_proj_norm.weight", per_layer)


class Gemma3n(Family, arch="gemma3n", swa_pattern=5, tied_by_default=True, always_tied=True, qk_norm=True,
              altup_inputs=4):  # fmt: skip
    """Mirrors src/models/gemma3n.cpp, conversion/gemma.py Gemma3NModel (0c1e57098)."""

    model_types = ("gemma3n", "gemma3n_text")
    sentencepiece_vocab = True
    # Gemma3NModel pads the vocabulary and both embedding tables to vocab_size (262,400), which the E-models' config
    # names; vocab_size_per_layer_input (262,144) sizes nothing in the file.
    converter_defaults: ClassVar[Mapping[str, Any]] = {"head_dim": 256}

    def check(self, fields: ConfigFields) -> None:
        for key, wanted in (
            ("altup_num_inputs", GEMMA3N_ALTUP_INPUTS),
            ("laurel_rank", GEMMA3N_LAUREL_RANK),
            ("hidden_size_per_layer_input", GEMMA3N_PER_LAYER_INPUT),
        ):
            value = fields.config.get(key, wanted)
            if value != wanted:  # llama.cpp reads its default, not the file: the tensors would not match
                raise BadConfigError(f"llama.cpp loads Gemma 3n only with {key} = {wanted}, not {value}", field=key)

    def layout(self, fields: ConfigFields, shape: dict[str, Any]) -> dict[str, Any]:
        n_layers = shape["n_layers"]
        return {
            "kv_shared_layers": max(n_layers - GEMMA3N_KV_LAYERS, 0),
            "per_layer_input_size": fields.number(
                "hidden_size_per_layer_input", default=GEMMA3N_PER_LAYER_INPUT, high=MAX_HEAD_DIM
            ),
        }

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        gemma3n_layers(tensors, arch)

    def gguf_keys(self, meta: GgufMeta, config: Mapping[str, Any], names: set[str]) -> dict[str, Any]:
        """Gemma3NModel's per-layer embedding width; the shared layers are llama.cpp's own 20 (no key is read)."""
        return {"hidden_size_per_layer_input": meta("embedding_length_per_layer_input", GEMMA3N_PER_LAYER_INPUT)}
