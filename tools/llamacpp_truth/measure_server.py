#!/usr/bin/env python3
"""Run the command a vramfit card prints with llama-server itself, and record what it allocates.

usage (from the repository root, with a Python that has numpy, and a llama-server built from a llama.cpp tree):
  python tools/llamacpp_truth/measure_server.py MODEL[,MODEL...] --llama-server BUILD/bin/llama-server \\
      --gguf-py TREE/gguf-py --revision b11434 --out tests/data/groundtruth/llamaserver_b11434.jsonl \\
      [--contexts 8192,32768] [--users 1,4] [--workdir DIR]

For each archs.py MODEL and setting, the script

1. writes the model's config.json and an all-zero F16 GGUF of it (gen_gguf.py, with that tree's gguf-py);
2. asks ``vram --json --config config.json --quant F16 --context N --users U`` on a GPU large enough to hold it
   for the command the card prints (``commands.llama_server``) and for its estimate;
3. starts that very command with llama-server (the file written in 1 for ``-m``; ``-lv 4`` so every buffer is
   logged; ``--host``/``--port`` on loopback; ``--no-warmup``), waits for it to serve, stops it;
4. reads the log with vramfit's own log reader and appends one row: the command, the settings, the buffers the log
   names (KV cache and its K/V halves, recurrent state, output buffer, compute buffer, per device) and the estimate's
   figures for the same, each in MiB.

Nothing in a row's ``log`` part is computed by the script: it is llama-server's own lines, as the log doctor reads
them. The CPU backend is the one built here; KV cache, recurrent state and output rows do not depend on it.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path

from llama_server import add_arguments, run_server

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MIB = 1 << 20
WRITER = "tools/llamacpp_truth/measure_server.py"


def card(config: Path, context: int, users: int) -> dict:
    """``vram --json`` for the model of ``config`` in F16 on a GPU that holds it: the card's command and estimate."""
    argv = [sys.executable, "-c", "import sys; from vramfit.bot.cli import main; sys.exit(main())", "--json",
            "--config", str(config), "--quant", "F16", "--context", str(context), "--users", str(users),
            "--gpu", "b200"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"vram failed: {done.stdout[-500:]} {done.stderr[-500:]}")
    return json.loads(done.stdout)


def serve(command: str, gguf: Path, server: Path) -> str:
    """Start ``command`` with ``server`` on ``gguf`` and return its log once it serves (it is then stopped)."""
    argv = shlex.split(command)
    assert argv[0] == "llama-server", argv
    argv[argv.index("-m") + 1] = str(gguf)
    return run_server(server, [*argv[1:], "-lv", "4", "--no-warmup"])


def row(model: str, config: dict, context: int, users: int, answer: dict, text: str, revision: str) -> dict:
    from vramfit.bot.logs import read_log

    reading = read_log(text)
    est = answer["estimate"]
    return {
        "model": model,
        "revision": revision,
        "writer": WRITER,
        "config": config,
        "context": context,
        "users": users,
        "command": answer["commands"]["llama_server"],
        "log": {
            "n_ctx": reading.n_ctx,
            "n_seq": reading.n_seq,
            "kv_unified": reading.kv_unified,
            "n_outputs_max": reading.n_outputs_max,
            "kv_mib": reading.kv_total_mib,
            "kv_k_mib": reading.kv_k_mib,
            "kv_v_mib": reading.kv_v_mib,
            "recurrent_mib": round(sum(reading.recurrent_mib.values()), 2) or None,
            "output_mib": round(sum(reading.output_mib.values()), 2) or None,
            "compute_mib": reading.compute_mib or None,
            "build": reading.build,
        },
        "vramfit": {
            "kv_mib": round(est["kv_cache_bytes"] / MIB, 2),
            "recurrent_mib": round(est.get("recurrent_state_bytes", 0) / MIB, 2) or None,
            "compute_mib": round(est["compute_bytes"] / MIB, 2),
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(ap)
    ap.add_argument("--contexts", default="8192,32768")
    ap.add_argument("--users", default="1")
    a = ap.parse_args()
    sys.path[:0] = [a.gguf_py, str(HERE)]
    from archs import ARCHS, model_config, row_config
    from gen_gguf import write_gguf

    work = Path(a.workdir)
    work.mkdir(parents=True, exist_ok=True)
    for model in a.models.split(","):
        gguf, config = work / f"{model}.gguf", work / f"{model}.config.json"
        config_json = row_config(ARCHS[model])
        config.write_text(json.dumps(config_json))
        write_gguf(model, str(gguf))
        model_config(model)  # the writers' flat config: raises here, not mid-run, for a model archs.py lacks
        try:
            for context in map(int, a.contexts.split(",")):
                for users in map(int, a.users.split(",")):
                    answer = card(config, context, users)
                    text = serve(answer["commands"]["llama_server"], gguf, a.llama_server)
                    measured = row(model, config_json, context, users, answer, text, a.revision)
                    with a.out.open("a") as out:
                        out.write(json.dumps(measured) + "\n")
                    print(json.dumps(measured), flush=True)
        finally:
            gguf.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
