"""Every shape of llama-server command a card prints, started with llama-server b11434 itself: each must load and
serve, and none may use a flag that llama-server calls deprecated.

The commands come from ``vram --json`` for real presets (what a card prints); their model files are swapped for tiny
all-zero GGUFs of the same kind, written with tools/llamacpp_truth (a few narrow layers; the flags are what is under
test, not the sizes, which tests/calc/test_llamaserver_b11434.py checks against measured rows). Runs where
``VRAMFIT_LLAMA_SERVER`` names a llama-server built from llama.cpp b11434 (tests/data/groundtruth/LLAMACPP.md says how)
and the ``gguf`` package is installed; skips with that reason elsewhere.
"""

from __future__ import annotations

import importlib
import importlib.util
import io
import json
import logging
import os
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.groundtruth import REPO_ROOT
from vramfit.bot.cli import run

SERVER = Path(os.environ.get("VRAMFIT_LLAMA_SERVER", "/nonexistent"))
needs_server = pytest.mark.skipif(
    not SERVER.is_file(),
    reason="set VRAMFIT_LLAMA_SERVER to a llama-server built from llama.cpp b11434 (tests/data/groundtruth/"
    "LLAMACPP.md) to start the cards' commands",
)
TOOL = REPO_ROOT / "tools" / "llamacpp_truth"
NARROW = {"hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4, "num_key_value_heads": 2,
          "head_dim": 64, "vocab_size": 4096, "gguf_vocab_size": 4096, "num_hidden_layers": 4, "sliding_window": 128,
          "moe_intermediate_size": 128, "num_experts": 8, "num_experts_per_tok": 2}  # fmt: skip

# (card flags, the kind of tiny model each file argument gets); every flag a card's llama-server command can carry
SHAPES = [
    (["--model", "qwen3-8b", "--gpu", "rtx-4090"], {"-m": "dense"}),
    (["--model", "qwen3-8b", "--gpu", "rtx-4090", "--users", "4"], {"-m": "dense"}),
    (["--model", "qwen3-8b", "--gpu", "rtx-4090", "--users", "2", "--kv-unified", "off"], {"-m": "dense"}),
    (["--model", "qwen3-8b", "--gpu", "rtx-4090", "--kv-cache", "q8_0"], {"-m": "dense"}),
    (["--model", "qwen3-8b", "--gpu", "rtx-4090", "--kv-cache", "q8_0", "--flash-attn", "off"], {"-m": "dense"}),
    (["--model", "qwen3-8b", "--gpu", "rtx-4090", "--ubatch", "1024", "--batch", "4096"], {"-m": "dense"}),
    (["--model", "llama-3.3-70b", "--gpu", "rtx-3060", "--ram", "64"], {"-m": "dense"}),  # -ngl N
    (["--model", "qwen3-30b-a3b", "--gpu", "rtx-3060", "--context", "32768"], {"-m": "moe"}),  # --n-cpu-moe N
    (["--model", "qwen3-8b", "--gpu", "rtx-4090", "--draft", "qwen3-0.6b"], {"-m": "dense", "-md": "draft"}),
    (["--model", "qwen3.5-9b", "--gpu", "rtx-4090", "--mtp"], {"-m": "mtp"}),
    (["--model", "gemma-3-4b", "--gpu", "rtx-4090", "--mmproj"], {"-m": "window", "--mmproj": "mmproj"}),
    (["--model", "gemma-3-4b", "--gpu", "rtx-4090", "--swa-full"], {"-m": "window"}),
    # --ctx-checkpoints, --cache-ram
    (["--model", "gemma-4-31b", "--gpu", "rtx-4090", "--ram", "16"], {"-m": "window"}),
]


