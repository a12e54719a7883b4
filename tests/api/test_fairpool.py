"""The solver's fair pool (accordion.api.fairpool) on its own, with real worker threads.

Each search here is a function that notes that it started and waits for the test to let it
end, so which search a free worker takes next is seen exactly, whatever the machine's speed.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

import pytest

from accordion.api.fairpool import FairPool, NotStarted, PoolFull

BOUND = 10.0  # seconds any wait here may take on a loaded machine (polled, never slept out)


class Searches:
    """Stand-in searches: ``work(name)`` runs until ``finish(name)``; ``started`` in order."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.stopped: list[str] = []
        self._go: dict[str, threading.Event] = {}

    def work(self, name: str) -> Callable[[], str]:
        go = self._go[name] = threading.Event()

        def search() -> str:
            self.started.append(name)
            go.wait(BOUND)
            return name

        return search

    def stop(self, name: str) -> Callable[[], None]:
        def stop() -> None:
            self.stopped.append(name)
            self._go[name].set()  # as the solver does: a stopped search ends at its next check

        return stop

    def finish(self, name: str) -> None:
        self._go[name].set()


async def until(condition: Callable[[], bool], what: str) -> None:
    give_up = time.monotonic() + BOUND
    while not condition():
        assert time.monotonic() < give_up, f"still waiting for {what}"
        await asyncio.sleep(0.005)


def submit(
    pool: FairPool, searches: Searches, client: str, name: str, start_by: float | None = None
) -> asyncio.Task[str]:
    return asyncio.ensure_future(
        pool.run(client, searches.work(name), stop=searches.stop(name), start_by=start_by)
    )


@pytest.fixture
def searches() -> Searches:
    return Searches()


async def test_a_client_with_no_recent_use_goes_before_another_clients_backlog(searches: Searches) -> None:
    pool = FairPool(1, per_client_running=1, per_client_queued=4)
    try:
        a1 = submit(pool, searches, "A", "a1")
        await until(lambda: searches.started == ["a1"], "a1 to start")
        rest = [submit(pool, searches, "A", name) for name in ("a2", "a3", "a4")]
        await until(lambda: pool.queued == 3, "A's backlog to queue")
        b1 = submit(pool, searches, "B", "b1")  # came last, but B has had no worker time
        await until(lambda: pool.queued == 4, "b1 to queue")
        searches.finish("a1")
        await until(lambda: len(searches.started) == 2, "the next search to start")
        assert searches.started == ["a1", "b1"], "a FIFO queue would start a2 here"
        for name in ("b1", "a2", "a3", "a4"):
            searches.finish(name)
        assert await asyncio.gather(a1, b1, *rest) == ["a1", "b1", "a2", "a3", "a4"]
        assert searches.started == ["a1", "b1", "a2", "a3", "a4"]
    finally:
        pool.close()


async def test_the_least_served_client_goes_first_not_the_first_to_queue(searches: Searches) -> None:
    pool = FairPool(1)
    try:
        b0 = submit(pool, searches, "B", "b0")  # B has had some worker time
        await until(lambda: searches.started == ["b0"], "b0 to start")
        searches.finish("b0")
        await b0
        a1 = submit(pool, searches, "A", "a1")
        await until(lambda: searches.started[-1:] == ["a1"], "a1 to start")
        b1 = submit(pool, searches, "B", "b1")  # queued first
        c1 = submit(pool, searches, "C", "c1")  # queued second, by a client with no use at all
        await until(lambda: pool.queued == 2, "b1 and c1 to queue")
        assert pool.attained("C") == 0.0 < pool.attained("B")
        searches.finish("a1")
        await until(lambda: len(searches.started) == 3, "the next search to start")
        assert searches.started[-1] == "c1"
        searches.finish("c1")
        searches.finish("b1")
        await asyncio.gather(a1, b1, c1)
        assert searches.started == ["b0", "a1", "c1", "b1"]
    finally:
        pool.close()


async def test_one_client_runs_at_most_its_share_while_a_worker_is_free_for_others(
    searches: Searches,
) -> None:
    pool = FairPool(2, per_client_running=1)
    try:
        a1, a2 = submit(pool, searches, "A", "a1"), submit(pool, searches, "A", "a2")
        await until(lambda: searches.started == ["a1"] and pool.queued == 1, "a1 to run and a2 to wait")
        b1 = submit(pool, searches, "B", "b1")  # the second worker is B's at once
        await until(lambda: searches.started == ["a1", "b1"], "b1 to start")
        assert pool.running == 2 and pool.queued == 1
        for name in ("a1", "b1", "a2"):
            searches.finish(name)
        await asyncio.gather(a1, a2, b1)
    finally:
        pool.close()


async def test_queues_are_bounded_per_client_and_in_all(searches: Searches) -> None:
    pool = FairPool(1, per_client_queued=2, queued=3)
    try:
        tasks = [submit(pool, searches, "A", name) for name in ("a1", "a2", "a3")]
        await until(lambda: pool.queued == 2, "A's two to queue")
        with pytest.raises(PoolFull) as one_client:
            await pool.run("A", searches.work("a4"), stop=searches.stop("a4"))
        assert one_client.value.limit == 2 and "one client" in one_client.value.what
        tasks.append(submit(pool, searches, "B", "b1"))
        await until(lambda: pool.queued == 3, "b1 to queue")
        with pytest.raises(PoolFull) as in_all:
            await pool.run("C", searches.work("c1"), stop=searches.stop("c1"))
        assert in_all.value.limit == 3 and "server" in in_all.value.what
        for name in ("a1", "a2", "a3", "b1"):
            searches.finish(name)
        await asyncio.gather(*tasks)
        assert "a4" not in searches.started and "c1" not in searches.started
    finally:
        pool.close()


async def test_a_search_still_queued_at_its_start_by_never_runs(searches: Searches) -> None:
    pool = FairPool(1)
    try:
        a1 = submit(pool, searches, "A", "a1")
        await until(lambda: searches.started == ["a1"], "a1 to start")
        late = submit(pool, searches, "B", "b1", start_by=time.monotonic() + 0.05)
        with pytest.raises(NotStarted):
            await asyncio.wait_for(late, BOUND)
        assert pool.queued == 0
        searches.finish("a1")
        await a1
        after = submit(pool, searches, "B", "b2")  # the worker is free again, for B too
        await until(lambda: "b2" in searches.started, "b2 to start")
        searches.finish("b2")
        await after
        assert "b1" not in searches.started
    finally:
        pool.close()


async def test_cancelling_stops_a_running_search_and_drops_a_queued_one(searches: Searches) -> None:
    pool = FairPool(1)
    try:
        a1 = submit(pool, searches, "A", "a1")
        await until(lambda: searches.started == ["a1"], "a1 to start")
        b1 = submit(pool, searches, "B", "b1")
        await until(lambda: pool.queued == 1, "b1 to queue")
        b1.cancel()
        with pytest.raises(asyncio.CancelledError):
            await b1
        assert pool.queued == 0
        a1.cancel()  # its stop is called; the worker counts as busy until the search has ended
        with pytest.raises(asyncio.CancelledError):
            await a1
        assert searches.stopped == ["a1"]
        c1 = submit(pool, searches, "C", "c1")
        await until(lambda: "c1" in searches.started, "c1 to start once a1 ended")
        searches.finish("c1")
        assert await c1 == "c1"
        assert "b1" not in searches.started and pool.running == 0
    finally:
        pool.close()
