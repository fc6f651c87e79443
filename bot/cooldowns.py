"""A per-user rate limit for the triggers discord.py does not throttle itself (mentions, buttons).

The buckets are discord.py's own :class:`app_commands.Cooldown`. The mapping is written here rather than taken from
``commands.CooldownMapping`` because that one scans every user's bucket on each call
(``_verify_cache_integrity``), which grows with the number of users; this one prunes every 1,024 calls instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from discord import app_commands

PRUNE_EVERY = 1024


class UserCooldown:
    """``rate`` uses per ``per`` seconds for each user id; :meth:`hit` returns the seconds to wait, or ``None``."""

    def __init__(self, rate: int, per: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.per = per
        self._clock = clock
        self._buckets: dict[int, app_commands.Cooldown] = {}
        self._calls = 0

    def hit(self, user_id: int) -> float | None:
        now = self._clock()
        self._calls += 1
        if self._calls % PRUNE_EVERY == 0:
            self._prune(now)
        bucket = self._buckets.get(user_id)
        if bucket is None:
            bucket = self._buckets[user_id] = app_commands.Cooldown(self.rate, self.per)
        retry = bucket.update_rate_limit(now)
        return retry or None

    def reset(self, user_id: int) -> None:
        self._buckets.pop(user_id, None)

    def _prune(self, now: float) -> None:
        stale = [uid for uid, b in self._buckets.items() if b.get_tokens(now) >= self.rate]
        for uid in stale:
            del self._buckets[uid]

    def __len__(self) -> int:
        return len(self._buckets)
