"""Recurrent state: what hybrid and recurrent models hold instead of a KV cache in their non-attention layers.

Mirrors ``llama_memory_recurrent`` (src/llama-memory-recurrent.cpp, llama.cpp 0c1e57098, the revision
llama-cpp-python 0.3.36 vendors), which ``llama_memory_hybrid`` uses for the recurrent layers of Qwen3.5 (Gated
DeltaNet), Granite 4.0 H (Mamba2) and LFM2 (short convolutions):

* one cell per sequence: ``mem_size = max(1, n_seq_max)`` (``n_rs_seq`` rollback snapshots are off by default);
  the state does not grow with the context;
* each recurrent layer holds ``r = n_embd_r × cells`` and ``s = n_embd_s × cells`` values, both f32
  (``llama_model::create_memory`` passes GGML_TYPE_F32 for both); see ``Family.conv_state_values`` and
  :attr:`Architecture.state_s_values` for ``n_embd_r`` / ``n_embd_s``.

DeepSeek V4's compressor state (``llama_dsv4_comp_state``, src/llama-kv-cache-dsv4.cpp) is the same kind of thing:
f32, one plane per sequence (``n_stream = n_seq_max``, ``n_rs_seq`` 0), not growing with the context. Each
compressing layer holds a kv and a score tensor of ``n_embd_state × state_size`` values: CSA layers (ratio 4)
``2·head_dim × 8``, plus the lightning indexer's ``2·index_head_dim × 8``; HCA layers (ratio 128) ``head_dim × 128``.
llama.cpp logs the three (csa, hca, lid) as separate buffers.
"""

from __future__ import annotations

from dataclasses import dataclass

from vramfit.calc.architecture import DSV4_CSA_RATIO, DSV4_HCA_RATIO, Architecture
from vramfit.calc.families import family_of

STATE_VALUE_BYTES = 4  # f32


@dataclass(frozen=True, slots=True)
class RecurrentState:
    """The recurrent-state buffer of one configuration, split as llama.cpp logs it (R and S)."""

    r_bytes: int
    s_bytes: int
    cells: int
    layers: int
    layer_bytes: tuple[int, ...]
    compressor_bytes: tuple[int, ...] = ()  # DeepSeek V4: the csa, hca and lid state buffers, in llama.cpp's order

    @property
    def total_bytes(self) -> int:
        return self.r_bytes + self.s_bytes + sum(self.compressor_bytes)


def recurrent_state(arch: Architecture, users: int = 1) -> RecurrentState:
    """The state llama.cpp allocates for ``users`` sequences (nothing for a model without recurrent layers)."""
    cells = max(1, users)
    if arch.compress_ratios:
        return _dsv4_state(arch, cells)
    r_layer = family_of(arch.arch).conv_state_values(arch) * cells * STATE_VALUE_BYTES
    s_layer = arch.state_s_values * cells * STATE_VALUE_BYTES
    per_layer = tuple(r_layer + s_layer if arch.layer_is_recurrent(il) else 0 for il in range(arch.n_layers))
    layers = arch.recurrent_layer_count
    return RecurrentState(
        r_bytes=r_layer * layers, s_bytes=s_layer * layers, cells=cells, layers=layers, layer_bytes=per_layer
    )


def _dsv4_state(arch: Architecture, streams: int) -> RecurrentState:
    """llama_kv_cache_dsv4's three llama_dsv4_comp_state objects: for each layer its filter keeps, kv and score
    tensors of ``n_embd_state × state_size × streams`` f32 values."""
    csa_layer = 2 * (2 * arch.head_dim_k) * (2 * DSV4_CSA_RATIO) * streams * STATE_VALUE_BYTES
    lid_layer = 2 * (2 * arch.indexer_head_dim) * (2 * DSV4_CSA_RATIO) * streams * STATE_VALUE_BYTES
    hca_layer = 2 * arch.head_dim_k * DSV4_HCA_RATIO * streams * STATE_VALUE_BYTES
    per_layer = tuple(
        csa_layer + lid_layer if r == DSV4_CSA_RATIO else hca_layer if r == DSV4_HCA_RATIO else 0
        for r in arch.compress_ratios
    )
    n_csa = sum(r == DSV4_CSA_RATIO for r in arch.compress_ratios)
    n_hca = sum(r == DSV4_HCA_RATIO for r in arch.compress_ratios)
    buffers = tuple(b for b in (csa_layer * n_csa, hca_layer * n_hca, lid_layer * n_csa) if b)
    return RecurrentState(
        r_bytes=0,
        s_bytes=0,
        cells=streams,
        layers=n_csa + n_hca,
        layer_bytes=per_layer,
        compressor_bytes=buffers,
    )
