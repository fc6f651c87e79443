"""Crafted config.json and GGUF files: each is refused with ``bad_file`` naming what is wrong, exit 2, no traceback,
within 1 s and 100 MB (measured here with ``time.perf_counter`` and ``tracemalloc``)."""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vramfit.bot.cli import EXIT_ERROR, run

LLAMA: dict[str, Any] = {
    "model_type": "llama",
    "hidden_size": 512,
    "intermediate_size": 1024,
    "num_hidden_layers": 2,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "vocab_size": 2048,
    "max_position_embeddings": 4096,
}
MOE = {**LLAMA, "model_type": "qwen3_moe", "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 256}
GEMMA2 = {**LLAMA, "model_type": "gemma2", "sliding_window": 4096}
SECOND = 1.0
MEMORY = 100 << 20


def _config(path: Path, **changes: Any) -> None:
    path.write_text(json.dumps({**LLAMA, **changes}))


# (name, writer of the file, words the message must contain)
CONFIGS: list[tuple[str, Callable[[Path], None], str]] = [
    ("hidden 0", lambda p: _config(p, hidden_size=0), "hidden_size"),
    ("vocab 0", lambda p: _config(p, vocab_size=0), "vocab_size"),
    ("context 0", lambda p: _config(p, max_position_embeddings=0), "max_position_embeddings"),
    ("layers 0", lambda p: _config(p, num_hidden_layers=0), "num_hidden_layers"),
    ("layers negative", lambda p: _config(p, num_hidden_layers=-3), "num_hidden_layers"),
    ("layers 10^6", lambda p: _config(p, num_hidden_layers=10**6), "num_hidden_layers"),
    ("layers 10^8", lambda p: _config(p, num_hidden_layers=10**8), "num_hidden_layers"),
    ("layers true", lambda p: _config(p, num_hidden_layers=True), "num_hidden_layers"),
    ("layers fraction", lambda p: _config(p, num_hidden_layers=2.5), "num_hidden_layers"),
    ("heads 0", lambda p: _config(p, num_attention_heads=0), "num_attention_heads"),
    ("heads per layer, wrong length", lambda p: _config(p, num_attention_heads=[8, 8, 8]), "num_attention_heads"),
    ("vocab as a string", lambda p: _config(p, vocab_size="32000"), "vocab_size"),
    ("head_dim 10^9", lambda p: _config(p, head_dim=10**9), "head_dim"),
    ("sliding window 'big'", lambda p: p.write_text(json.dumps({**GEMMA2, "sliding_window": "big"})), "sliding_window"),
    (
        "first_k_dense_replace 'x'",
        lambda p: p.write_text(json.dumps({**MOE, "first_k_dense_replace": "x"})),
        "first_k_dense_replace",
    ),
    ("mlp_only_layers 5", lambda p: p.write_text(json.dumps({**MOE, "mlp_only_layers": 5})), "mlp_only_layers"),
    ("experts 10^9", lambda p: p.write_text(json.dumps({**MOE, "num_experts": 10**9})), "num_experts"),
    (
        "1e309",
        lambda p: p.write_text(json.dumps(LLAMA).replace('"hidden_size": 512', '"hidden_size": 1e309')),
        "too large",
    ),
    ("NaN", lambda p: p.write_text(json.dumps(LLAMA).replace('"hidden_size": 512', '"hidden_size": NaN')), "NaN"),
    ("5,000 digits", lambda p: p.write_text(json.dumps(LLAMA).replace("512", "9" * 5000)), "JSON"),
    ("nested 100,000 deep", lambda p: p.write_text("[" * 100_000 + "]" * 100_000), "nested"),
    ("a list", lambda p: p.write_text("[1, 2]"), "JSON object"),
    ("not UTF-8", lambda p: p.write_bytes(b"\xff\xfe{}"), "JSON"),
    ("5 MiB", lambda p: p.write_text(json.dumps(LLAMA) + " " * (5 << 20)), "bytes"),
    (
        "no layers",
        lambda p: p.write_text(json.dumps({k: v for k, v in LLAMA.items() if k != "num_hidden_layers"})),
        "num_hidden_layers",
    ),
]


# --- GGUF files written byte by byte (gguf-py refuses to write most of these) -----------------------------------


def _s(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def _kv(key: str, value_type: int, payload: bytes) -> bytes:
    return _s(key) + struct.pack("<I", value_type) + payload


U32, STR, ARR, F32 = 4, 8, 9, 6


def _gguf(*kvs: bytes, n_tensors: int = 0, tensors: bytes = b"", n_kv: int | None = None) -> bytes:
    count = len(kvs) if n_kv is None else n_kv
    return b"GGUF" + struct.pack("<IQQ", 3, n_tensors, count) + b"".join(kvs) + tensors


def _llama_kvs(**override: bytes) -> list[bytes]:
    fields = {
        "general.architecture": _kv("general.architecture", STR, _s("llama")),
        "llama.block_count": _kv("llama.block_count", U32, struct.pack("<I", 2)),
        "llama.embedding_length": _kv("llama.embedding_length", U32, struct.pack("<I", 512)),
        "llama.attention.head_count": _kv("llama.attention.head_count", U32, struct.pack("<I", 8)),
        "llama.vocab_size": _kv("llama.vocab_size", U32, struct.pack("<I", 2048)),
    }
    fields.update(override)
    return list(fields.values())


def _tensor(name: str, shape: tuple[int, ...], ggml_type: int = 0) -> bytes:
    return (
        _s(name)
        + struct.pack("<I", len(shape))
        + b"".join(struct.pack("<Q", d) for d in shape)
        + struct.pack("<IQ", ggml_type, 0)
    )


GGUFS: list[tuple[str, Callable[[], bytes], str]] = [
    (
        "nested arrays",
        lambda: _gguf(
            *_llama_kvs(),
            _kv("x.nested", ARR, struct.pack("<IQ", ARR, 1) + struct.pack("<IQ", U32, 1) + struct.pack("<I", 1)),
        ),
        "nested",
    ),
    (
        "head_count 0",
        lambda: _gguf(
            *_llama_kvs(**{"llama.attention.head_count": _kv("llama.attention.head_count", U32, struct.pack("<I", 0))})
        ),
        "num_attention_heads",
    ),
    (
        "alignment infinite",
        lambda: _gguf(*_llama_kvs(), _kv("general.alignment", F32, struct.pack("<f", float("inf")))),
        "general.alignment",
    ),
    (
        "alignment a list",
        lambda: _gguf(*_llama_kvs(), _kv("general.alignment", ARR, struct.pack("<IQ", U32, 1) + struct.pack("<I", 32))),
        "general.alignment",
    ),
    (
        "alignment 3",
        lambda: _gguf(*_llama_kvs(), _kv("general.alignment", U32, struct.pack("<I", 3))),
        "general.alignment",
    ),
    (
        "vocab_size a string",
        lambda: _gguf(*_llama_kvs(**{"llama.vocab_size": _kv("llama.vocab_size", STR, _s("lots"))})),
        "vocab_size",
    ),
    (
        "block_count 10^7",
        lambda: _gguf(*_llama_kvs(**{"llama.block_count": _kv("llama.block_count", U32, struct.pack("<I", 10**7))})),
        "num_hidden_layers",
    ),
    (
        "array of 2^40 items",
        lambda: _gguf(*_llama_kvs(), _kv("t.tokens", ARR, struct.pack("<IQ", STR, 1 << 40))),
        "array length",
    ),
    (
        "string of 2^40 bytes",
        lambda: _gguf(*_llama_kvs(), _kv("t.name", STR, struct.pack("<Q", 1 << 40))),
        "string length",
    ),
    ("2^40 keys", lambda: _gguf(*_llama_kvs(), n_kv=1 << 40), "implausible GGUF counts"),
    ("2^40 tensors", lambda: _gguf(*_llama_kvs(), n_tensors=1 << 40), "implausible GGUF counts"),
    (
        "tensor of 10 dimensions",
        lambda: _gguf(*_llama_kvs(), n_tensors=1, tensors=_tensor("w", (1,) * 10)),
        "dimensions",
    ),
    (
        "tensor of 2^62 elements",
        lambda: _gguf(*_llama_kvs(), n_tensors=1, tensors=_tensor("w", (1 << 31, 1 << 31))),
        "shape",
    ),
    ("unknown ggml type", lambda: _gguf(*_llama_kvs(), n_tensors=1, tensors=_tensor("w", (32,), 999)), "ggml type"),
    ("unknown value type", lambda: _gguf(*_llama_kvs(), _kv("x", 77, b"")), "value type"),
    ("truncated", lambda: _gguf(*_llama_kvs())[:-3], "truncated"),
    ("not a GGUF", lambda: b"PK\x03\x04" + b"\x00" * 64, "not a GGUF"),
    ("version 99", lambda: b"GGUF" + struct.pack("<IQQ", 99, 0, 0), "version"),
    (
        "a 40 MiB header",
        lambda: _gguf(
            *_llama_kvs(),
            _kv("t.tokens", ARR, struct.pack("<IQ", STR, 1 << 20) + (struct.pack("<Q", 32) + b"x" * 32) * (1 << 20)),
        ),
        "larger than",
    ),
    ("no architecture", lambda: _gguf(), "general.architecture"),
]


def _resident_bytes() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _run_measured(argv: list[str]) -> tuple[int, str, float, int]:
    """Run the command in a forked child: (status, output, seconds, bytes of memory the child added at its peak).

    The child's peak resident set (``wait4``'s ``ru_maxrss``) less what it inherited is the memory the file cost;
    tracemalloc would slow the reader down tenfold and measure itself."""
    read_end, write_end = os.pipe()
    before = _resident_bytes()
    pid = os.fork()
    if pid == 0:  # the child: answer, report, leave without running the parent's cleanup
        os.close(read_end)
        out = io.StringIO()
        start = time.perf_counter()
        status = run(argv, out)
        report = json.dumps({"status": status, "out": out.getvalue(), "seconds": time.perf_counter() - start})
        with os.fdopen(write_end, "w") as pipe:
            pipe.write(report)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        report = json.loads(pipe.read() or '{"status": -1, "out": "child died", "seconds": 0}')
    _, _, usage = os.wait4(pid, 0)
    return report["status"], report["out"], report["seconds"], max(0, usage.ru_maxrss * 1024 - before)


def _refused(argv: list[str], words: str, code: str = "bad_file") -> None:
    status, output, elapsed, memory = _run_measured(argv)
    assert status == EXIT_ERROR, output
    error = json.loads(output)["error"]
    assert error["code"] == code, error
    assert words.lower() in error["message"].lower(), error["message"]
    assert elapsed < SECOND, f"{elapsed:.2f} s"
    assert memory < MEMORY, f"{memory >> 20} MiB"


@pytest.mark.parametrize(("name", "write", "words"), CONFIGS, ids=[c[0] for c in CONFIGS])
def test_crafted_config_is_refused(tmp_path: Path, name: str, write: Callable[[Path], None], words: str) -> None:
    path = tmp_path / "config.json"
    write(path)
    # A file that is not a JSON object is bad_file; one whose numbers cannot describe a model is bad_config.
    unreadable = words in ("too large", "NaN", "JSON", "nested", "JSON object", "bytes")
    _refused(["--json", "--config", str(path)], words, "bad_file" if unreadable else "bad_config")


@pytest.mark.parametrize(("name", "content", "words"), GGUFS, ids=[g[0] for g in GGUFS])
def test_crafted_gguf_is_refused(tmp_path: Path, name: str, content: Callable[[], bytes], words: str) -> None:
    path = tmp_path / "model.gguf"
    path.write_bytes(content())
    # A header that parses but whose numbers describe no model is bad_config; a broken header is bad_file.
    describes_no_model = name in ("head_count 0", "vocab_size a string", "block_count 10^7")
    _refused(["--json", "--gguf", str(path)], words, "bad_config" if describes_no_model else "bad_file")


@pytest.mark.parametrize("flag", ["--config", "--gguf"])
def test_files_that_are_not_regular_are_refused(tmp_path: Path, flag: str) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # no writer: opening it for a blocking read would wait forever
    for path in ("/dev/zero", str(fifo), str(tmp_path)):
        _refused(["--json", flag, path], "not a regular file")
    _refused(["--json", flag, str(tmp_path / "missing")], "cannot read")


def test_a_terminal_answer_for_a_bad_file_is_one_sentence(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    _config(path, num_hidden_layers=10**6)
    out = io.StringIO()
    assert run(["--config", str(path)], out) == EXIT_ERROR
    assert "Traceback" not in out.getvalue()
    assert "num_hidden_layers" in out.getvalue()


def _vram_process(cache: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """``vram`` in a process of its own with ``cache`` as its cache folder (each run loads the caches afresh)."""
    code = "import sys; from vramfit.bot.cli import main; sys.exit(main())"
    env = {**os.environ, "VRAMFIT_CACHE_DIR": str(cache), "VRAMFIT_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("kind", ["models", "gpus", "parser-index"])
@pytest.mark.parametrize(
    "content", ["[" * 3000, "{" * 100_000, '{"model": 5}', "[1, 2]"], ids=["3000 [", "100000 {", "wrong rows", "list"]
)
def test_a_damaged_cache_file_is_set_aside_and_rebuilt(tmp_path: Path, kind: str, content: str) -> None:
    """Issue 43: a cache file of 3,000 "[" was a RecursionError (exit 1) on every run until it was deleted. Now it
    is set aside as <name>.bad with a warning, the answer is the same as with no cache, and the next run finds a
    good cache file again."""
    cache = tmp_path / "cache"
    first = _vram_process(cache, "--json", "llama3 8b 32k 3060")
    assert first.returncode == 0, first.stderr
    (damaged,) = cache.glob(f"{kind}-*.json")
    damaged.write_text(content)
    second = _vram_process(cache, "--json", "llama3 8b 32k 3060")
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout) == json.loads(first.stdout)
    assert "Traceback" not in second.stderr and f"{damaged.name} could not be used" in second.stderr, second.stderr
    assert (cache / f"{damaged.name}.bad").read_text() == content
    third = _vram_process(cache, "--json", "llama3 8b 32k 3060")
    assert third.returncode == 0 and "could not be used" not in third.stderr, third.stderr
    assert damaged.read_text() != content  # built again
