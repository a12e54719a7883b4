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

import pytest

from redis_server import RedisServer, free_port
from server_launcher import ServerProcess
from stream_attack import (
    CANCELS,
    SETTLE_SECONDS,
    WATCH_METHOD,
    assert_watches_end,
    attack,
    in_flight,
    new_game_with_a_move,
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
