"""Helpers of the store tests (tests/store, and tests/faults/test_cluster_store.py, which runs
test_store.py's suite on a Redis Cluster): a record, a move, the events a watch yields, a clock."""

from __future__ import annotations

import asyncio

from accordion.store import GameRecord, GameStore, StoredReply

TTL = 60.0


def record(game_id: str = "g1", version: int = 1, data: bytes = b"d1") -> GameRecord:
    return GameRecord(game_id, version, b"tokenhash", data)


async def cas(
    store: GameStore, version: int, game_id: str = "g1", ttl: float = TTL, **kw: object
) -> StoredReply | None:
    """A move from ``version``: data and event name the version they produce."""
    nxt = version + 1
    return await store.compare_and_set(
        game_id, version, f"d{nxt}".encode(), ttl=ttl, event=f"e{nxt}".encode(), **kw
    )  # type: ignore[arg-type]


async def events_after(
    store: GameStore, game_id: str, after: int, quiet: float = 0.3, first: float = 5.0
) -> list[int]:
    """Versions ``watch`` yields until nothing more comes for ``quiet`` seconds (``first`` for
    the first one: on a loaded machine a watch's set-up alone, a Redis Cluster's most of all,
    can take longer than ``quiet``; a caller expecting nothing passes a short ``first``)."""
    seen: list[int] = []
    it = store.watch(game_id, after)
    try:
        while True:
            seen.append((await asyncio.wait_for(anext(it), quiet if seen else first)).version)
    except (TimeoutError, StopAsyncIteration):
        return seen


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now
