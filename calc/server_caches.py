"""llama-server's host-side caches: context checkpoints and the prompt cache, both in system RAM.

Mirrors tools/server at llama.cpp b11434 (515e855, 2026-10-06):

* **Context checkpoints** (server-context.cpp ``create_checkpoint``): a slot saves a copy of the part of its memory
  that cannot be rolled back, before the last batch of a prompt, when the model cannot remove a sequence's tail
  (``common_context_can_seq_rm``: recurrent and hybrid models), keeps recurrent snapshots (``n_rs_seq``), or has
  sliding-window layers (``n_swa > 0`` without ``--swa-full``). Each is ``llama_state_seq_get_size_ext(ctx, slot,
  LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY)``: one sequence's recurrent state (llama_memory_hybrid writes only the
  recurrent part), or its cells of the sliding-window cache (llama_kv_cache_iswa writes only ``kv_swa``). A slot keeps
  up to ``--ctx-checkpoints`` of them (common/common.h ``n_ctx_checkpoints`` = 32), in host memory
  (``std::vector<uint8_t>``), so 4 slots of a 27B hybrid hold 4 × 32 × 149.6 MiB = 18.7 GiB (unsloth#11073).
* **The prompt cache** (server-task.cpp ``server_prompt_cache``): finished prompts' states (with their checkpoints)
  kept for reuse, up to ``--cache-ram`` MiB (default 8192; the token limit rises to what that size holds, so the
  size is the bound). ``--cache-ram 0`` turns it off; it does not turn off checkpoints (``--ctx-checkpoints 0``
  does).

What a checkpoint holds was measured with llama-server b11434 itself (tests/data/groundtruth/
llamaserver_b11434_checkpoints.jsonl, tools/llamacpp_truth/measure_checkpoints.py).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from vramfit.calc.architecture import Architecture
from vramfit.calc.kv import KvCache
from vramfit.calc.recurrent import RecurrentState

MIB = 1 << 20

CTX_CHECKPOINTS_DEFAULT = 32  # common/common.h at b11434: n_ctx_checkpoints
CACHE_RAM_DEFAULT_BYTES = 8192 * MIB  # common/common.h at b11434: cache_ram_mib
CELL_META_BYTES = 12  # a saved cell's llama_pos, n_seq_id and its one llama_seq_id


class ServerCaches(BaseModel):
    """What llama-server keeps in system RAM besides the model: its context checkpoints and prompt cache, with the
    settings that bound them (the defaults, or the smaller ones a command passes to fit the RAM)."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    checkpoint_bytes: int = Field(description="one context checkpoint: one slot's state that cannot be rolled back")
    ctx_checkpoints: int = Field(description="checkpoints a slot keeps at most (--ctx-checkpoints)")
    slots: int = Field(description="llama-server's slots (-np)")
    cache_ram_bytes: int = Field(description="the prompt cache's limit (--cache-ram, in bytes)")

    @property
    def checkpoints_bytes(self) -> int:
        """Every slot's checkpoints at their limit."""
        return self.checkpoint_bytes * self.ctx_checkpoints * self.slots

    @property
    def total_bytes(self) -> int:
        """Checkpoints and the prompt cache at their limits."""
        return self.checkpoints_bytes + self.cache_ram_bytes

    @property
    def is_default(self) -> bool:
        """Whether these are llama-server's defaults (a command need not name them)."""
        return self.ctx_checkpoints == CTX_CHECKPOINTS_DEFAULT and self.cache_ram_bytes == CACHE_RAM_DEFAULT_BYTES


def checkpoint_bytes(arch: Architecture, kv: KvCache, state: RecurrentState, *, users: int, swa_full: bool,
                     context: int) -> int:  # fmt: skip
    """One slot's checkpoint: its recurrent state where the model has one (a hybrid writes only that part), else the
    window of its sliding-window cache, ``n_swa`` cells of every sliding layer (fewer for a prompt shorter than the
    window; measured: a 128-token window holds 128 cells after prompts of 300 to 2,000 tokens, whatever the
    micro-batch), each with its metadata (llama_kv_cache::state_write_meta: position, sequence count and the
    sequence, 4 bytes each), else nothing: a model whose cache can drop a sequence's tail makes none. The state's own
    headers (a type and row size per layer, under 1 KiB) are left out."""
    if state.total_bytes:
        return state.total_bytes // max(users, 1)
    if arch.sliding_window and not swa_full and kv.swa_bytes and kv.swa_cells:
        return (kv.swa_bytes // kv.swa_cells + CELL_META_BYTES) * min(arch.sliding_window, context)
    return 0


def server_caches(
    checkpoint: int,
    slots: int,
    *,
    room_bytes: int | None = None,
) -> ServerCaches:
    """llama-server's caches at its defaults, or, when they would not fit in ``room_bytes`` (the RAM the model leaves),
    with the prompt cache cut to what is left (whole MiB) and then, if the checkpoints alone do not fit, with the
    prompt cache off and as many checkpoints a slot as fit (0 turns them off: every prompt is read again)."""
    slots = max(slots, 1)
    caches = ServerCaches(
        checkpoint_bytes=checkpoint,
        ctx_checkpoints=CTX_CHECKPOINTS_DEFAULT,
        slots=slots,
        cache_ram_bytes=CACHE_RAM_DEFAULT_BYTES,
    )
    if room_bytes is None or caches.total_bytes <= room_bytes:
        return caches
    left = max(room_bytes, 0) - caches.checkpoints_bytes
    if left >= 0:
        return caches.model_copy(update={"cache_ram_bytes": left // MIB * MIB})
    per_checkpoint_row = checkpoint * slots
    kept = max(room_bytes, 0) // per_checkpoint_row if per_checkpoint_row else CTX_CHECKPOINTS_DEFAULT
    return caches.model_copy(update={"cache_ram_bytes": 0, "ctx_checkpoints": min(kept, CTX_CHECKPOINTS_DEFAULT)})
