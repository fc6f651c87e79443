"""LLM_ARCH_GRANITE (Granite 3.x dense): llama's tensors; its multipliers change no shape.

Mirrors llama.cpp 0c1e57098 src/models/granite.cpp and conversion/granite.py GraniteModel. Written from the loader,
not yet checked against a file.
"""

from __future__ import annotations

from vramfit.calc.families.family import Family


class Granite(Family, arch="granite", model_types=("granite",)):
    """Mirrors src/models/granite.cpp, conversion/granite.py GraniteModel (0c1e57098)."""
