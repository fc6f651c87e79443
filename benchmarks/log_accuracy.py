"""The log doctor's view of accuracy: every real log in the tests read by ``vram --log``'s reader, vramfit's estimate
for exactly the settings the log shows beside the engine's own figures, per buffer.

    python benchmarks/log_accuracy.py

Logs: the quotes of tests/data/groundtruth/measured.jsonl (llama.cpp and its forks) and the files of tests/data/logs/.
A log is in the table when its model is a preset of the same name and shape and its file type one the calculator
knows; the others are counted below it. Figures are MiB; the difference is vramfit's minus the log's, with its
percentage. The summary gives, per component, how many agree within 1 % and the median and worst absolute error.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from vramfit.bot.answering.log_doctor import diagnose
from vramfit.bot.logs import read_log

ROOT = Path(__file__).resolve().parent.parent


def _logs() -> list[tuple[str, str]]:
    found = []
    for line in (ROOT / "tests/data/groundtruth/measured.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["engine"].startswith(("llama.cpp", "ik_llama.cpp")):
            found.append((row["id"], row["quote"]))
    for path in sorted((ROOT / "tests/data/logs").glob("*.log")):
        found.append((path.name, path.read_text(encoding="utf-8").partition("\n\n")[2]))
    return found


def main() -> int:
    errors: dict[str, list[float]] = {}
    skipped: list[str] = []
    out = sys.stdout
    out.write(f"{'log':<58} {'component':<13} {'log MiB':>11} {'vramfit':>11} {'diff':>10} {'%':>7}\n")
    for name, text in _logs():
        diagnosis = diagnose(read_log(text))
        compared = [r for r in diagnosis.rows if r.logged_mib and r.estimated_mib is not None]
        if not compared:
            skipped.append(name)
            continue
        for row in compared:
            assert row.logged_mib is not None and row.estimated_mib is not None
            diff = row.estimated_mib - row.logged_mib
            pct = 100 * diff / row.logged_mib
            errors.setdefault(row.label, []).append(pct)
            out.write(
                f"{name[:58]:<58} {row.label:<13} {row.logged_mib:>11,.1f} {row.estimated_mib:>11,.1f} "
                f"{diff:>+10,.1f} {pct:>+6.1f}%\n"
            )
    out.write("\ncomponent      logs  within 1%  median |err|  worst |err|\n")
    for label, values in errors.items():
        absolute = [abs(v) for v in values]
        within = sum(1 for v in absolute if v <= 1)
        out.write(
            f"{label:<13} {len(values):>5} {within:>10} {statistics.median(absolute):>12.1f}% {max(absolute):>11.1f}%\n"
        )
    why = "the model is not a preset of that name and shape, or its file type is not one vramfit sizes"
    out.write(f"\nlogs read with no estimate beside them ({why}): {len(skipped)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
