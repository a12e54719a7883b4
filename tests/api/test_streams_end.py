"""Issue 28, item 1: every WatchGame ends, and gives back its slots and its Redis connection,
as soon as its client cancels it, however the cancellation falls.

The attack: WatchGame, read the first event, cancel; 300 times. On the Redis store a cancel
that arrived just as a redis-py socket call completed was swallowed (Python 3.11's
``asyncio.wait_for``, CPython gh-86296) and the handler went on reading the stream for ever.
Shown with real processes: a real redis-server, the real ``accordion-server`` script, real
gRPC channels; the handlers still running are read from the server's own
``accordion_rpc_in_flight`` gauge, and Redis's connections from ``CLIENT LIST``.
"""

from __future__ import annotations

import asyncio
import time
import urllib.request
from collections.abc import Callable, Iterator

import grpc
import grpc.aio
import pytest
import redis.asyncio as aioredis

from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc
from redis_server import RedisServer, free_port
from server_launcher import ServerProcess

from .helpers import bearer

WATCH_METHOD = "accordion.v1.AccordionService/WatchGame"
CANCELS = 300
CHANNELS = 4
STREAMS_PER_CHANNEL = 8  # at once; under the server's 16 watches per connection
ATTACK_SECONDS = 60.0  # a channel whose watch slots never come back stops trying after this
SETTLE_SECONDS = 2.0  # the bound: handlers gone and Redis's clients back within it


def in_flight(metrics_port: int, method: str) -> float:
    """accordion_rpc_in_flight{method} as the server exports it (0 when never seen)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as reply:
        text = reply.read().decode()
    prefix = f'accordion_rpc_in_flight{{method="{method}"}} '
    for line in text.splitlines():
        if line.startswith(prefix):
            return float(line[len(prefix):])
    return 0.0


async def redis_clients(admin: aioredis.Redis) -> int:
    """Connections Redis has open now (this test's own admin connection included)."""
    return len(await admin.client_list())


async def watch_then_cancel(stub: pb_grpc.AccordionServiceStub, game_id: str, token: str) -> bool:
    """WatchGame from the start, read its first event (the stored move), cancel at once: True;
    False when the server refused the stream (its connection's watch slots are all held: the
    handlers of the streams just cancelled have not all ended yet, or have leaked)."""
    call = stub.WatchGame(pb.WatchGameRequest(game_id=game_id), metadata=bearer(token), timeout=30)
    try:
        first = await call.read()
    except grpc.aio.AioRpcError as exc:
        if exc.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
            raise
        return False
    assert first is not grpc.aio.EOF and first.event.version > 0, first
    call.cancel()
    return True


async def attack(addr: str, game_id: str, token: str, cancels: int) -> None:
    """``cancels`` watch-and-cancel calls over CHANNELS connections, STREAMS_PER_CHANNEL at once each."""
    channels = [grpc.aio.insecure_channel(addr) for _ in range(CHANNELS)]
    try:
        stubs = [pb_grpc.AccordionServiceStub(ch) for ch in channels]
        left = iter(range(cancels))
        give_up = time.monotonic() + ATTACK_SECONDS

        async def worker(stub: pb_grpc.AccordionServiceStub) -> None:
            for _ in left:
                # Refused (the connection's slots held): wait a little, as RetryInfo asks.
                while not await watch_then_cancel(stub, game_id, token):
                    if time.monotonic() > give_up:
                        return  # slots that never come back: the check after the attack tells
                    await asyncio.sleep(0.05)

        await asyncio.gather(*(worker(stub) for stub in stubs for _ in range(STREAMS_PER_CHANNEL)))
    finally:
        for ch in channels:
            await ch.close()


async def settled(check: Callable[[], object], within: float) -> object:
    """Poll ``check`` (an async callable returning a value, truthy meaning done) until done or
    ``within`` seconds have passed; the last value."""
    end = time.monotonic() + within
    while True:
        value = await check()  # type: ignore[misc]
        if value is True or time.monotonic() > end:
            return value
        await asyncio.sleep(0.05)


async def new_game_with_a_move(addr: str) -> tuple[str, str]:
    """A game with a move (so a WatchGame from version 0 has a first event at once): (id, token)."""
    async with grpc.aio.insecure_channel(addr) as channel:
        stub = pb_grpc.AccordionServiceStub(channel)
        dealt = await stub.NewGame(pb.NewGameRequest(variant="accordion", seed=7), timeout=10)
        legal = await stub.LegalMoves(
            pb.LegalMovesRequest(game_id=dealt.game.id), metadata=bearer(dealt.token), timeout=10
        )
        move = pb.Move(notation=legal.moves[0].notation)
        await stub.ApplyMove(
            pb.ApplyMoveRequest(game_id=dealt.game.id, move=move), metadata=bearer(dealt.token), timeout=10
        )
        return dealt.game.id, dealt.token


@pytest.fixture
def private_redis() -> Iterator[RedisServer]:
    """A redis-server of this test's own: its CLIENT LIST counts only this test's server."""
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.close()


async def assert_watches_end(addr: str, metrics_port: int, redis_url: str) -> None:
    """The attack, then: 0 WatchGame handlers running and Redis's clients back to their start
    within SETTLE_SECONDS."""
    game_id, token = await new_game_with_a_move(addr)
    admin = aioredis.Redis.from_url(redis_url)
    try:
        # Warm: the server's command connections are open before the count is taken.
        async with grpc.aio.insecure_channel(addr) as channel:
            assert await watch_then_cancel(pb_grpc.AccordionServiceStub(channel), game_id, token)

        async def quiet() -> bool:
            return await asyncio.to_thread(in_flight, metrics_port, WATCH_METHOD) == 0

        assert await settled(quiet, 10) is True, "the warm-up watch did not end"
        before = await redis_clients(admin)

        await attack(addr, game_id, token, CANCELS)

        async def back() -> bool | tuple[float, int]:
            running = await asyncio.to_thread(in_flight, metrics_port, WATCH_METHOD)
            clients = await redis_clients(admin)
            return True if running == 0 and clients <= before else (running, clients)

        outcome = await settled(back, SETTLE_SECONDS)
        assert outcome is True, (
            f"{SETTLE_SECONDS} s after {CANCELS} cancelled WatchGames: (handlers running, Redis clients) "
            f"= {outcome}; Redis clients before: {before}"
        )
    finally:
        await admin.aclose()


async def test_cancelled_watches_end_on_redis(
    spawn_server: Callable[..., ServerProcess], private_redis: RedisServer
) -> None:
    metrics_port = free_port()
    server = spawn_server(
        "--workers", "1", "--metrics-port", str(metrics_port), "--log-level", "warning",
        env={"REDIS_URL": private_redis.url},
    )
    await assert_watches_end(server.addr, metrics_port, private_redis.url)


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
