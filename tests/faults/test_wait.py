"""``wait_replicas``: a write is answered only once replicas have it (WAIT on the same connection).

A real master and replica (``--replicaof``). A paused replica (SIGSTOP) cannot acknowledge:
the write lands on the master but is refused as StoreUnavailable("not replicated"); retries
with the same request id find it (never apply it twice) and are refused too, until the
replica is back; then the retry is answered with the first reply.
"""

from __future__ import annotations

import asyncio
import re
import socket
import time
from collections.abc import AsyncIterator, Iterator

import pytest
import redis

from accordion.store import GameNotFound, GameRecord, StoredReply, StoreUnavailable, open_store
from accordion.store.redis import RedisStore
from redis_server import RedisServer

from .cluster import wait_until

# Fault injection: many processes (clusters, Sentinels, killed servers) and real timeouts, so one
# at a time, beside the parallel phase of `make test` (tests/conftest.py).
pytestmark = pytest.mark.serial

TTL = 60.0


@pytest.fixture(scope="module")
def pair() -> Iterator[tuple[RedisServer, RedisServer]]:
    master = RedisServer(extra_args=("--repl-diskless-sync-delay", "0")).start()
    replica = RedisServer(extra_args=("--replicaof", "127.0.0.1", str(master.port))).start()
    try:
        yield master, replica
    finally:
        replica.close()
        master.close()


@pytest.fixture
async def store(pair: tuple[RedisServer, RedisServer]) -> AsyncIterator[RedisStore]:
    master, replica = pair
    replica.resume()
    master.flush()

    def synced() -> bool:
        with redis.Redis(port=replica.port) as c:
            info = c.info("replication")
        return info["master_link_status"] == "up" and c.dbsize() == 0

    wait_until("the replica to sync", synced, 20)
    s = open_store(master.url, wait_replicas=1, wait_timeout=2.0)  # generous: this machine may be busy
    assert isinstance(s, RedisStore) and s.wait_replicas == 1
    try:
        yield s
    finally:
        replica.resume()
        await s.close()


def record(game_id: str = "g1") -> GameRecord:
    return GameRecord(game_id, 1, b"tokenhash", b"d1")


async def cas(s: RedisStore, version: int, rid: str) -> StoredReply | None:
    return await s.compare_and_set(
        "g1",
        version,
        f"d{version + 1}".encode(),
        ttl=TTL,
        event=f"e{version + 1}".encode(),
        request_id=rid,
        fingerprint=b"fp",
        reply=f"reply-{rid}".encode(),
    )


def replica_version(replica: RedisServer) -> bytes | None:
    with redis.Redis(port=replica.port) as c:
        return c.hget("acc:{g1}:g", "v")  # type: ignore[return-value]


async def test_writes_wait_for_the_replica(store: RedisStore, pair: tuple[RedisServer, RedisServer]) -> None:
    _, replica = pair
    await store.create(record(), ttl=TTL)
    assert replica_version(replica) == b"1"  # answered only once the replica had it
    assert await cas(store, 1, "r1") is None
    assert replica_version(replica) == b"2"
    assert await store.claim_request("new:k", b"fp", b"reply", ttl=TTL) is None
    assert await store.claim_request("new:k", b"fp", b"other", ttl=TTL) == StoredReply(b"fp", b"reply")


