"""NewGame cannot evict the players (issue 28, item 5), against real server processes.

NewGame needs no credential, and on main a flood of it evicted the least recently used games of
the capped memory store, other players' games in play included (NOT_FOUND for them). Now:

* a per-client NewGame rate (``--newgame-rate``/``--newgame-burst``; API keys exempt), beyond
  it RESOURCE_EXHAUSTED ``RATE_LIMITED`` with a RetryInfo;
* the memory store evicts only games untouched for ``--evict-idle`` seconds; at the cap with
  none that idle, NewGame is RESOURCE_EXHAUSTED ``STORE_FULL`` and no game is lost;
* ``--trusted-proxies``: the client is the right-most untrusted address of ``x-forwarded-for``,
  only when the peer is a trusted proxy (here the test process on 127.0.0.1 plays the proxy,
  and ``x-forwarded-for`` names the clients); from any other peer the header is ignored.

Every server here is started with the flags it relies on: the suites' default is NewGame
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
import pytest

from accordion.api.apikeys import hash_key
from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc
from server_launcher import ServerProcess
from tests.api.helpers import bearer, retry_delay, rich

PROXY = ("--trusted-proxies", "127.0.0.1/32")  # the test process is the proxy: XFF names the client


def as_client(address: str) -> tuple[tuple[str, str], ...]:
    """The metadata a proxy adds for a client at ``address``."""
    return (("x-forwarded-for", address),)


async def new_games(
    stub: pb_grpc.AccordionServiceStub, count: int, metadata: Any = None, in_flight: int = 32
) -> Counter[str]:
    """``count`` NewGames, ``in_flight`` at a time: how many ended how ("OK" or the error reason)."""
    outcomes: Counter[str] = Counter()
    left = iter(range(count))

    async def worker() -> None:
        for _ in left:
            try:
                await stub.NewGame(pb.NewGameRequest(variant="accordion"), metadata=metadata, timeout=30)
                outcomes["OK"] += 1
            except grpc.aio.AioRpcError as exc:
                outcomes[rich(exc).info.reason] += 1

    await asyncio.gather(*(worker() for _ in range(in_flight)))
    return outcomes


async def still_there(
    stub: pb_grpc.AccordionServiceStub, game_id: str, token: str, metadata: Any = ()
) -> int:
    """The game's version, read with its token (NOT_FOUND raises)."""
    reply = await stub.GetGame(
        pb.GetGameRequest(game_id=game_id), metadata=(*bearer(token), *metadata), timeout=10
    )
    return int(reply.game.version)


@pytest.mark.parametrize("flooders", [1, 20])
async def test_a_newgame_flood_does_not_evict_another_clients_game(
    spawn_server: Callable[..., ServerProcess], flooders: int
) -> None:
    """At the default rate and idle time, a store capped at 300 games: an honest player's game
    survives 3,000 NewGames, from one flooding client (its rate stops it) and from 20 (the
    store, full of games in play, refuses them). On main (neither defence) the player's game
    was evicted: NOT_FOUND."""
    # The defaults, said here: the suites' test servers run NewGame unlimited.
    defaults = ("--newgame-rate", "10", "--newgame-burst", "100", "--evict-idle", "300")
    server = spawn_server("--redis-url", "memory://?max_games=300", *defaults, *PROXY)
    async with grpc.aio.insecure_channel(server.addr) as channel:
        stub = pb_grpc.AccordionServiceStub(channel)
        player = as_client("198.51.100.7")
        mine = await stub.NewGame(pb.NewGameRequest(variant="accordion", seed=7), metadata=player, timeout=10)
        outcomes: Counter[str] = Counter()
        for wave in range(3):  # the player looks at the game between waves: a game in play
            floods = [
                new_games(
                    stub, 1000 // flooders, as_client(f"203.0.113.{i + 1}"), in_flight=max(1, 32 // flooders)
                )
                for i in range(flooders)
            ]
            for counted in await asyncio.gather(*floods):
                outcomes.update(counted)
            assert await still_there(stub, mine.game.id, mine.token, player) == 1, f"wave {wave}"
    assert set(outcomes) <= {"OK", "RATE_LIMITED", "STORE_FULL"}, outcomes
    assert outcomes["OK"] <= 299, outcomes  # never more than the room the cap left
    if flooders == 1:
        assert outcomes["RATE_LIMITED"] >= 2000, outcomes  # all but the burst and ~10/s while it ran
    else:
        assert outcomes["STORE_FULL"] > 0, outcomes


async def test_a_store_full_of_games_in_play_refuses_newgame_and_loses_nothing(
    spawn_server: Callable[..., ServerProcess],
) -> None:
    server = spawn_server("--redis-url", "memory://?max_games=50", "--newgame-rate", "0")
    async with grpc.aio.insecure_channel(server.addr) as channel:
        stub = pb_grpc.AccordionServiceStub(channel)
        games = [
            await stub.NewGame(pb.NewGameRequest(variant="accordion", seed=n), timeout=10) for n in range(50)
        ]
        for _ in range(3):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await stub.NewGame(pb.NewGameRequest(variant="accordion"), timeout=10)
            err = rich(caught.value)
            assert (err.code, err.info.reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "STORE_FULL")
            # When the oldest game will have been idle --evict-idle (300 s), in whole seconds.
            assert retry_delay(caught.value) in range(1, 301)
        for reply in games:  # every game is still there, at its version
            assert await still_there(stub, reply.game.id, reply.token) == 1


