"""How long parsing one question takes: p50 / p99 over the public eval questions (goal: p50 under 1 ms).

    python benchmarks/parse_speed.py [ROUNDS]

The catalog and its lookup index are built once before timing (the bot and the CLI keep them for the process).
"""

from __future__ import annotations

import contextlib
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vramfit.bot.parser import parse  # noqa: E402
from vramfit.calc.errors import VramfitError  # noqa: E402
from vramfit.calc.presets import load_catalog  # noqa: E402

EVAL_FILE = ROOT / "tests" / "data" / "eval" / "queries_public.jsonl"


def main(rounds: int = 200) -> None:
    questions = [json.loads(line)["q"] for line in EVAL_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
    catalog = load_catalog()
    parse(questions[0], catalog)  # build the index outside the timing
    times: list[float] = []
    for _ in range(rounds):
        for q in questions:
            start = time.perf_counter()
            with contextlib.suppress(VramfitError):
                parse(q, catalog)
            times.append(time.perf_counter() - start)
    times.sort()
    p50 = statistics.median(times) * 1000
    p99 = times[int(len(times) * 0.99) - 1] * 1000
    worst = times[-1] * 1000
    print(f"{len(questions)} questions x {rounds} rounds: p50 {p50:.3f} ms, p99 {p99:.3f} ms, max {worst:.3f} ms")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
