"""System RAM speed: the bandwidth that weights kept in system RAM are read at, once per generated token.

A desktop's memory bandwidth is its channels × 8 bytes (a 64-bit channel) × the transfer rate in MT/s: two channels
of DDR4-3200 are 2 × 8 × 3200 = 51.2 GB/s ("DDR4-3200 with an effective clock of 3,200 MHz and 25.6 GB/s per channel.
In dual-channel configuration, the data rate increases to 51.2 GB/s",
https://www.thefpsreview.com/2019/05/24/amd-ryzen-3000-cpus-will-officially-support-ddr4-3200-memory/). Desktops
have two channels; workstations four or eight, servers up to twelve. A question that names the kind but not its rate
gets the rate desktop processors support without overclocking: DDR4-3200 (AMD Ryzen 3000 and later, the same page)
and DDR5-5600 ("The Ryzen 9000 series will support DDR5 memory, with speeds ranging from DDR5-5600 by default",
https://www.indiekings.com/2024/06/amd-ryzen-9000-zen-5-cpus-enhanced-ddr5.html). One that names nothing gets two
channels of DDR5-5600, a 2026 desktop, and the answer says so. :mod:`calc.speed` reads the host side at this bandwidth
times its fitted host efficiency.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

RamKind = Literal["ddr4", "ddr5"]

# The rate a kind is taken at when the question gives none (the sources in the module docstring).
TYPICAL_MTS: dict[RamKind, int] = {"ddr4": 3200, "ddr5": 5600}
DESKTOP_CHANNELS = 2
MAX_CHANNELS = 16
# DDR4 runs 1600-5333 MT/s (JEDEC's grades and overclocked kits), DDR5 4000-9600 and more: outside these a number
# next to the kind is not its rate.
MTS_RANGE: dict[RamKind, tuple[int, int]] = {"ddr4": (1600, 5600), "ddr5": (3200, 12800)}


class RamSpeed(BaseModel):
    """One system's memory: its kind, transfer rate and channels."""

    model_config = ConfigDict(frozen=True)

    kind: RamKind
    mts: int = Field(gt=0, le=12800, description="transfer rate, MT/s (the number in DDR5-5600)")
    channels: int = Field(default=DESKTOP_CHANNELS, ge=1, le=MAX_CHANNELS, description="64-bit memory channels")

    @model_validator(mode="after")
    def _rate_of_its_kind(self) -> RamSpeed:
        low, high = MTS_RANGE[self.kind]
        if not low <= self.mts <= high:
            raise ValueError(f"{self.kind.upper()} runs at {low}-{high} MT/s, not {self.mts}")
        return self

    @property
    def bandwidth_gbs(self) -> float:
        """Peak bandwidth in GB/s (decimal): channels × 8 bytes × MT/s."""
        return self.channels * 8 * self.mts / 1000

    @property
    def name(self) -> str:
        """The module's name as it is sold: "DDR5-5600"."""
        return f"{self.kind.upper()}-{self.mts}"


def typical(kind: RamKind, channels: int = DESKTOP_CHANNELS) -> RamSpeed:
    """``kind`` at the rate desktops run it without overclocking (:data:`TYPICAL_MTS`)."""
    return RamSpeed(kind=kind, mts=TYPICAL_MTS[kind], channels=channels)


ASSUMED_RAM_SPEED = typical("ddr5")
