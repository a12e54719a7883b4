"""What only the Redis store has: the factory's choice, hash slots, the cost of a move (one
command), clients in separate pools, and outages (a Redis stopped, killed or hung). The suite
both backends pass is test_store.py."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
import redis
from redis.crc import key_slot

from accordion.store import (
    MemoryStore,
    StoredReply,
    StoreUnavailable,
    VersionConflict,
    WatchEvent,
    open_store,
)
from accordion.store.redis import RedisStore
from redis_server import RedisServer

from .helpers import TTL, cas, record

# How long a call may take to give up on a Redis that is down or hung: the store's worst case is
# ~3.3 s ((retries + 1) * socket_timeout + backoff, RedisStore.from_url); 15 s is ~5x that, for a
# loaded machine. Without its timeouts a call on a hung Redis would wait forever.
UNAVAILABLE_WITHIN = 15.0


# --- Redis only


@pytest.fixture
async def rstore(redis_url: str) -> AsyncIterator[RedisStore]:
    s = open_store(redis_url)
    assert isinstance(s, RedisStore)
    try:
        yield s
    finally:
        await s.close()


async def test_factory_picks_backend(redis_url: str) -> None:
    assert isinstance(open_store(None), MemoryStore)
    assert isinstance(open_store(""), MemoryStore)
    assert isinstance(open_store("memory://"), MemoryStore)
    s = open_store(redis_url)
    assert isinstance(s, RedisStore)
    await s.close()
    with pytest.raises(ValueError, match="'mongodb://x'"):
        open_store("mongodb://x")


async def test_redis_game_keys_share_one_slot(rstore: RedisStore, redis_url: str) -> None:
    for gid in ("g1", "a-much-longer-game-id-0123456789", "x:y"):
        await rstore.create(record(gid), ttl=TTL)
        for v in range(1, 2 * 5):
            await cas(rstore, v, game_id=gid, request_id=f"r{v}", fingerprint=b"f", reply=b"x")
    client = redis.Redis.from_url(redis_url)
    try:
        for gid in ("g1", "a-much-longer-game-id-0123456789", "x:y"):
            keys = list(client.scan_iter(match=f"acc:{{{gid}}}:*"))
            assert len(keys) == 3  # g, e, r (no r0 until a thousand records)
            assert {key_slot(k) for k in keys} == {key_slot(gid.encode())}
            assert {key_slot(k.encode()) for k in rstore.game_keys(gid)} == {key_slot(gid.encode())}
    finally:
        client.close()


async def test_redis_cas_refreshes_every_key_ttl(rstore: RedisStore, redis_url: str) -> None:
    await rstore.create(record(), ttl=TTL)
    await cas(rstore, 1, request_id="r1", fingerprint=b"f", reply=b"x")
    await cas(rstore, 2, ttl=500.0)
    client = redis.Redis.from_url(redis_url)
    try:
        ttls = [client.pttl(k) for k in rstore.game_keys("g1")[:3]]
        assert all(490_000 < t <= 500_000 for t in ttls), ttls
    finally:
        client.close()


def _monitor_lines(port: int, action: Callable[[], None]) -> list[str]:
    """What MONITOR reports while ``action`` runs (up to a sentinel ECHO sent after it)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as mon:
        mon.sendall(b"MONITOR\r\n")
        buf = b""
        while b"+OK\r\n" not in buf:
            buf += mon.recv(4096)
        buf = buf.split(b"+OK\r\n", 1)[1]
        action()
        with socket.create_connection(("127.0.0.1", port), timeout=5) as c:  # raw: no HELLO/SETINFO noise
            c.sendall(b"ECHO monitor-sentinel\r\n")
            c.recv(64)
        while b"monitor-sentinel" not in buf:
            buf += mon.recv(65536)
    return [ln.decode() for ln in buf.split(b"\r\n") if ln and "monitor-sentinel" not in ln.decode()]


