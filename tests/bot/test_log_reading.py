"""The log reader against real logs (issue 28): every measured.jsonl row whose quote is an engine's log is read back
to the settings and buffers that row records (the rows were written from those logs by hand, so the expected values
are not the reader's), and the reader's bounds on what people paste.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from vramfit.bot.logs import MAX_LOG_BYTES, LogReading, clean_lines, read_log

ROWS = [json.loads(line) for line in Path("tests/data/groundtruth/measured.jsonl").read_text().splitlines()]
# Rows whose quote is no engine's log: a benchmark's results table (llm-d), transformers / exllama / SGLang output,
# a file size. Listed by engine and source so that a new log row is read by default.
NOT_LOGS = ("transformers", "exllama", "sglang", "gguf file")
LLAMA_ROWS = [r for r in ROWS if r["engine"].startswith(("llama.cpp", "ik_llama.cpp"))]
VLLM_ROWS = [r for r in ROWS if r["engine"] == "vllm" and "llm-d-benchmark" not in r["source"]]
OLLAMA_ROWS = [r for r in ROWS if r["engine"] == "ollama"]


def _close(read: float | None, recorded: float, within: float = 0.011) -> bool:
    return read is not None and abs(read - recorded) <= within


def test_every_row_is_a_log_the_reader_takes_or_named_as_not_one() -> None:
    read = {r["id"] for r in (*LLAMA_ROWS, *VLLM_ROWS, *OLLAMA_ROWS)}
    others = [r for r in ROWS if r["id"] not in read]
    assert all(r["engine"].startswith(NOT_LOGS) or "llm-d-benchmark" in r["source"] for r in others), others
    assert (len(LLAMA_ROWS), len(VLLM_ROWS), len(OLLAMA_ROWS)) == (47, 11, 2)


@pytest.mark.parametrize("row", LLAMA_ROWS, ids=[r["id"] for r in LLAMA_ROWS])
def test_a_llama_cpp_log_reads_back_to_its_row(row: dict[str, Any]) -> None:
    x = read_log(row["quote"])
    assert x.engine in ("llama.cpp", "ik_llama.cpp")
    checked = 0
    for field, read in (("n_ctx", x.n_ctx), ("n_ubatch", x.n_ubatch), ("flash_attn", x.flash_attn),
                        ("ftype_reported", x.file_type), ("gguf_general_name", x.general_name),
                        ("model_params_reported", x.params), ("model_size_reported", x.file_size)):  # fmt: skip
        if row.get(field) is not None and (field != "flash_attn" or read is not None):
            assert read == row[field], field
            checked += 1
    if row.get("layers_offloaded"):
        assert f"{x.layers_on_gpu}/{x.layers_total}" == row["layers_offloaded"]
        checked += 1
    for field, read in (("weights_gpu_mib", x.gpu_model_mib), ("weights_cpu_mib", x.host_model_mib),
                        ("kv_mib", x.kv_total_mib), ("kv_k_mib", x.kv_k_mib), ("kv_v_mib", x.kv_v_mib),
                        ("compute_mib", x.gpu_compute_mib), ("compute_host_mib", x.host_compute_mib)):  # fmt: skip
        if row.get(field) is not None:
            assert _close(read, row[field]), (field, read, row[field])
            checked += 1
    if row.get("output_buffer_mib") is not None:
        assert _close(sum(x.output_mib.values()), row["output_buffer_mib"])
    assert checked >= 3


@pytest.mark.parametrize("row", VLLM_ROWS, ids=[r["id"] for r in VLLM_ROWS])
def test_a_vllm_log_reads_back_to_its_row(row: dict[str, Any]) -> None:
    x = read_log(row["quote"])
    assert x.engine == "vllm"
    checked = 0
    for field, read in (("weights_gib_reported", x.weights_gib), ("kv_gib_reported", x.kv_cache_gib),
                        ("activation_gib_reported", x.activation_gib), ("non_torch_gib_reported", x.non_torch_gib),
                        ("gpu_memory_utilization", x.gpu_memory_utilization)):  # fmt: skip
        if row.get(field) is not None and read is not None:
            assert _close(read, row[field], 0.006), (field, read, row[field])  # the row rounds to 0.01
            checked += 1
    if "max seq len" in row["quote"]:
        assert x.max_model_len == row["n_ctx"] and x.failures and x.failures[0].what == "vllm_kv"
        checked += 1
    if "GPU blocks" in row["quote"] or "KV cache size" in row["quote"]:
        assert x.gpu_blocks or x.kv_tokens
        checked += 1
    assert checked >= 1


@pytest.mark.parametrize("row", OLLAMA_ROWS, ids=[r["id"] for r in OLLAMA_ROWS])
def test_ollamas_own_estimate_reads_back_to_its_row(row: dict[str, Any]) -> None:
    x = read_log(row["quote"])
    estimate = row["ollama_estimate"]

    def gib(text: str) -> float:
        number, unit = text.split()
        return float(number) / (1024 if unit == "MiB" else 1)

    assert x.engine == "ollama" and x.n_seq is None
    assert _close(x.ollama_required_full_gib, gib(estimate["memory.required.full"]), 0.001)
    assert _close(x.ollama_kv_gib, gib(estimate["memory.required.kv"]), 0.001)
    assert _close(x.ollama_weights_gib, gib(estimate["memory.weights.total"]), 0.001)
    assert _close(x.ollama_graph_full_gib, gib(estimate["memory.graph.full"]), 0.001)


def test_failed_allocations_say_what_they_were_for() -> None:
    log = (
        "llama_kv_cache_init:      CUDA0 KV buffer size =  4096.00 MiB\n"
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4507.00 MiB on device 0: cudaMalloc failed: out of "
        "memory\n"
        "ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 4725932032\n"
        "llama_new_context_with_model: failed to allocate compute buffers\n"
    )
    ((failed,),) = (read_log(log).failures,)
    assert (failed.what, failed.device, failed.mib) == ("compute", "device 0", 4507.0)


def test_what_people_paste_is_cleaned_and_bounded() -> None:
    coloured = "\x1b[32mllama_context: n_ctx         = 8192\x1b[0m\r\nload_tensors: offloaded 29/41 layers to GPU\r\n"
    x = read_log(coloured)
    assert (x.n_ctx, x.layers_on_gpu, x.layers_total) == (8192, 29, 41)
    assert read_log("Traceback (most recent call last):\n  File x\nKeyError: 1\n") == LogReading()
    assert read_log(b"\x00\x01\xff\xfe".decode("latin-1") * 1000).engine == ""
    huge = "llama_context: n_ctx = 4096\n" + "x" * (20 << 20)
    started = time.perf_counter()
    x = read_log(huge)
    assert x.n_ctx == 4096 and time.perf_counter() - started < 1.0
    assert sum(len(line) for line in clean_lines(huge)) <= MAX_LOG_BYTES


CPU_ROWS = [json.loads(line) for line in Path("tests/data/groundtruth/llamacpp_cpu.jsonl").read_text().splitlines()]


def test_every_log_the_measuring_tool_captured_reads_back_to_its_row() -> None:
    """The 771 llama.cpp loads tools/llamacpp_truth measured: each row keeps the log lines it was read from
    (``log_excerpt``) beside the figures its own parser took (tools/llamacpp_truth/run_truth.py); the log reader must
    find the same settings and buffers. The context is the one llama.cpp printed (it pads 5,000 to 5,120)."""
    wrong = []
    for row in CPU_ROWS:
        x = read_log(row["log_excerpt"])
        printed_ctx = int((row.get("ctx_log_fields") or {}).get("n_ctx_log") or row["n_ctx"])
        expected: list[tuple[str, object, object]] = [
            ("n_ctx", x.n_ctx, printed_ctx), ("n_seq", x.n_seq, row["n_seq"]),
            ("n_ubatch", x.n_ubatch, row["n_ubatch"]), ("n_batch", x.n_batch, row["n_batch"]),
            ("type_k", x.type_k, row["type_k"]),
            ("flash_attn", x.flash_attn, row["flash_attn"]), ("weights", x.model_mib, row["weights_buffers_mib"]),
            ("kv_unified", x.kv_unified, row["kv_unified"]),
        ]  # fmt: skip
        for name, read, recorded in (("kv", x.kv_total_mib, row["kv_buffer_mib"]),
                                     ("compute", sum(x.compute_mib.values()), row["compute_buffer_mib"]),
                                     ("output", sum(x.output_mib.values()), row["output_buffer_mib"])):  # fmt: skip
            if recorded is not None and not _close(read, recorded):
                wrong.append((row["arch_model"], row["quant"], row["n_ctx"], name, read, recorded))
        wrong += [(row["arch_model"], row["n_ctx"], name, read, recorded)
                  for name, read, recorded in expected if recorded is not None and read != recorded]  # fmt: skip
    assert len(CPU_ROWS) == 771 and wrong == []
