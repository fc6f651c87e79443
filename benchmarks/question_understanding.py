"""How well questions are understood: every question of tests/data/eval scored field by field, per language.

    python benchmarks/question_understanding.py            # the table
    python benchmarks/question_understanding.py --misses   # and every question read wrongly, with what was read

Two sets: ``queries_public.jsonl`` (30 questions; its model is judged by the layer count and parameters the model
must have, GPUs by their memory) and ``queries_understanding.jsonl`` (152 questions written for the parser: preset
id, GPUs and count, system RAM, context, quant, intent and whether it asks for speed). A field is right when the
parse gives exactly what the row expects, ``None`` included (a setting the question does not state must not be
read). A row whose model is ``"unknown"`` is right when the parser says the model is unknown (never another one).
A regression shows as a lower number; the expected parses are the writers', never the parser's.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.understanding import read, rows, score_understanding  # noqa: E402
from vramfit.bot.parser import ParsedQuery  # noqa: E402
from vramfit.calc.gpu import GIB  # noqa: E402
from vramfit.calc.presets import load_catalog  # noqa: E402
from vramfit.calc.tensors import count_params  # noqa: E402


def score_public(row: dict[str, Any], parsed: ParsedQuery | str) -> dict[str, tuple[bool, Any]]:
    if isinstance(parsed, str):
        return {f: (False, parsed) for f in ("model", "gpus", "context", "quant")}
    catalog = load_catalog()
    model_right = False
    if parsed.model is not None:
        arch = catalog.models[parsed.model].architecture
        params = count_params(arch) / 1e9
        model_right = arch.n_layers == row["model"]["layers"] and abs(params / row["model"]["params_b"] - 1) < 0.02
    gpus = [(choice.gpu.memory_bytes / GIB, choice.count) for choice in parsed.gpus]
    gpus_right = len(gpus) == len(row["gpus"]) and all(
        mem in want["mem_gib"] and count == want["count"] for (mem, count), want in zip(gpus, row["gpus"], strict=False)
    )
    context_right = parsed.context is None if row["context"] is None else parsed.context in row["context"]
    quant_right = parsed.quant is None if row["quant"] is None else parsed.quant in row["quant"]
    return {
        "model": (model_right, parsed.model),
        "gpus": (gpus_right, gpus),
        "context": (context_right, parsed.context),
        "quant": (quant_right, parsed.quant),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="list every question read wrongly")
    args = parser.parse_args(argv)
    for name, scorer in (("queries_public.jsonl", score_public), ("queries_understanding.jsonl", score_understanding)):
        questions = rows(name)
        tally: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
        misses: list[str] = []
        whole = defaultdict(lambda: [0, 0])
        for row in questions:
            scores = scorer(row, read(row["q"]))
            for field, (right, got) in scores.items():
                for lang in (row["lang"], "all"):
                    tally[(field, lang)][0] += right
                    tally[(field, lang)][1] += 1
                if not right:
                    misses.append(f"  {row['q']!r}: {field} read as {got!r}, expected {row.get(field)!r}")
            for lang in (row["lang"], "all"):
                whole[lang][0] += all(right for right, _ in scores.values())
                whole[lang][1] += 1
        fields = list(dict.fromkeys(field for field, _ in tally))
        print(f"{name}: {len(questions)} questions")
        print(f"  {'field':12}{'en':>14}{'ko':>14}{'all':>14}")
        for field in [*fields, "every field"]:
            cells = []
            for lang in ("en", "ko", "all"):
                right, total = whole[lang] if field == "every field" else tally[(field, lang)]
                cells.append(f"{right}/{total} {100 * right / total:.0f}%" if total else "—")
            print(f"  {field:12}" + "".join(f"{cell:>14}" for cell in cells))
        if args.misses and misses:
            print("\n".join(misses))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
