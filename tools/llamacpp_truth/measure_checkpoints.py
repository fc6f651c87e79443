#!/usr/bin/env python3
"""Measure llama-server's context checkpoints: what one holds, for a model, after prompts of given lengths.

usage (from the repository root, with a Python that has numpy, and a llama-server built from a llama.cpp tree):
  python tools/llamacpp_truth/measure_checkpoints.py MODEL[,MODEL...] --llama-server BUILD/bin/llama-server \\
      --gguf-py TREE/gguf-py --revision b11434 --out tests/data/groundtruth/llamaserver_b11434_checkpoints.jsonl \\
      [--prompts 300,2000] [--context 8192] [--slots 1] [--shrink]

For each archs.py MODEL the script writes an all-zero F16 GGUF (gen_gguf.py, with that tree's gguf-py), starts
``llama-server -m FILE -c CONTEXT -np SLOTS -fa on -ub 512 -lv 4`` on loopback, sends one completion per prompt
length (token ids, ``n_predict`` 1, each prompt new), and records llama-server's own trace lines ``created context
checkpoint N of M (... size = X MiB)``: nothing in a row's ``checkpoints_mib`` is computed by the script.

``--shrink`` measures the rule rather than a model: the model's config with few, narrow layers and a short sliding
window (the values are in the row's ``config``), so that prompts longer than the window run in seconds on a CPU.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import urllib.request
from pathlib import Path

from llama_server import add_arguments, run_server

HERE = Path(__file__).resolve().parent
WRITER = "tools/llamacpp_truth/measure_checkpoints.py"
CREATED = re.compile(r"created context checkpoint (\d+) of (\d+) \(pos_min = (-?\d+), pos_max = (-?\d+), "
                     r"n_tokens = (\d+), size = ([\d.]+) MiB\)")  # fmt: skip

# --shrink: the keys set to these values where the config has them (the architecture's rule is unchanged)
SHRUNK = {
    "hidden_size": 256,
    "intermediate_size": 512,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 64,
    "sliding_window": 128,
    "vocab_size": 4096,
    "gguf_vocab_size": 4096,
}


def _post(port: int, body: dict, timeout: float) -> None:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/completion", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        answer.read()


def measure(gguf: Path, server: Path, context: int, slots: int, prompts: list[int], vocab: int) -> tuple[list, str]:
    def send_prompts(port: int) -> None:
        for i, n in enumerate(prompts):
            tokens = [(7 + i * 131 + k * 17) % (vocab - 10) + 5 for k in range(n)]  # a new prompt each time
            _post(port, {"prompt": tokens, "n_predict": 1, "cache_prompt": True}, timeout=1800)

    args = ["-m", str(gguf), "-c", str(context), "-np", str(slots), "-fa", "on", "-ngl", "99", "-ub", "512",
            "-lv", "4", "--no-warmup"]  # fmt: skip
    text = run_server(server, args, send_prompts)
    found = [
        {"index": int(m[1]), "max": int(m[2]), "pos_min": int(m[3]), "pos_max": int(m[4]), "n_tokens": int(m[5]),
         "mib": float(m[6])}
        for m in CREATED.finditer(text)
    ]  # fmt: skip
    return found, text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(ap)
    ap.add_argument("--prompts", default="300,2000", help="prompt lengths in tokens, one completion each")
    ap.add_argument("--context", type=int, default=8192)
    ap.add_argument("--slots", type=int, default=1)
    ap.add_argument("--shrink", action="store_true", help="few, narrow layers and a short window (module docstring)")
    ap.add_argument("--layers", type=int, default=6, help="with --shrink: the layers kept")
    a = ap.parse_args()
    sys.path[:0] = [a.gguf_py, str(HERE)]
    from archs import ARCHS, model_config, row_config
    from gen_gguf import write_gguf

    work = Path(a.workdir)
    work.mkdir(parents=True, exist_ok=True)
    for model in a.models.split(","):
        config = dict(row_config(ARCHS[model]))
        flat = dict(model_config(model))
        if a.shrink:
            for c in (config, flat):
                c.update({k: v for k, v in SHRUNK.items() if k in c})
                c["num_hidden_layers"] = a.layers
                if isinstance(c.get("layer_types"), list):
                    c["layer_types"] = c["layer_types"][: a.layers]
        gguf = work / f"{model}.gguf"
        facts = write_gguf(model, str(gguf), flat)
        vocab = int(flat.get("gguf_vocab_size") or flat.get("vocab_size") or 4096)
        try:
            prompts = [int(n) for n in a.prompts.split(",")]
            found, text = measure(gguf, a.llama_server, a.context, a.slots, prompts, vocab)
        finally:
            gguf.unlink(missing_ok=True)
        if not found:
            print(text[-4000:], file=sys.stderr)
        row = {
            "model": model + (" (shrunk)" if a.shrink else ""),
            "revision": a.revision,
            "writer": WRITER,
            "gguf_writer": facts["writer"],
            "config": config,
            "context": a.context,
            "slots": a.slots,
            "n_ubatch": 512,
            "prompts": prompts,
            "checkpoints_mib": found,
        }
        with a.out.open("a") as out:
            out.write(json.dumps(row) + "\n")
        print(json.dumps(row)[:400], flush=True)


if __name__ == "__main__":
    main()
