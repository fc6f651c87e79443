"""llama.cpp's log lines captured in memory: ``llama_log_set(capture, None)`` (and ``mtmd_log_set`` for the
projector's), then read or clear ``LINES``. The measuring scripts keep only what llama.cpp itself printed."""

from __future__ import annotations

import ctypes

LINES: list[str] = []


@ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
def capture(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
    LINES.append(text.decode("utf-8", "replace"))
