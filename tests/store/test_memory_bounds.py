"""The memory store's bounds: a cap on games (the least recently used is evicted, and only one
idle for ``evict_idle``: else ``StoreFull``), expiry that removes what expired (not only hides
it), the URL that sets the cap, and the size for a metric."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc

import pytest

from accordion.store import (
    DEFAULT_MAX_GAMES,
    GameNotFound,
    MemoryStats,
    MemoryStore,
    StoredReply,
    StoreFull,
    is_memory_url,
    open_store,
)

from .helpers import Clock, cas, record


def capped(n: int, clock: Clock | None = None, evict_idle: float = 0.0) -> MemoryStore:
    """A store of at most ``n`` games; ``evict_idle`` 0 (any game may be evicted) unless a test
    of the idle rule says otherwise: the clock of most tests here stands still."""
    return MemoryStore(max_games=n, clock=clock or Clock(), poll_interval=0.05, evict_idle=evict_idle)


async def test_at_the_cap_only_a_game_idle_for_evict_idle_is_evicted() -> None:
    clock = Clock()
    store = capped(3, clock, evict_idle=300)
    for gid in ("a", "b", "c"):
        await store.create(record(gid), ttl=86400)
    clock.now += 299  # every game touched within the idle time: none may go
    with pytest.raises(StoreFull) as full:
        await store.create(record("d"), ttl=86400)
    assert full.value.retry_after == 1  # a, the least recently used, is idle long enough in 1 s
    with pytest.raises(GameNotFound):
        await store.load("d")  # refused: not stored
    assert sorted(store._games) == ["a", "b", "c"] and store.stats().evicted == 0  # nothing lost
    clock.now += 2  # a, b, c idle for 301 s
    await store.load("b")  # loaded: in play again
    await cas(store, 1, game_id="c", ttl=86400)  # written: in play again
    await store.create(record("d"), ttl=86400)  # a is the only idle game: evicted
    assert sorted(store._games) == ["b", "c", "d"] and store.stats().evicted == 1
    with pytest.raises(StoreFull):
        await store.create(record("e"), ttl=86400)
    assert sorted(store._games) == ["b", "c", "d"]
    clock.now += 301
    await store.create(record("e"), ttl=86400)  # b, the least recently used, now idle long enough
    assert sorted(store._games) == ["c", "d", "e"] and store.stats().evicted == 2


async def test_a_flood_of_new_games_cannot_push_out_a_game_in_play() -> None:
    """The unit form of issue 28's attack: at the cap, a player who moves every minute keeps the
    game however many games others try to make."""
    clock = Clock()
    store = capped(100, clock, evict_idle=300)
    await store.create(record("played"), ttl=86400)
    refused = made = 0
    for minute in range(30):
        for i in range(200):
            try:
                await store.create(record(f"flood-{minute}-{i}"), ttl=86400)
                made += 1
            except StoreFull:
                refused += 1
        await cas(store, minute + 1, game_id="played", ttl=86400)  # the player's move this minute
        clock.now += 60
    assert (await store.load("played")).version == 31
    assert refused > 0 and made > 100  # the flood was refused while nothing was idle, then took idle games
    assert store.games == 100


async def test_a_full_store_of_games_in_play_still_frees_expired_games_first() -> None:
    clock = Clock()
    store = capped(2, clock, evict_idle=300)
    await store.create(record("old"), ttl=1)
    await store.create(record("live"), ttl=86400)
    clock.now += 2
    await store.create(record("new"), ttl=86400)  # "old" expired: room without evicting anyone
    assert sorted(store._games) == ["live", "new"] and store.stats().evicted == 0


async def test_evict_idle_is_checked_and_reaches_the_store_from_open_store() -> None:
    with pytest.raises(ValueError, match="evict_idle"):
        MemoryStore(evict_idle=-1)
    strict = open_store("memory://?max_games=1")  # the default idle time: 300 s
    await strict.create(record("a"), ttl=60)
    with pytest.raises(StoreFull):
        await strict.create(record("b"), ttl=60)
    loose = open_store("memory://?max_games=1", evict_idle=0)
    await loose.create(record("a"), ttl=60)
    await loose.create(record("b"), ttl=60)  # a evicted, however recent
    with pytest.raises(GameNotFound):
        await loose.load("a")


async def test_the_cap_evicts_the_least_recently_used_game() -> None:
    store = capped(3)
    for gid in ("a", "b", "c"):
        await store.create(record(gid), ttl=60)
    await store.load("a")  # used: now b is the least recently used
    await cas(store, 1, game_id="c", request_id="r", fingerprint=b"f", reply=b"x")
    await store.create(record("d"), ttl=60)
    assert store.games == 3
    with pytest.raises(GameNotFound):
        await store.load("b")
    assert [(await store.load(g)).game_id for g in ("a", "c", "d")] == ["a", "c", "d"]
    assert await store.get_reply("c", "r") == StoredReply(b"f", b"x")
    # Many more: never more than the cap, the newest kept.
    for i in range(50):
        await store.create(record(f"n{i}"), ttl=60)
        assert store.games <= 3
    assert list(store._games) == ["n47", "n48", "n49"]
    assert store.stats() == MemoryStats(games=3, claims=0, expired=0, evicted=51, max_games=3)


async def test_an_evicted_game_leaves_nothing_and_its_id_is_free() -> None:
    store = capped(2)
    await store.create(record("a"), ttl=60)
    await cas(store, 1, game_id="a", request_id="r1", fingerprint=b"f", reply=b"x")
    await store.create(record("b"), ttl=60)
    await store.create(record("c"), ttl=60)  # evicts a
    assert await store.get_reply("a", "r1") is None
    with pytest.raises(GameNotFound):
        await cas(store, 2, game_id="a", request_id="r1")  # a retry finds no game: never applied twice
    await store.create(record("a", data=b"new"), ttl=60)  # evicts b; a is a new game, nothing inherited
    assert await store.load("a") == record("a", data=b"new")
    assert await store.get_reply("a", "r1") is None


async def test_eviction_ends_the_evicted_games_watchers() -> None:
    store = capped(1)
    await store.create(record("a"), ttl=60)
    it = store.watch("a", 1)
    nxt = asyncio.ensure_future(anext(it))
    await asyncio.sleep(0.05)
    await store.create(record("b"), ttl=60)
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(nxt, 5)


async def test_claims_are_capped_too() -> None:
    store = capped(2)
    for key in ("k1", "k2", "k3"):
        assert await store.claim_request(key, b"f", key.encode(), ttl=60) is None
    assert store.stats().claims == 2
    assert await store.claim_request("k3", b"g", b"other", ttl=60) == StoredReply(b"f", b"k3")
    assert await store.claim_request("k1", b"g", b"again", ttl=60) is None  # forgotten: a new claim


async def test_expiry_removes_games_without_any_access_to_them() -> None:
    clock = Clock()
    store = capped(1000, clock)
    for i in range(300):
        ttl = 10 if i % 2 else 100
        await store.create(record(f"g{i}"), ttl=ttl)
        await cas(store, 1, game_id=f"g{i}", ttl=ttl, request_id="r", fingerprint=b"f", reply=b"x" * 100)
    await store.claim_request("k", b"f", b"r", ttl=10)
    clock.now += 50
    await store.ping()  # the server's health loop pings every second
    assert store.games == 150 and store.stats().claims == 0
    assert all(int(gid[1:]) % 2 == 0 for gid in store._games)
    assert store.stats().expired == 150
    # A game written again lives on from that write.
    await cas(store, 2, game_id="g0", ttl=100)
    clock.now += 60
    await store.ping()
    assert list(store._games) == ["g0"]


async def test_expired_games_give_their_memory_back() -> None:
    """tracemalloc: what 5,000 games with replies and events allocated is released once they expired."""
    clock = Clock()
    store = capped(DEFAULT_MAX_GAMES, clock)
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for i in range(5000):
            await store.create(record(f"game-{i:05}", data=b"d" * 200), ttl=30)
            for v in range(1, 4):
                await cas(
                    store,
                    v,
                    game_id=f"game-{i:05}",
                    ttl=30,
                    request_id=f"r{v}",
                    fingerprint=b"f" * 16,
                    reply=b"x" * 200,
                )
            await store.claim_request(f"new:{i}", b"f" * 16, b"y" * 200, ttl=30)
        full = tracemalloc.get_traced_memory()[0] - base
        clock.now += 31
        await store.ping()
        gc.collect()
        left = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert store.games == 0
    assert full > 5000 * 1000, full  # the games did take memory...
    assert left < full / 20, (full, left)  # ...and it came back (the tables shrank too)


async def test_a_full_store_drops_expired_games_before_evicting_live_ones() -> None:
    clock = Clock()
    store = capped(2, clock)
    await store.create(record("old"), ttl=1)
    await store.create(record("live"), ttl=60)
    clock.now += 2
    await store.create(record("new"), ttl=60)
    assert sorted(store._games) == ["live", "new"]
    assert store.stats().evicted == 0 and store.stats().expired == 1


def cap_of(url: str | None) -> int | None:
    store = open_store(url)
    assert isinstance(store, MemoryStore)
    return store.stats().max_games


def test_the_url_sets_the_cap() -> None:
    assert cap_of("memory://?max_games=5") == 5
    assert cap_of("memory://") == cap_of(None) == cap_of("") == DEFAULT_MAX_GAMES
    assert cap_of("memory://?max_games=none") is None
    for bad in (
        "memory://?max_games=0",
        "memory://?max_games=-1",
        "memory://?max_games=lots",
        "memory://?max_games=1&max_games=2",
        "memory://?max_game=5",
        "memory://host",
        "memory://?max_games=",
    ):
        with pytest.raises(ValueError, match="store URL"):
            open_store(bad)
    assert is_memory_url(None) and is_memory_url("") and is_memory_url("memory://?max_games=3")
    assert not is_memory_url("redis://localhost:6379/0")


async def test_in_process_says_which_store_needs_no_timeout(redis_url: str) -> None:
    redis_store = open_store(redis_url)
    try:
        assert MemoryStore().in_process and not redis_store.in_process
    finally:
        await redis_store.close()


async def test_a_game_never_moved_holds_no_event_log_or_replies() -> None:
    """A dealt game's event log and reply table are made by the first write that needs them: a
    store of games dealt and never moved holds far less, and the collector walks fewer objects.
    (Their behaviour once made is what test_store.py checks, on both stores.)"""
    clock = Clock()
    store = capped(DEFAULT_MAX_GAMES, clock)
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for i in range(2000):
            await store.create(record(f"game-{i:05}", data=b"d" * 200), ttl=30)
        per_game = (tracemalloc.get_traced_memory()[0] - base) / 2000
    finally:
        tracemalloc.stop()
    # The record (~300 bytes with its 200-byte blob) and the table's entry; an empty deque
    # alone would add ~760 bytes, an OrderedDict ~130 (1,388 bytes a game before: ~500 now).
    assert per_game < 1000, per_game
    await cas(store, 1, game_id="game-00000", ttl=30, request_id="r1", fingerprint=b"f", reply=b"x")
    assert await store.get_reply("game-00000", "r1") == StoredReply(b"f", b"x")
    assert await store.get_reply("game-00001", "r1") is None  # a game with no replies yet
    events = store.watch("game-00000", 0)
    first = await events.__anext__()
    assert first.version == 2
    await events.aclose()  # type: ignore[attr-defined]
