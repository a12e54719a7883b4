"""Every client gets its share of the solver (issue 28, item 4), against the real server process.

Two clients, told apart by their API keys (the identity the limits and the solver's fair pool
count by): ``hog`` sends long Solves of Accordion's Revenge deals that stay undecided for far
longer than any wait here; ``light`` sends an easy one (Accordion seed 7: won in milliseconds).
Before the fair pool, the hog's searches took both workers and the light client's Solve waited
in one FIFO queue until its budget was gone: UNKNOWN, 0 positions searched.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest

from accordion.api.apikeys import hash_key
from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc

from .helpers import ServerProcess, retry_delay, rich
from .test_solver_cancel import HARD, cpu_seconds_over

KEYS = {"hog": "hog-key-0123456789abcdef", "light": "light-key-0123456789abcdef"}
# The defaults of the fair share (one search running and four waiting per client) on two workers,
# and long Solves: a hog's search never ends by itself while a test runs.
ENV = {"ACCORDION_SOLVE_MAX_SECONDS": "30", "ACCORDION_SOLVER_THREADS": "2"}


class KeyedClient:
    """A channel whose every call carries one API key (and the game's token, once it has one)."""

    def __init__(self, addr: str, key: str) -> None:
        self.channel = grpc.aio.insecure_channel(addr)
        self.stub = pb_grpc.AccordionServiceStub(self.channel)
        self.key = key

    def metadata(self, token: str = "") -> tuple[tuple[str, str], ...]:
        return (("x-api-key", self.key),) + ((("authorization", f"Bearer {token}"),) if token else ())

    async def new_game(self, variant: str, seed: int, **options: str) -> tuple[str, str]:
        reply = await self.stub.NewGame(
            pb.NewGameRequest(variant=variant, seed=seed, options=options),
            metadata=self.metadata(),
            timeout=10,
        )
        return reply.game.id, reply.token

    async def solve(self, game: tuple[str, str], timeout: float, **budget: Any) -> pb.SolveResponse:
        game_id, token = game
        return await self.stub.Solve(
            pb.SolveRequest(game_id=game_id, **budget), metadata=self.metadata(token), timeout=timeout
        )


@pytest.fixture
async def clients(spawn_server: Callable[..., ServerProcess], tmp_path: Path) -> Any:
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"keys": [{"name": n, "sha256": hash_key(k)} for n, k in KEYS.items()]}))
    server = spawn_server(env={**ENV, "ACCORDION_API_KEYS_FILE": str(keys)})
    hog, light = KeyedClient(server.addr, KEYS["hog"]), KeyedClient(server.addr, KEYS["light"])
    yield server, hog, light
    await hog.channel.close()
    await light.channel.close()


async def hard_game(client: KeyedClient, i: int) -> tuple[str, str]:
    variant, options, seeds = HARD
    return await client.new_game(variant, seeds[i % len(seeds)], **options)


async def long_solves(client: KeyedClient, count: int) -> list[asyncio.Task[pb.SolveResponse]]:
    games = [await hard_game(client, i) for i in range(count)]
    return [asyncio.ensure_future(client.solve(game, timeout=60)) for game in games]


async def wait_until_searching(server: ServerProcess) -> None:
    """Until the server's threads burn CPU: the hog's Solves have reached the solver."""
    give_up = time.monotonic() + 20
    while True:
        busy, _ = await asyncio.to_thread(cpu_seconds_over, server.proc.pid, 0.3)
        if busy >= 0.05:
            return
        assert time.monotonic() < give_up, "the long Solves never started searching"


async def stop(tasks: list[asyncio.Task[Any]]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_an_easy_solve_is_won_while_another_client_runs_four_long_ones(clients: Any) -> None:
    server, hog, light = clients
    hogging = await long_solves(hog, 4)
    try:
        await wait_until_searching(server)
        easy = await light.new_game("accordion", 7)
        started = time.monotonic()
        answer = await light.solve(easy, timeout=20, max_millis=5000)
        took = time.monotonic() - started
        print(
            f"easy Solve beside 4 long ones from another client: {answer.outcome=} {answer.nodes=} "
            f"in {took * 1000:.0f} ms"
        )
        assert answer.outcome == pb.SOLVE_OUTCOME_WON and answer.nodes > 0 and len(answer.moves) == 51
        assert not any(t.done() for t in hogging), "the long Solves were still searching throughout"
    finally:
        await stop(hogging)


async def test_a_client_over_its_share_of_the_queue_is_refused_with_retry_info(clients: Any) -> None:
    _, hog, _ = clients
    # One search running and four waiting is the hog's share; of six at once, one is refused.
    hogging = await long_solves(hog, 6)
    try:
        done, _ = await asyncio.wait(hogging, timeout=15, return_when=asyncio.FIRST_COMPLETED)
        assert len(done) == 1, "no Solve was refused: six long Solves of one client all waited"
        failure = next(iter(done)).exception()
        assert isinstance(failure, grpc.aio.AioRpcError), failure
        err = rich(failure)
        assert err.code == grpc.StatusCode.RESOURCE_EXHAUSTED and err.info.reason == "CAPACITY_EXCEEDED"
        assert err.info.metadata["max"] == "4" and "one client" in err.info.metadata["limit"]
        assert retry_delay(failure) > 0  # exactly one RetryInfo, a wait in it
        assert sum(t.done() for t in hogging) == 1
    finally:
        await stop(hogging)


async def test_a_solve_still_queued_at_its_deadline_is_deadline_exceeded_and_never_runs(clients: Any) -> None:
    server, hog, _ = clients
    hogging = await long_solves(hog, 1)
    try:
        await wait_until_searching(server)
        # The hog's second Solve waits for its first (one search at a time per client), though a
        # worker is free: its deadline passes in the queue, and the server says so before it.
        second = await hard_game(hog, 1)
        started = time.monotonic()
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await hog.solve(second, timeout=2.0)
        took = time.monotonic() - started
        err = rich(caught.value)
        assert err.code == grpc.StatusCode.DEADLINE_EXCEEDED and err.info.reason == "DEADLINE_EXCEEDED"
        # The server's answer, not the client's own deadline (its message is grpc's): no timing.
        assert "never started" in err.message, f"{err.message} (after {took:.2f} s)"
        # (That it never runs afterwards: tests/api/test_fairpool.py, tests/api/test_solving_overrun.py.)
        assert not hogging[0].done()
    finally:
        await stop(hogging)
