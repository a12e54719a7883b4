"""WatchGame streams opened per client are rate limited (issue 28, row 1 of bench/hostile.py),
against real server processes over real channels.

Opening a WatchGame and cancelling it after its first event, in a loop from a few clients, took
71–76 % of a server's CPU and made an honest client's GetGame ~25 times slower. Now each client
may open ``--watch-burst`` streams at once and then ``--watch-rate`` a second (GCRA, as NewGame's
rate; in the store's Redis when there is one); beyond that WatchGame is RESOURCE_EXHAUSTED
``RATE_LIMITED`` with a RetryInfo, before the request is read. API keys are exempt.

Every server here is started with the flags it relies on: the suites' default is WatchGame
unlimited (tests/server_launcher.py, TEST_SERVER_ENV)."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

from accordion.api.apikeys import hash_key
from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc
from server_launcher import ServerProcess
from tests.api.helpers import bearer, retry_delay, rich

PROXY = ("--trusted-proxies", "127.0.0.1/32")  # the test process is the proxy: XFF names the client


def as_client(address: str) -> tuple[tuple[str, str], ...]:
    return (("x-forwarded-for", address),)


async def moved_game(stub: pb_grpc.AccordionServiceStub) -> tuple[str, str]:
    """A game with one move made (a watch from version 0 gets its first event at once): id, token."""
    reply = await stub.NewGame(pb.NewGameRequest(variant="accordion", seed=3), timeout=10)
    move = pb.ApplyMoveRequest(game_id=reply.game.id, move=reply.game.legal_moves[0])
    await stub.ApplyMove(move, metadata=bearer(reply.token), timeout=10)
    return reply.game.id, reply.token


async def watches(
    stub: pb_grpc.AccordionServiceStub, game_id: str, token: str, count: int, metadata: Any = ()
) -> tuple[Counter[str], grpc.aio.AioRpcError | None]:
    """``count`` WatchGames one after another, each cancelled after its first event: how many
    ended how ("OK": the first event came; else the error reason), and the last refusal."""
    outcomes: Counter[str] = Counter()
    refused = None
    for _ in range(count):
        call = stub.WatchGame(
            pb.WatchGameRequest(game_id=game_id, after_version=0),
            metadata=(*bearer(token), *metadata),
            timeout=10,
        )
        try:
            event = await call.read()
            assert event.event.version == 2  # the move (a game is dealt at version 1)
            outcomes["OK"] += 1
        except grpc.aio.AioRpcError as exc:
            outcomes[rich(exc).info.reason] += 1
            refused = exc
        finally:
            call.cancel()
    return outcomes, refused


async def test_watchgame_beyond_the_clients_rate_is_resource_exhausted_with_retry_info(
    spawn_server: Callable[..., ServerProcess], store_url: str
) -> None:
    """The burst, then RATE_LIMITED with a RetryInfo; the client's other calls still pass; after
    the delay it may watch again. On Redis the budget lives in Redis: two server processes on
    it share each client's."""
    # One stream every 5 s after a burst of 5: no call of the test, on a loaded machine,
    # refills the budget before the refusals are checked.
    flags = ("--redis-url", store_url, "--watch-rate", "0.2", "--watch-burst", "5")
    first = spawn_server(*flags)
    second = spawn_server(*flags) if store_url != "memory://" else first
    async with (
        grpc.aio.insecure_channel(first.addr) as channel,
        grpc.aio.insecure_channel(second.addr) as other,
    ):
        stub, other_stub = pb_grpc.AccordionServiceStub(channel), pb_grpc.AccordionServiceStub(other)
        game_id, token = await moved_game(stub)
        assert (await watches(stub, game_id, token, 5))[0] == {"OK": 5}  # the burst
        outcomes, refused = await watches(other_stub, game_id, token, 3)
        assert outcomes == {"RATE_LIMITED": 3}
        assert refused is not None
        err = rich(refused)
        assert (err.code, err.info.reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED")
        assert err.info.metadata["limit"] == "WatchGame per client"
        assert err.info.metadata["rate"] == "0.2" and err.info.metadata["burst"] == "5"
        delay = retry_delay(refused)
        assert 0 < delay <= 5
        # Only opening streams is limited: the same client still reads and plays its game.
        got = await stub.GetGame(pb.GetGameRequest(game_id=game_id), metadata=bearer(token), timeout=10)
        assert got.game.version == 2
        # After the delay the client may watch again (polled: the machine may be slow).
        deadline = time.monotonic() + 30
        await asyncio.sleep(delay)
        while True:
            outcomes, refused = await watches(stub, game_id, token, 1)
            if outcomes == {"OK": 1}:
                break
            assert refused is not None and time.monotonic() < deadline, outcomes
            await asyncio.sleep(retry_delay(refused))


async def test_one_clients_watch_flood_leaves_other_clients_their_watches(
    spawn_server: Callable[..., ServerProcess],
) -> None:
    """Behind a trusted proxy each client address has its own budget: the flooder is refused,
    another client watching the same game is not."""
    server = spawn_server("--watch-rate", "0.01", "--watch-burst", "3", *PROXY)
    async with grpc.aio.insecure_channel(server.addr) as channel:
        stub = pb_grpc.AccordionServiceStub(channel)
        game_id, token = await moved_game(stub)
        flooder, honest = as_client("203.0.113.1"), as_client("198.51.100.7")
        assert (await watches(stub, game_id, token, 20, flooder))[0] == {"OK": 3, "RATE_LIMITED": 17}
        assert (await watches(stub, game_id, token, 3, honest))[0] == {"OK": 3}
        assert (await watches(stub, game_id, token, 1, flooder))[0] == {"RATE_LIMITED": 1}


async def test_api_key_callers_are_exempt_from_the_watch_rate(
    spawn_server: Callable[..., ServerProcess], tmp_path: Path
) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"keys": [{"name": "spectators", "sha256": hash_key("k-456")}]}))
    server = spawn_server("--api-keys-file", str(keys), "--watch-rate", "0.01", "--watch-burst", "1")
    async with grpc.aio.insecure_channel(server.addr) as channel:
        stub = pb_grpc.AccordionServiceStub(channel)
        key = (("x-api-key", "k-456"),)
        reply = await stub.NewGame(pb.NewGameRequest(variant="accordion", seed=3), metadata=key, timeout=10)
        move = pb.ApplyMoveRequest(game_id=reply.game.id, move=reply.game.legal_moves[0])
        await stub.ApplyMove(move, metadata=(*bearer(reply.token), *key), timeout=10)
        assert (await watches(stub, reply.game.id, reply.token, 10, key))[0] == {"OK": 10}
