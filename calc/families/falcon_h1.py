"""LLM_ARCH_FALCON_H1 (Falcon-H1 0.5B to 34B): attention and a Mamba2 mixer side by side in every layer, then a
SwiGLU FFN; every layer holds a KV cache and a recurrent state.

Mirrors llama.cpp 0c1e57098: src/models/falcon-h1.cpp (is_recr in every layer; llama-model.cpp create_memory filters
every layer into both the KV cache and llama_memory_recurrent), conversion/falcon_h1.py FalconH1Model (a Mamba2Model):

* ssm.inner_size = mamba_d_ssm (required), ssm.time_step_rank = mamba_d_ssm // mamba_d_head (64 when absent),
  ssm.state_size = mamba_d_state (128), ssm.conv_kernel = mamba_d_conv (4), ssm.group_count = mamba_n_groups
  (required); key_length = value_length = head_dim; the vocabulary is not padded (_set_vocab_gpt2);
* the μP multipliers are folded into the weights: no key, no tensor, no memory;
* the FFN's norm is written without a suffix (``blk.N.ffn_norm``: FALCON_H1's gguf-py list has FFN_PRE_NORM only);
  the Mamba2 mixer's grouped norm only with mamba_rms_norm.

Measured: Falcon-H1 0.5B, 1.5B and 7B Instruct, whole (tests/data/groundtruth/LLAMACPP.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vramfit.calc.architecture import Architecture
from vramfit.calc.config_fields import ConfigFields
from vramfit.calc.errors import BadConfigError
from vramfit.calc.families.family import Family, GgufMeta
from vramfit.calc.families.granitehybrid import mamba2_mixer
from vramfit.calc.limits import MAX_HEAD_DIM, MAX_HEADS, MAX_HIDDEN
from vramfit.calc.tensor_specs import TensorList, attention, dense_ffn


def falcon_h1_state(fields: ConfigFields, n_layers: int) -> dict[str, Any]:
    """The Mamba2 sizes FalconH1Model writes (its find_hparam also tries each key with a ``mamba_`` prefix, after
    the plain one), every layer recurrent."""
    inner = fields.number("mamba_d_ssm", low=1, high=MAX_HIDDEN)
    head = fields.number("mamba_d_head", "head_dim", default=64, low=1, high=MAX_HEAD_DIM)
    groups = fields.number("mamba_n_groups", "n_groups", low=1, high=MAX_HEADS)
    if inner % head or (inner // head) % groups:
        raise BadConfigError(
            f"config.json: mamba_d_ssm {inner} cannot form heads of {head} in {groups} groups", field="mamba_d_ssm"
        )
    return {
        "recurrent_layers": (True,) * n_layers,
        "ssm_inner_size": inner,
        "ssm_heads": inner // head,
        "ssm_groups": groups,
        "ssm_state_size": fields.number(
            "state_size", "d_state", "mamba_d_state", default=128, low=1, high=MAX_HEAD_DIM
        ),
        "ssm_conv_kernel": fields.number("conv_kernel", "d_conv", "mamba_d_conv", default=4, low=1, high=64),
        "ssm_group_norm": bool(fields.config.get("mamba_rms_norm", False)),
    }


def falcon_h1_layers(b: TensorList, arch: Architecture) -> None:
    """llama_model_falcon_h1::load_arch_tensors per layer: attn_norm, attention, the Mamba2 mixer, the suffixless
    ffn_norm and the SwiGLU FFN."""
    n_embd = arch.hidden_size
    for il in range(arch.n_layers):
        b.blk(il, "attn_norm.weight", n_embd)
        attention(b, arch, il)
        mamba2_mixer(b, arch, il)
        b.blk(il, "ffn_norm", n_embd)
        dense_ffn(b, arch, il, arch.ffn_size[il])


class FalconH1(Family, arch="falcon-h1", model_types=("falcon_h1",), parallel_hybrid=True, recurrent_mixer="mamba2"):
    """Mirrors src/models/falcon-h1.cpp, conversion/falcon_h1.py FalconH1Model (0c1e57098)."""

    def recurrent(self, fields: ConfigFields, n_layers: int) -> dict[str, Any]:
        return falcon_h1_state(fields, n_layers)

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        falcon_h1_layers(tensors, arch)

    def gguf_keys(self, meta: GgufMeta, config: Mapping[str, Any], names: set[str]) -> dict[str, Any]:
        inner, heads = meta("ssm.inner_size"), meta("ssm.time_step_rank")
        out = {
            "mamba_d_ssm": inner,
            "mamba_d_head": inner // heads if isinstance(inner, int) and isinstance(heads, int) and heads else None,
            "mamba_d_state": meta("ssm.state_size"),
            "mamba_n_groups": meta("ssm.group_count"),
            "mamba_d_conv": meta("ssm.conv_kernel"),
            "mamba_rms_norm": "blk.0.ssm_norm.weight" in names,
        }
        return {k: v for k, v in out.items() if v is not None}
