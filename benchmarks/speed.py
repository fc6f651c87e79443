"""Speed: one estimate, fitting the whole GPU catalog, and the CLI's cold start.

    python benchmarks/speed.py

Goals from the calculator issue: one estimate ≤ 2 ms and the whole catalog ≤ 5 ms at p50/p99; CLI cold start
≤ 0.4 s. Prints a table; asserts nothing.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from timing import timed  # noqa: E402

from vramfit.calc.estimate import estimate, fit_gpu  # noqa: E402
from vramfit.calc.presets import load_catalog  # noqa: E402
from vramfit.calc.request import GpuChoice, Request  # noqa: E402


def main() -> None:
    catalog = load_catalog()
    gpus = tuple(catalog.gpus.values())
    model_ids = ["llama-3.1-8b", "gemma-2-27b", "qwen3-30b-a3b", "deepseek-r1", "llama-3.1-405b"]
    print(f"{'what':<52} {'p50 ms':>9} {'p99 ms':>9}   (CLI rows: p50 and max of 10 runs)")
    for model_id in model_ids:
        request = Request(model=catalog.models[model_id].ref(), context=32768)
        contexts = iter(range(1000, 10**6))
        # A new question each time (another context): nothing is cached but the quantizer's tensor mix.
        fresh = lambda r=request, c=contexts: estimate(r.model_copy(update={"context": next(c)}))  # noqa: E731
        p50, p99 = timed(fresh, 500, warm=True)
        print(f"{'one estimate, new question, ' + model_id:<52} {p50:9.3f} {p99:9.3f}")

        def fit_catalog(r: Request = request, c: Iterator[int] = contexts) -> list[object]:
            fresh = r.model_copy(update={"context": next(c)})  # a new question: no cached pieces
            return [fit_gpu(fresh, GpuChoice(gpu=g), with_max_context=False) for g in gpus]

        p50, p99 = timed(fit_catalog, 200, warm=True)
        print(f"{f'fit all {len(gpus)} catalog GPUs, ' + model_id:<52} {p50:9.3f} {p99:9.3f}")
    cli_cold_starts()


FLOOR = [sys.executable, "-c", "from pydantic import BaseModel"]  # the floor of any pydantic program
# What any program pays that defines one pydantic model with a Field, validates it and writes its JSON: the
# least a pydantic answer can cost, shown beside the CLI's rows so the floor's ratio can be read against it.
ONE_MODEL_PROGRAM = (
    "from pydantic import BaseModel, Field\n"
    "class Answer(BaseModel):\n"
    "    total_bytes: int = Field(0, ge=0)\n"
    "print(Answer(total_bytes=1).model_dump_json())"
)
CLI_CASES = (
    ("vram --json --model llama-3.1-8b", ["--json", "--model", "llama-3.1-8b"]),
    # llama-3.1-8b.json: the llama-3.1-8b preset's config.json keys (source: presets/models.toml).
    ("vram --json --config config.json", ["--json", "--config", str(ROOT / "benchmarks" / "llama-3.1-8b.json")]),
    ('vram --json "llama3-8b 32k 3060"', ["--json", "llama3-8b 32k 3060"]),
)


# As a user's machine runs it: bytecode cached after the first run (some shells set PYTHONDONTWRITEBYTECODE, which
# would make every run compile the modules it imports late).
USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _wall(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, env=USER_ENV)
    return time.perf_counter() - start


def cli_cold_starts(pairs: int = 7) -> None:
    """Each command as a whole process, paired run by run with the pydantic floor: the ratio holds when the
    machine's speed drifts (goals: 1.5x for flags and --config, 2x for a question)."""
    print(
        f"\n{'CLI cold start, paired with ' + chr(34) + 'from pydantic import BaseModel' + chr(34):<52} "
        f"{'ms':>9} {'floor ms':>9} {'ratio':>7}   (medians of {pairs} pairs)"
    )
    cases = [(label, [sys.executable, "-m", "vramfit.bot.cli", *argv]) for label, argv in CLI_CASES]
    cases.append(("one pydantic model, validated and dumped (reference)", [sys.executable, "-c", ONE_MODEL_PROGRAM]))
    for label, command in cases:
        _wall(command)  # warm the file cache
        runs, floors, ratios = [], [], []
        for _ in range(pairs):
            cli = _wall(command)
            floor = _wall(FLOOR)
            runs.append(cli)
            floors.append(floor)
            ratios.append(cli / floor)
        print(
            f"{label:<52.52} {statistics.median(runs) * 1000:9.1f} {statistics.median(floors) * 1000:9.1f} "
            f"{statistics.median(ratios):7.2f}"
        )


if __name__ == "__main__":
    main()
