"""``vram --detect``: this machine's GPUs and RAM, read from a fake nvidia-smi, rocm-smi and sysctl (real scripts on a
PATH of their own, run as the real tools are) and a fake /proc/meminfo."""

from __future__ import annotations

import io
import json
import stat
from pathlib import Path

import pytest

from vramfit.bot.cli import run
from vramfit.bot.detect import detect, gpu_specs, ram_spec
from vramfit.calc.presets import load_catalog

GIB = 1 << 30
MIB = 1 << 20
MEMINFO = "MemTotal:       65758204 kB\nMemFree:        1048576 kB\n"  # a 64 GB machine: 62.7 GiB after the kernel's


def _tool(folder: Path, name: str, output: str, status: int = 0) -> None:
    script = folder / name
    script.write_text(f"#!/bin/sh\ncat <<'END'\n{output}\nEND\nexit {status}\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH with only /bin (for sh) and the fake tools a test writes, and a fake /proc/meminfo."""
    tools = tmp_path / "bin"
    tools.mkdir()
    monkeypatch.setenv("PATH", f"{tools}:/bin")
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(MEMINFO, encoding="ascii")
    monkeypatch.setenv("VRAMFIT_MEMINFO", str(meminfo))
    return tools


@pytest.mark.parametrize(
    ("smi", "specs"),
    [
        # nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv,noheader,nounits (MiB)
        ("NVIDIA GeForce RTX 4090, 24564, 1210", ["rtx-4090"]),
        ("NVIDIA GeForce RTX 3060, 12288, 5", ["rtx-3060-12gb"]),  # the size variant nearest its memory
        ("NVIDIA GeForce RTX 3060, 8192, 5", ["rtx-3060-8gb"]),
        ("NVIDIA GeForce RTX 3090, 24576, 0\nNVIDIA GeForce RTX 3090, 24576, 0", ["2x rtx-3090"]),
        ("NVIDIA GeForce RTX 4090, 24564, 0\nNVIDIA GeForce RTX 3060, 12288, 0", ["rtx-4090", "rtx-3060-12gb"]),
        ("NVIDIA Made Up 9000, 20480, 0", ["20gb"]),  # no preset: a card of its memory
    ],
)
def test_nvidia_gpus_are_matched_to_presets(machine: Path, smi: str, specs: list[str]) -> None:
    _tool(machine, "nvidia-smi", smi)
    found = detect(load_catalog(), meminfo=machine.parent / "meminfo")
    assert gpu_specs(found) == specs
    assert found.ram_bytes == 65758204 * 1024 and ram_spec(found) == "63GB"
    assert found.sources == ("nvidia-smi", str(machine.parent / "meminfo"))
    assert found.gpus[0].used_bytes == int(smi.split(", ")[2].split("\n")[0]) * MIB


def test_amd_gpus_from_rocm_smi(machine: Path) -> None:
    cards = {"card0": {"Card Series": "Radeon RX 7900 XTX", "VRAM Total Memory (B)": str(24 * GIB),
                       "VRAM Total Used Memory (B)": str(GIB)}}  # fmt: skip
    _tool(machine, "rocm-smi", json.dumps(cards))
    found = detect(load_catalog(), meminfo=machine.parent / "meminfo")
    assert gpu_specs(found) == ["rx-7900-xtx"] and found.gpus[0].used_bytes == GIB
    assert "rocm-smi" in found.sources


def test_apple_silicon_from_sysctl(machine: Path) -> None:
    script = machine / "sysctl"
    script.write_text('#!/bin/sh\ncase "$2" in\nmachdep.cpu.brand_string) echo "Apple M3 Max";;\n'
                      f'hw.memsize) echo {64 * GIB};;\n*) exit 1;;\nesac\n', encoding="utf-8")  # fmt: skip
    script.chmod(0o755)
    found = detect(load_catalog(), meminfo=machine.parent / "missing")  # a Mac has no /proc/meminfo
    assert gpu_specs(found) == ["apple-m3-max-64gb"] and found.ram_bytes == 64 * GIB
    assert found.sources == ("sysctl",)


def test_a_failing_or_missing_tool_is_skipped(machine: Path) -> None:
    _tool(machine, "nvidia-smi", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver", 9)
    found = detect(load_catalog(), meminfo=machine.parent / "meminfo")
    assert found.gpus == () and found.ram_bytes == 65758204 * 1024


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_vram_detect_answers_for_the_machine_it_found(machine: Path, lang: str) -> None:
    _tool(machine, "nvidia-smi", "NVIDIA GeForce RTX 4090, 24564, 1210")
    out = io.StringIO()
    assert run(["--detect", "gemma 3 27b 16k", "--lang", lang], out) == 0
    text = out.getvalue()
    first = text.splitlines()[0]
    assert first.startswith("🔎 ") and "GeForce RTX 4090 (24.0" in first and "62.7" in first
    assert ("Found on this machine" in first) is (lang == "en") and ("이 컴퓨터에서 찾은 것" in first) is (lang == "ko")
    assert "GeForce RTX 4090" in text.split("\n", 1)[1]  # the answer is for the GPU found
    out = io.StringIO()
    assert run(["--json", "--detect", "gemma 3 27b 16k"], out) == 0
    data = json.loads(out.getvalue())
    assert data["detected"]["gpus"][0] == {"name": "NVIDIA GeForce RTX 4090", "memory_bytes": 24564 * MIB,
                                           "used_bytes": 1210 * MIB, "gpu": "rtx-4090"}  # fmt: skip
    assert [f["gpu"] for f in data["fits"]] == ["rtx-4090"] and data["request"]["ram_bytes"] == 63 * GIB


def test_the_question_or_the_flags_win_over_what_is_found(machine: Path) -> None:
    _tool(machine, "nvidia-smi", "NVIDIA GeForce RTX 4090, 24564, 0")
    out = io.StringIO()
    assert run(["--json", "--detect", "--gpu", "rtx-3060", "--ram", "16GB", "gemma 3 4b"], out) == 0
    data = json.loads(out.getvalue())
    assert [f["gpu"] for f in data["fits"]] == ["rtx-3060-12gb"] and data["request"]["ram_bytes"] == 16 * GIB


def test_nothing_found_says_so_and_answers_the_question(machine: Path) -> None:
    out = io.StringIO()
    assert run(["--detect", "gemma 3 4b on a 3060", "--lang", "en"], out) == 0
    assert out.getvalue().startswith("🔎 Found no GPU on this machine")
    assert "GeForce RTX 3060" in out.getvalue()