def _narrow(config: dict[str, object]) -> dict[str, object]:
    return {**config, **{k: v for k, v in NARROW.items() if k in config or k == "num_hidden_layers"}}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """Tiny GGUFs by kind: dense (Qwen3), its draft (the same tokenizer), MoE (Qwen3 MoE), a sliding window (Gemma 3)
    and its vision projector, and one with an MTP head (Qwen3.5 0.8B, real widths: its writer needs them)."""
    gguf = pytest.importorskip("gguf")
    folder = tmp_path_factory.mktemp("gguf")
    sys.path.insert(0, str(TOOL))
    logging.getLogger("gguf").setLevel(logging.ERROR)
    try:
        tools = {name: importlib.import_module(name) for name in ("archs", "gen_gguf", "measure_mmproj")}
        archs: ModuleType = tools["archs"]
        write = tools["gen_gguf"].write_gguf
        made = {
            "dense": ("Qwen3-0.6B", True),
            "draft": ("Qwen3-0.6B", True),
            "moe": ("Qwen3-30B-A3B", True),
            "window": ("Gemma-3-4B", True),
            "mtp": ("Qwen3.5-0.8B-Base", False),
        }
        paths = {}
        for kind, (model, narrow) in made.items():
            config = dict(archs.model_config(model))
            paths[kind] = folder / f"{kind}.gguf"
            write(model, str(paths[kind]), _narrow(config) if narrow else config)
        paths["mmproj"] = folder / "mmproj.gguf"
        tools["measure_mmproj"].write_mmproj(str(paths["mmproj"]), "gemma3", NARROW["hidden_size"], gguf)
        yield paths
    finally:
        sys.path.remove(str(TOOL))
        for name in ("archs", "arch_builders", "gen_gguf", "measure_mmproj"):
            sys.modules.pop(name, None)


def _card_command(flags: list[str]) -> list[str]:
    out = io.StringIO()
    assert run(["--json", *flags], out) == 0, out.getvalue()[-500:]
    command: str = json.loads(out.getvalue())["commands"]["llama_server"]
    return shlex.split(command)


def _serve(argv: list[str]) -> tuple[bool, str]:
    """Start ``argv`` as the measuring tool starts llama-server (tools/llamacpp_truth/llama_server.py); True once it
    served. The log comes back either way."""
    spec = importlib.util.spec_from_file_location("llama_server", TOOL / "llama_server.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    served: list[int] = []
    log: str = tool.run_server(SERVER, argv[1:], served.append, timeout=300.0)
    return bool(served), log


@needs_server
@pytest.mark.parametrize(("flags", "swaps"), SHAPES, ids=[" ".join(flags[1:]) for flags, _ in SHAPES])
def test_the_cards_command_starts_llama_server(files: dict[str, Path], flags: list[str], swaps: dict[str, str]) -> None:
    argv = _card_command(flags)
    assert argv[0] == "llama-server"
    for flag, kind in swaps.items():
        assert flag in argv, (flag, argv)
        argv[argv.index(flag) + 1] = str(files[kind])
    served, log = _serve(argv)
    assert served, log[-3000:]
    assert "deprecated" not in log.lower(), [line for line in log.splitlines() if "deprecated" in line.lower()]
    assert "invalid argument" not in log and "error: unknown" not in log.lower()


def test_the_shapes_cover_every_flag_a_card_prints() -> None:
    """The flags the commands above print, against the ones bot/answering/commands.py can print (-hf and
    --no-mmproj need the Hub, so they are left to tests/bot)."""
    printed = {arg for flags, _ in SHAPES for arg in _card_command(flags) if arg.startswith("-")}
    expected = {"-m", "-c", "-ngl", "-fa", "-np", "-kvu", "--no-kv-unified", "-ctk", "-ctv", "-ub", "-b",
                "--n-cpu-moe", "-md", "-ngld", "--spec-type", "--mmproj", "--swa-full", "--ctx-checkpoints",
                "--cache-ram"}  # fmt: skip
    assert expected <= printed, expected - printed
    # deprecated at b11434: --mmap/--no-mmap for --load-mode (PR #20834), the row split (-sm row), --defrag-thold
    # (common/arg.cpp warns "DEPRECATED"); llama-server prints no word for the first two, so the check is here
    assert not printed & {"--mmap", "--no-mmap", "-sm", "--split-mode", "-dt", "--defrag-thold"}
