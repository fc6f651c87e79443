"""The terminal's contract under hostile conditions: a closed pipe, a full disk, an ASCII terminal, Ctrl-C during a
Hub read, ``--json`` in every mode, conflicting sources, negative and oversized numbers, and control characters from
a model file. Real processes where the process is what is tested (exit status, stderr, signals)."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.calc.test_gguf import TINY_LLAMA, write_gguf
from tests.fake_hub.hostile import HostileHub
from tests.groundtruth import REPO_ROOT
from vramfit.bot.cli import interactive, run
from vramfit.calc.file_types import FileType

ROOT = REPO_ROOT


def _process(*argv: str, env: dict[str, str] | None = None, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "vramfit.bot.cli", *argv], capture_output=True, cwd=ROOT, check=False, timeout=60,
        env={**os.environ, **(env or {})}, **kwargs,
    )  # fmt: skip


def test_a_closed_pipe_ends_quietly() -> None:
    """``vram --json … | head -c0``: before, a BrokenPipeError traceback and exit 1."""
    reader, writer = os.pipe()
    os.close(reader)  # the reader is gone before the answer is written
    try:
        done = subprocess.run(
            [sys.executable, "-m", "vramfit.bot.cli", "--json", "llama3 8b 32k 3060"],
            stdout=writer, stderr=subprocess.PIPE, cwd=ROOT, check=False, timeout=60,
        )  # fmt: skip
    finally:
        os.close(writer)
    assert b"Traceback" not in done.stderr and done.stderr == b"", done.stderr
    assert done.returncode == 1


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_is_one_line_on_stderr() -> None:
    with open("/dev/full", "wb") as full:
        done = subprocess.run(
            [sys.executable, "-m", "vramfit.bot.cli", "llama3 8b 32k 3060"], stdout=full, stderr=subprocess.PIPE,
            cwd=ROOT, check=False, timeout=60,
        )  # fmt: skip
    assert b"Traceback" not in done.stderr
    assert done.stderr.decode().startswith("vram: cannot write the answer: No space left on device")
    assert done.returncode == 1


def test_an_ascii_terminal_gets_the_korean_answer_without_an_error() -> None:
    env = {"PYTHONIOENCODING": "ascii"}
    text = _process("라마3 8B 32k 3060에서 돌아가?", env=env)
    assert text.returncode == 0 and b"Traceback" not in text.stderr, text.stderr
    assert b"Llama 3 8B" in text.stdout
    as_json = _process("--json", "라마3 8B 32k 3060에서 돌아가?", env=env)
    assert as_json.returncode == 0, as_json.stderr
    data = json.loads(as_json.stdout)  # escaped, whole and valid
    assert data["lang"] == "ko" and max(as_json.stdout) < 128


def test_ctrl_c_during_a_hub_read_is_exit_130_and_a_json_error(tmp_path: Path) -> None:
    with HostileHub(drip_seconds=0.5) as hub:
        env = {"HF_ENDPOINT": hub.url, "VRAMFIT_CACHE_DIR": str(tmp_path), "VRAMFIT_HUB_DEADLINE_SECONDS": "30"}
        # a test runner started as a background job hands on SIGINT ignored (POSIX shells do so for `cmd &`), and
        # Python then installs no KeyboardInterrupt handler: the child takes Ctrl-C's default as a terminal gives it
        proc = subprocess.Popen(
            [sys.executable, "-m", "vramfit.bot.cli", "--json", "evil/drip-listing-GGUF 3060"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env={**os.environ, **env},
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while not hub.hits and time.monotonic() < deadline:  # the read has started
            time.sleep(0.05)
        assert hub.hits, "the CLI never reached the fake Hub"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (out[-600:], err[-600:])
    assert b"Traceback" not in err, err
    assert json.loads(out)["error"]["code"] == "interrupted"


def _json(*argv: str) -> tuple[int, Any]:
    out = io.StringIO()
    status = run(["--json", *argv], out)
    return status, json.loads(out.getvalue())


def test_every_mode_honours_json() -> None:
    status, models = _json("--list-models")
    assert status == 0 and {"id": "llama-3-8b", "name": "Llama 3 8B"} in models["models"]
    status, gpus = _json("--list-gpus")
    assert status == 0 and any(g["id"] == "rtx-3060-12gb" and g["memory_bytes"] == 12 << 30 for g in gpus["gpus"])
    out = io.StringIO()
    assert interactive(out, io.StringIO("llama3 8b 32k 3060\n32k면?\nllama3 8b 3060 -64gb ram\n\n"), as_json=True) == 0
    lines = [json.loads(line) for line in out.getvalue().splitlines()]  # every line JSON: no greeting, no prompt
    assert [("error" in line) for line in lines] == [False, False, True]
    assert lines[1]["request"]["context"] == 32768


def test_two_sources_are_an_error_not_a_silent_choice(tmp_path: Path) -> None:
    gguf = tmp_path / "tiny-Q8_0.gguf"
    write_gguf(gguf, TINY_LLAMA, FileType.Q8_0)
    status, data = _json("--hf", "someone/Model-GGUF", "--gguf", str(gguf))
    assert status == 2 and data["error"]["code"] == "conflicting_sources", data
    assert "--gguf" in data["error"]["message"] and "--hf" in data["error"]["message"]


@pytest.mark.parametrize(
    ("argv", "subject", "suggestions"),
    [
        (["--engine", "foo", "llama3 8b"], "--engine foo", ["llama.cpp", "vllm"]),
        (["--flash-attn", "maybe", "llama3 8b"], "--flash-attn maybe", ["on", "off"]),
        (["--print-completion", "nushell"], "--print-completion nushell", ["bash", "zsh", "tcsh", "fish"]),
        (["--bogus", "llama3 8b"], "--bogus", []),
        (["llama3 8b", "--context"], "--context", []),
    ],
)
def test_a_bad_flag_is_named_with_its_choices(argv: list[str], subject: str, suggestions: list[str]) -> None:
    """Before: every argparse refusal read "That number is out of range or unreadable", in English only."""
    status, data = _json(*argv)
    assert status == 2 and data["error"]["code"] == "bad_flag", data
    offered = data["error"]["suggestions"]  # shtab releases after 1.9 add shells after fish (powershell)
    assert subject in data["error"]["message"] and offered[: len(suggestions) or None] == suggestions
    out = io.StringIO()
    assert run(["--lang", "ko", *argv], out) == 2
    assert f"명령줄에서 받을 수 없는 값이에요: {subject}." in out.getvalue()


@pytest.mark.parametrize(
    ("argv", "subject"),
    [
        (["llama3 8b 3060 -64GB RAM"], "-64gb"),  # before: 64 GB of RAM
        (["--gpu", "-2x 3090", "llama3 8b"], "-2x"),  # before: two GPUs
        (["--gpu", "99999999999999999999x 3090", "llama3 8b"], "99999999999999999999"),  # before: one GPU
        (["--gpu", "3090", "--gpu-count", "1000", "llama3 8b"], "1000"),
        (["llama3 8b 3060 ddr5-999999999999999"], "999999999999999"),
        (["llama3 8b 3060 ddr5 1000000 channel"], "1000000"),  # before: a context of 1,000,000
    ],
)
def test_negative_and_oversized_numbers_are_errors(argv: list[str], subject: str) -> None:
    status, data = _json(*argv)
    assert status == 2 and data["error"]["code"] == "bad_number", data
    assert subject in data["error"]["message"]


def test_one_gpu_count_limit_wherever_it_is_given() -> None:
    _, flag = _json("--gpu", "3090", "--gpu-count", "65", "llama3 8b")
    _, text = _json("llama3 8b 65x 3090")
    _, spec = _json("--gpu", "65x 3090", "llama3 8b")
    messages = {flag["error"]["message"], text["error"]["message"], spec["error"]["message"]}
    assert messages == {"The number of GPUs must be between 1 and 64; you wrote 65."}


NAME = "\x1b]0;pwned\x07\x1b[2J\x1b[HALL CLEAR \u202etxet\u200b Tiny"


def test_control_characters_from_a_gguf_never_reach_the_terminal(tmp_path: Path) -> None:
    gguf = tmp_path / "tiny-Q8_0.gguf"
    write_gguf(gguf, TINY_LLAMA, FileType.Q8_0, name=NAME)
    out = io.StringIO()
    assert run(["--gguf", str(gguf), "8k", "--gpu", "3060"], out) == 0
    shown = out.getvalue()
    assert "ALL CLEAR" in shown  # the name is shown, made inert
    assert not any(ch in shown for ch in "\x1b\x07\u202e\u200b")
    status, data = _json("--gguf", str(gguf), "8k")
    assert status == 0 and not any(ch in data["request"]["model"]["name"] for ch in "\x1b\x07\u202e\u200b")


def test_embeds_drop_bidi_and_zero_width_characters() -> None:
    from vramfit.bot.render.embed import clean

    assert clean("evil\u202eCBA\u200b\u2066x\u2069") == "evilCBAx"
    assert "\x1b" not in clean("a\x1b[2Jb")


def test_version_and_filtered_lists() -> None:
    """Before: `vram --version` was "That number is out of range or unreadable: --version" (exit 2), and
    `--list-models qwen` ignored its filter."""
    from vramfit.bot.version import vramfit_version

    out = io.StringIO()
    assert run(["--version"], out) == 0 and out.getvalue() == f"vram {vramfit_version()}\n"
    assert _json("--version") == (0, {"version": vramfit_version()})
    status, models = _json("--list-models", "qwen3.5")
    assert status == 0 and {m["id"] for m in models["models"]} == {
        "qwen3.5-0.8b", "qwen3.5-2b", "qwen3.5-4b", "qwen3.5-9b", "qwen3.5-27b", "qwen3.5-35b-a3b",
        "qwen3.5-122b-a10b", "qwen3.5-397b-a17b",
    }  # fmt: skip
    status, gpus = _json("--list-gpus", "4090")
    assert status == 0 and [g["id"] for g in gpus["gpus"]] == ["rtx-4090", "rtx-4090-laptop", "rtx-4090-48gb"]


@pytest.mark.parametrize(
    ("argv", "model", "context", "overridden"),
    [
        (["--model", "llama-3.1-8b", "gemma"], "llama-3.1-8b", 8192, [["--model llama-3.1-8b", "gemma"]]),
        (
            ["--model", "llama-3.1-8b", "gemma 3 12b 3060"],
            "llama-3.1-8b",
            8192,
            [["--model llama-3.1-8b", "gemma-3-12b"]],
        ),
        (["--context", "8k", "llama3 8b 32k 3060"], "llama-3-8b", 8192, [["--context 8k", "32768"]]),
        (["llama3 8b 32k 3060"], "llama-3-8b", 32768, None),
    ],
)
def test_flags_win_over_the_text_and_say_so(
    argv: list[str], model: str, context: int, overridden: list[list[str]] | None
) -> None:
    """Before: `vram --model llama-3.1-8b "gemma"` let the text win (an error about gemma)."""
    status, data = _json(*argv)
    assert status == 0, data
    assert data["request"]["model"]["id"] == model and data["request"]["context"] == context
    got = data["request"].get("overridden")
    if overridden is None:
        assert got is None
    else:
        assert [[o["flag"], o["text"]] for o in got] == overridden


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_verdicts_are_coloured_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    terminal = _Terminal()
    assert run(["llama3 8b 32k 3060"], terminal) == 0
    assert "\x1b[32mfits\x1b[0m" in terminal.getvalue()
    offloaded = _Terminal()
    assert run(["llama 3.1 70b 8k 3060 64gb ram"], offloaded) == 0
    assert "\x1b[38;5;208m" in offloaded.getvalue()  # partly on the CPU: orange
    short_of_ram = _Terminal()
    assert run(["llama 3.1 70b 8k 3060"], short_of_ram) == 0  # 32 GiB assumed: the rest does not fit there
    assert "\x1b[31mdoesn't fit\x1b[0m" in short_of_ram.getvalue()  # one verdict, red, as on the card
    monkeypatch.setenv("NO_COLOR", "1")
    plain = _Terminal()
    assert run(["llama3 8b 32k 3060"], plain) == 0
    piped = io.StringIO()
    monkeypatch.delenv("NO_COLOR")
    assert run(["llama3 8b 32k 3060"], piped) == 0
    for text in (plain.getvalue(), piped.getvalue()):
        assert "\x1b[" not in text and not any("\ue000" <= ch <= "\ue00f" for ch in text)
        assert "fits" in text


def test_a_slow_hub_read_shows_a_progress_line_on_a_terminal_and_clears_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with HostileHub() as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.setenv("VRAMFIT_CACHE_DIR", str(tmp_path))
        monkeypatch.setenv("VRAMFIT_HUB_DEADLINE_SECONDS", "1.5")
        stderr = _Terminal()
        monkeypatch.setattr(sys, "stderr", stderr)
        out = io.StringIO()
        assert run(["evil/drip-listing-GGUF 3060"], out) == 2
    shown = stderr.getvalue()
    assert shown.startswith("⏳ Reading the model's file header from Hugging Face or Ollama…")
    assert shown.endswith("\r\x1b[K")  # erased before the answer
    assert "⏳" not in out.getvalue()


def test_no_progress_line_when_stderr_is_not_a_terminal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with HostileHub() as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.setenv("VRAMFIT_CACHE_DIR", str(tmp_path))
        monkeypatch.setenv("VRAMFIT_HUB_DEADLINE_SECONDS", "1.5")
        stderr = io.StringIO()
        monkeypatch.setattr(sys, "stderr", stderr)
        assert run(["evil/drip-listing-GGUF 3060"], io.StringIO()) == 2
    assert stderr.getvalue() == ""


def test_completion_scripts_come_from_the_parser() -> None:
    done = _process("--print-completion", "bash")
    assert done.returncode == 0 and b"--list-models" in done.stdout and b"--kv-cache" in done.stdout


def test_fish_completion_offers_every_option_and_the_engines() -> None:
    """Fish users asked for completion too (shtab ≥ 1.9 writes it): every long option, and --engine's choices."""
    done = _process("--print-completion", "fish")
    assert done.returncode == 0, done.stderr
    script = done.stdout.decode()
    options = {line.split(" -l ")[1].split()[0] for line in script.splitlines() if line.startswith("complete -c vram")
               and " -l " in line}  # fmt: skip
    assert {"model", "hf", "ollama", "kv-cache", "engine", "list-models", "print-completion", "version"} <= options
    assert '-l engine -xka "llama.cpp vllm"' in script


@pytest.mark.parametrize(
    ("question", "programs"),
    [("llama3 8b 32k 3060", {"llama_server", "ollama"}), ("qwen3 8b fp8 8k on an h100 with vllm", {"vllm"}),
     ("llama3 8b 32k 3060 with ollama", {"ollama"}), ("llama 3.1 405b 128k 3060", set())],
)  # fmt: skip
def test_the_json_carries_the_commands_the_card_prints(question: str, programs: set[str]) -> None:
    out = io.StringIO()
    assert run(["--json", question], out) == 0
    commands = json.loads(out.getvalue()).get("commands", {})
    assert set(commands) == programs
    text = io.StringIO()
    run([question], text)
    for command in commands.values():  # the very lines the terminal prints
        assert any(line.strip().endswith(command) for line in text.getvalue().splitlines()), command
    if "llama_server" in commands:  # one user, one slot: llama-server b11434 opens 4 when none is named
        assert commands["llama_server"].split()[-2:] == ["-np", "1"]
