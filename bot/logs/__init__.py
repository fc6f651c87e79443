"""Read what a pasted log says: llama.cpp (and its forks, Ollama's runner), Ollama's server log and ``ollama ps``,
vLLM's start-up, ``nvidia-smi`` and ``rocm-smi``. The text is only read: never run, never fetched from.

:func:`read_log` cleans what people paste (ANSI colour codes, Windows line ends, a size past :data:`MAX_LOG_BYTES`
cut, control characters), finds which programs wrote it, and gives one :class:`LogReading`.
"""

from __future__ import annotations

import re

from vramfit.bot.logs import llamacpp, ollama, smi, vllm
from vramfit.bot.logs.reading import Allocation, GpuSeen, LogReading, is_host

__all__ = ["MAX_LOG_BYTES", "Allocation", "GpuSeen", "LogReading", "is_host", "read_log"]

# A log worth reading is a start-up: tens of KiB. A paste past this is cut (the start-up comes first, so the settings
# and buffers are kept); the bound keeps the reader's time and memory small whatever is pasted.
MAX_LOG_BYTES = 2 << 20
MAX_LINE = 4000  # longer lines (a metadata dump of a tokenizer) are cut: no pattern needs more
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def clean_lines(text: str) -> list[str]:
    """The lines of ``text`` as a reader wants them: at most :data:`MAX_LOG_BYTES`, no colour codes or control
    characters, Windows and old Mac line ends as newlines, each line at most :data:`MAX_LINE` characters."""
    text = text[:MAX_LOG_BYTES]
    text = _ANSI.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    return [_CONTROL.sub("", line)[:MAX_LINE] for line in text.split("\n")]


def read_log(text: str) -> LogReading:
    """What ``text`` says; ``engine`` "" when no reader knows it (a log of an unrelated program)."""
    lines = clean_lines(text)
    joined = "\n".join(lines)
    fields: dict[str, object] = {}
    engine = ""
    if llamacpp.looks_like(joined):
        fields |= llamacpp.read(lines)
        engine = "ik_llama.cpp" if "ik_llama" in joined else "llama.cpp"
    if ollama.looks_like(joined):
        found = ollama.read(lines)
        fields |= found
        engine = "ollama-ps" if "ollama_ps" in found and not engine else "ollama"
    if vllm.looks_like(joined) and not engine:
        found = vllm.read(lines)
        if found["failures"] or set(found) - {"failures", "gpus"}:  # a figure or a failure of vLLM's own, not a word
            fields |= found
            engine = "vllm"
    if smi.looks_like_nvidia(joined):
        seen = smi.read(lines)["gpus"]
        fields["gpus"] = (*fields.get("gpus", ()), *seen)  # type: ignore[misc]
        engine = engine or "nvidia-smi"
    elif smi.looks_like_rocm(joined):
        engine = engine or "rocm-smi"
    fields["engine"] = engine
    failures = fields.get("failures", ())
    fields["failures"] = tuple(dict.fromkeys(tuple(sorted(f.items())) for f in failures))  # type: ignore[attr-defined]
    fields["failures"] = tuple(dict(f) for f in fields["failures"])  # type: ignore[attr-defined]
    reading = LogReading.model_validate(fields)
    if reading.model_copy(update={"engine": ""}) == LogReading():  # the words of a log, none of its lines
        return LogReading()
    return reading
