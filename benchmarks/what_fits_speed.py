"""Speed of "what fits": every preset model against one GPU, ranked (calc.advice.models_that_fit).

    python benchmarks/what_fits_speed.py

Goal from the intents issue: under 20 ms at p50 for the whole catalog on one GPU. Three measurements:

* cold: every calculator cache emptied before each run (llama.cpp's per-tensor quant mixes, the tensor lists, the
  per-request pieces): the first question after start-up.
* warm, new question: the quant mixes are cached (as in a running bot), but each run asks at another context, so
  the per-request pieces (KV cache, compute buffers) are computed again. This is the steady state.
* warm, same question: everything cached (the same question asked again).

Plus the whole path a chat message takes (parse + resolve), warm. Prints a table; asserts nothing.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from timing import timed  # noqa: E402

from vramfit.bot.answering.resolve import resolve  # noqa: E402
from vramfit.bot.parser import parse  # noqa: E402
from vramfit.calc.advice import models_that_fit  # noqa: E402
from vramfit.calc.presets import load_catalog  # noqa: E402
from vramfit.calc.request import GpuChoice, Request  # noqa: E402

llama_cpp = importlib.import_module("vramfit.calc.engines.llama_cpp")
weights = importlib.import_module("vramfit.calc.weights")
tensors = importlib.import_module("vramfit.calc.tensors")

GPUS = ("rtx-3060-12gb", "rtx-4090", "apple-m2-16gb", "h100-sxm")
QUESTIONS = ("what can I run on a 3060 at 32k", "4090으로 돌릴 수 있는 제일 큰 모델?")


def clear_caches() -> None:
    weights._weights_cached.cache_clear()
    llama_cpp._kv_cached.cache_clear()
    llama_cpp._PARTS_CACHE.clear()
    tensors.gguf_tensors.cache_clear()


def main() -> None:
    catalog = load_catalog()
    models = list(catalog.models.values())
    template_model = catalog.models["llama-3.1-8b"].ref()
    print(f"what fits: {len(models)} preset models against one GPU (ms)")
    print(f"{'GPU':<16} {'cold p50':>9} {'cold p99':>9} {'new q p50':>10} {'new q p99':>10} {'same p50':>9} "
          f"{'same p99':>9} {'listed':>7}")  # fmt: skip
    for gpu_id in GPUS:
        choice = GpuChoice(gpu=catalog.gpus[gpu_id])
        template = Request(model=template_model, context=32768, gpus=(choice,))
        listed = len(models_that_fit(template, models, choice))

        def same(template: Request = template, choice: GpuChoice = choice) -> object:
            return models_that_fit(template, models, choice)

        contexts = iter(range(16384, 10**7, 7))

        def new_question(template: Request = template, choice: GpuChoice = choice, c: Iterator[int] = contexts) -> Any:
            fresh = template.model_copy(update={"context": next(c)})  # a new question: no cached pieces
            return models_that_fit(fresh, models, choice)

        cold = timed(same, 20, before=clear_caches)
        same()  # warm the quant mixes again
        warm_new = timed(new_question, 100)
        same()
        warm_same = timed(same, 200)
        print(f"{gpu_id:<16} {cold[0]:9.2f} {cold[1]:9.2f} {warm_new[0]:10.2f} {warm_new[1]:10.2f} "
              f"{warm_same[0]:9.2f} {warm_same[1]:9.2f} {listed:7d}")  # fmt: skip
    print()
    for question in QUESTIONS:
        parsed = parse(question)
        resolve(parsed)
        p50, p99 = timed(lambda q=question: resolve(parse(q)), 100)
        print(f"parse + resolve, warm, {question!r}: p50 {p50:.2f} ms, p99 {p99:.2f} ms")


if __name__ == "__main__":
    main()
