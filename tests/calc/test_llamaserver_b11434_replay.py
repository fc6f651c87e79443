"""Every setting of the committed llama.cpp rows (measured with 0c1e57098 as a library) loaded again with
llama-server b11434 (tests/data/groundtruth/llamaserver_b11434_replay.jsonl, tools/llamacpp_truth/replay_b11434.py):
its KV caches and recurrent state are vramfit's, and the revisions are compared in LLAMACPP.md's table."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.groundtruth import MIB, llamacpp_rows, replay_rows
from vramfit.calc.hf_config import from_hf_config
from vramfit.calc.kv import kv_cache
from vramfit.calc.recurrent import recurrent_state
from vramfit.calc.request import KvType

ROWS = replay_rows()
CONFIGS = {row["arch_model"]: row["config"] for row in llamacpp_rows()}
SIZE = re.compile(r"size = +([\d.]+) MiB")


def _row_id(row: dict[str, Any]) -> str:
    return "{arch_model}-c{n_ctx}-{type_k}/{type_v}-fa{flash_attn}-s{n_seq}-u{kv_unified}-ub{n_ubatch}".format(
        **row
    ) + ("-swafull" if row["swa_full"] else "")


@pytest.mark.parametrize("row", ROWS, ids=_row_id)
def test_b11434_allocates_the_cache_and_state_vramfit_counts(row: dict[str, Any]) -> None:
    assert row["served"], "llama-server b11434 did not serve this setting"
    arch = from_hf_config(CONFIGS[row["arch_model"]])
    users = int(row["n_seq"])
    # with one slot llama-server keeps one stream whatever -kvu says
    unified = bool(row["kv_unified"]) and users > 1
    cache = kv_cache(arch, int(row["n_ctx"]) // users, users, KvType(row["type_k"]), KvType(row["type_v"]),
                     flash_attn=bool(row["flash_attn"]), n_ubatch=int(row["n_ubatch"]), unified=unified,
                     swa_full=bool(row["swa_full"]))  # fmt: skip
    main = cache.total_bytes - cache.swa_bytes - cache.indexer_bytes
    buffers = [main] + [b for b in (cache.swa_bytes, cache.indexer_bytes) if b]
    if cache.buffers:  # DeepSeek V4: the window, CSA, HCA and indexer caches of llama_kv_cache_dsv4
        buffers = list(cache.buffers)
    # b11434 logs DeepSeek V4's full-attention cache of 0 layers ("size = 0.00 MiB (4096 cells, 0 layers …)") before
    # its window, CSA, HCA and indexer caches: it allocates nothing
    logged = [size for line in row["kv_size_lines"] if (size := float(SIZE.search(line)[1]))]  # type: ignore[index]
    assert [round(b / MIB, 2) for b in buffers] == logged
    state = recurrent_state(arch, users)
    # the buffer's line and the summary's: the summary ("llama_memory_recurrent: size = …") is the state
    summaries = [line for line in row["recurrent_size_lines"] if line.startswith("llama_memory_recurrent: size =")]
    states = [float(SIZE.search(line)[1]) for line in summaries]  # type: ignore[index]
    if not arch.compress_ratios:
        assert round(sum(states), 2) == round(state.total_bytes / MIB, 2)


def test_the_replay_covers_the_committed_models() -> None:
    replayed = {row["arch_model"] for row in ROWS}
    assert len(replayed) >= 30 and replayed <= set(CONFIGS)
