"""The log readers on what breaks a backtracking pattern (issue 43): every shape that froze the bot, and the shapes
around each reader's literals, pasted up to the 2 MiB a read takes. A read runs in linear time, so each must read
to its last line within its own CPU deadline (bot.logs.scan.READ_CPU_SECONDS, the reading thread's CPU only); before
the fix the first two shapes took 120 s and 245 s. The deadline itself is checked with a log read at no time at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vramfit.bot.logs import MAX_LINE, MAX_LOG_BYTES, LogReading, clean_lines, llamacpp, ollama, read_log, smi, vllm
from vramfit.bot.logs.scan import CHECK_EVERY

BLOB = "QUJD" * 998  # 3,992 characters of base64, no space in them
# The literal each pattern starts from, and the word before which a device is read
LITERALS = (
    "print_info: ", "llm_load_print_meta: ", "load_tensors: ", "llama_context: ", "llama_new_context_with_model: ",
    "llama_kv_cache: size = 1.00 MiB ", "KV self size = 1.00 MiB ", " KV buffer size", " RS buffer size",
    " compute buffer size", " output buffer size", "offloaded ", "build: ", "buffer type overridden to ",
    "type_k = ", "Device 0: ", "using device ", "allocating ", "pipeline parallelism enabled (n_copies=",
    'msg="model weights" buffer=', "msg=offload ", "architecture=", "NAME  ID  SIZE  PROCESSOR",
    "|   0  ", "NVIDIA-SMI Driver Version ", "Model loading took ", "Graph capturing finished ",
    "gpu_memory_utilization ", "--max-model-len ", "Maximum concurrency for ", "max seq len (",
    "CUDA out of memory. Tried to allocate ", "total_gpu_memory ", "# GPU blocks: ", "memory.available=[",
)  # fmt: skip


def _two_mib(line: str) -> str:
    """``line`` repeated, one a line, up to the most a read takes."""
    return "\n".join([line] * (MAX_LOG_BYTES // (len(line) + 1)))


def _lines(line: str, count: int = 128) -> str:
    """``line`` ``count`` times: enough for a quadratic pattern (a tenth of a second or more a line) to run out of
    the read's time."""
    return "\n".join([line] * count)


SHAPES = {
    "unterminated OSC": "\x1b]a" * (MAX_LOG_BYTES // 3),
    "unterminated CSI": "\x1b[" + "1;" * (MAX_LOG_BYTES // 2),
    "base64 lines": _two_mib(BLOB),
    "one 20 MiB line": "load_tensors: " + "A" * (20 << 20),
    "digits": _two_mib("1" * 3990 + "MiB /"),
    "spaces in an nvidia-smi row": "NVIDIA-SMI\n" + _two_mib("|   0  NVIDIA" + " " * 3900 + "x |"),
    "spaces after a key": _two_mib("print_info: file type = a" + " " * 3900 + "b"),
    "pairs without values": "msg=offload\n" + _two_mib("msg=offload " + "a=" * 1990),
    "unclosed quotes": "msg=offload\n" + _two_mib("msg=offload " + 'a="' * 1300),
    **{f"{literal.strip()} before a blob": _lines(literal + BLOB) for literal in LITERALS},
    **{f"{literal.strip()} repeated": _lines((literal * (MAX_LINE // len(literal) + 1))[:MAX_LINE])
       for literal in LITERALS},
    **{f"a blob before {literal.strip()}": _lines(BLOB + literal + " = 1.0 MiB") for literal in LITERALS},
}  # fmt: skip


@pytest.mark.parametrize("text", SHAPES.values(), ids=SHAPES.keys())
def test_every_shape_is_read_to_its_end_within_the_deadline(text: str) -> None:
    reading = read_log(text)
    assert reading.unread_from_line is None  # the read did not run out of time: it is linear


@pytest.mark.parametrize("reader", [llamacpp, ollama, smi, vllm], ids=lambda m: m.__name__.rsplit(".", 1)[-1])
@pytest.mark.parametrize("literal", LITERALS)
def test_each_reader_alone_reads_a_literal_before_a_blob(reader: object, literal: str) -> None:
    """Every reader, whether or not its engine is detected, on the lines the bot's own read would give it."""
    lines = clean_lines(_lines(literal + BLOB))
    fields = reader.read(lines)  # type: ignore[attr-defined]
    assert isinstance(fields, dict)


def test_a_read_out_of_time_answers_with_what_it_read_and_says_where_it_stopped() -> None:
    log = Path("tests/data/logs/llama.cpp-4070ti+3090ti-full-offload-2024.log").read_text(encoding="utf-8")
    first_line = "print_info: general.name = Read Before The Clock\n"
    last_line = "\nllama_context: n_seq_max = 7\n"
    text = first_line + log * 20 + last_line
    assert text.count("\n") > CHECK_EVERY
    reading = read_log(text, cpu_seconds=0.0)
    # nothing is read past the first look at the clock, and that is said; what came before it is kept
    assert reading.unread_from_line == CHECK_EVERY + 1
    assert reading.general_name == "Read Before The Clock" and reading.n_seq != 7
    whole = read_log(text)
    assert whole.unread_from_line is None and whole.n_seq == 7


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from([*LITERALS, BLOB[:200], " ", "  ", "=", "1.5", "1.2.3", " MiB", "(", ")", '"', "\n",
                                 "\x1b]", "\x1b[", "\x07", ",", ":"]), max_size=200))  # fmt: skip
def test_any_mix_of_the_readers_words_is_read_without_an_error(pieces: list[str]) -> None:
    reading = read_log("".join(pieces))
    assert isinstance(reading, LogReading)
