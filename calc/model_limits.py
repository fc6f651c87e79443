"""What a model was trained for, beside what memory allows: its training context (config.json's
``max_position_embeddings``, llama.cpp's ``n_ctx_train``), or the longer context a RoPE scaling its config declares
reaches (YaRN ×4 on a 32K model: 128K; :attr:`calc.architecture.Architecture.context_limit`). Memory may hold a longer
context than that; past it the answers degrade, and llama.cpp warns ("n_ctx_seq > n_ctx_train"), so every answer
compares the two."""

from __future__ import annotations

from vramfit.calc.architecture import Architecture


def beyond_trained_context(arch: Architecture, context: int) -> bool:
    """True when ``context`` tokens per sequence exceed what the model was trained (or scaled) for."""
    return context > arch.context_limit


def usable_context(arch: Architecture, memory_limit: int | None) -> int | None:
    """The largest context worth running: what memory allows, never past the training context."""
    return None if memory_limit is None else min(memory_limit, arch.context_limit)
