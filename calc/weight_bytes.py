"""The weights of one model in one format, split the ways the memory model needs (:class:`WeightBytes`), and the one
per-layer sum every source of tensor sizes uses: llama.cpp's quantizer mix, a GGUF header, a vLLM checkpoint."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

_LAYER = re.compile(r"^blk\.(\d+)\.")


class WeightBytes(BaseModel):
    """The weights of one model in one format, split the ways the memory model needs."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    file_type: str
    params: int = Field(description="llama_model_n_params: elements of all tensors (tied head counted once)")
    tensor_bytes: int = Field(description="sum of tensor sizes (llama_model_size; vLLM: its weight memory)")
    metadata_bytes: int = Field(description="estimated GGUF header + tokenizer (0 for vLLM formats)")
    file_bytes: int = Field(description="metadata + every tensor padded to the GGUF alignment")
    token_embd_bytes: int
    token_embd_type: str
    output_bytes: int = Field(description="output.weight, or the GPU copy of token_embd when the model is tied")
    output_type: str
    layer_bytes: tuple[int, ...] = Field(description="all tensors of blk.N, per layer")
    expert_layer_bytes: tuple[int, ...] = Field(description="the routed-expert (ffn_*_exps) part of each layer")
    gpu_bytes: int = Field(description="on the GPU with every layer offloaded")
    host_bytes: int = Field(description="kept in system RAM with every layer offloaded (llama.cpp: token_embd)")
    largest_expert_tensor_bytes: int = Field(
        default=0, description="the largest single ffn_*_exps tensor (what llama.cpp copies to the GPU at a time)"
    )
    mtp_bytes: int = Field(
        default=0, description="blocks past the model's layers (MTP/NextN), in the file, loaded only for draft-mtp"
    )

    @classmethod
    def as_llama_cpp_places_them(
        cls,
        *,
        file_type: str,
        params: int,
        tensor_bytes: int,
        metadata_bytes: int,
        file_bytes: int,
        roles: RoleSums,
        tied: bool,
    ) -> WeightBytes:
        """Split as llama.cpp places a GGUF with every layer offloaded: token_embd in system RAM; a tied model loads
        it twice, the output head (same data, same type) going to the GPU with the output layer. Blocks past the
        model's layers (the converter's multi-token-prediction blocks) are in the file but never loaded."""
        out_bytes, out_type = (roles.embd_bytes, roles.embd_type) if tied else (roles.out_bytes, roles.out_type)
        return cls(
            file_type=file_type,
            params=params,
            tensor_bytes=tensor_bytes,
            metadata_bytes=metadata_bytes,
            file_bytes=file_bytes,
            token_embd_bytes=roles.embd_bytes,
            token_embd_type=roles.embd_type,
            output_bytes=out_bytes,
            output_type=out_type,
            layer_bytes=roles.layers,
            expert_layer_bytes=roles.experts,
            gpu_bytes=tensor_bytes
            - roles.unloaded_bytes
            - roles.embd_bytes
            - roles.input_bytes
            + (out_bytes if tied else 0),
            host_bytes=roles.embd_bytes + roles.input_bytes,
            largest_expert_tensor_bytes=roles.largest_expert_bytes,
            mtp_bytes=roles.unloaded_bytes,
        )

    @property
    def bits_per_weight(self) -> float:
        return self.tensor_bytes * 8 / self.params if self.params else 0.0


@dataclass(frozen=True, slots=True)
class RoleSums:
    """Tensor bytes by role: per layer (and its routed experts), the token embeddings and the output head."""

    layers: tuple[int, ...]
    experts: tuple[int, ...]
    embd_bytes: int
    embd_type: str
    out_bytes: int
    out_type: str
    unloaded_bytes: int = 0  # blk.N with N ≥ the model's layers: multi-token-prediction blocks llama.cpp skips
    largest_expert_bytes: int = 0  # the largest single routed-expert tensor
    input_bytes: int = 0  # other input-layer tensors kept on the host beside token_embd (Gemma 4 E's per-layer table)


def layer_of(name: str) -> int | None:
    """The layer of a GGUF tensor name (``blk.12.attn_q.weight`` → 12), or None."""
    found = _LAYER.match(name)
    return int(found[1]) if found else None


# Input-layer tensors besides token_embd, which llama.cpp keeps on the host like it (llama-model.cpp: the
# LLM_TENSOR_LAYER_INPUT buffer types; Gemma 4 E's per-layer token embeddings, src/models/gemma4.cpp at 0c1e57098).
INPUT_LAYER_TENSORS = frozenset({"per_layer_token_embd.weight"})


def sum_by_role(
    tensors: Iterable[tuple[str, int | None, bool, int, str]], n_layers: int, loaded_past_layers: tuple[str, ...] = ()
) -> RoleSums:
    """Add up ``(name, layer, is_expert, bytes, type)`` rows: per layer below ``n_layers``, token_embd, output. A block
    past ``n_layers`` is not loaded, except its tensors whose names end with one of ``loaded_past_layers``."""
    layers = [0] * n_layers
    experts = [0] * n_layers
    embd_bytes, embd_type, out_bytes, out_type, unloaded, largest_expert, inputs = 0, "", 0, "", 0, 0, 0
    for name, layer, is_expert, n_bytes, type_name in tensors:
        if layer is not None:
            if layer < n_layers:
                layers[layer] += n_bytes
                if is_expert:
                    experts[layer] += n_bytes
                    largest_expert = max(largest_expert, n_bytes)
            elif not name.endswith(loaded_past_layers) or not loaded_past_layers:
                unloaded += n_bytes
        elif name == "token_embd.weight":
            embd_bytes, embd_type = n_bytes, type_name
        elif name == "output.weight":
            out_bytes, out_type = n_bytes, type_name
        elif name in INPUT_LAYER_TENSORS:
            inputs += n_bytes
    return RoleSums(
        tuple(layers), tuple(experts), embd_bytes, embd_type, out_bytes, out_type, unloaded, largest_expert, inputs
    )
