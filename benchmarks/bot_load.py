"""Load test: N ``/vram`` interactions through the fake Discord into the real bot.

    python benchmarks/bot_load.py                  # 2000 interactions, 32 in flight, the real calculator
    python benchmarks/bot_load.py -n 5000 -c 64 --unique --backend fake
    python benchmarks/bot_load.py --processes 2    # two bot processes, one shard each, one shared settings database

The fake Discord (REST + gateway) and the load generator run in a child process, so the parent process is only the
bot: its CPU time per interaction is the "one core" figure (goal ≥ 300 interactions/s), and its RSS is the bot's
memory (goal < 100 MB). Latency is from the moment the fake sends INTERACTION_CREATE to the moment the bot's
callback reaches it (p50/p99). ``--unique`` makes every question different (no card cache hits); the default mix
repeats 24 questions, as a busy channel does.

``--bare`` runs a bare discord.py bot instead (an ``AutoShardedBot`` whose ``/vram`` replies at once with a one-line
embed), the floor any bot on this machine and this fake Discord pays; ``--side-by-side`` runs the bot and then the
bare bot on the same burst and prints their latencies and the ratio (these machines are noisy: compare within a run).

``--mixed`` fires a mixed burst instead (default 1,000 interactions): preset questions, "what fits" questions over
several GPUs and contexts (the heaviest answer), comparisons and solvers, ``/vram-log`` with a real log and with the
shape of a pasted base64 blob, and button presses on cards. Latency is then the first response (a card, an error or a
deferral: Discord's 3-second window counts that one), and the run waits for every interaction's final answer (the
card after a deferral) and counts the replies past the window, the answers that never came and the "took too long"
errors. ``--mixed --side-by-side`` prints its p95 beside the bare bot's on the same burst.

``--processes N`` runs N bot processes instead (``--shard-count N``, each with its own ``--shard-ids``), the load
spread over N guilds (one per shard); they share one settings database (``DATABASE_URL`` when set, else a temporary
SQLite file). It prints the combined interactions/s and each process's CPU time and memory. On a 2-core machine the
load generator competes with the bots for the cores: the combined figure is a floor.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import multiprocessing as mp
import os
import resource
import statistics
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

QUESTIONS = [
    ("llama3 8b 32k on a 3060", "en-US"),
    ("라마3 8B 32k 3060에서 돌아가?", "ko"),
    ("qwen2.5 14b q8 4090", "en-US"),
    ("큐웬2.5 7b 128k 4090 되나요", "ko"),
    ("gemma 3 27b 8k", "en-US"),
    ("젬마3 12b 3060 12gb", "ko"),
    ("mistral nemo 12b 16k 4070", "en-US"),
    ("llama 3.1 70b 2x 3090", "en-US"),
    ("딥시크 r1 distill 14b 32k 4080", "ko"),
    ("phi-4 q6_k 4060 ti 16gb", "en-US"),
    ("qwen3 30b a3b 32k 4090", "en-US"),
    ("엑사원 3.5 7.8b 3060", "ko"),
]
UNIQUE_QUANTS = ("q4_k_m", "q5_k_m", "q6_k", "q8_0", "q3_k_m", "iq4_xs", "q4_0")
UNIQUE_KV = ("f16", "q8_0", "q4_0")
MIX = [*QUESTIONS, *((q + " 4 users", loc) for q, loc in QUESTIONS)]
FAKE_MIX = [  # what tests/fake_discord/backend.py understands
    ("llama3 8b 32k 3060", "en-US"),
    ("라마3 8b 8k 4090", "ko"),
    ("gemma2 9b 3060", "en-US"),
    ("젬마2 128k 4090", "ko"),
    ("llama3-70b 8k 3060", "en-US"),
    ("llama3 8b 4k", "en-US"),
]


# --mixed: (kind, text, locale) cycled through; kind is the command ("vram", "vram-log") or "button" (text: its id)
_WHAT_FITS = [
    (f"what can I run on a {gpu} at {ctx}", "en-US")
    for gpu in ("4090", "3060 12gb", "3090", "5090", "4060 ti 16gb", "7900 xtx")
    for ctx in ("8k", "16k", "32k", "64k")
]
_SOLVERS = [
    ("compare llama3 8b and qwen3 8b on a 3060", "en-US"),
    ("best quant for qwen3 32b on a 4090", "en-US"),
    ("라마3 8b 3060에서 최대 컨텍스트", "ko"),
    ("how many users can qwen2.5 14b serve on a 3090 at 8k", "en-US"),
]
_LOG_PASTE = "tests/data/logs/llama.cpp-4070ti+3090ti-full-offload-2024.log"
_BLOB = "load_tensors: " + "QUJD" * 996  # a pasted base64 line behind a reader's prefix: 3,998 characters
_BUTTONS = [
    "vf:ctx:32768:llama-3.1-8b:Q4_K_M:8192:1:f16:l:1:rtx-3060-12gb*1:en",
    "vf:ctx:131072:qwen3-8b:Q4_K_M:8192:1:f16:l:1:rtx-4090*1:en",
    "vf:ctx:16384:-:-:32768:1:f16:l:1:rtx-3090*1:en:w",
]
WINDOW_SECONDS = 3.0  # Discord accepts an interaction's first response for 3 s


def mixed_plan(n: int) -> list[tuple[str, str, str]]:
    """The mixed burst: of every 16 interactions, 6 preset questions, 3 "what fits", 2 solvers or comparisons, 2
    logs (a real one, a blob), 3 button presses; each list cycled through on its own."""
    log_text = (ROOT / _LOG_PASTE).read_text(encoding="utf-8")[:4000]
    shape = ["vram"] * 6 + ["fits"] * 3 + ["solver"] * 2 + ["log", "blob"] + ["button"] * 3
    order = [0, 6, 11, 1, 13, 2, 7, 3, 12, 14, 4, 9, 5, 8, 15, 10]  # the kinds interleaved, not in runs
    counters: dict[str, int] = {}
    plan: list[tuple[str, str, str]] = []
    for i in range(n):
        kind = shape[order[i % 16]]
        k = counters[kind] = counters.get(kind, -1) + 1
        if kind == "vram":
            plan.append(("vram", *MIX[k % len(MIX)]))
        elif kind == "fits":
            plan.append(("vram", *_WHAT_FITS[k % len(_WHAT_FITS)]))
        elif kind == "solver":
            plan.append(("vram", *_SOLVERS[k % len(_SOLVERS)]))
        elif kind == "log":
            plan.append(("vram-log", log_text, "en-US"))
        elif kind == "blob":
            plan.append(("vram-log", _BLOB, "en-US"))
        else:
            plan.append(("button", _BUTTONS[k % len(_BUTTONS)], "en-US"))
    return plan


def rss_mb() -> float:
    """Resident memory of this process now (Linux ``/proc``; else the peak from getrusage)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# -- child: the fake Discord and the load generator --------------------------------------------------------------------


