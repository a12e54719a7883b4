"""``raise_lost_cancel`` (accordion.store.redis_watch): a cancellation swallowed on the way (as
Python 3.11's ``asyncio.wait_for`` may, CPython gh-86296) is delivered at the next check, and
nothing is raised when none is pending. (The leak it closes, with real processes:
tests/api/test_streams_end.py.)"""

from __future__ import annotations

import asyncio

import pytest

from accordion.store.redis_watch import raise_lost_cancel


async def test_a_swallowed_cancellation_is_delivered() -> None:
    reached: list[str] = []

    async def watcher() -> None:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        try:
            await asyncio.sleep(0)  # the cancellation arrives here...
        except asyncio.CancelledError:
            pass  # ...and is lost, as wait_for loses one that comes as its awaitable completes
        reached.append("after the swallowed cancel")
        raise_lost_cancel()
        reached.append("went on")  # the leak: a cancelled watcher reading on

    task = asyncio.create_task(watcher())
    with pytest.raises(asyncio.CancelledError):
        await task
    assert reached == ["after the swallowed cancel"]


async def test_nothing_is_raised_without_a_pending_cancellation() -> None:
    async def timed_out() -> str:
        # asyncio.timeout takes its own cancellation back: not a lost one.
        try:
            async with asyncio.timeout(0.01):
                await asyncio.sleep(10)
        except TimeoutError:
            pass
        raise_lost_cancel()
        return "went on"

    assert await asyncio.create_task(timed_out()) == "went on"
    raise_lost_cancel()  # the test's own task: nothing pending