async def test_unreplicated_write_is_refused_and_its_retry_is_safe(
    store: RedisStore, pair: tuple[RedisServer, RedisServer]
) -> None:
    master, replica = pair
    await store.create(record(), ttl=TTL)
    replica.pause()  # alive for the master (its link stays up) but acknowledges nothing
    fast = open_store(master.url, wait_replicas=1, wait_timeout=0.3)
    other = open_store(master.url, wait_replicas=1, wait_timeout=0.3)
    try:
        started = time.monotonic()
        with pytest.raises(StoreUnavailable, match="not replicated: 0 of 1"):
            await cas(fast, 1, "r1")  # type: ignore[arg-type]
        assert 0.25 < time.monotonic() - started < 3.0  # WAIT's timeout (0.3 s), not a hang
        assert (await fast.load("g1")).version == 2  # it did land on the master
        # Retries with the same request id find the first write and apply nothing...
        with pytest.raises(StoreUnavailable, match="not replicated"):
            await cas(fast, 1, "r1")  # type: ignore[arg-type]
        with pytest.raises(StoreUnavailable, match="not replicated"):
            await fast.get_reply("g1", "r1")  # the servicer's path to a recorded reply
        with pytest.raises(StoreUnavailable, match="not replicated"):
            await fast.claim_request("new:k", b"fp", b"reply", ttl=TTL)
        # ...and so do those from another process's fresh connections. WAIT waits for the
        # offset of the connection's last write; since Redis 7.2 only a command that propagates
        # moves it, so a bare WAIT on a fresh connection would be satisfied at once (6.2 and 7.0
        # move it on every command). The store's no-op write before WAIT makes this hold on
        # every version.
        with pytest.raises(StoreUnavailable, match="not replicated"):
            await cas(other, 1, "r1")  # type: ignore[arg-type]
        with pytest.raises(StoreUnavailable, match="not replicated"):
            await other.get_reply("g1", "r1")
        assert (await fast.load("g1")).version == 2
    finally:
        replica.resume()
        await fast.close()
        await other.close()
    # Once the replica is back, the retry is answered with the first reply.
    assert await cas(store, 1, "r1") == StoredReply(b"fp", b"reply-r1")
    assert await store.get_reply("g1", "r1") == StoredReply(b"fp", b"reply-r1")
    assert replica_version(replica) == b"2"
    assert (await store.load("g1")).version == 2
    with redis.Redis(port=master.port) as c:
        assert c.xlen("acc:{g1}:e") == 1  # one event: applied once


async def test_too_few_replicas_is_unavailable(pair: tuple[RedisServer, RedisServer]) -> None:
    master, _ = pair
    master.flush()
    s = open_store(master.url, wait_replicas=2, wait_timeout=0.2)
    try:
        with pytest.raises(StoreUnavailable, match="not replicated: 1 of 2"):
            await s.create(record(), ttl=TTL)
    finally:
        await s.close()


async def test_script_and_wait_go_back_to_back_on_one_connection(
    store: RedisStore, pair: tuple[RedisServer, RedisServer]
) -> None:
    """WAIT counts the offset of its own connection's writes: it must follow the EVALSHA on
    the same connection (they are sent as one pipeline: one round trip). MONITOR shows both,
    from one client address, back to back."""
    master, _ = pair
    await store.create(record(), ttl=TTL)
    await cas(store, 1, "warm")  # scripts loaded, connection open
    loop = asyncio.get_running_loop()

    def during() -> None:
        fut = asyncio.run_coroutine_threadsafe(cas(store, 2, "r2"), loop)
        assert fut.result(10) is None

    with socket.create_connection(("127.0.0.1", master.port), timeout=5) as mon:
        mon.sendall(b"MONITOR\r\n")
        buf = b""
        while b"+OK\r\n" not in buf:
            buf += mon.recv(4096)
        buf = buf.split(b"+OK\r\n", 1)[1]
        await asyncio.to_thread(during)
        while b'"WAIT"' not in buf:
            buf += await asyncio.to_thread(mon.recv, 65536)
    lines = [ln.decode(errors="replace") for ln in buf.split(b"\r\n") if ln]
    sent = [ln for ln in lines if "lua]" not in ln and '"REPLCONF"' not in ln]
    commands = [re.search(r'\] "(\w+)"', ln).group(1) for ln in sent]  # type: ignore[union-attr]
    assert commands == ["EVALSHA", "WAIT"], sent
    clients = {re.search(r"\[\d+ ([\d.:]+)\]", ln).group(1) for ln in sent}  # type: ignore[union-attr]
    assert len(clients) == 1, sent


async def test_min_replicas_to_write_refusal_is_unavailable(pair: tuple[RedisServer, RedisServer]) -> None:
    """``min-replicas-to-write`` (docs/redis.md): with no replica in sync, Redis refuses writes
    (NOREPLICAS); the store reports StoreUnavailable, not an internal error, and nothing is written."""
    master, replica = pair
    master.flush()
    s = open_store(master.url)
    with redis.Redis(port=master.port) as c:
        c.config_set("min-replicas-to-write", 1)
        c.config_set("min-replicas-max-lag", 1)
    replica.pause()
    try:

        def refused() -> bool:
            with redis.Redis(port=master.port) as c:
                return int(c.info("replication").get("min_slaves_good_slaves", 1)) == 0

        wait_until("the master to count no good replica", refused, 15, interval=0.2)
        with pytest.raises(StoreUnavailable, match="NOREPLICAS"):
            await s.create(record(), ttl=TTL)
        with pytest.raises(GameNotFound):
            await s.load("g1")  # reads still work; nothing was written
    finally:
        replica.resume()
        with redis.Redis(port=master.port) as c:
            c.config_set("min-replicas-to-write", 0)
        await s.close()