def load_process(
    conn: Connection,
    n: int,
    concurrency: int,
    unique: bool,
    warmup: int,
    backend: str,
    shards: int = 1,
    mixed: bool = False,
) -> None:
    if mixed:
        asyncio.run(_load_mixed(conn, n, concurrency, warmup))
    else:
        asyncio.run(_load(conn, n, concurrency, unique, warmup, FAKE_MIX if backend == "fake" else MIX, shards))


async def _load_mixed(conn: Connection, n: int, concurrency: int, warmup: int) -> None:
    """The mixed burst: first responses timed, every final answer waited for (a deferral's card comes later)."""
    from tests.fake_discord import payloads as p
    from tests.fake_discord.server import FakeDiscord, Recorded

    guild_id = 166_893_000_000 << 22
    channel = p.text_channel(guild_id + 1, guild_id)
    fake = FakeDiscord(guilds=[p.guild(guild_id, channels=[channel])])
    fake.record = False
    await fake.start()
    conn.send({"api": fake.api_base, "gateway": fake.gateway_url})
    await fake.wait_ready(timeout=60)
    app = str(fake.app_id)
    started: dict[str, float] = {}
    kinds: dict[str, str] = {}  # token -> what it was ("vram", "vram-log", "button")
    first: dict[str, float] = {}  # token -> latency of its first response
    outcome: dict[str, str] = {}  # token -> "card", "error", "too_complex"
    deferred: set[str] = set()
    slots = asyncio.Semaphore(concurrency)
    done = asyncio.Event()

    def final(token: str, body: Any) -> None:
        data = body.get("data", body) if isinstance(body, dict) else {}
        text = json.dumps(data)
        if "took too long" in text or "too long or too complex" in text or "시간이 너무" in text:
            outcome[token] = "too_complex"
        elif data.get("embeds"):
            outcome[token] = "card"
        else:
            outcome[token] = "error"
        if len(outcome) == len(started):
            done.set()

    def on_request(record: Recorded) -> None:
        path, body = record.path, record.json
        if path.startswith("/interactions/"):
            token = path.split("/")[3]
            if token not in started or token in first:
                return
            first[token] = record.at - started[token]
            slots.release()
            if body.get("type") in (5, 6):  # a deferral: the answer follows through the webhook
                deferred.add(token)
            else:
                final(token, body)
        elif path.startswith(f"/webhooks/{app}/"):
            token = path.split("/")[3]
            if token in deferred and token not in outcome and record.method in ("PATCH", "POST"):
                final(token, body or {})

    fake.on_request = on_request
    command_id = p.snowflake()
    bot_user = fake.bot_user
    plan = mixed_plan(warmup + n)

    async def fire(items: list[tuple[str, str, str]]) -> float:
        started.clear(), first.clear(), outcome.clear(), deferred.clear()
        done.clear()
        t_start = time.perf_counter()
        for i, (kind, text, locale) in enumerate(items):
            await slots.acquire()
            user = p.user(500_000_000_000_000_000 + i % 997, "user")
            if kind == "button":
                row = {"type": 1, "components": [{"type": 2, "style": 2, "label": "32K", "custom_id": text}]}
                message = p.message(message_id=p.snowflake(), channel_id=int(channel["id"]), author=bot_user,
                                    guild_id=guild_id, components=[row])  # fmt: skip
                fake.messages[int(message["id"])] = message  # the card the press edits
                payload = p.button_press(app_id=fake.app_id, custom_id=text, message_data=message, user_data=user,
                                         guild_id=guild_id, channel=channel, locale=locale)  # fmt: skip
            else:
                option = "query" if kind == "vram" else "text"
                payload = p.slash_command(app_id=fake.app_id, command_id=command_id, name=kind,
                                          options=[p.command_option(option, text)], user_data=user, locale=locale,
                                          guild_id=guild_id, channel=channel)  # fmt: skip
            started[payload["token"]] = time.perf_counter()
            kinds[payload["token"]] = "what fits" if text.startswith("what can I run") else kind
            await fake.interaction(payload)
        with contextlib.suppress(TimeoutError):
            if items:  # a warm-up of none has nothing to wait for
                await asyncio.wait_for(done.wait(), timeout=300)
        return time.perf_counter() - t_start

    await fire(plan[:warmup])
    conn.send({"phase": "measure"})
    conn.recv()
    wall = await fire(plan[warmup:])
    latencies = [first.get(token, float("inf")) for token in started]
    by_kind: dict[str, list[float]] = {}
    for token in started:
        by_kind.setdefault(kinds[token], []).append(first.get(token, float("inf")) * 1000)
    p95_by_kind = {kind: round(percentile(values, 0.95), 1) for kind, values in sorted(by_kind.items())}
    counts = {kind: sum(1 for v in outcome.values() if v == kind) for kind in ("card", "error", "too_complex")}
    failures = [f"{len(started) - len(outcome)} interactions never got their final answer"] if counts else []
    conn.send({"wall": wall, "latencies": latencies, "failures": failures if len(outcome) < len(started) else [],
               "failed": len(started) - len(outcome), "outcomes": counts,
               "late": sum(1 for x in latencies if x > WINDOW_SECONDS), "deferred": len(deferred),
               "p95_by_kind": p95_by_kind})  # fmt: skip
    conn.recv()
    await fake.close()