async def test_redis_cas_is_one_command(rstore: RedisStore, redis_server: RedisServer) -> None:
    await rstore.create(record(), ttl=TTL)
    await cas(rstore, 1, request_id="warm", fingerprint=b"f", reply=b"x")  # connection up, script loaded
    loop = asyncio.get_running_loop()

    def during() -> None:
        # MONITOR reads on a worker thread while the loop runs one CAS.
        fut = asyncio.run_coroutine_threadsafe(
            cas(rstore, 2, request_id="r2", fingerprint=b"f", reply=b"x"), loop
        )
        assert fut.result(10) is None

    lines = await asyncio.to_thread(_monitor_lines, redis_server.port, during)
    from_clients = [ln for ln in lines if "lua]" not in ln]  # commands run by the script say "[0 lua]"
    assert len(from_clients) == 1 and '"EVALSHA"' in from_clients[0], lines
    inside = [ln.split('"')[1] for ln in lines if "lua]" in ln]
    assert "XADD" in inside and "HSET" in inside and "PEXPIRE" in inside, inside
    # The commandstats agree: one evalsha call.
    client = redis.Redis(port=redis_server.port)
    before = client.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0)
    await cas(rstore, 3)
    after = client.info("commandstats")["cmdstat_evalsha"]["calls"]
    client.close()
    assert after - before == 1


async def test_redis_separate_clients_share_games(redis_url: str) -> None:
    """Two stores = two processes' pools: CAS through one, watch and conflict through the other."""
    a, b = open_store(redis_url), open_store(redis_url)
    try:
        await a.create(record(), ttl=TTL)
        it = b.watch("g1", 1)
        nxt = asyncio.ensure_future(anext(it))
        await asyncio.sleep(0.1)
        await cas(a, 1)
        assert await asyncio.wait_for(nxt, 5) == WatchEvent("g1", 2, b"e2")
        with pytest.raises(VersionConflict):
            await cas(b, 1)
        results = await asyncio.gather(*(cas(s, 2) for s in (a, b) * 5), return_exceptions=True)
        assert results.count(None) == 1
    finally:
        await a.close()
        await b.close()


@pytest.mark.parametrize("how", ["stop", "kill"])
async def test_redis_down_raises_unavailable_then_recovers(
    rstore: RedisStore, redis_server: RedisServer, how: str
) -> None:
    await rstore.create(record(), ttl=TTL)
    getattr(redis_server, how)()
    try:
        calls: list[Callable[[], Awaitable[object]]] = [
            rstore.ping,
            lambda: rstore.load("g1"),
            lambda: cas(rstore, 1),
            lambda: rstore.create(record("g2"), ttl=TTL),
            lambda: rstore.claim_request("k", b"f", b"r", ttl=TTL),
        ]
        for call in calls:
            with pytest.raises(StoreUnavailable):  # not TimeoutError: the store's own bound ends it
                await asyncio.wait_for(call(), UNAVAILABLE_WITHIN)
    finally:
        redis_server.start()
    await rstore.ping()  # the same store reconnects by itself
    await rstore.create(record("g3"), ttl=TTL)  # no persistence: the old game is gone
    assert (await rstore.load("g3")).version == 1


async def test_redis_hung_raises_unavailable_within_bound(
    rstore: RedisStore, redis_server: RedisServer
) -> None:
    """SIGSTOP: connections are accepted but nothing answers, so only the timeouts end the wait."""
    await rstore.create(record(), ttl=TTL)
    redis_server.pause()
    try:
        with pytest.raises(StoreUnavailable):  # not TimeoutError: the store's own bound ends it
            await asyncio.wait_for(
                cas(rstore, 1, request_id="r1", fingerprint=b"f", reply=b"x"), UNAVAILABLE_WITHIN
            )
    finally:
        redis_server.resume()
    # The EVALSHA sat in the paused server's socket buffer and may run once it resumes: an
    # unavailable CAS has an unknown outcome. Retrying with the same request id is safe.
    await asyncio.sleep(0.3)
    version = (await rstore.load("g1")).version
    retry = await cas(rstore, 1, request_id="r1", fingerprint=b"f", reply=b"x")
    if version == 2:
        assert retry == StoredReply(b"f", b"x")
    else:
        assert version == 1 and retry is None
    assert (await rstore.load("g1")).version == 2


async def test_redis_watch_raises_unavailable_when_redis_dies(
    rstore: RedisStore, redis_server: RedisServer
) -> None:
    await rstore.create(record(), ttl=TTL)
    it = rstore.watch("g1", 1)
    nxt = asyncio.ensure_future(anext(it))
    await asyncio.sleep(0.2)  # blocked in XREAD
    redis_server.kill()
    try:
        with pytest.raises(StoreUnavailable):  # not TimeoutError: the store's own bound ends it
            await asyncio.wait_for(nxt, UNAVAILABLE_WITHIN)
    finally:
        redis_server.start()
