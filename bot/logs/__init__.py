"""Read what a pasted log says: llama.cpp (and its forks, Ollama's runner), Ollama's server log and ``ollama ps``,
vLLM's start-up, ``nvidia-smi`` and ``rocm-smi``. The text is only read: never run, never fetched from.

:func:`read_log` cleans what people paste (ANSI colour codes, Windows line ends, a size past :data:`MAX_LOG_BYTES`
cut, control characters), finds which programs wrote it, and gives one :class:`LogReading`.
"""

from __future__ import annotations

import re

from vramfit.bot.errors import AnswerError
from vramfit.bot.logs import llamacpp, ollama, smi, vllm
from vramfit.bot.logs.reading import Allocation, GpuSeen, LogReading, is_host
from vramfit.bot.logs.scan import READ_CPU_SECONDS, Deadline

__all__ = [
    "MAX_LOG_BYTES", "READ_CPU_SECONDS", "Allocation", "GpuSeen", "LogReading", "is_host", "read_log", "unread_error",
]  # fmt: skip

# A log worth reading is a start-up: tens of KiB. A paste past this is cut (the start-up comes first, so the settings
# and buffers are kept); the bound keeps the reader's time and memory small whatever is pasted.
MAX_LOG_BYTES = 2 << 20
MAX_LINE = 4000  # longer lines (a metadata dump of a tokenizer) are cut before any pattern sees them
# Colour codes (CSI) and terminal titles (OSC, ended by BEL or ESC \). Neither part of either pattern can run past
# the next ESC, so a paste of 2 MB of unterminated "ESC ]" is cleaned in one pass, not one pass per ESC.
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def clean_lines(text: str) -> list[str]:
    """The lines of ``text`` as a reader wants them: at most :data:`MAX_LOG_BYTES`, no colour codes or control
    characters, Windows and old Mac line ends as newlines, each line at most :data:`MAX_LINE` characters."""
    text = text[:MAX_LOG_BYTES]
    text = _ANSI.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    return [_CONTROL.sub("", line[: MAX_LINE * 2])[:MAX_LINE] for line in text.split("\n")]


def read_log(text: str, *, cpu_seconds: float = READ_CPU_SECONDS) -> LogReading:
    """What ``text`` says; ``engine`` "" when no reader knows it (a log of an unrelated program).

    Every line is read once, by each reader whose engine the text shows, in linear time (:mod:`bot.logs.scan`).
    A read that takes more than ``cpu_seconds`` of CPU stops there and answers with what it read
    (``unread_from_line``: the first line it did not read)."""
    lines = clean_lines(text)
    joined = "\n".join(lines)
    is_llama, is_ollama, is_vllm = llamacpp.looks_like(joined), ollama.looks_like(joined), vllm.looks_like(joined)
    is_nvidia = smi.looks_like_nvidia(joined)
    is_rocm = not is_nvidia and smi.looks_like_rocm(joined)
    readers: list[tuple[str, llamacpp.Reader | ollama.Reader | vllm.Reader | smi.Reader]] = []
    if is_llama:
        readers.append(("llama.cpp", llamacpp.Reader()))
    if is_ollama:
        readers.append(("ollama", ollama.Reader()))
    if is_vllm and not is_llama and not is_ollama:
        readers.append(("vllm", vllm.Reader()))
    if is_nvidia:
        readers.append(("nvidia-smi", smi.Reader()))
    deadline = Deadline(cpu_seconds)
    if readers:
        for i, line in enumerate(lines):
            if deadline.passed(i):
                break
            for _engine, reader in readers:
                reader.feed(i, line, lines)
    fields: dict[str, object] = {}
    engine = ""
    for name, reader in readers:
        found = reader.fields()
        if name == "llama.cpp":
            fields |= found
            engine = "ik_llama.cpp" if "ik_llama" in joined else "llama.cpp"
        elif name == "ollama":
            fields |= found
            engine = "ollama-ps" if "ollama_ps" in found and not engine else "ollama"
        elif name == "vllm":
            if found["failures"] or set(found) - {"failures", "gpus"}:  # a figure or a failure of vLLM's own
                fields |= found
                engine = "vllm"
        else:
            fields["gpus"] = (*fields.get("gpus", ()), *found["gpus"])  # type: ignore[misc]
            engine = engine or "nvidia-smi"
    if is_rocm:
        engine = engine or "rocm-smi"
    fields["engine"] = engine
    failures = fields.get("failures", ())
    fields["failures"] = tuple(dict.fromkeys(tuple(sorted(f.items())) for f in failures))  # type: ignore[attr-defined]
    fields["failures"] = tuple(dict(f) for f in fields["failures"])  # type: ignore[attr-defined]
    reading = LogReading.model_validate(fields)
    if reading.model_copy(update={"engine": ""}) == LogReading():  # the words of a log, none of its lines
        reading = LogReading()
    if deadline.stopped_at is not None:
        reading = reading.model_copy(update={"unread_from_line": deadline.stopped_at + 1})
    return reading


def unread_error(reading: LogReading) -> AnswerError:
    """What to answer for a text with no engine's line in it: "not a log", or, when the read ran out of time before
    finding one, where it stopped."""
    if reading.unread_from_line is not None:
        return AnswerError("log_not_read_in_time", f"no engine's line before line {reading.unread_from_line}",
                           subject=f"{reading.unread_from_line - 1:,}")  # fmt: skip
    return AnswerError("not_a_log", "no engine's log lines")
