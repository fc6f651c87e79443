"""Recurrent state: what hybrid and recurrent models hold instead of a KV cache in their non-attention layers.

Mirrors ``llama_memory_recurrent`` (src/llama-memory-recurrent.cpp, llama.cpp 0c1e57098, the revision
llama-cpp-python 0.3.36 vendors), which ``llama_memory_hybrid`` uses for the recurrent layers of Qwen3.5 (Gated
DeltaNet), Granite 4.0 H (Mamba2) and LFM2 (short convolutions):

* one cell per sequence: ``mem_size = max(1, n_seq_max)`` (``n_rs_seq`` rollback snapshots are off by default);
  the state does not grow with the context;
* each recurrent layer holds ``r = n_embd_r × cells`` and ``s = n_embd_s × cells`` values, both f32
  (``llama_model::create_memory`` passes GGML_TYPE_F32 for both); see :attr:`Architecture.state_r_values` and
  :attr:`Architecture.state_s_values` for ``n_embd_r`` / ``n_embd_s``.
"""

from __future__ import annotations

from dataclasses import dataclass

from vramfit.calc.architecture import Architecture

STATE_VALUE_BYTES = 4  # f32


@dataclass(frozen=True, slots=True)
class RecurrentState:
    """The recurrent-state buffer of one configuration, split as llama.cpp logs it (R and S)."""

    r_bytes: int
    s_bytes: int
    cells: int
    layers: int
    layer_bytes: tuple[int, ...]

    @property
    def total_bytes(self) -> int:
        return self.r_bytes + self.s_bytes


def recurrent_state(arch: Architecture, users: int = 1) -> RecurrentState:
    """The state llama.cpp allocates for ``users`` sequences (nothing for a model without recurrent layers)."""
    cells = max(1, users)
    r_layer = arch.state_r_values * cells * STATE_VALUE_BYTES
    s_layer = arch.state_s_values * cells * STATE_VALUE_BYTES
    per_layer = tuple(r_layer + s_layer if arch.layer_is_recurrent(il) else 0 for il in range(arch.n_layers))
    layers = arch.recurrent_layer_count
    return RecurrentState(
        r_bytes=r_layer * layers, s_bytes=s_layer * layers, cells=cells, layers=layers, layer_bytes=per_layer
    )
