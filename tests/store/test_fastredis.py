"""The lean pipelined Redis connection of the hot path (``accordion.store.fastredis``) on a
real redis-server: replies matched to callers under heavy pipelining, errors as redis-py's,
a lost connection made again, and which URLs it serves."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from redis import exceptions as rexc

from accordion.store import open_store
from accordion.store.fastredis import FastRedis, fast_url, pack, pack_python
from accordion.store.redis import RedisStore
from accordion.store.redis_exec import (
    ClusterExecutor,
    ClusterWaitExecutor,
    Executor,
    FastExecutor,
    WaitExecutor,
)
from redis_server import RedisServer


def test_which_urls_it_serves() -> None:
    assert fast_url("redis://127.0.0.1:7000/2") == {"host": "127.0.0.1", "port": 7000, "db": 2}
    assert fast_url("redis://user:pw@h:1/0") == {
        "host": "h",
        "port": 1,
        "db": 0,
        "username": "user",
        "password": "pw",
    }
    assert fast_url("unix:///run/redis.sock?db=3") == {"path": "/run/redis.sock", "db": 3}
    for other in (
        "rediss://h:1/0",
        "redis+cluster://h:1,h:2",
        "redis+sentinel://h:1/m",
        "redis://h:1/0?protocol=3",
    ):
        assert fast_url(other) is None, other


def test_pack_is_resp() -> None:
    assert pack(("SET", b"k\r\n", 12)) == b"*3\r\n$3\r\nSET\r\n$3\r\nk\r\n\r\n$2\r\n12\r\n"
    with pytest.raises(rexc.DataError):
        pack(("SET", object()))


# Generous: on a loaded CI machine a loopback connect or a 500-call pipeline can take seconds.
GENEROUS = 60.0


def fast(server: RedisServer, timeout: float = GENEROUS) -> FastRedis:
    settings = fast_url(server.url)
    assert settings is not None
    return FastRedis(settings, timeout=timeout, connect_timeout=GENEROUS, connections=2)


async def test_pipelined_calls_each_get_their_own_reply(redis_url: str, redis_server: RedisServer) -> None:
    client = fast(redis_server)
    try:
        values = [f"v{i}".encode() * (1 + i % 7) for i in range(500)]
        replies = await asyncio.gather(*(client.call("ECHO", v) for v in values))
        assert replies == values
        assert await client.call("HMGET", "missing", "a", "b") == [None, None]
        assert await client.call("INCRBY", "n", 5) == 5
        with pytest.raises(rexc.ResponseError, match="wrong number of arguments"):
            await client.call("GET")
        with pytest.raises(rexc.NoScriptError):  # redis-py's own classes, from the error text
            await client.call("EVALSHA", "0" * 40, 0)
        assert await client.call("ECHO", b"still in step") == b"still in step"
    finally:
        await client.close()


async def test_commands_sent_in_one_turn_of_the_loop_go_out_in_one_write(
    redis_url: str, redis_server: RedisServer
) -> None:
    client = fast(redis_server)
    try:
        await asyncio.gather(client.call("PING"), client.call("PING"))  # both connections made
        writes: list[bytes] = []
        for proto in client._slots:
            assert proto is not None
            real = proto.transport.write
            proto.transport = _CountingTransport(real, writes)
        values = [f"v{i}".encode() for i in range(40)]
        assert await asyncio.gather(*(client.call("ECHO", v) for v in values)) == values
        assert len(writes) == 2, "one write per connection for the 40 commands sent together"
        assert b"".join(writes).count(b"ECHO") == 40
    finally:
        await client.close()


class _CountingTransport:
    """Passes everything to the real transport; notes each ``write``."""

    def __init__(self, write: Any, writes: list[bytes]) -> None:
        self._write, self.writes, self._real = write, writes, write.__self__

    def write(self, data: bytes) -> None:
        self.writes.append(data)
        self._write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


async def test_a_lost_connection_fails_its_calls_and_the_next_call_reconnects(
    redis_url: str, redis_server: RedisServer
) -> None:
    client = fast(redis_server)
    try:
        assert await client.call("PING") == b"PONG"
        redis_server.kill()
        with pytest.raises((rexc.ConnectionError, rexc.TimeoutError)):
            for _ in range(4):  # both connections notice
                await client.call("PING")
        redis_server.start()
        assert await client.call("PING") == b"PONG"
        assert await client.call("PING") == b"PONG"
    finally:
        await client.close()


async def test_a_hung_redis_times_out(redis_url: str, redis_server: RedisServer) -> None:
    client = fast(redis_server)
    try:
        assert await client.call("PING") == b"PONG"  # connected under the generous bound
        client._timeout = 0.3  # only the hung call should wait for the short one
        redis_server.pause()
        try:
            with pytest.raises(rexc.TimeoutError):
                await client.call("PING")
        finally:
            redis_server.resume()
        client._timeout = GENEROUS
        assert await client.call("PING") == b"PONG"  # a new connection: the old one was dropped
    finally:
        await client.close()


async def test_the_store_uses_it_only_where_it_can(redis_url: str) -> None:
    """One executor per deployment, chosen when the store is built (connections open lazily)."""
    expected = [
        (redis_url, 0, FastExecutor),  # one Redis, no TLS: the hot path is pipelined
        (redis_url, 1, WaitExecutor),  # WAIT needs the script and WAIT on one redis-py connection
        ("rediss://127.0.0.1:1/0", 0, Executor),
        ("redis+sentinel://127.0.0.1:1,127.0.0.1:2/mymaster", 0, Executor),
        ("redis+sentinel://127.0.0.1:1/mymaster/2", 1, WaitExecutor),
        ("redis+cluster://127.0.0.1:1,127.0.0.1:2", 0, ClusterExecutor),
        ("rediss+cluster://127.0.0.1:1", 1, ClusterWaitExecutor),
    ]
    for url, wait, kind in expected:
        store = open_store(url, wait_replicas=wait)
        try:
            assert isinstance(store, RedisStore)
            assert type(store.executor) is kind, (url, wait, store.executor)
            assert store.wait_replicas == wait
        finally:
            await store.close()


def test_wait_settings_are_checked(redis_url: str) -> None:
    for replicas, timeout in ((-1, 0.5), (1, 0.0)):
        with pytest.raises(ValueError, match="wait_replicas"):
            open_store(redis_url, wait_replicas=replicas, wait_timeout=timeout)


def test_pack_is_the_python_packers_for_every_type_the_store_sends() -> None:
    """``pack`` goes through hiredis's packer; it must write what ``pack_python`` writes."""
    values: list[object] = [
        "",
        "EVALSHA",
        "é ∑ 🂡",
        "a\r\nb",
        b"",
        b"\x00\r\n\xff" * 50,
        0,
        1,
        -1,
        2**63 - 1,
        2**64,
        -(2**70),
        0.0,
        -0.0,
        0.1,
        1.5,
        1e300,
        -2.5e-300,
        float("inf"),
        float("-inf"),
    ]
    for value in values:
        assert pack(("SET", value, "k")) == pack_python(("SET", value, "k")), value
    assert pack(tuple(values)) == pack_python(tuple(values))
    # What hiredis refuses goes to the Python packer, which answers as before.
    assert pack(("SET", True)) == pack_python(("SET", True)) == b"*2\r\n$3\r\nSET\r\n$4\r\nTrue\r\n"
    for refused in (None, object(), [1], bytearray(b"x"), 1j):
        with pytest.raises(rexc.DataError):
            pack(("SET", refused))