async def _load(
    conn: Connection,
    n: int,
    concurrency: int,
    unique: bool,
    warmup: int,
    mix: list[tuple[str, str]],
    shards: int = 1,
) -> None:
    from tests.fake_discord import payloads as p
    from tests.fake_discord.server import FakeDiscord, Recorded

    guild_ids = [(166_893_000_000 + shard) << 22 for shard in range(shards)]  # guild i lives on shard i (of shards)
    assert all((g >> 22) % shards == i for i, g in enumerate(guild_ids))
    channels = [p.text_channel(g + 1, g) for g in guild_ids]
    fake = FakeDiscord(
        shard_count=shards, guilds=[p.guild(g, channels=[c]) for g, c in zip(guild_ids, channels, strict=True)]
    )
    fake.record = False
    await fake.start()
    conn.send({"api": fake.api_base, "gateway": fake.gateway_url})
    await fake.wait_ready(timeout=60)

    started: dict[str, float] = {}
    latencies: list[float] = []
    failures: list[str] = []
    slots = asyncio.Semaphore(concurrency)
    done = asyncio.Event()
    remaining = {"count": 0}

    def on_request(record: Recorded) -> None:
        if not record.path.startswith("/interactions/"):
            return
        token = record.path.split("/")[3]
        t0 = started.pop(token, None)
        if t0 is None:
            return
        latencies.append(record.at - t0)
        if record.json.get("type") != 4 or "embeds" not in record.json.get("data", {}):
            failures.append(json.dumps(record.json)[:300])
        slots.release()
        remaining["count"] -= 1
        if remaining["count"] == 0:
            done.set()

    fake.on_request = on_request
    command_id = p.snowflake()

    async def fire(count: int, offset: int) -> float:
        remaining["count"] = count
        done.clear()
        t_start = time.perf_counter()
        for i in range(count):
            await slots.acquire()
            text, locale = mix[(offset + i) % len(mix)]
            guild_id, channel = guild_ids[i % shards], channels[i % shards]
            if unique:  # another context, weight format and KV type each time: no parse or calculation cache hit
                n = offset + i
                text = f"{text} {n % 2000 + 1}k {UNIQUE_QUANTS[n % len(UNIQUE_QUANTS)]} kv {UNIQUE_KV[n // 7 % 3]}"
            payload = p.slash_command(
                app_id=fake.app_id,
                command_id=command_id,
                name="vram",
                options=[p.command_option("query", text)],
                user_data=p.user(500_000_000_000_000_000 + (offset + i) % 997, "user"),
                locale=locale,
                guild_id=guild_id,
                channel=channel,
            )
            started[payload["token"]] = time.perf_counter()
            await fake.interaction(payload)
        await asyncio.wait_for(done.wait(), timeout=120)
        return time.perf_counter() - t_start

    await fire(warmup, 0)
    latencies.clear()
    conn.send({"phase": "measure"})
    conn.recv()  # the bot has noted its CPU time
    wall = await fire(n, warmup)
    conn.send({"wall": wall, "latencies": latencies, "failures": failures[:5], "failed": len(failures)})
    conn.recv()
    await fake.close()