async def test_newgame_beyond_the_clients_rate_is_resource_exhausted_with_retry_info(
    spawn_server: Callable[..., ServerProcess], store_url: str
) -> None:
    """On Redis the budget lives in Redis: two server processes on it share each client's."""
    # One NewGame every 5 s after a burst of 5: long enough that no call of the test, on a
    # loaded machine, refills the budget before the refusals are checked.
    flags = ("--redis-url", store_url, "--newgame-rate", "0.2", "--newgame-burst", "5")
    first = spawn_server(*flags)
    second = spawn_server(*flags) if store_url != "memory://" else first
    async with (
        grpc.aio.insecure_channel(first.addr) as channel,
        grpc.aio.insecure_channel(second.addr) as other,
    ):
        stub = pb_grpc.AccordionServiceStub(channel)
        assert await new_games(stub, 5, in_flight=1) == {"OK": 5}  # the burst
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await pb_grpc.AccordionServiceStub(other).NewGame(
                pb.NewGameRequest(variant="accordion"), timeout=10
            )
        err = rich(caught.value)
        assert (err.code, err.info.reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED")
        assert err.info.metadata["limit"] == "NewGame per client"
        delay = retry_delay(caught.value)
        assert 0 < delay <= 5
        games = await new_games(stub, 3, in_flight=1)
        assert games["RATE_LIMITED"] >= 2
        # After the delay the client may make a game again (polled: the machine may be slow).
        deadline = time.monotonic() + 30
        await asyncio.sleep(delay)
        while True:
            try:
                await stub.NewGame(pb.NewGameRequest(variant="accordion"), timeout=10)
                break
            except grpc.aio.AioRpcError as exc:
                assert rich(exc).info.reason == "RATE_LIMITED" and time.monotonic() < deadline
                await asyncio.sleep(retry_delay(exc))


async def test_api_key_callers_are_exempt_from_the_newgame_rate(
    spawn_server: Callable[..., ServerProcess], tmp_path: Path
) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"keys": [{"name": "loadtest", "sha256": hash_key("k-123")}]}))
    server = spawn_server("--api-keys-file", str(keys), "--newgame-rate", "1", "--newgame-burst", "1")
    async with grpc.aio.insecure_channel(server.addr) as channel:
        stub = pb_grpc.AccordionServiceStub(channel)
        assert await new_games(stub, 30, (("x-api-key", "k-123"),), in_flight=4) == {"OK": 30}


async def test_x_forwarded_for_names_the_client_only_from_a_trusted_proxy(
    spawn_server: Callable[..., ServerProcess],
) -> None:
    limit = ("--newgame-rate", "0.01", "--newgame-burst", "2")  # two games per client, then none
    trusting = spawn_server(*limit, *PROXY)
    untrusting = spawn_server(*limit, "--trusted-proxies", "10.0.0.0/8")  # 127.0.0.1 is not a proxy
    async with grpc.aio.insecure_channel(trusting.addr) as channel:
        stub = pb_grpc.AccordionServiceStub(channel)
        assert await new_games(stub, 3, as_client("203.0.113.1"), in_flight=1) == {"OK": 2, "RATE_LIMITED": 1}
        # Another address behind the proxy is another client, with its own budget...
        assert await new_games(stub, 2, as_client("203.0.113.2"), in_flight=1) == {"OK": 2}
        # ...and what a client wrote left of the proxy's entry is not believed: the right-most
        # untrusted address is 203.0.113.1, over its budget, whatever it claims before that.
        spoofed = as_client("192.0.2.99, 203.0.113.1")
        assert await new_games(stub, 1, spoofed) == {"RATE_LIMITED": 1}
        # Entries of trusted proxies are skipped: a chain of proxies ends at the client.
        chained = as_client("203.0.113.3, 127.0.0.1")
        assert await new_games(stub, 3, chained, in_flight=1) == {"OK": 2, "RATE_LIMITED": 1}
        # Not an address: the proxy's own address is the client, never a name a client chose.
        assert await new_games(stub, 3, as_client("anyone-at-all"), in_flight=1) == {
            "OK": 2,
            "RATE_LIMITED": 1,
        }
        assert await new_games(stub, 1, as_client("someone-else")) == {"RATE_LIMITED": 1}
    async with grpc.aio.insecure_channel(untrusting.addr) as channel:
        stub = pb_grpc.AccordionServiceStub(channel)
        # From an untrusted peer the header is ignored: every call is 127.0.0.1's.
        assert await new_games(stub, 1, as_client("203.0.113.1")) == {"OK": 1}
        assert await new_games(stub, 1, as_client("203.0.113.2")) == {"OK": 1}
        assert await new_games(stub, 1, as_client("203.0.113.3")) == {"RATE_LIMITED": 1}
