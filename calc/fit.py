"""Verdicts: does a footprint fit a GPU, with how much headroom, and how many layers if only partly.

* ``fits``: every layer on the GPU and at least the tight margin left over.
* ``tight``: every layer fits, but with less than the margin: longer prompts, a second program or a desktop
  compositor can push it over. The margin is ``max(512 MiB, 5 %)`` of the memory a model may use, half of
  llama.cpp's own ``--fit-target`` of 1024 MiB on a 20 GB card.
* ``partial``: only some layers fit. llama.cpp (``-ngl N``) and Ollama put the last N repeating layers, with
  their KV cache, on the GPU and run the rest, plus the output layer, on the CPU, at a large cost in speed.
  ``layers`` counts the output layer as llama.cpp does ("offloaded 33/33 layers" for a 32-layer model).
* ``no``: not even one layer fits next to the compute buffer and the runtime.
"""

from __future__ import annotations

from enum import StrEnum

MIB = 1 << 20
TIGHT_MARGIN_MIN_BYTES = 512 * MIB
TIGHT_MARGIN_SHARE = (1, 20)


class Verdict(StrEnum):
    FITS = "fits"
    TIGHT = "tight"
    PARTIAL = "partial"
    NO = "no"


def tight_margin(usable_bytes: int) -> int:
    num, den = TIGHT_MARGIN_SHARE
    return max(TIGHT_MARGIN_MIN_BYTES, usable_bytes * num // den)


def whole_verdict(total_bytes: int, usable_bytes: int) -> Verdict | None:
    """fits / tight when everything is on the GPU, else None (then count layers)."""
    headroom = usable_bytes - total_bytes
    if headroom >= tight_margin(usable_bytes):
        return Verdict.FITS
    if headroom >= 0:
        return Verdict.TIGHT
    return None


def layers_that_fit(layer_bytes: tuple[int, ...], available_bytes: int) -> int:
    """How many of the last layers fit in ``available_bytes`` (llama.cpp offloads from the last layer down)."""
    used = 0
    count = 0
    for size in reversed(layer_bytes):
        if used + size > available_bytes:
            break
        used += size
        count += 1
    return count