# -- parent: the bot ------------------------------------------------------------------------------------------------


def bare_bot() -> Any:
    """A discord.py bot that does nothing but answer ``/vram`` with a one-line embed: the floor for latency."""
    import discord
    from discord import app_commands
    from discord.ext import commands

    bot = commands.AutoShardedBot(command_prefix="!", intents=discord.Intents.none(), max_messages=None)

    @bot.tree.command(name="vram", description="bare")
    @app_commands.describe(query="the question")
    async def vram(interaction: discord.Interaction[Any], query: str) -> None:
        await interaction.response.send_message(embed=discord.Embed(title=query[:100]))

    @bot.tree.command(name="vram-log", description="bare")
    @app_commands.describe(text="the log")
    async def vram_log(interaction: discord.Interaction[Any], text: str = "") -> None:
        await interaction.response.send_message(embed=discord.Embed(title=text[:100]))

    async def on_interaction(interaction: discord.Interaction[Any]) -> None:
        if interaction.type == discord.InteractionType.component:
            await interaction.response.edit_message(embed=discord.Embed(title="pressed"))

    bot.add_listener(on_interaction)
    return bot


async def run_bot(
    conn: Connection,
    backend_name: str,
    *,
    shard_count: int | None = None,
    shard_ids: tuple[int, ...] | None = None,
    database_path: str = ":memory:",
) -> dict[str, Any]:
    import discord
    import yarl
    from discord.gateway import DiscordWebSocket

    from vramfit.bot.bot import VramBot
    from vramfit.bot.settings import Settings

    urls = conn.recv()
    discord.http.Route.BASE = urls["api"]
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(urls["gateway"])
    if backend_name == "bare":
        return await _measure(conn, bare_bot())
    if backend_name == "fake":
        from tests.fake_discord.backend import FakeBackend

        backend = FakeBackend().backend()
    else:
        from vramfit.bot.answering.service import CalcBackend

        backend = CalcBackend().backend()
    settings = Settings(
        _env_file=None,
        cooldown_rate=10_000,
        cooldown_seconds=1.0,
        log_level="WARNING",
        shard_count=shard_count,
        shard_ids=shard_ids,
        database_path=database_path,  # DATABASE_URL, when set, wins: every process shares that PostgreSQL
    )
    return await _measure(conn, VramBot(settings, backend, guild_ready_timeout=0.05))


