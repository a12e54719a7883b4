"""Issue 28, item 1: every WatchGame ends, and gives back its slots and its Redis connection,
as soon as its client cancels it, however the cancellation falls.

The attack (tests/stream_attack.py): WatchGame, read the first event, cancel; 300 times. On the
Redis store a cancel that arrived just as a redis-py socket call completed was swallowed
(Python 3.11's ``asyncio.wait_for``, CPython gh-86296) and the handler went on reading the
stream for ever. Shown with real processes: a real redis-server, the real ``accordion-server``
script, real gRPC channels; the handlers still running are read from the server's own
``accordion_rpc_in_flight`` gauge, and Redis's connections from ``CLIENT LIST``.
(tests/rest/test_streams_envoy.py: the same through Envoy.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import grpc
import grpc.aio
import pytest
import redis.asyncio as aioredis
from grpc_health.v1 import health_pb2, health_pb2_grpc

from accordion.store.redis_watch import WATCH_CLIENT_NAME
from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc
from redis_server import RedisServer, free_port
from server_launcher import ServerProcess
from stream_attack import (
    CANCELS,
    SETTLE_SECONDS,
    WATCH_METHOD,
    assert_watches_end,
    attack,
    bearer,
    in_flight,
    new_game_with_a_move,
    redis_clients,
    settled,
)


@pytest.fixture
def private_redis() -> Iterator[RedisServer]:
    """A redis-server of this test's own: its CLIENT LIST counts only this test's server."""
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.close()


async def test_cancelled_watches_end_on_redis(
    spawn_server: Callable[..., ServerProcess], private_redis: RedisServer
) -> None:
    metrics_port = free_port()
    server = spawn_server(
        "--workers",
        "1",
        "--metrics-port",
        str(metrics_port),
        "--log-level",
        "warning",
        env={"REDIS_URL": private_redis.url},
    )
    await assert_watches_end(server.addr, metrics_port, redis_clients(private_redis.port))


async def test_cancelled_watches_end_on_memory(spawn_server: Callable[..., ServerProcess]) -> None:
    """The memory store (no Redis to count): every handler ends."""
    metrics_port = free_port()
    server = spawn_server("--workers", "1", "--metrics-port", str(metrics_port), "--log-level", "warning")
    game_id, token = await new_game_with_a_move(server.addr)
    await attack(server.addr, game_id, token, CANCELS)

    async def quiet() -> bool | float:
        running = await asyncio.to_thread(in_flight, metrics_port, WATCH_METHOD)
        return True if running == 0 else running

    outcome = await settled(quiet, SETTLE_SECONDS)
    assert outcome is True, f"WatchGame handlers still running: {outcome}"


async def test_watches_end_when_their_connections_close(
    spawn_server: Callable[..., ServerProcess], private_redis: RedisServer
) -> None:
    """Clients that go away without cancelling (their connections closed): every stream ends and
    closes its Redis connection, one of which each open stream had (named accordion-watch)."""
    metrics_port = free_port()
    server = spawn_server(
        "--workers",
        "1",
        "--metrics-port",
        str(metrics_port),
        "--log-level",
        "warning",
        env={"REDIS_URL": private_redis.url},
    )
    game_id, token = await new_game_with_a_move(server.addr)
    admin = aioredis.Redis.from_url(private_redis.url)
    options = [("grpc.use_local_subchannel_pool", 1)]
    channels = [grpc.aio.insecure_channel(server.addr, options=options) for _ in range(4)]
    try:
        calls = []
        for channel in channels:
            stub = pb_grpc.AccordionServiceStub(channel)
            for _ in range(12):
                call = stub.WatchGame(
                    pb.WatchGameRequest(game_id=game_id), metadata=bearer(token), timeout=60
                )
                assert (await call.read()).event.version > 0
                calls.append(call)

        async def watch_connections() -> int:
            return sum(c.get("name") == WATCH_CLIENT_NAME for c in await admin.client_list())

        async def all_open() -> bool | int:
            found = await watch_connections()
            return True if found == len(calls) else found

        assert await settled(all_open, 10) is True  # each stream reads on its own connection
        for channel in channels:
            await channel.close(grace=None)

        async def all_gone() -> bool | tuple[float, int]:
            running = await asyncio.to_thread(in_flight, metrics_port, WATCH_METHOD)
            found = await watch_connections()
            return True if running == 0 and found == 0 else (running, found)

        outcome = await settled(all_gone, SETTLE_SECONDS)
        assert outcome is True, f"(handlers running, accordion-watch connections) = {outcome}"
    finally:
        for channel in channels:
            await channel.close()
        await admin.aclose()


async def test_cancelled_health_watches_end(spawn_server: Callable[..., ServerProcess]) -> None:
    """grpc.health.v1 Watch streams end too when their clients cancel (and give their slots back:
    a client may hold 5 at a time, and opens 100 in turn)."""
    metrics_port = free_port()
    server = spawn_server("--workers", "1", "--metrics-port", str(metrics_port), "--log-level", "warning")
    async with grpc.aio.insecure_channel(server.addr) as channel:
        health = health_pb2_grpc.HealthStub(channel)

        async def watcher(turns: int) -> None:
            for _ in range(turns):
                while True:
                    call = health.Watch(health_pb2.HealthCheckRequest(), timeout=30)
                    try:
                        assert (await call.read()).status == health_pb2.HealthCheckResponse.SERVING
                    except grpc.aio.AioRpcError as exc:  # slots not yet given back: as RetryInfo asks
                        assert exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, exc
                        await asyncio.sleep(0.05)
                        continue
                    call.cancel()
                    break

        await asyncio.gather(*(watcher(25) for _ in range(4)))

    async def quiet() -> bool | float:
        running = await asyncio.to_thread(in_flight, metrics_port, "grpc.health.v1.Health/Watch")
        return True if running == 0 else running

    outcome = await settled(quiet, SETTLE_SECONDS)
    assert outcome is True, f"health Watch handlers still running: {outcome}"
