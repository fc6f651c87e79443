"""Every answer the calculator gives for the preset models and the committed configs, one JSON line each.

    python benchmarks/answers_snapshot.py > /tmp/before.jsonl    # then, after a change:
    python benchmarks/answers_snapshot.py | cmp - /tmp/before.jsonl

A refactor that moves code (and changes no number) leaves this output byte-identical. Each preset model and each
config.json under tests/data/configs is asked three ways (4k alone; 32k with four users on two GPUs; 128k with a
q8_0 KV cache on vLLM's profile), plus every public evaluation question as typed. The last line counts the answers.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vramfit.bot.cli import run  # noqa: E402
from vramfit.calc.presets import load_catalog  # noqa: E402

ASKS: tuple[tuple[str, ...], ...] = (
    ("--context", "4k"),
    ("--context", "32k", "--users", "4", "--gpu", "rtx-4090", "--gpu-count", "2"),
    ("--context", "128k", "--kv-cache", "q8_0", "--engine", "vllm", "--quant", "fp8"),
)


def answers() -> list[tuple[list[str], str]]:
    asked: list[list[str]] = []
    for model_id in sorted(load_catalog().models):
        asked += [["--json", "--lang", "en", "--model", model_id, *ask] for ask in ASKS]
    for config in sorted((ROOT / "tests/data/configs").glob("*.json")):
        asked += [["--json", "--lang", "en", "--config", str(config.relative_to(ROOT)), *ask] for ask in ASKS]
    for line in (ROOT / "tests/data/eval/queries_public.jsonl").read_text(encoding="utf-8").splitlines():
        asked.append(["--json", "--lang", "en", json.loads(line)["q"]])
    out = []
    for argv in asked:
        buffer = io.StringIO()
        run(argv, buffer, say_overrides=True)
        out.append((argv, buffer.getvalue().strip()))
    return out


def main() -> None:
    count = 0
    for argv, answer in answers():
        print(json.dumps({"argv": argv, "answer": json.loads(answer)}, ensure_ascii=False, sort_keys=True))
        count += 1
    print(f"# {count} answers")


if __name__ == "__main__":
    main()
