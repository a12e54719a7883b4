"""``interceptors.ClientRate`` (NewGame's and WatchGame's per-client rates): a client refused by
the limiter is refused in-process until its RetryInfo's time, without asking the limiter again
(a client that ignores RetryInfo costs no Redis call per retry), and asked again after it."""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest

from accordion.api import errors
from accordion.api.interceptors import ClientRate
from accordion.api.ratelimit import Decision, Limit, MemoryRateLimiter


class CountingLimiter(MemoryRateLimiter):
    """The in-process GCRA on a clock the test moves, counting the decisions asked of it."""

    def __init__(self) -> None:
        self.now_us = 1_000_000_000
        super().__init__(clock=lambda: self.now_us)
        self.asked = 0

    async def acquire(self, name: str, limit: Limit) -> Decision:
        self.asked += 1
        return await super().acquire(name, limit)


async def test_a_refused_client_is_refused_without_asking_until_its_retry_time() -> None:
    limiter = CountingLimiter()
    rate = ClientRate(Limit(rate=1000.0, burst=2), limiter, method="WatchGame")  # 1 ms apart after 2
    await rate.check("203.0.113.1")
    await rate.check("203.0.113.1")
    for _ in range(5):
        with pytest.raises(errors.ApiError) as refused:
            await rate.check("203.0.113.1")
        assert (refused.value.code, refused.value.reason) == (
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "RATE_LIMITED",
        )
        assert refused.value.metadata["limit"] == "WatchGame per client"
    assert limiter.asked == 3, "two allowed, one refused; the next four refused from memory"
    await rate.check("198.51.100.7")  # another client: its own budget, asked
    assert limiter.asked == 4
    # Once the retry time has passed (real time: the memory is time.monotonic's; the limiter's
    # clock moved on as well), the limiter is asked again and lets the call through.
    limiter.now_us += 10_000
    deadline = rate._refused["203.0.113.1"]
    while True:
        try:
            await rate.check("203.0.113.1")
            break
        except errors.ApiError:
            assert time.monotonic() < deadline + 30  # (a loaded machine may be slow to get there)
            await asyncio.sleep(0.001)
    assert limiter.asked >= 5 and "203.0.113.1" not in rate._refused