async def _measure(conn: Connection, vram_bot: Any) -> dict[str, Any]:
    await vram_bot.login("benchmark-token")
    task = asyncio.create_task(vram_bot.connect())
    await vram_bot.wait_until_ready()
    rss_ready = rss_mb()
    loop = asyncio.get_running_loop()
    message = await loop.run_in_executor(None, conn.recv)  # warm-up done
    assert message == {"phase": "measure"}
    cpu0 = time.process_time()
    conn.send("go")
    result: dict[str, Any] = await loop.run_in_executor(None, conn.recv)
    cpu = time.process_time() - cpu0
    result.update(
        cpu=cpu,
        rss_ready=rss_ready,
        rss_after=rss_mb(),
        rss_peak=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    )
    conn.send("bye")
    await vram_bot.close()
    await asyncio.wait_for(task, 10)
    return result


def bot_process(conn: Connection, backend: str, shards: int, shard_id: int, database_path: str) -> None:
    """One of ``--processes N``: a bot running shard ``shard_id`` of ``shards``; reports its figures at the end."""
    logging.basicConfig(level=logging.WARNING)
    result = asyncio.run(run_bot(conn, backend, shard_count=shards, shard_ids=(shard_id,), database_path=database_path))
    conn.send({k: result[k] for k in ("cpu", "rss_ready", "rss_after", "rss_peak")})


def run_processes(args: argparse.Namespace) -> int:
    """``--processes N``: the parent only relays between the load process and the bot processes."""
    ctx = mp.get_context("spawn")
    load_conn, child = ctx.Pipe()
    load = ctx.Process(
        target=load_process,
        args=(child, args.n, args.concurrency, args.unique, args.warmup, args.backend, args.processes),
    )
    load.start()
    tmp = tempfile.TemporaryDirectory(prefix="vramfit-load-")
    database_path = str(Path(tmp.name) / "settings.db")
    bots: list[tuple[Any, Connection]] = []
    try:
        urls = load_conn.recv()
        for shard_id in range(args.processes):
            conn, bot_child = ctx.Pipe()
            proc = ctx.Process(
                target=bot_process, args=(bot_child, args.backend, args.processes, shard_id, database_path)
            )
            proc.start()
            conn.send(urls)
            bots.append((proc, conn))
        assert load_conn.recv() == {"phase": "measure"}  # warm-up done
        for _, conn in bots:
            conn.send({"phase": "measure"})
        for _, conn in bots:
            assert conn.recv() == "go"  # each bot has noted its CPU time
        load_conn.send("go")
        result: dict[str, Any] = load_conn.recv()
        for _, conn in bots:
            conn.send(result)
        per_bot = []
        for _, conn in bots:
            assert conn.recv() == "bye"
            per_bot.append(conn.recv())
        load_conn.send("bye")
    finally:
        for proc, _ in bots:
            proc.join(timeout=30)
            if proc.is_alive():
                proc.terminate()
        load.join(timeout=30)
        if load.is_alive():
            load.terminate()
        tmp.cleanup()
    lat_ms = [x * 1000 for x in result["latencies"]]
    cpu = sum(b["cpu"] for b in per_bot)
    summary = {
        "interactions": args.n,
        "processes": args.processes,
        "concurrency": args.concurrency,
        "backend": args.backend,
        "unique": args.unique,
        "database": "postgresql (DATABASE_URL)" if os.environ.get("DATABASE_URL") else "sqlite (shared file)",
        "interactions_per_s": round(args.n / result["wall"], 1),
        "bot_cpu_ms_per_interaction": round(cpu * 1000 / args.n, 3),
        "p50_ms": round(statistics.median(lat_ms), 2),
        "p99_ms": round(percentile(lat_ms, 0.99), 2),
        "per_process": [
            {"shard": i, "cpu_s": round(b["cpu"], 2), "rss_after_mb": round(b["rss_after"], 1)}
            for i, b in enumerate(per_bot)
        ],
        "failed": result["failed"],
    }
    if args.json:
        print(json.dumps(summary))
    else:
        print(
            f"{args.n} interactions over {args.processes} bot processes (shard i of {args.processes} each; "
            f"{args.backend} calculator, {args.concurrency} in flight{', unique questions' if args.unique else ''}; "
            f"settings in {summary['database']})\n"
            f"  combined     {summary['interactions_per_s']} interactions/s (wall clock)\n"
            f"  bot CPU      {summary['bot_cpu_ms_per_interaction']} ms/interaction, all processes together\n"
            f"  latency      p50 {summary['p50_ms']} ms, p99 {summary['p99_ms']} ms"
        )
        for row in summary["per_process"]:
            print(f"  process {row['shard']}    CPU {row['cpu_s']} s, RSS {row['rss_after_mb']} MB")
        print(f"  failed       {summary['failed']}")
        for failure in result["failures"]:
            print("  !", failure)
    return 1 if result["failed"] else 0


