"""The pools of winnable deals through the service: real servers (in process and as processes),
a real redis-server, real gRPC, the operator command as a process.

Open Klondike (every card face up, so the seed shows in the reply) lets a test see which deal it
got and compare it with the pool's items, read from Redis; a hidden game shows nothing of the
kind (tests/api/test_pools_every_game.py plays those through).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from accordion.api.solving import POOL_CLIENT
from accordion.engine import new_game
from accordion.sessions.winnable import SEED_BYTES, pool_name
from accordion.store import GameStore, open_store
from accordion.v1 import accordion_pb2 as pb

from .conftest import Running
from .helpers import Client

OPEN = {"open": "true"}
VARIANT = "klondike"
POOL = pool_name(new_game(VARIANT, dict(OPEN), seed=0))
NO_REFILL = {"ACCORDION_WINNABLE_POOL_LOW_WATER": "0"}  # take from the pool, never refill it


def pools_command(*args: str) -> subprocess.CompletedProcess[str]:
    """``accordion-pools`` (as ``python -m accordion.pools``, this interpreter), checked."""
    done = subprocess.run(
        [sys.executable, "-m", "accordion.pools", *args], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return done


def fill(redis_url: str, count: int, *games: str) -> str:
    return pools_command(
        "fill", "--redis-url", redis_url, "--count", str(count), "--processes", "1", *games
    ).stdout


async def pooled_seeds(store: GameStore, pool: str = POOL) -> set[int]:
    """The seeds a pool holds, read from Redis as only a test (or an operator) would."""
    key = store.pool_key(pool)  # type: ignore[attr-defined]
    members = await store.redis_client.smembers(key)  # type: ignore[attr-defined]
    return {int.from_bytes(m[:SEED_BYTES], "big") for m in members}


async def winnable(
    client: Client, variant: str = VARIANT, options: dict[str, str] | None = None
) -> pb.NewGameResponse:
    reply = await client.stub.NewGame(
        pb.NewGameRequest(variant=variant, options=OPEN if options is None else options, winnable_only=True),
        timeout=5,
    )
    client.token = reply.token
    return reply


async def test_the_command_fills_a_pool_and_prints_no_seed(redis_url: str) -> None:
    out = fill(redis_url, 3, "klondike:open=true")
    store = open_store(redis_url)
    try:
        seeds = await pooled_seeds(store)
        assert len(seeds) == 3 and await store.pool_size(POOL) == 3
        assert "3 deals" in out and not any(str(seed) in out for seed in seeds)
        assert "3 deals" in pools_command("status", "--redis-url", redis_url, "klondike:open=true").stdout
        fill(redis_url, 5, "klondike:open=true")  # up to 5: two more, the first three kept
        assert seeds < await pooled_seeds(store) and await store.pool_size(POOL) == 5
    finally:
        await store.close()


async def test_deals_come_from_the_pool_and_never_twice(
    redis_url: str, spawn_server: Callable[..., Any], connect: Callable[[str], Client]
) -> None:
    """Two server processes on one Redis share the pool: every deal served is one of the pool's,
    each once, removed as it is served, none served twice in a row to one client."""
    fill(redis_url, 8, "klondike:open=true")
    store = open_store(redis_url)
    try:
        seeds = await pooled_seeds(store)
        env = {"REDIS_URL": redis_url, **NO_REFILL}
        servers = [spawn_server(env=env), spawn_server(env=env)]
        clients = [connect(servers[0].addr), connect(servers[1].addr)]
        served = [(await winnable(clients[i % 2])).game.seed for i in range(8)]
        assert sorted(served) == sorted(seeds)  # each pooled deal once, from either server
        assert all(a != b for a, b in zip(served, served[1:]))
        assert await store.pool_size(POOL) == 0
        # The pool empty: the live search answers (a deal the pool never had).
        assert (await winnable(clients[0])).game.seed not in seeds
        for server in servers:  # no log line names a pooled seed
            logs = server.out_path.read_text() + server.err_path.read_text()
            assert not any(str(seed) in logs for seed in seeds)
    finally:
        await store.close()


async def test_a_pool_survives_a_server_restart(
    redis_url: str, spawn_server: Callable[..., Any], connect: Callable[[str], Client]
) -> None:
    fill(redis_url, 2, "klondike:open=true")
    store = open_store(redis_url)
    try:
        seeds = await pooled_seeds(store)
        env = {"REDIS_URL": redis_url, **NO_REFILL}
        first = spawn_server(env=env)
        got = (await winnable(connect(first.addr))).game.seed
        first.close()  # stopped; the pool stays in Redis
        second = spawn_server(env=env)
        again = (await winnable(connect(second.addr))).game.seed
        assert {got, again} == seeds and await store.pool_size(POOL) == 0
    finally:
        await store.close()


async def wait_for_size(store: GameStore, size: int, seconds: float = 120.0) -> None:
    for _ in range(int(seconds * 10)):
        if await store.pool_size(POOL) == size:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"the pool never held {size} deals (holds {await store.pool_size(POOL)})")


@pytest.mark.parametrize("backend", ["memory", "redis"])
async def test_a_pool_refills_itself_below_its_watermark(
    backend: str,
    start_server: Callable[..., Any],
    connect: Callable[[str], Client],
    request: pytest.FixtureRequest,
) -> None:
    url = "memory://" if backend == "memory" else str(request.getfixturevalue("redis_url"))
    running: Running = await start_server(url, winnable_pool_target=4, winnable_pool_low_water=2)
    store = running.server.store
    client = connect(running.addr)
    first = await winnable(client)  # the pool empty: searched live, and a refill starts
    await wait_for_size(store, 4)
    assert first.game.seed not in await pooled_seeds_any(store)
    await winnable(client)  # 3 left: above the watermark, no refill
    await asyncio.sleep(0.5)
    assert await store.pool_size(POOL) == 3
    await winnable(client)  # 2 left: not below it
    await winnable(client)  # 1 left: below it, refilled to 4
    await wait_for_size(store, 4)


async def pooled_seeds_any(store: GameStore) -> set[int]:
    """The pool's seeds on either backend (the memory store's from its in-process pools)."""
    if hasattr(store, "_pools"):
        return {int.from_bytes(i[:SEED_BYTES], "big") for i in store._pools._items.get(POOL, [])}
    return await pooled_seeds(store)


async def test_a_refill_takes_one_solve_worker_and_a_players_solve_runs_beside_it(
    start_server: Callable[..., Any], connect: Callable[[str], Client]
) -> None:
    """The refill's searches queue on the Solve workers as one client of the fair share: while
    four-suit Spider's pool refills (its deals take seconds each), it holds one of the two
    workers, never both, and a player's Solve is answered WON on the other."""
    running: Running = await start_server(
        "memory://", solver_threads=2, winnable_pool_target=50, winnable_pool_low_water=50
    )
    servicer = running.server.servicer
    spider = new_game("spider", {}, seed=0)
    servicer.winnable._refill_later(pool_name(spider), "spider", {})  # as after a deal taken
    pool = servicer.solving._solve_pool
    for _ in range(600):  # the refill's first search starts
        if pool.running >= 1:
            break
        await asyncio.sleep(0.05)
    refill = pool._clients[POOL_CLIENT]
    assert len(refill.running) == 1
    client = connect(running.addr)
    reply = await client.new_game("klondike", options=OPEN, seed=3)
    answer = await client.call("Solve", pb.SolveRequest(game_id=reply.game.id), timeout=30)
    assert answer.outcome == pb.SOLVE_OUTCOME_WON
    assert len(refill.running) <= 1 and pool.running <= 2
