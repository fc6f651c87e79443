"""Per-user cooldowns: discord.py's ``commands.CooldownMapping`` beside bot.cooldowns.UserCooldown, per call.

    python benchmarks/cooldowns.py

Both hold discord.py's own ``Cooldown`` buckets; the mapping differs. ``CooldownMapping.get_bucket`` scans every live
bucket on each call (``_verify_cache_integrity``), so a mention costs more the more users are inside their window;
``UserCooldown`` prunes every 1,024 calls. Prints a table (ratios side by side; these machines are noisy); asserts
nothing.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from discord.ext import commands  # noqa: E402

from vramfit.bot.cooldowns import UserCooldown  # noqa: E402

RATE, PER, CALLS = 5, 30.0, 200


def per_call(live_users: int) -> tuple[float, float]:
    """Seconds per call of each, with ``live_users`` buckets inside their window."""
    now = time.time()
    mapping = commands.CooldownMapping.from_cooldown(RATE, PER, commands.BucketType.user)
    for user in range(live_users):  # filled directly: through get_bucket the filling alone is quadratic
        bucket = mapping._cooldown.copy()  # type: ignore[union-attr]
        bucket.update_rate_limit(now)
        mapping._cache[user] = bucket
    messages = [SimpleNamespace(author=SimpleNamespace(id=user)) for user in range(CALLS)]
    start = time.perf_counter()
    for message in messages:
        found = mapping.get_bucket(message, now + 1)  # type: ignore[arg-type]
        assert found is not None
        found.update_rate_limit(now + 1)
    theirs = (time.perf_counter() - start) / CALLS
    ours = UserCooldown(RATE, PER, clock=lambda: now)
    for user in range(live_users):
        ours.hit(user)
    start = time.perf_counter()
    for user in range(CALLS):
        ours.hit(user)
    return theirs, (time.perf_counter() - start) / CALLS


def main() -> None:
    print(f"{'live users':>10} {'CooldownMapping µs':>19} {'UserCooldown µs':>16} {'ratio':>8}")
    for live_users in (1_000, 20_000, 100_000):
        theirs, ours = per_call(live_users)
        print(f"{live_users:>10,} {theirs * 1e6:19.1f} {ours * 1e6:16.1f} {theirs / ours:8.0f}")


if __name__ == "__main__":
    main()
