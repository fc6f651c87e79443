"""GPUs: memory and bandwidth of one device, and how much of it a model may use.

Discrete cards expose their whole nominal memory to the engine (the CUDA context and driver reservation are
charged separately, in :mod:`calc.runtime`). Apple Silicon shares one memory pool with the CPU, and macOS lets
Metal wire only part of it: ``recommendedMaxWorkingSetSize`` is about two thirds of RAM on machines with up to
36 GB and three quarters above that (llama.cpp prints it as ``recommendedMaxWorkingSetSize`` on load; the
``iogpu.wired_limit_mb`` sysctl can raise it). vramfit uses that share as the Mac's usable "VRAM". Other
unified-memory machines (segment ``unified``) state the share their GPU may use in the preset (``gpu_share_gib``).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from vramfit.calc.pcie import ASSUMED_LINK, link_gbs

GIB = 1 << 30


class Vendor(StrEnum):
    NVIDIA = "nvidia"
    AMD = "amd"
    INTEL = "intel"
    APPLE = "apple"
    GENERIC = "generic"


class Segment(StrEnum):
    CONSUMER = "consumer"
    LAPTOP = "laptop"
    WORKSTATION = "workstation"
    DATACENTER = "datacenter"
    APPLE = "apple"
    UNIFIED = "unified"  # other machines whose GPU shares the system's memory (Strix Halo, DGX Spark, Jetson)
    GENERIC = "generic"


# Share of unified memory that Metal may wire by default (macOS recommendedMaxWorkingSetSize).
APPLE_SMALL_SHARE = (2, 3)
APPLE_LARGE_SHARE = (3, 4)
APPLE_LARGE_FROM_BYTES = 36 * GIB  # above 36 GB the larger share applies


# Chip classes, by the preset's family: what a speed estimate's band is taken from (benchmarks/speed_accuracy.py leaves
# one machine out at a time and reads each class's spread). A family matching none is "<vendor> other".
_NVIDIA_GENERATIONS = (
    ("Pascal", ("tesla-p", "gtx-10", "p40", "p100")),
    ("Turing", ("rtx-20", "tesla-t4", "t4", "titan-rtx", "quadro-rtx", "gtx-16")),
    ("Ampere", ("rtx-30", "a100", "a40", "a10", "rtx-a", "a30", "a16", "a2")),
    ("Ada", ("rtx-40", "l40", "l4", "rtx-6000-ada", "rtx-4000-ada", "rtx-5000-ada", "rtx-2000-ada")),
    ("Hopper", ("h100", "h200", "gh200")),
    ("Blackwell", ("rtx-50", "dgx-spark", "b200", "b100", "gb200", "rtx-pro")),
)
_AMD_CLASSES = (
    ("RDNA4", ("rx-90", "radeon-ai-pro-r9700")),
    ("RDNA3", ("rx-7", "ryzen-ai-max", "radeon-780m", "radeon-890m", "radeon-pro-w7")),
    ("RDNA2", ("rx-6",)),
    ("RDNA1", ("rx-5",)),
    ("GCN/CDNA", ("mi", "radeon-vii", "vega")),
)


def chip_class(vendor: str, family: str) -> str:
    """ "Apple Max", "NVIDIA Ampere", "AMD RDNA3", "Intel Arc": the kind of chip a GPU of ``family`` is."""
    if vendor == Vendor.APPLE:
        tier = next((t for t in ("ultra", "max", "pro") if f"-{t}" in family), "base")
        return f"Apple {tier if tier == 'base' else tier.capitalize()}"
    if vendor == Vendor.NVIDIA:
        return "NVIDIA " + next((g for g, prefixes in _NVIDIA_GENERATIONS if family.startswith(prefixes)), "other")
    if vendor == Vendor.AMD:
        return "AMD " + next((g for g, prefixes in _AMD_CLASSES if family.startswith(prefixes)), "other")
    return "Intel Arc" if family.startswith("arc") else f"{vendor} other"


class Gpu(BaseModel):
    """One GPU model (a single device); ``count`` lives in the request, not here."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    id: str
    name: str
    family: str = ""
    default: bool = True
    vendor: Vendor = Vendor.NVIDIA
    segment: Segment = Segment.CONSUMER
    backend: str = "cuda"
    memory_bytes: int = Field(gt=0, description="nominal memory of one device")
    bandwidth_gbs: float = Field(default=0.0, ge=0, description="memory bandwidth, GB/s (decimal)")
    released: int = 0
    aliases: tuple[str, ...] = ()
    source: str = ""
    fp16_tflops: float = Field(
        default=0.0,
        ge=0,
        description="dense FP16 tensor throughput, TFLOPS (GeForce: with FP32 accumulate; Apple: GPU FP32); 0: unknown",
    )
    gpu_share_bytes: int = Field(
        default=0, ge=0, description="unified memory: what the GPU may use (0: Apple's Metal share, or all of it)"
    )
    pcie_gen: int = Field(default=0, ge=0, le=5, description="PCIe generation of the host link (0: not stated)")
    pcie_lanes: int = Field(default=0, ge=0, le=16, description="PCIe lanes of the host link (0: not stated)")

    @property
    def chip_class(self) -> str:
        """:func:`chip_class` of this GPU: the class its speed band comes from."""
        return chip_class(self.vendor, self.family or self.id)

    @property
    def pcie_assumed(self) -> bool:
        """True when the preset states no host link, and :data:`calc.pcie.ASSUMED_LINK` stands in for it."""
        return not (self.pcie_gen and self.pcie_lanes)

    @property
    def pcie_link(self) -> tuple[int, int]:
        """(generation, lanes) of the host link: the preset's, else the assumed PCIe 4.0 x16."""
        return ASSUMED_LINK if self.pcie_assumed else (self.pcie_gen, self.pcie_lanes)

    @property
    def pcie_gbs(self) -> float:
        """One direction's data rate of the host link in GB/s (:func:`calc.pcie.link_gbs`)."""
        return link_gbs(*self.pcie_link)

    @property
    def is_unified(self) -> bool:
        return self.vendor == Vendor.APPLE or self.segment == Segment.UNIFIED

    @property
    def usable_bytes(self) -> int:
        """Memory a model may occupy on this device before runtime overhead is charged."""
        if self.gpu_share_bytes:
            return min(self.gpu_share_bytes, self.memory_bytes)
        if self.vendor != Vendor.APPLE:
            return self.memory_bytes
        num, den = APPLE_LARGE_SHARE if self.memory_bytes > APPLE_LARGE_FROM_BYTES else APPLE_SMALL_SHARE
        return self.memory_bytes * num // den

    @property
    def memory_gib(self) -> float:
        return self.memory_bytes / GIB


