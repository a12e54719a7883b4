"""The WatchGame cancel attack of issue 28 (item 1), for tests/api and tests/rest (direct and
through Envoy): WatchGame, read the first event, cancel; 300 times; then the server must have
no WatchGame handler left running (its ``accordion_rpc_in_flight`` gauge) and Redis its
start's number of clients (``CLIENT LIST``), within 2 s.
"""

from __future__ import annotations

import asyncio
import time
import urllib.request
from collections.abc import Awaitable, Callable

import grpc
import grpc.aio
import redis.asyncio as aioredis

from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


WATCH_METHOD = "accordion.v1.AccordionService/WatchGame"
CANCELS = 300
WARM_UP = 50  # cancels before the count of Redis's clients is taken
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
            return float(line[len(prefix) :])
    return 0.0


def redis_clients(*ports: int, name: str | None = None) -> Callable[[], Awaitable[int]]:
    """A counter of the connections the redis-servers on ``ports`` have open now (CLIENT LIST;
    each count's own short connection included, the same every time); with ``name``, only
    those of that CLIENT SETNAME."""

    async def count() -> int:
        total = 0
        for port in ports:
            admin = aioredis.Redis(host="127.0.0.1", port=port)
            try:
                total += sum(name is None or c.get("name") == name for c in await admin.client_list())
            finally:
                await admin.aclose()
        return total

    return count


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


async def attack(
    addr: str,
    game_id: str,
    token: str,
    cancels: int,
    *,
    connections: int = CHANNELS,
    streams_per_connection: int = STREAMS_PER_CHANNEL,
) -> None:
    """``cancels`` watch-and-cancel calls over ``connections`` connections, each with
    ``streams_per_connection`` at once."""
    # A subchannel pool per channel: otherwise channels to one address share one connection.
    options = [("grpc.use_local_subchannel_pool", 1)]
    channels = [grpc.aio.insecure_channel(addr, options=options) for _ in range(connections)]
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

        await asyncio.gather(*(worker(stub) for stub in stubs for _ in range(streams_per_connection)))
    finally:
        for ch in channels:
            await ch.close()


async def settled(check: Callable[[], Awaitable[object]], within: float) -> object:
    """Poll ``check`` (True: done; anything else: what is still wrong) until it is done or
    ``within`` seconds have passed; its last value."""
    end = time.monotonic() + within
    while True:
        value = await check()
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


async def assert_watches_end(
    addr: str, metrics_port: int, count_clients: Callable[[], Awaitable[int]], **attack_options: int
) -> None:
    """The attack on ``addr`` (the server, or Envoy in front of it), then: 0 WatchGame handlers
    running on the server and Redis's clients (``count_clients``: ``redis_clients``) back to
    their start within SETTLE_SECONDS."""
    game_id, token = await new_game_with_a_move(addr)
    # Warm: the server's command connections are open before the count is taken, as many as the
    # attack's concurrency needs (redis-py's pools, bounded, grow to what is asked of them at once).
    await attack(addr, game_id, token, WARM_UP, **attack_options)

    async def quiet() -> bool | float:
        running = await asyncio.to_thread(in_flight, metrics_port, WATCH_METHOD)
        return True if running == 0 else running

    warmed = await settled(quiet, 10)
    assert warmed is True, (
        f"10 s after the warm-up's {WARM_UP} cancels, {warmed} WatchGame handlers still run"
    )
    before = await count_clients()

    await attack(addr, game_id, token, CANCELS, **attack_options)

    async def back() -> bool | tuple[float, int]:
        running = await asyncio.to_thread(in_flight, metrics_port, WATCH_METHOD)
        clients = await count_clients()
        return True if running == 0 and clients <= before else (running, clients)

    outcome = await settled(back, SETTLE_SECONDS)
    assert outcome is True, (
        f"{SETTLE_SECONDS} s after {CANCELS} cancelled WatchGames: (handlers running, Redis clients) "
        f"= {outcome}; Redis clients before: {before}"
    )
