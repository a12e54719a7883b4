"""One suite over both backends (the ``store`` fixture runs each test on memory and on a real Redis).
What only Redis has (hash slots, the cost of a move, and outages) is test_store_redis.py."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import pytest
import redis

from accordion.store import (
    GameExists,
    GameNotFound,
    GameRecord,
    GameStore,
    MemoryStore,
    StoredReply,
    VersionConflict,
    WatchEvent,
    open_store,
)
from accordion.store.redis import RedisStore

from .helpers import TTL, Clock, cas, events_after, record

# --- create / load


async def test_create_then_load(store: GameStore) -> None:
    await store.create(record(), ttl=TTL)
    assert await store.load("g1") == record()


async def test_create_taken_id_raises_game_exists(store: GameStore) -> None:
    await store.create(record(), ttl=TTL)
    with pytest.raises(GameExists):
        await store.create(record(data=b"other"), ttl=TTL)
    assert (await store.load("g1")).data == b"d1"


async def test_unknown_game_raises_not_found(store: GameStore) -> None:
    with pytest.raises(GameNotFound):
        await store.load("nope")
    with pytest.raises(GameNotFound):
        await cas(store, 1, game_id="nope")
    assert await store.get_reply("nope", "r1") is None


# --- compare_and_set


async def test_cas_bumps_version_and_returns_none(store: GameStore) -> None:
    await store.create(record(), ttl=TTL)
    assert await cas(store, 1) is None
    assert await store.load("g1") == GameRecord("g1", 2, b"tokenhash", b"d2")
    assert await cas(store, 2) is None
    assert (await store.load("g1")).version == 3


async def test_stale_version_raises_conflict_with_current(store: GameStore) -> None:
    await store.create(record(version=5), ttl=TTL)
    await cas(store, 5)
    with pytest.raises(VersionConflict) as info:
        await cas(store, 5)
    assert (info.value.game_id, info.value.expected, info.value.current) == ("g1", 5, 6)
    assert (await store.load("g1")).data == b"d6"


async def test_a_fingerprint_over_255_bytes_is_refused_and_changes_nothing(store: GameStore) -> None:
    # The limit is the interface's (Redis keeps the length in one byte), so both backends refuse it
    # alike, before anything is written.
    await store.create(record(), ttl=TTL)
    with pytest.raises(ValueError, match="255 bytes"):
        await cas(store, 1, request_id="r1", fingerprint=b"f" * 256, reply=b"reply1")
    assert await store.load("g1") == GameRecord("g1", 1, b"tokenhash", b"d1")
    assert await store.get_reply("g1", "r1") is None
    assert await cas(store, 1, request_id="r1", fingerprint=b"f" * 255, reply=b"reply1") is None
    assert await store.get_reply("g1", "r1") == StoredReply(b"f" * 255, b"reply1")


async def test_idempotent_retry_returns_first_reply_and_changes_nothing(store: GameStore) -> None:
    await store.create(record(), ttl=TTL)
    first = dict(request_id="r1", fingerprint=b"fp1", reply=b"reply1")
    assert await cas(store, 1, **first) is None
    # The retry: same id (even with another payload) gets the recorded reply, at any version.
    again = await store.compare_and_set(
        "g1", 1, b"X", ttl=TTL, event=b"X", request_id="r1", fingerprint=b"fp2", reply=b"reply2"
    )
    assert again == StoredReply(b"fp1", b"reply1")
    assert await store.load("g1") == GameRecord("g1", 2, b"tokenhash", b"d2")
    assert await events_after(store, "g1", 0) == [2]  # no extra event
    assert await store.get_reply("g1", "r1") == StoredReply(b"fp1", b"reply1")
    assert await store.get_reply("g1", "r2") is None
    # After the game moved on, the retry still gets its reply rather than a conflict.
    await cas(store, 2, request_id="r2", fingerprint=b"f", reply=b"x")
    assert await cas(store, 1, request_id="r1") == StoredReply(b"fp1", b"reply1")
    assert (await store.load("g1")).version == 3


async def test_concurrent_cas_exactly_one_wins(store: GameStore) -> None:
    await store.create(record(), ttl=TTL)
    results = await asyncio.gather(
        *(
            store.compare_and_set(
                "g1",
                1,
                f"w{i}".encode(),
                ttl=TTL,
                event=f"w{i}".encode(),
                request_id=f"req{i}",
                fingerprint=b"f",
                reply=f"{i}".encode(),
            )
            for i in range(20)
        ),
        return_exceptions=True,
    )
    winners = [i for i, r in enumerate(results) if r is None]
    conflicts = [r for r in results if isinstance(r, VersionConflict)]
    assert len(winners) == 1 and len(conflicts) == 19, results
    assert all(c.current == 2 for c in conflicts)
    assert await store.load("g1") == GameRecord("g1", 2, b"tokenhash", f"w{winners[0]}".encode())
    assert await events_after(store, "g1", 0) == [2]
    # Losers left no idempotency record: their retries must see the conflict, not a reply.
    losers = [i for i in range(20) if i not in winners]
    assert [await store.get_reply("g1", f"req{i}") for i in losers] == [None] * 19


async def test_replies_and_events_are_bounded(store: GameStore) -> None:
    """A long game keeps the last 1000 replies (at least) and about the last 1000 events."""
    await store.create(record(version=0), ttl=TTL)
    n = 2100
    for v in range(n):
        await cas(store, v, request_id=f"r{v}", fingerprint=b"f", reply=f"{v}".encode())
    for v in (n - 1000, n - 500, n - 1):
        assert await store.get_reply("g1", f"r{v}") == StoredReply(b"f", f"{v}".encode())
    assert await store.get_reply("g1", "r0") is None
    with pytest.raises(VersionConflict):  # a forgotten request id is a new (here stale) request
        await cas(store, 0, request_id="r0")
    versions = await events_after(store, "g1", 0)
    assert 1000 <= len(versions) <= 1100, len(versions)  # Redis trims with MAXLEN ~
    assert versions == list(range(versions[0], n + 1))


# --- expiry (memory on a hand-moved clock; Redis in real time)


@dataclass
class Timed:
    store: GameStore
    advance: Callable[[float], Awaitable[None]]


@pytest.fixture
async def timed(store_url: str) -> AsyncIterator[Timed]:
    """A store and a way to let time pass: the memory clock jumps; Redis really sleeps."""
    if store_url == "memory://":
        clock = Clock()

        async def jump(seconds: float) -> None:
            clock.now += seconds
            await asyncio.sleep(0.1)  # let watchers (polling every 0.05 s) notice

        t = Timed(MemoryStore(clock=clock, poll_interval=0.05), jump)
    else:
        t = Timed(open_store(store_url), asyncio.sleep)
    try:
        yield t
    finally:
        await t.store.close()


async def test_game_expires_after_ttl(timed: Timed) -> None:
    s = timed.store
    await s.create(record(), ttl=0.3)
    await s.compare_and_set("g1", 1, b"d2", ttl=0.3, event=b"e", request_id="r", fingerprint=b"f", reply=b"x")
    assert (await s.load("g1")).version == 2
    await timed.advance(1.0)
    with pytest.raises(GameNotFound):
        await s.load("g1")
    assert await s.get_reply("g1", "r") is None
    assert await events_after(s, "g1", 0, first=0.3) == []
    await s.create(record(), ttl=TTL)  # the id is free again, with nothing inherited
    assert await s.get_reply("g1", "r") is None


async def test_each_cas_refreshes_ttl(timed: Timed) -> None:
    s = timed.store
    await s.create(record(), ttl=1.0)
    await timed.advance(0.6)
    await cas(s, 1, ttl=1.0, request_id="r", fingerprint=b"f", reply=b"x")
    await timed.advance(0.6)  # 1.2 s after create, 0.6 s after the move: alive
    assert (await s.load("g1")).version == 2
    assert await s.get_reply("g1", "r") == StoredReply(b"f", b"x")
    await timed.advance(1.0)
    with pytest.raises(GameNotFound):
        await s.load("g1")


async def test_claim_request_first_wins_until_ttl(timed: Timed) -> None:
    s = timed.store
    assert await s.claim_request("new:abc", b"fp1", b"game-1", ttl=0.5) is None
    assert await s.claim_request("new:abc", b"fp2", b"game-2", ttl=0.5) == StoredReply(b"fp1", b"game-1")
    assert await s.claim_request("new:other", b"fp3", b"game-3", ttl=0.5) is None
    await timed.advance(1.0)
    assert await s.claim_request("new:abc", b"fp4", b"game-4", ttl=0.5) is None


async def test_watch_ends_when_game_expires(timed: Timed) -> None:
    s = timed.store
    await s.create(record(), ttl=0.5)
    it = s.watch("g1", 1)
    nxt = asyncio.ensure_future(anext(it))
    await timed.advance(1.0)
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(nxt, 5)


# --- watch


async def test_watch_replays_then_follows_then_ends_on_delete(store: GameStore) -> None:
    await store.create(record(), ttl=TTL)
    for v in (1, 2, 3):
        await cas(store, v)
    it = store.watch("g1", 2)
    assert await asyncio.wait_for(anext(it), 5) == WatchEvent("g1", 3, b"e3")
    assert await asyncio.wait_for(anext(it), 5) == WatchEvent("g1", 4, b"e4")
    nxt = asyncio.ensure_future(anext(it))
    await asyncio.sleep(0.1)  # the watcher is now waiting for a live event
    await cas(store, 4)
    assert await asyncio.wait_for(nxt, 5) == WatchEvent("g1", 5, b"e5")
    nxt = asyncio.ensure_future(anext(it))
    await asyncio.sleep(0.1)
    await store.delete("g1")
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(nxt, 5)  # Redis notices at its next block timeout (1 s)


async def test_watch_of_missing_game_ends_at_once(store: GameStore) -> None:
    assert [e async for e in store.watch("nope", 0)] == []


async def test_watch_from_current_version_sees_only_new_events(store: GameStore) -> None:
    await store.create(record(), ttl=TTL)
    await cas(store, 1)
    assert await events_after(store, "g1", 2, first=0.3) == []
    assert await events_after(store, "g1", 1) == [2]


async def test_close_ends_watchers(store: GameStore) -> None:
    await store.create(record(), ttl=TTL)
    it = store.watch("g1", 1)
    nxt = asyncio.ensure_future(anext(it))
    await asyncio.sleep(0.2)  # waiting (Redis: blocked in XREAD)
    await store.close()
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(nxt, 5)


# --- delete


async def test_delete_removes_everything(store: GameStore, request: pytest.FixtureRequest) -> None:
    await store.create(record(), ttl=TTL)
    await store.create(record("other"), ttl=TTL)
    await cas(store, 1, request_id="r1", fingerprint=b"f", reply=b"x")
    await store.delete("g1")
    with pytest.raises(GameNotFound):
        await store.load("g1")
    assert await store.get_reply("g1", "r1") is None
    await store.delete("g1")  # absent: no error
    assert (await store.load("other")).version == 1
    if isinstance(store, RedisStore):
        client = redis.Redis.from_url(request.getfixturevalue("redis_url"))
        assert list(client.scan_iter(match="acc:{g1}*")) == []
        assert list(client.scan_iter(match="*g1*")) == []
        assert sorted(client.scan_iter(match="*")) == [b"acc:{other}:g"]
        client.close()


# --- issue 29: the access record (a rotated watch token) and named records (deal codes)


async def test_replace_token_hash_only_from_the_expected_one(store: GameStore) -> None:
    await store.create(record(), ttl=TTL)
    await cas(store, 1)
    assert await store.replace_token_hash("g1", b"another", b"new") is False
    assert (await store.load("g1")).token_hash == b"tokenhash"
    assert await store.replace_token_hash("g1", b"tokenhash", b"new") is True
    loaded = await store.load("g1")
    assert (loaded.version, loaded.token_hash, loaded.data) == (2, b"new", b"d2")  # nothing else changed
    assert await events_after(store, "g1", 0) == [2]  # and no event was written
    with pytest.raises(GameNotFound):
        await store.replace_token_hash("nope", b"tokenhash", b"new")


async def test_named_records_first_wins_until_ttl(timed: Timed) -> None:
    s = timed.store
    assert await s.get_named("dealcode:A") is None
    assert await s.put_named("dealcode:A", b"deal-1", ttl=0.5) is True
    assert await s.put_named("dealcode:A", b"deal-2", ttl=0.5) is False
    assert await s.get_named("dealcode:A") == b"deal-1"
    assert await s.put_named("dealcode:B", b"\x00\xff binary", ttl=TTL) is True
    await timed.advance(1.0)
    assert await s.get_named("dealcode:A") is None
    assert await s.get_named("dealcode:B") == b"\x00\xff binary"