def generic_gpu(memory_gib: float) -> Gpu:
    """A card known only by its memory size ("a 24 GB card"): CUDA-like, no bandwidth figure."""
    size = round(memory_gib, 2)
    label = f"{size:g}"
    return Gpu(
        id=f"generic-{label}gb",
        name=f"{label} GB GPU",
        family="generic",
        vendor=Vendor.GENERIC,
        segment=Segment.GENERIC,
        memory_bytes=int(size * GIB),
    )


class MachineChip(BaseModel):
    """One chip a machine was sold with, and the memory sizes it came with there (GB, as Apple states them)."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    chip: str = Field(description="a GPU family (Gpu.family)")
    memory_gib: tuple[int, ...] = Field(min_length=1)


class Machine(BaseModel):
    """A computer sold with its GPU built in, named the way its owner names it ("Mac Studio", "맥미니"), with the chips
    it was sold with: newest generation first, and within one the lesser chip first. "Mac Studio 512GB" names no
    chip, but only one chip came in a Mac Studio with 512 GB; the parser reads the first chip in ``sold`` that came
    with the named memory, and says it assumed it."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    id: str
    name: str
    aliases: tuple[str, ...] = ()
    sold: tuple[MachineChip, ...] = Field(min_length=1)
    source: str = ""

    def chip_with(self, memory_gib: float) -> str | None:
        """The family of the first chip sold in this machine with that much memory; None when none was."""
        return next((c.chip for c in self.sold if any(abs(m - memory_gib) < 0.5 for m in c.memory_gib)), None)

    def memory_sizes(self) -> tuple[int, ...]:
        return tuple(sorted({m for c in self.sold for m in c.memory_gib}))
