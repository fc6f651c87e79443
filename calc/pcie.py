"""PCIe: how fast the host link of a discrete GPU moves bytes, from its generation and lane count.

A PCIe 3.0, 4.0 or 5.0 lane signals at 8, 16 or 32 GT/s and carries 128 bits of data in every 130 (the 128b/130b line
code of PCIe 3.0 and later), one bit per transfer and direction: a 4.0 x16 link moves 16 × 16 × 128/130 / 8 =
31.5 GB/s each way, a 5.0 x16 link 63.0 GB/s. Packet headers take a few per cent more; what a copy reaches of this is
the fitted efficiency of :mod:`calc.speed` (``PCIE_CALIBRATION``).

The presets carry a card's link where its vendor states it (``pcie_gen``, ``pcie_lanes`` with ``pcie_source``); a
GPU without one is taken as a PCIe 4.0 x16 card (:data:`ASSUMED_LINK`), and the answer says it assumed so.
"""

from __future__ import annotations

# GT/s per lane by PCIe generation (PCI-SIG base specifications 3.0, 4.0, 5.0); each codes 128 data bits in 130.
TRANSFER_RATE_GTS: dict[int, float] = {3: 8.0, 4: 16.0, 5: 32.0}
ASSUMED_LINK = (4, 16)  # a GPU whose preset states no link: PCIe 4.0 x16 (2020-2024 cards, most boards' x16 slot)


def link_gbs(gen: int, lanes: int) -> float:
    """One direction's raw data rate of a PCIe ``gen`` link of ``lanes`` lanes, in GB/s (decimal); 0 when unknown."""
    rate = TRANSFER_RATE_GTS.get(gen, 0.0)
    return rate * lanes * 128 / 130 / 8


def link_label(gen: int, lanes: int) -> str:
    """ "PCIe 4.0 x16" """
    return f"PCIe {gen}.0 x{lanes}"
