"""LLM_ARCH_NEMOTRON_H and NEMOTRON_H_MOE (Nemotron Nano 9B/12B v2, Nemotron-H 8B/47B; Nemotron 3 Nano 30B-A3B):
one kind of block per layer, Mamba2 ('M'), attention ('*'), a relu² MLP ('-') or routed experts ('E').

Mirrors llama.cpp 0c1e57098: src/models/nemotron-h.cpp, conversion/nemotron.py NemotronHModel (a GraniteHybridModel:
its Mamba2 mixer and vocabulary padding). model_type nemotron_h converts to nemotron_h_moe when the config has
num_experts_per_tok (NemotronHModel.__init__: has_moe_params). Measured: Nemotron 3 Nano (LLAMACPP.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from vramfit.calc.architecture import Architecture
from vramfit.calc.config_fields import ConfigFields, ssm_state
from vramfit.calc.errors import BadConfigError
from vramfit.calc.families.family import Family, GgufMeta, not_modelled
from vramfit.calc.families.granitehybrid import mamba2_keys, mamba2_mixer
from vramfit.calc.limits import MAX_EXPERTS, MAX_FFN, MAX_HIDDEN
from vramfit.calc.tensor_specs import TensorList, attention, layer_is_moe

# layers_block_type (the list form of the pattern) as NemotronHModel reads it: _SSM/_ATTN/_MLP_LAYER_TYPES.
_NEMOTRON_H_KINDS = {"mamba": "M", "linear_attention": "M", "attention": "*", "full_attention": "*", "moe": "E"}
# NemotronHModel (a GraniteHybridModel): d_model = mamba_head_dim, d_inner = mamba_num_heads × d_model.
_MAMBA2_KEYS = ("conv_kernel", "ssm_state_size", "n_groups", "mamba_num_heads", "mamba_head_dim")


def nemotron_h_pattern(fields: ConfigFields, arch: str, n_layers: int) -> str:
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


def nemotron_h_moe_check(fields: ConfigFields) -> None:
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
            raise not_modelled(f"nemotron_h with {key}", field="model_type")


def nemotron_h_layers(b: TensorList, arch: Architecture) -> None:
    """LLM_ARCH_NEMOTRON_H / NEMOTRON_H_MOE (Nemotron Nano 9B v2, Nemotron 3 Nano 30B-A3B; conversion/nemotron.py
    NemotronHModel, src/models/nemotron-h.cpp load_arch_tensors): one mixer per block after its attn_norm, as the
    layer's kind says. Recurrent: Mamba2. With KV heads: NoPE attention (biases with attention_bias). Otherwise a
    relu² MLP without gate: ffn_up/ffn_down (nemotron_h), or the routed experts ffn_up_exps/ffn_down_exps with the
    sigmoid router, its exp_probs_b bias and the ungated shared expert ffn_up_shexp/ffn_down_shexp
    (nemotron_h_moe)."""
    n_embd, bias = arch.hidden_size, arch.attention_bias
    for il in range(arch.n_layers):
        b.blk(il, "attn_norm.weight", n_embd)
        if arch.layer_is_recurrent(il):
            mamba2_mixer(b, arch, il)
        elif arch.n_kv_heads[il]:
            attention(b, arch, il, q_bias=bias, kv_bias=bias, o_bias=bias)
        elif layer_is_moe(arch, il):
            n_exp, n_ff, n_sh = arch.n_experts, arch.expert_ffn_size, arch.shared_expert_ffn_size
            b.blk(il, "ffn_gate_inp.weight", n_embd, n_exp)
            b.blk(il, "exp_probs_b.bias", n_exp)
            b.blk(il, "ffn_up_exps.weight", n_embd, n_ff, n_exp)
            b.blk(il, "ffn_down_exps.weight", n_ff, n_embd, n_exp)
            b.blk(il, "ffn_up_shexp.weight", n_embd, n_sh)
            b.blk(il, "ffn_down_shexp.weight", n_sh, n_embd)
        else:
            b.blk(il, "ffn_up.weight", n_embd, arch.ffn_size[il])
            b.blk(il, "ffn_down.weight", arch.ffn_size[il], n_embd)


def nemotron_h_keys(meta: GgufMeta, moe: bool, config: Mapping[str, Any], names: set[str]) -> dict[str, Any]:
    """Nemotron-H's config.json keys back from what NemotronHModel writes: the layer kinds from the per-layer
    head_count_kv (KV heads only on '*' layers) and feed_forward_length (only on the FFN layers: 'E' in
    nemotron_h_moe, '-' in nemotron_h; neither is 'M', as src/models/nemotron-h.cpp decides), the Mamba2 sizes
    from ssm.* (ssm.inner_size = mamba_num_heads × mamba_head_dim), the shared expert's width."""
    out: dict[str, Any] = {}
    kv, ff = config.get("num_key_value_heads"), config.get("intermediate_size")
    if isinstance(kv, list) and isinstance(ff, list) and len(kv) == len(ff):
        ffn_kind = "E" if moe else "-"
        kinds = ("*" if heads else ffn_kind if width else "M" for heads, width in zip(kv, ff, strict=True))
        out["hybrid_override_pattern"] = "".join(kinds)
        widths = [w for w in ff if isinstance(w, int)]
        out["intermediate_size"] = max(widths, default=0)
    out.update(mamba2_keys(meta, ("conv_kernel", "ssm_state_size", "n_groups", "mamba_num_heads")))
    out["mamba_head_dim"] = out.pop("head_dim")
    out["attention_bias"] = any(name.endswith(".attn_q.bias") for name in names)
    if moe:
        out.update(
            n_routed_experts=config.get("num_experts"),
            moe_shared_expert_intermediate_size=meta("expert_shared_feed_forward_length", 0),
            moe_latent_size=meta("moe_latent_size"),
            num_nextn_predict_layers=meta("nextn_predict_layers"),
        )
    return out