def run_one(args: argparse.Namespace, backend: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """One burst against one bot in this process: (summary, raw result)."""
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(
        target=load_process,
        args=(child, args.n, args.concurrency, args.unique, args.warmup, backend, 1, args.mixed),
    )
    proc.start()
    try:
        result = asyncio.run(run_bot(parent, backend))
    finally:
        proc.join(timeout=30)
        if proc.is_alive():
            proc.terminate()
    lat_ms = [x * 1000 for x in result["latencies"]]
    summary = {
        "interactions": args.n,
        "concurrency": args.concurrency,
        "backend": backend,
        "unique": args.unique,
        "interactions_per_s": round(args.n / result["wall"], 1),
        "bot_cpu_ms_per_interaction": round(result["cpu"] * 1000 / args.n, 3),
        "interactions_per_bot_cpu_s": round(args.n / result["cpu"], 1) if result["cpu"] else None,
        "p50_ms": round(statistics.median(lat_ms), 2),
        "p95_ms": round(percentile(lat_ms, 0.95), 2),
        "p99_ms": round(percentile(lat_ms, 0.99), 2),
        "rss_ready_mb": round(result["rss_ready"], 1),
        "rss_after_mb": round(result["rss_after"], 1),
        "rss_peak_mb": round(result["rss_peak"], 1),
        "failed": result["failed"],
    }
    if args.mixed:
        summary |= {"past_window": result["late"], "outcomes": result["outcomes"], "deferred": result["deferred"],
                    "p95_by_kind": result["p95_by_kind"]}
    return summary, result


def side_by_side(args: argparse.Namespace) -> int:
    """The bot and a bare discord.py bot on the same burst, one after the other; their latencies and the ratio.
    With ``--repeat N``, N such pairs: each pair's p95 ratio, then the table of the pair with the median ratio."""
    pairs = []
    for _ in range(max(1, args.repeat)):
        ours, ours_raw = run_one(args, args.backend)
        bare, _ = run_one(args, "bare")
        pairs.append((ours["p95_ms"] / bare["p95_ms"], ours, ours_raw, bare))
    if len(pairs) > 1 and not args.json:
        ratios = ", ".join(f"{ratio:.2f}" for ratio, *_ in pairs)
        print(f"p95 ratio of each of {len(pairs)} pairs (vramfit / bare): {ratios}; the median pair:")
    _, ours, ours_raw, bare = sorted(pairs, key=lambda pair: pair[0])[len(pairs) // 2]
    if args.json:
        print(json.dumps({"bot": ours, "bare": bare, "p95_ratio": round(ours["p95_ms"] / bare["p95_ms"], 2)}))
    else:
        what = f"{args.backend} calculator vs a bare discord.py bot"
        print(f"{args.n} interactions, {args.concurrency} in flight ({what})")
        print(f"  {'':14}{'vramfit':>12}{'bare':>12}{'ratio':>9}")
        for key, label in (("p50_ms", "p50 ms"), ("p95_ms", "p95 ms"), ("p99_ms", "p99 ms"),
                           ("interactions_per_s", "interactions/s"),
                           ("bot_cpu_ms_per_interaction", "bot CPU ms")):  # fmt: skip
            print(f"  {label:14}{ours[key]:>12}{bare[key]:>12}{ours[key] / bare[key]:>9.2f}")
        print(f"  failed        {ours['failed']:>12}{bare['failed']:>12}")
        if args.mixed:
            print(f"  past window   {ours['past_window']:>12}{bare['past_window']:>12}")
            print(f"  deferred      {ours['deferred']:>12}{bare['deferred']:>12}")
            for kind, p95 in ours["p95_by_kind"].items():
                print(f"  p95 {kind:<10}{p95:>12}{bare['p95_by_kind'].get(kind, 0):>12}")
            print(f"  answers       {', '.join(f'{k} {v}' for k, v in ours['outcomes'].items())}")
        for failure in ours_raw["failures"]:
            print("  !", failure)
    return 1 if ours["failed"] or bare["failed"] else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=2000, help="interactions to measure (default 2000)")
    parser.add_argument("-c", "--concurrency", type=int, default=32, help="interactions in flight (default 32)")
    parser.add_argument("--warmup", type=int, default=200, help="interactions before measuring (default 200)")
    parser.add_argument("--unique", action="store_true", help="every question different: no card cache hits")
    parser.add_argument("--backend", choices=["real", "fake"], default="real", help="calculator behind the bot")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--bare", action="store_true", help="a bare discord.py bot instead of vramfit's")
    parser.add_argument("--side-by-side", action="store_true", help="vramfit's bot, then a bare one, on one burst")
    parser.add_argument("--mixed", action="store_true", help="a mixed burst: what fits, solvers, logs, buttons")
    parser.add_argument("--repeat", type=int, default=1, help="with --side-by-side: pairs to run (the median shown)")
    parser.add_argument(
        "--processes", type=int, default=1, help="bot processes, one shard each, sharing one settings database"
    )
    args = parser.parse_args(argv)
    if args.mixed and args.n == parser.get_default("n"):
        args.n = 1000
    logging.basicConfig(level=logging.WARNING)
    if args.processes > 1:
        return run_processes(args)
    if args.side_by_side:
        return side_by_side(args)
    summary, result = run_one(args, "bare" if args.bare else args.backend)
    if args.json:
        print(json.dumps(summary))
    else:
        print(
            f"{args.n} interactions ({args.backend} calculator, {args.concurrency} in flight"
            f"{', unique questions' if args.unique else ''})\n"
            f"  throughput   {summary['interactions_per_s']} interactions/s (wall clock)\n"
            f"  bot CPU      {summary['bot_cpu_ms_per_interaction']} ms/interaction"
            f" = {summary['interactions_per_bot_cpu_s']} interactions per CPU-second (one core)\n"
            f"  latency      p50 {summary['p50_ms']} ms, p95 {summary['p95_ms']} ms, p99 {summary['p99_ms']} ms\n"
            f"  bot RSS      {summary['rss_ready_mb']} MB ready, {summary['rss_after_mb']} MB after"
            f" (peak {summary['rss_peak_mb']} MB)\n"
            f"  failed       {summary['failed']}"
        )
        if args.mixed:
            print(f"  past window  {summary['past_window']} of {args.n} first responses after {WINDOW_SECONDS:g} s")
            print(f"  deferred     {summary['deferred']} (the answer followed the deferral)")
            print(f"  answers      {', '.join(f'{k} {v}' for k, v in summary['outcomes'].items())}")
        for failure in result["failures"]:
            print("  !", failure)
    return 1 if result["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
