"""What the machine the ``vram`` command runs on has (``vram --detect``): its GPUs and its system RAM.

Read with the tools the systems ship: ``nvidia-smi --query-gpu`` (NVIDIA), ``rocm-smi --json`` (AMD), ``sysctl``
(Apple silicon, and a Mac's RAM), ``/proc/meminfo`` (Linux RAM). Written here rather than with psutil or
nvidia-ml-py: two more dependencies, each for one number that these tools print. Each GPU is matched to a preset by
its name and memory (the size variant nearest its memory), else answered as a card of its memory size. Nothing here
fails: a tool that is missing, slow or prints something else is skipped.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from vramfit.calc.gpu import GIB, Gpu, generic_gpu
from vramfit.calc.presets import Catalog

MIB = 1 << 20  # nvidia-smi's unit
KIB = 1 << 10  # /proc/meminfo's

Runner = Callable[[Sequence[str]], str | None]  # a command's standard output, or None when it cannot run


def run_tool(argv: Sequence[str]) -> str | None:
    """``argv``'s output within 5 s, or None (missing, failed, timed out)."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


@dataclass(frozen=True, slots=True)
class DetectedGpu:
    name: str  # as the tool prints it
    memory_bytes: int
    used_bytes: int
    gpu: Gpu  # the preset it matched, or a card of its memory size


@dataclass(frozen=True, slots=True)
class DetectedMachine:
    gpus: tuple[DetectedGpu, ...]
    ram_bytes: int | None
    sources: tuple[str, ...]  # the tools and files that said it


# Vendor words the tools print that the presets' names do not carry ("NVIDIA GeForce RTX 4090" is "GeForce RTX 4090").
_VENDOR = re.compile(r"^(?:NVIDIA|AMD|Intel\(R\)|Intel)\s+", re.IGNORECASE)


def match_preset(name: str, memory_bytes: int, catalog: Catalog) -> Gpu:
    """The preset of ``name`` whose memory is nearest ``memory_bytes`` (a 3060 of 12 GB, not of 8), or a card of that
    memory size when no preset has the name."""
    found = None
    for candidate in (name, _VENDOR.sub("", name), _VENDOR.sub("", name).replace("GeForce ", "")):
        found = catalog.find_gpu(candidate.strip())
        if found is not None:
            break
    if found is None:
        return generic_gpu(memory_bytes / GIB)
    sizes = [found, *catalog.other_sizes(found)]
    return min(sizes, key=lambda gpu: abs(gpu.memory_bytes - memory_bytes))


def _nvidia(run: Runner, catalog: Catalog) -> list[DetectedGpu]:
    out = run(["nvidia-smi", "--query-gpu=name,memory.total,memory.used", "--format=csv,noheader,nounits"])
    gpus = []
    for line in (out or "").splitlines():
        parts = [part.strip() for part in line.split(",")]
        if len(parts) != 3 or not parts[1].isdigit():
            continue
        total, used = int(parts[1]) * MIB, int(parts[2]) * MIB if parts[2].isdigit() else 0
        gpus.append(DetectedGpu(parts[0], total, used, match_preset(parts[0], total, catalog)))
    return gpus


def _amd(run: Runner, catalog: Catalog) -> list[DetectedGpu]:
    out = run(["rocm-smi", "--showproductname", "--showmeminfo", "vram", "--json"])
    try:
        cards = json.loads(out) if out else {}
    except ValueError:
        return []
    gpus = []
    for card in cards.values() if isinstance(cards, dict) else ():
        if not isinstance(card, dict):
            continue
        name = str(card.get("Card Series") or card.get("Card series") or "")
        total = str(card.get("VRAM Total Memory (B)", ""))
        used = str(card.get("VRAM Total Used Memory (B)", "0"))
        if name and total.isdigit():
            gpus.append(DetectedGpu(name, int(total), int(used) if used.isdigit() else 0,
                                    match_preset(name, int(total), catalog)))  # fmt: skip
    return gpus


def _apple(run: Runner, catalog: Catalog) -> tuple[list[DetectedGpu], int | None]:
    chip = (run(["sysctl", "-n", "machdep.cpu.brand_string"]) or "").strip()
    memory = (run(["sysctl", "-n", "hw.memsize"]) or "").strip()
    ram = int(memory) if memory.isdigit() else None
    if not chip.startswith("Apple") or ram is None:
        return [], ram
    return [DetectedGpu(chip, ram, 0, match_preset(chip, ram, catalog))], ram


def _meminfo(path: Path) -> int | None:
    try:
        text = path.read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    found = re.search(r"^MemTotal:\s+(\d+)\s+kB", text, re.MULTILINE)
    return int(found[1]) * KIB if found else None


def detect(catalog: Catalog, *, run: Runner = run_tool, meminfo: Path = Path("/proc/meminfo")) -> DetectedMachine:
    """The GPUs and RAM of this machine, as its tools report them."""
    sources: list[str] = []
    gpus = _nvidia(run, catalog)
    if gpus:
        sources.append("nvidia-smi")
    amd = _amd(run, catalog)
    if amd:
        sources.append("rocm-smi")
    gpus += amd
    ram = _meminfo(meminfo)
    if ram is not None:
        sources.append(str(meminfo))
    if not gpus:
        apple, mac_ram = _apple(run, catalog)
        if apple or (ram is None and mac_ram is not None):
            sources.append("sysctl")
            gpus, ram = apple, mac_ram
    return DetectedMachine(tuple(gpus), ram, tuple(sources))


def gpu_specs(machine: DetectedMachine) -> list[str]:
    """The GPUs as ``--gpu`` specs, the same model counted ("2x rtx-3090"), in the order they were found; a card no
    preset names by its memory ("24gb")."""
    counts: dict[str, int] = {}
    for found in machine.gpus:
        spec = found.gpu.id if found.gpu.family != "generic" else f"{round(found.memory_bytes / GIB, 1):g}gb"
        counts[spec] = counts.get(spec, 0) + 1
    return [f"{n}x {spec}" if n > 1 else spec for spec, n in counts.items()]


def ram_spec(machine: DetectedMachine) -> str | None:
    """The RAM as a ``--ram`` value, in whole GiB as the system reports it (a 64 GB machine's MemTotal is ~63)."""
    return f"{max(1, round(machine.ram_bytes / GIB))}GB" if machine.ram_bytes else None
