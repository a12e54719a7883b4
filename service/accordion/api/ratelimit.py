"""Per-key rate limits: GCRA (the generic cell rate algorithm), in Redis or in this process.

A limit is ``rate`` requests per second with a ``burst``: a quiet key may send ``burst``
calls at once, then one every ``1/rate`` seconds. GCRA keeps one number per key, the
*theoretical arrival time* (TAT), and decides each call in O(1):

    tat      = max(stored_tat, now)
    new_tat  = tat + interval                  # interval = 1 / rate
    allow_at = new_tat - burst * interval
    now < allow_at  →  refused; retry after (allow_at - now); nothing stored
    otherwise       →  allowed; store new_tat (it expires when it falls behind the clock)

Both backends do exactly this in integer microseconds:

* ``RedisRateLimiter``: one Lua script, atomic, on Redis's own clock (``TIME``), so every
  server process that shares the Redis shares each key's budget and no process's clock
  matters. The key is ``<prefix>:rl:{<name>}`` (one key: fine on Redis Cluster too).
* ``MemoryRateLimiter``: the same arithmetic on ``time.monotonic_ns``, for the embedded
  memory store (which already means one process).
"""

from __future__ import annotations

import abc
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# KEYS: the key's TAT. ARGV: interval_us, burst. Returns {1, 0} (allowed) or {0, retry_after_us}.
# TIME is fine in a script: since Redis 5, scripts replicate their effects, not themselves.
# string.format('%.0f') because tostring() of a large Lua number is "1.7e+15" (it loses digits).
GCRA_SCRIPT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then tat = now end
local new_tat = tat + interval
local allow_at = new_tat - burst * interval
if now < allow_at then
  return {0, allow_at - now}
end
redis.call('SET', KEYS[1], string.format('%.0f', new_tat), 'PX', math.ceil((new_tat - now) / 1000) + 1)
return {1, 0}
"""


@dataclass(frozen=True)
class Limit:
    """``rate`` calls per second (> 0), up to ``burst`` (>= 1) at once."""

    rate: float
    burst: int

    def __post_init__(self) -> None:
        if not self.rate > 0:
            raise ValueError(f"rate must be > 0, not {self.rate!r}")
        if self.burst < 1:
            raise ValueError(f"burst must be >= 1, not {self.burst!r}")

    @property
    def interval_us(self) -> int:
        return max(1, round(1_000_000 / self.rate))


@dataclass(frozen=True)
class Decision:
    allowed: bool
    retry_after: float = 0.0  # seconds until the call would be allowed (0 when allowed)


def gcra(stored_tat: int | None, now: int, limit: Limit) -> tuple[Decision, int | None]:
    """One GCRA step in microseconds: the decision and the TAT to store (None: store nothing)."""
    interval = limit.interval_us
    tat = max(stored_tat if stored_tat is not None else now, now)
    new_tat = tat + interval
    allow_at = new_tat - limit.burst * interval
    if now < allow_at:
        return Decision(False, (allow_at - now) / 1_000_000), None
    return Decision(True), new_tat


class RateLimiter(abc.ABC):
    """Decides one call of ``name`` under ``limit``."""

    @abc.abstractmethod
    async def acquire(self, name: str, limit: Limit) -> Decision:
        """Raises whatever the backend raises when it cannot decide (the caller chooses)."""


class MemoryRateLimiter(RateLimiter):
    """GCRA in this process. ``clock`` returns microseconds (tests pass a fake one).

    Keys come from clients (an address per NewGame caller), so the table is pruned: a key
    whose TAT has fallen behind the clock is as good as absent (GCRA starts it afresh), and
    once the table doubles since the last pruning those keys are dropped (as Redis expires them)."""

    def __init__(self, clock: Callable[[], int] | None = None) -> None:
        self._clock = clock or (lambda: time.monotonic_ns() // 1000)
        self._tat: dict[str, int] = {}
        self._prune_at = 1024

    def __len__(self) -> int:
        return len(self._tat)

    async def acquire(self, name: str, limit: Limit) -> Decision:
        now = self._clock()  # no await between read and write: atomic on the event loop
        decision, new_tat = gcra(self._tat.get(name), now, limit)
        if new_tat is not None:
            self._tat[name] = new_tat
            if len(self._tat) >= self._prune_at:
                self._tat = {key: tat for key, tat in self._tat.items() if tat > now}
                self._prune_at = max(1024, 2 * len(self._tat))
        return decision


class RedisRateLimiter(RateLimiter):
    """GCRA in Redis (one script call per decision). ``client`` is a redis.asyncio client."""

    def __init__(self, client: Any, *, key_prefix: str = "acc") -> None:
        self._script = client.register_script(GCRA_SCRIPT)
        self._prefix = key_prefix

    def key(self, name: str) -> str:
        return f"{self._prefix}:rl:{{{name}}}"

    async def acquire(self, name: str, limit: Limit) -> Decision:
        allowed, retry_us = await self._script(keys=[self.key(name)], args=[limit.interval_us, limit.burst])
        if int(allowed):
            return Decision(True)
        return Decision(False, int(retry_us) / 1_000_000)
