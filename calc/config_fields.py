"""Reading a config.json: whole numbers within limits, named by the field they came from.

:class:`ConfigFields` is what every family's reader (calc/families/) and the generic reader (calc/hf_config.py) use to
take a number out of a Hugging Face ``config.json`` mapping, so a bad value is refused the same way everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vramfit.calc.errors import BadConfigError
from vramfit.calc.limits import MAX_EXPERTS, MAX_FFN, MAX_HEAD_DIM, MAX_HEADS, MAX_LAYERS

REQUIRED: Any = object()


class ConfigFields:
    """Reads whole numbers out of a config.json, naming the field of any value that is not one.

    Sizes and counts must be whole numbers within :mod:`calc.limits`; a string, a fraction, a boolean, ``1e309`` or a
    count of ten million layers is a :class:`BadConfigError` that names the field, before anything is sized from it.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = config

    def first(self, *keys: str) -> tuple[str, Any]:
        """The first of ``keys`` that is set (not None), and its value; (keys[0], None) when none is."""
        for key in keys:
            value = self.config.get(key)
            if value is not None:
                return key, value
        return keys[0], None

    @staticmethod
    def whole(key: str, value: Any, low: int, high: int) -> int:
        number: int | None = None
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, float) and value.is_integer():
            number = int(value)
        if number is None or not low <= number <= high:
            shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "…"
            raise BadConfigError(
                f"config.json: {key} must be a whole number from {low} to {high:,}, not {shown}", field=key
            )
        return number

    def number(self, *keys: str, default: Any = REQUIRED, low: int = 0, high: int) -> int:
        key, value = self.first(*keys)
        if value is None:
            if default is REQUIRED:
                raise BadConfigError(f"config.json lacks {key}", field=key)
            return int(default)
        return self.whole(key, value, low, high)

    def per_layer(self, *keys: str, n_layers: int, default: Any = REQUIRED, low: int = 0, high: int) -> tuple[int, ...]:
        """One value per layer: a list of ``n_layers`` numbers, or one number for every layer."""
        key, value = self.first(*keys)
        if value is None:
            if default is REQUIRED:
                raise BadConfigError(f"config.json lacks {key}", field=key)
            value = default
        if isinstance(value, Sequence) and not isinstance(value, str):
            if len(value) != n_layers:
                raise BadConfigError(f"config.json: {key} has {len(value)} entries for {n_layers} layers", field=key)
            return tuple(self.whole(key, v, low, high) for v in value)
        return (self.whole(key, value, low, high),) * n_layers

    def int_list(self, key: str, high: int) -> tuple[int, ...]:
        value = self.config.get(key)
        if value is None:
            return ()
        if not isinstance(value, Sequence) or isinstance(value, str) or len(value) > high + 1:
            raise BadConfigError(f"config.json: {key} must be a list of layer numbers", field=key)
        return tuple(self.whole(key, v, 0, high) for v in value)


def layer_kinds(config: Mapping[str, Any], n_layers: int, recurrent_names: tuple[str, ...]) -> tuple[bool, ...] | None:
    """``layer_types`` (or Granite's ``layers_block_type``) as True where the layer is recurrent; None if absent."""
    for key in ("layer_types", "layers_block_type"):
        kinds = config.get(key)
        if isinstance(kinds, Sequence) and not isinstance(kinds, str):
            if len(kinds) != n_layers:
                raise BadConfigError(f"config.json: {key} has {len(kinds)} entries for {n_layers} layers", field=key)
            return tuple(str(kind) in recurrent_names for kind in kinds)
    return None


def require_experts(fields: ConfigFields, model_type: str, keys: Sequence[tuple[tuple[str, ...], int]]) -> None:
    """A BadConfigError naming the first of ``keys`` (spellings, upper bound) that is missing or 0, and one when more
    experts are used per token than there are (llama-model.cpp:1362 asserts ``n_expert_used_max <= n_expert``)."""
    numbers = []
    for names, high in keys:
        number = fields.number(*names, default=0, high=high)
        if not number:
            raise BadConfigError(f"config.json: a {model_type} model needs {names[0]} above 0", field=names[0])
        numbers.append(number)
    if numbers[1] > numbers[0]:
        raise BadConfigError(
            f"config.json: {keys[1][0][0]} ({numbers[1]}) is more than {keys[0][0][0]} ({numbers[0]})",
            field=keys[1][0][0],
        )


# The expert numbers DeepSeek-style loaders cannot do without (routed experts, used per token, their width), with the
# spellings a config.json or a GGUF header (read back by calc.gguf) gives them.
ROUTED_EXPERT_KEYS = (
    (("n_routed_experts", "num_experts"), MAX_EXPERTS),
    (("num_experts_per_tok",), MAX_EXPERTS),
    (("moe_intermediate_size",), MAX_FFN),
)


def ssm_state(
    fields: ConfigFields,
    keys: tuple[str, str, str, str, str],
    *,
    groups_default: Any = REQUIRED,
    nextn_default: int = 0,
) -> dict[str, int]:
    """A recurrent mixer's state sizes under the config.json ``keys`` a converter reads for ssm_d_conv, ssm_d_state,
    ssm_n_group, ssm_dt_rank and the head size whose product with ssm_dt_rank is ssm_d_inner (Qwen3NextModel /
    GraniteHybridModel / NemotronHModel.set_gguf_parameters), and the MTP blocks (mtp_num_hidden_layers)."""
    conv_key, state_key, groups_key, heads_key, head_key = keys
    groups = fields.number(groups_key, default=groups_default, low=1, high=MAX_HEADS)
    heads = fields.number(heads_key, low=1, high=MAX_HEADS)
    if heads % groups:
        raise BadConfigError(f"config.json: {heads} {heads_key} cannot form {groups} groups evenly", field=heads_key)
    return {
        "ssm_conv_kernel": fields.number(conv_key, low=1, high=64),
        "ssm_state_size": fields.number(state_key, low=1, high=MAX_HEAD_DIM),
        "ssm_groups": groups,
        "ssm_heads": heads,
        "ssm_inner_size": heads * fields.number(head_key, low=1, high=MAX_HEAD_DIM),
        "nextn_layers": fields.number("mtp_num_hidden_layers", default=nextn_default, high=MAX_LAYERS),
    }
