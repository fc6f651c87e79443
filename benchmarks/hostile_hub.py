"""What a hostile Hub costs one ``vram`` question: wall time and peak memory of each case, side by side.

    python benchmarks/hostile_hub.py                       # every case, this checkout's code
    python benchmarks/hostile_hub.py --code /tmp/old       # the same cases against another checkout (say, a release)

Each case runs ``python -m vramfit.bot.cli --json "<repo> 3060"`` as its own process against the hostile Hub of
tests/fake_hub/hostile.py on 127.0.0.1 (the Hub's default deadline, 15 s, unless ``--deadline``), and reads the
process's peak RSS from ``wait4``. A case that runs past ``--limit`` seconds (120) is stopped and shown as such. With
``--code DIR``, DIR's ``calc`` and ``bot`` folders are put in front of this checkout's (through a folder of links on
``PYTHONPATH``), so the same hostile Hub measures the code before and after a change.

The cases: a split GGUF claiming 10,000 and 99,999 parts, 12 parts of 130,000 tensors each, a file list that drips a
byte every 0.2 s, and a file list whose pages never end.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.fake_hub.hostile import HostileHub  # noqa: E402 (the repository's root is put on the path first)

CASES = (
    ("split in 10,000 parts", "evil/split-many-GGUF", {"parts": 10_000}),
    ("split in 99,999 parts", "evil/split-many-GGUF", {"parts": 99_999}),
    ("12 parts × 130,000 tensors", "evil/tensors-GGUF", {}),
    ("a file list that drips", "evil/drip-listing-GGUF", {}),
    ("an endless file list", "evil/endless-listing-GGUF", {}),
)


def shim(code: Path) -> str:
    """A folder holding ``vramfit/{calc,bot,presets,locales}`` as links into ``code``, for ``PYTHONPATH``."""
    folder = Path(tempfile.mkdtemp(prefix="vramfit-code-"))
    (folder / "vramfit").mkdir()
    for name in ("calc", "bot", "presets", "locales"):
        (folder / "vramfit" / name).symlink_to(code / name)
    return str(folder)


def run_case(repo: str, server: dict[str, int], env: dict[str, str], limit: float) -> tuple[float, float, str]:
    """(seconds, peak RSS in MB, the error code or what happened) of one question."""
    with HostileHub(**server) as hub, tempfile.TemporaryDirectory() as cache:
        case_env = {**os.environ, **env, "HF_ENDPOINT": hub.url, "VRAMFIT_CACHE_DIR": cache}
        start = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "vramfit.bot.cli", "--json", f"{repo} 3060"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=case_env, cwd=ROOT,
        )  # fmt: skip
        status, rusage = 0, None
        while True:
            pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - start > limit:
                proc.kill()
                _, status, rusage = os.wait4(proc.pid, 0)
                return time.monotonic() - start, rusage.ru_maxrss / 1024, f"still reading at {limit:g} s (stopped)"
            time.sleep(0.05)
        seconds = time.monotonic() - start
        out = proc.stdout.read() if proc.stdout else b""
        err = proc.stderr.read() if proc.stderr else b""
        try:
            outcome = json.loads(out)["error"]["code"]
        except (ValueError, KeyError, TypeError):
            outcome = "traceback" if b"Traceback" in err else f"exit {os.waitstatus_to_exitcode(status)}"
        return seconds, rusage.ru_maxrss / 1024, outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", type=Path, help="measure this checkout's calc/ and bot/ instead")
    parser.add_argument("--deadline", default="", help="VRAMFIT_HUB_DEADLINE_SECONDS for every case (default 15)")
    parser.add_argument("--limit", type=float, default=120.0, help="stop a case after this many seconds")
    parser.add_argument("--only", default="", help="run the cases whose label contains this")
    args = parser.parse_args(argv)
    env: dict[str, str] = {}
    if args.code:
        env["PYTHONPATH"] = shim(args.code.resolve())
    if args.deadline:
        env["VRAMFIT_HUB_DEADLINE_SECONDS"] = args.deadline
    print(f"code: {args.code or ROOT}")
    print(f"  {'case':30}{'seconds':>9}{'peak MB':>9}  outcome")
    for label, repo, server in CASES:
        if args.only and args.only not in label:
            continue
        seconds, peak, outcome = run_case(repo, server, env, args.limit)
        print(f"  {label:30}{seconds:>9.1f}{peak:>9.0f}  {outcome}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
