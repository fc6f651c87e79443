"""llama-server's host caches (calc.server_caches): context checkpoints sized as llama-server b11434 logs them, the
prompt cache at its limit, and both cut to the RAM a model leaves."""

from __future__ import annotations

from typing import Any

import pytest

from tests.groundtruth import GIB, MIB, server_checkpoint_rows
from vramfit.calc.estimate import answer
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.kv import kv_cache
from vramfit.calc.presets import load_catalog
from vramfit.calc.recurrent import recurrent_state
from vramfit.calc.request import GpuChoice, Request
from vramfit.calc.server_caches import (
    CACHE_RAM_DEFAULT_BYTES,
    CTX_CHECKPOINTS_DEFAULT,
    checkpoint_bytes,
    server_caches,
)

ROWS = server_checkpoint_rows()
HEADERS = 1024  # the state's own headers (a cell count, a type and row size per layer): a few hundred bytes
ROUNDING = MIB // 2000  # the log prints MiB to 3 decimals: ±0.0005 MiB


def _row_id(row: dict[str, Any]) -> str:
    return f"{row['model']}-np{row['slots']}"


@pytest.mark.parametrize("row", ROWS, ids=_row_id)
def test_a_checkpoint_is_what_llama_server_logs_for_it(row: dict[str, Any]) -> None:
    """Every measured model: the largest checkpoint llama-server b11434 logged (``created context checkpoint … size
    = X MiB``, after prompts longer than any window) is the rule's size, to within the state's headers; a model that
    can drop a sequence's tail (full attention only) logs none and the rule says 0."""
    arch = from_hf_config(row["config"])
    kv = kv_cache(arch, row["context"], row["slots"], n_ubatch=row["n_ubatch"])
    state = recurrent_state(arch, row["slots"])
    expected = checkpoint_bytes(arch, kv, state, users=row["slots"], swa_full=False, context=row["context"])
    logged = [round(c["mib"] * MIB) for c in row["checkpoints_mib"]]
    if not logged:
        assert expected == 0
        return
    assert expected > 0
    assert -ROUNDING <= max(logged) - expected <= HEADERS + ROUNDING, (max(logged), expected)


def test_the_measured_rows_cover_each_kind_of_checkpoint() -> None:
    """The rows hold a window (sliding-window model), recurrent states (Gated DeltaNet, Mamba2, short convolutions),
    two slots, and a model that makes none."""
    kinds = set()
    for row in ROWS:
        arch = from_hf_config(row["config"])
        if not row["checkpoints_mib"]:
            kinds.add("none")
        elif arch.recurrent_layer_count:
            kinds.add("recurrent")
        elif arch.sliding_window:
            kinds.add("window")
        if row["slots"] > 1:
            kinds.add("slots")
    assert kinds == {"none", "recurrent", "window", "slots"}


def test_four_slots_of_a_27b_hybrid_hold_what_users_report() -> None:
    """unsloth#11073: Qwen3.8-27B with 4 slots, 149.6 MiB a checkpoint, 18.7 GiB of host RAM for 32 a slot. The
    Qwen3.6 27B preset has the same recurrent layers (48 Gated DeltaNet layers of 16 key heads and 48 value heads of
    128): (3 × (2 × 16 + 48) × 128 + 48 × 128 × 128) × 4 B × 48 = 156,893,184 B = 149.625 MiB."""
    catalog = load_catalog()
    request = Request(model=catalog.models["qwen3.6-27b"].ref(), context=159_744 // 4, users=4,
                      gpus=(GpuChoice(gpu=catalog.gpu("rtx-5090")),))  # fmt: skip
    fit = answer(request).fits[0]
    caches = fit.server_caches
    assert caches is not None
    assert caches.checkpoint_bytes == (3 * (2 * 16 + 48) * 128 + 48 * 128 * 128) * 4 * 48 == 156_893_184
    assert round(caches.checkpoint_bytes / MIB, 1) == 149.6
    assert caches.slots == 4 and caches.ctx_checkpoints == CTX_CHECKPOINTS_DEFAULT
    assert round(caches.checkpoints_bytes / GIB, 1) == 18.7


@pytest.mark.parametrize(
    ("room_gib", "expected"),
    [
        # (checkpoints a slot, prompt cache MiB): 2 slots × 32 × 100 MiB = 6,400 MiB of checkpoints
        (None, (32, 8192)),  # no RAM size: the defaults
        (20, (32, 8192)),  # 6,400 + 8,192 MiB = 14,592 MiB fit in 20 GiB
        (10, (32, 10 * 1024 - 6400)),  # the prompt cache gets what the checkpoints leave: 3,840 MiB
        (5, (25, 0)),  # 5,120 MiB hold 25 rows of 2 × 100 MiB; the prompt cache is off
        (0, (0, 0)),  # no room: both off
    ],
)
def test_the_caches_are_cut_to_the_room_the_model_leaves(room_gib: int | None, expected: tuple[int, int]) -> None:
    caches = server_caches(100 * MIB, 2, room_bytes=None if room_gib is None else room_gib * GIB)
    assert (caches.ctx_checkpoints, caches.cache_ram_bytes // MIB) == expected
    if room_gib is not None:
        assert caches.total_bytes <= room_gib * GIB


def test_a_model_without_checkpoints_keeps_only_the_prompt_cache() -> None:
    caches = server_caches(0, 4)
    assert caches.checkpoints_bytes == 0 and caches.total_bytes == CACHE_RAM_DEFAULT_BYTES == 8192 * MIB
    assert caches.is_default