async def test_the_stores_hot_path_never_falls_back_to_the_python_packer(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every argument the Redis store sends on the hot path (create, load, compare_and_set, a
    claim) is of a type hiredis packs: a bool or None among them would cost a failed hiredis
    call plus the Python packer on every move."""
    from accordion.store import GameRecord, fastredis

    def refuse(args: tuple[object, ...]) -> bytes:
        raise AssertionError(f"fell back to the Python packer for {args!r}")

    monkeypatch.setattr(fastredis, "pack_python", refuse)
    for watched_only in (False, True):
        store = open_store(redis_url, watched_only=watched_only)
        try:
            assert isinstance(store, RedisStore) and type(store.executor) is FastExecutor
            game_id = f"pack-{watched_only}"
            await store.delete(game_id)
            await store.create(GameRecord(game_id, 1, b"t", b"d"), ttl=60)
            assert (await store.load(game_id)).data == b"d"
            assert (
                await store.compare_and_set(
                    game_id, 1, b"d2", ttl=60, event=b"e", request_id="r", fingerprint=b"f", reply=b"x"
                )
                is None
            )
            assert (
                await store.compare_and_set(
                    game_id, 1, b"d2", ttl=60, event=b"e", request_id="r", fingerprint=b"f", reply=b"x"
                )
            ) is not None  # the retry
            assert await store.claim_request(f"claim-{watched_only}-{game_id}", b"f", b"x", ttl=60) is None
        finally:
            await store.close()


async def test_the_fast_executor_maps_errors_as_unavailable_does() -> None:
    """``FastExecutor`` maps failures in a plain ``except``; it must turn into StoreUnavailable
    exactly what ``unavailable()`` does, and let the rest out unchanged."""
    from accordion.store.base import StoreUnavailable
    from accordion.store.redis_errors import unavailable
    from accordion.store.redis_scripts import TOUCH

    failures: list[Exception] = [
        rexc.ConnectionError("gone"),
        rexc.TimeoutError("slow"),
        rexc.ReadOnlyError("ro"),
        rexc.ResponseError("NOREPLICAS Not enough good replicas"),
        rexc.ResponseError("ERR other"),
        AttributeError("'NoneType' object has no attribute 'write'"),
        AttributeError("other"),
        RuntimeError("unable to perform operation; the handler is closed"),
        RuntimeError("other"),
        TypeError("'NoneType' object is not callable"),
        ValueError("other"),
    ]

    class Failing:
        def __init__(self, failure: Exception) -> None:
            self.failure = failure

        async def call(self, *args: object) -> object:
            raise self.failure

    for failure in failures:
        executor = FastExecutor.__new__(FastExecutor)
        executor.fast = Failing(failure)  # type: ignore[assignment]
        try:
            with unavailable():
                raise failure
        except Exception as exc:  # noqa: BLE001 (compared below)
            expected: BaseException = exc
        for call in (executor.script(TOUCH, ["k"], []), executor.read_game("k")):
            with pytest.raises(type(expected)) as raised:
                await call
            assert str(raised.value) == str(expected)
            assert (raised.value.__cause__ is failure) == isinstance(expected, StoreUnavailable)
