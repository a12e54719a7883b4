"""The shell in-process: health, reflection, limits, deadlines, TTL expiry, metrics."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from contextlib import contextmanager

import grpc
import grpc.aio
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from prometheus_client import REGISTRY

from accordion.config import parse_args
from accordion.v1 import accordion_pb2 as pb
from redis_server import RedisServer

from .conftest import Running
from .helpers import Client, expect_error

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


async def health_of(channel: grpc.aio.Channel, service: str = "") -> int:
    reply = await health_pb2_grpc.HealthStub(channel).Check(
        health_pb2.HealthCheckRequest(service=service), timeout=5
    )
    return int(reply.status)


@contextmanager
def frozen(redis: RedisServer) -> Iterator[None]:
    """Redis hangs (SIGSTOP): connections stay open, nothing answers. Thawed on exit."""
    assert redis.proc is not None
    redis.proc.send_signal(signal.SIGSTOP)
    try:
        yield
    finally:
        redis.proc.send_signal(signal.SIGCONT)


async def test_health_is_serving_for_the_server_and_the_service(served: Running, client: Client) -> None:
    assert await health_of(client.channel) == SERVING
    assert await health_of(client.channel, "accordion.v1.AccordionService") == SERVING


async def test_reflection_lists_the_service(client: Client) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(client.channel)
    call = stub.ServerReflectionInfo(timeout=5)
    await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
    await call.write(
        reflection_pb2.ServerReflectionRequest(file_containing_symbol="accordion.v1.AccordionService")
    )
    await call.done_writing()
    listed = await call.read()
    names = {s.name for s in listed.list_services_response.service}
    assert {"accordion.v1.AccordionService", "grpc.health.v1.Health"} <= names
    described = await call.read()
    assert described.file_descriptor_response.file_descriptor_proto, "grpcurl can describe the service"


async def test_a_request_over_64_kib_is_resource_exhausted(client: Client) -> None:
    big = pb.NewGameRequest(variant="accordion", seed=1, options={"note": "x" * (65 * 1024)})
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await client.stub.NewGame(big, timeout=5)
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    just_under = pb.NewGameRequest(variant="accordion", seed=1, request_id="r" * 100)
    assert (await client.stub.NewGame(just_under, timeout=5)).game.version == 1


async def test_games_expire_after_the_idle_ttl_and_moves_refresh_it(
    start_server, connect, store_url: str
) -> None:
    running = await start_server(store_url, game_ttl=1.5)
    client = connect(running.addr)
    game = (await client.new_game("accordion", seed=7)).game
    watch = client.stub.WatchGame(pb.WatchGameRequest(game_id=game.id), metadata=_auth(client), timeout=20)
    await asyncio.sleep(1.0)
    game = (await client.apply(game.id, game.legal_moves[0].notation)).game  # refreshes the TTL
    await asyncio.sleep(1.0)  # 2 s after creation, 1 s after the move
    assert (await client.get(game.id)).version == 2
    event = await watch.read()
    assert event.event.version == 2
    await asyncio.sleep(2.0)
    await expect_error(client.get(game.id), grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND")
    # The watch ends (OK) when its game goes away.
    assert await asyncio.wait_for(watch.read(), 5) is grpc.aio.EOF
    assert await watch.code() == grpc.StatusCode.OK


def _auth(client: Client) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {client.token}"),)


async def test_deadlines_are_honoured_and_store_calls_are_bounded(
    start_server, connect, redis_server
) -> None:
    redis_server.flush()
    running = await start_server(redis_server.url, store_timeout=0.5, health_interval=60)
    client = connect(running.addr)
    game = (await client.new_game("accordion", seed=7)).game
    with frozen(redis_server):
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await client.call("GetGame", pb.GetGameRequest(game_id=game.id), timeout=0.3)
        assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        # ~0.3 s; the bound only tells the deadline from a hang, so a loaded machine may be slow
        assert loop.time() - started < 8
        # No client deadline: the store timeout bounds the wait, and the answer is UNAVAILABLE.
        started = loop.time()
        await expect_error(
            client.call("Score", pb.ScoreRequest(game_id=game.id), timeout=10),
            grpc.StatusCode.UNAVAILABLE,
            "STORE_UNAVAILABLE",
        )
        assert loop.time() - started < 8  # ~0.5 s (the store timeout), not the client's 10 s
    assert (await client.get(game.id)).version == 1


async def test_a_redis_slower_than_a_second_is_waited_for_up_to_the_store_timeout(
    start_server, connect, redis_server
) -> None:
    """--store-timeout is the bound of a store call: the connections' own read timeout (1 s by
    default) must not cut a call short of it (the lean connection's did, before)."""
    redis_server.flush()
    running = await start_server(redis_server.url, store_timeout=6, health_interval=60)
    client = connect(running.addr)
    game = (await client.new_game("accordion", seed=7)).game
    with frozen(redis_server):
        read = asyncio.ensure_future(client.get(game.id))
        move = asyncio.ensure_future(
            client.call(
                "ApplyMove", pb.ApplyMoveRequest(game_id=game.id, move=game.legal_moves[0]), timeout=10
            )
        )
        await asyncio.sleep(1.8)
        assert not read.done() and not move.done(), "still waiting on Redis"
    assert (await read).id == game.id  # version 1 or 2: the two calls may go on two connections
    assert (await move).game.version == 2
    assert (await client.get(game.id)).version == 2


async def test_concurrent_rpcs_beyond_the_cap_are_resource_exhausted(
    start_server, connect, redis_server
) -> None:
    redis_server.flush()
    running = await start_server(redis_server.url, max_concurrent_rpcs=2, store_timeout=3, health_interval=60)
    client = connect(running.addr)
    game = (await client.new_game("accordion", seed=7)).game
    with frozen(redis_server):
        held = [asyncio.ensure_future(client.get(game.id)) for _ in range(2)]
        # Both held calls admitted before the third is sent (a fixed 0.3 s was a guess a loaded
        # machine could miss: the third would then be admitted and wait on Redis instead).
        admission = running.server.admission
        for _ in range(600):
            if admission.calls == 2:
                break
            await asyncio.sleep(0.05)
        assert admission.calls == 2, admission.calls
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await client.get(game.id)
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert all(g.version == 1 for g in await asyncio.gather(*held)), (
        "the held calls finish once Redis answers"
    )


async def test_metrics_count_calls_errors_and_latency(client: Client) -> None:
    method = "accordion.v1.AccordionService/GetGame"

    def value(name: str, **labels: str) -> float:
        return REGISTRY.get_sample_value(name, labels) or 0.0

    def error_value(name: str, **labels: str) -> float:  # errors carry the reason the client got
        return (
            value(name, **labels, reason="GAME_NOT_FOUND")
            if name == "accordion_rpc_errors_total"
            else value(name, **labels)
        )

    ok0 = value("accordion_rpc_total", method=method, code="OK")
    nf0 = error_value("accordion_rpc_errors_total", method=method, code="NOT_FOUND")
    lat0 = value("accordion_rpc_latency_seconds_count", method=method)
    game = (await client.new_game("accordion", seed=7)).game
    await client.get(game.id)
    await expect_error(client.call("GetGame", pb.GetGameRequest(game_id="B" * 22)), grpc.StatusCode.NOT_FOUND)
    expected = {("accordion_rpc_total", "OK"): ok0 + 1, ("accordion_rpc_errors_total", "NOT_FOUND"): nf0 + 1}
    # The status reaches the client a moment before the interceptor records it: wait for it.
    for _ in range(100):
        seen = {key: error_value(key[0], method=method, code=key[1]) for key in expected}
        if seen == expected and value("accordion_rpc_latency_seconds_count", method=method) == lat0 + 2:
            break
        await asyncio.sleep(0.02)
    assert seen == expected
    assert value("accordion_rpc_latency_seconds_count", method=method) == lat0 + 2


def test_configuration_flags_override_environment_variables() -> None:
    env = {
        "ACCORDION_LISTEN": "0.0.0.0:6000",
        "REDIS_URL": "redis://127.0.0.1:1/0",
        "ACCORDION_GAME_TTL": "60",
        "ACCORDION_MAX_CONCURRENT_RPCS": "7",
        "ACCORDION_LOG_LEVEL": "debug",
    }
    config = parse_args([], env)
    assert (
        config.listen,
        config.redis_url,
        config.game_ttl,
        config.max_concurrent_rpcs,
        config.log_level,
    ) == ("0.0.0.0:6000", "redis://127.0.0.1:1/0", 60.0, 7, "debug")
    config = parse_args(["--listen", "127.0.0.1:7000", "--game-ttl", "5", "--redis-url", ""], env)
    assert (config.listen, config.game_ttl, config.redis_url) == ("127.0.0.1:7000", 5.0, "")
    assert parse_args([], {}).listen == "127.0.0.1:50051" and parse_args([], {}).game_ttl == 86400
    with pytest.raises(SystemExit):
        parse_args(["--log-level", "loud"], {})