class NemotronH(Family, arch="nemotron_h", model_types=("nemotron_h",), vocab_multiple=8, rs_rollback=True,
                gated_ffn=False, recurrent_mixer="mamba2"):  # fmt: skip
    """Mirrors src/models/nemotron-h.cpp, conversion/nemotron.py NemotronHModel (0c1e57098). Vocabulary padded to a
    multiple of 8: Mamba2Model.set_vocab / NemotronHModel.set_vocab."""

    has_experts: ClassVar[bool] = False

    def resolve(self, config: Mapping[str, Any]) -> Family:
        # NemotronHModel.__init__: has_moe_params = "num_experts_per_tok" in llm_config
        return NEMOTRON_H_MOE if "num_experts_per_tok" in config else self

    def pattern(self, fields: ConfigFields, n_layers: int) -> str:
        return nemotron_h_pattern(fields, self.arch, n_layers)

    def recurrent(self, fields: ConfigFields, n_layers: int) -> dict[str, Any]:
        kinds = tuple(kind == "M" for kind in self.pattern(fields, n_layers))
        return {"recurrent_layers": kinds, **ssm_state(fields, _MAMBA2_KEYS)}

    def attention_layers(
        self, fields: ConfigFields, n_layers: int, n_heads: tuple[int, ...], n_kv_heads: tuple[int, ...]
    ) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Only the '*' layers have attention (NemotronHModel writes head_count_kv 0 elsewhere); FFN layers hold no
        cache (llama_model::create_memory's filter_attn: not recurrent and n_ff(il) == 0)."""
        pattern = self.pattern(fields, n_layers)
        heads = tuple(h if kind == "*" else 0 for kind, h in zip(pattern, n_heads, strict=True))
        kv_heads = tuple(h if kind == "*" else 0 for kind, h in zip(pattern, n_kv_heads, strict=True))
        return heads, kv_heads

    def experts(self, n_experts: int, n_used: int) -> tuple[int, int]:
        return 0, 0  # the dense converter writes no expert keys, whatever else the config holds

    def ffn(
        self, fields: ConfigFields, n_layers: int, dense_ffn: tuple[int, ...], moe_layers: tuple[bool, ...]
    ) -> tuple[tuple[int, ...], tuple[bool, ...]]:
        """feed_forward_length per layer: intermediate_size on the '-' layers; the 'E' layers are the MoE ones."""
        pattern = self.pattern(fields, n_layers)
        ffn_keys = ("intermediate_size", "n_inner", "ffn_hidden_size")
        width = fields.number(*ffn_keys, low=1, high=MAX_FFN)
        return tuple(width if kind == "-" else 0 for kind in pattern), ()

    def layers(self, tensors: TensorList, arch: Architecture) -> None:
        nemotron_h_layers(tensors, arch)

    def gguf_keys(self, meta: GgufMeta, config: Mapping[str, Any], names: set[str]) -> dict[str, Any]:
        out = nemotron_h_keys(meta, self.has_experts, config, names)
        return {k: v for k, v in out.items() if v is not None}


class NemotronHMoe(NemotronH, arch="nemotron_h_moe", model_types=(), has_experts=True, mtp_graph=True):
    def resolve(self, config: Mapping[str, Any]) -> Family:
        return self

    def check(self, fields: ConfigFields) -> None:
        nemotron_h_moe_check(fields)

    def experts(self, n_experts: int, n_used: int) -> tuple[int, int]:
        return n_experts, n_used

    def ffn(
        self, fields: ConfigFields, n_layers: int, dense_ffn: tuple[int, ...], moe_layers: tuple[bool, ...]
    ) -> tuple[tuple[int, ...], tuple[bool, ...]]:
        pattern = self.pattern(fields, n_layers)
        return (0,) * n_layers, tuple(kind == "E" for kind in pattern)


NEMOTRON_H_MOE = NemotronHMoe()
