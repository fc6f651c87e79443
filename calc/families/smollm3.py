"""LLM_ARCH_SMOLLM3 (SmolLM3-3B): llama's tensors with no biases and no q/k norms.

Mirrors llama.cpp 0c1e57098 src/models/smollm3.cpp: every n_no_rope_layer_step = 4th layer skips RoPE in the graph
(same tensors, same KV cache in every layer); token_embd doubles as the output head when output.weight is absent
(SmolLM3-3B is tied, and its config.json does not say so: SmolLM3Config's default).
"""

from __future__ import annotations

from vramfit.calc.families.family import Family


class Smollm3(Family, arch="smollm3", model_types=("smollm3",), tied_by_default=True):
    """Mirrors src/models/smollm3.cpp, conversion/llama.py SmolLM3Model (0c1e57098)."""
