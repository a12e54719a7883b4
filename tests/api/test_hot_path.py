"""The move's hot path against real processes: one Redis command per ApplyMove, the Redis
footprint of a game, and the per-process game cache across two server processes.

Each server is the real ``accordion-server`` (one worker, its default event loop) on a real
redis-server; MONITOR shows every command Redis runs (those a script runs say ``[0 lua]``).
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Callable

import grpc
import redis

from accordion.v1 import accordion_pb2 as pb
from redis_server import Monitor, RedisServer

from .helpers import Client, ServerProcess, bearer, expect_error

QUIET = ("--workers", "1", "--health-interval", "60")  # no health PINGs inside the window


async def play(client: Client, game: pb.Game, rng: random.Random, rid: str = "") -> pb.Game:
    """A random legal move, sent like the clients send it (expected version, a request id)."""
    move = rng.choice(list(game.legal_moves))
    request = pb.ApplyMoveRequest(game_id=game.id, move=move, expected_version=game.version, request_id=rid)
    return (await client.call("ApplyMove", request)).game


async def test_apply_move_is_one_evalsha_and_nothing_else(
    spawn_server: Callable[..., ServerProcess],
    connect: Callable[[str], Client],
    redis_url: str,
    redis_server: RedisServer,
) -> None:
    client = connect(spawn_server(*QUIET, env={"REDIS_URL": redis_url}).addr)
    rng = random.Random(5)
    games, tokens = [], []
    for seed in range(3):
        game = (await client.new_game("accordion-stock", seed=seed)).game
        tokens.append(client.token)
        for step in range(3):  # warm: connections made, script loaded, games cached
            client.token = tokens[-1]
            game = await play(client, game, rng, rid=f"warm-{seed}-{step}")
        games.append(game)
    monitor = await asyncio.to_thread(Monitor, redis_server.port)
    moves = 0
    for step in range(10):
        for i, game in enumerate(games):
            client.token = tokens[i]
            games[i] = await play(client, game, rng, rid=f"move-{i}-{step}")
            moves += 1
    lines = await asyncio.to_thread(monitor.stop)
    sent = Counter(Monitor.command(ln) for ln in lines if "lua]" not in ln)
    assert sent == Counter({"EVALSHA": moves}), sent  # one round trip per move, nothing else
    inside = Counter(Monitor.command(ln) for ln in lines if "lua]" in ln)
    assert inside["HSET"] == 2 * moves and "XADD" not in inside, inside  # nobody watches: no stream
    # A read still asks Redis (one HMGET), so it never answers from a stale cache.
    monitor = await asyncio.to_thread(Monitor, redis_server.port)
    client.token = tokens[0]
    assert (await client.get(games[0].id)) == games[0]
    lines = await asyncio.to_thread(monitor.stop)
    assert [Monitor.command(ln) for ln in lines if "lua]" not in ln] == ["HMGET"]


def game_footprint(url: str, game_id: str) -> dict[str, int]:
    with redis.Redis.from_url(url) as r:
        keys = list(r.scan_iter(match=f"*{{{game_id}}}*"))
        return {k.decode().rsplit(":", 1)[1]: int(r.memory_usage(k, samples=0) or 0) for k in keys}


async def _hundred_moves(client: Client, with_ids: bool) -> pb.Game:
    """An accordion-stock game (52 cards, dealt one by one) played to 100 moves: stacks where
    possible, else a deal."""
    for seed in range(1, 100):
        game = (await client.new_game("accordion-stock", seed=seed)).game
        rng = random.Random(seed)
        for n in range(100):
            if not game.legal_moves:
                break
            stacks = [m for m in game.legal_moves if m.kind == pb.MOVE_KIND_STACK]
            move = rng.choice(stacks) if stacks else game.legal_moves[0]
            request = pb.ApplyMoveRequest(
                game_id=game.id,
                move=move,
                expected_version=game.version,
                request_id=f"{game.id}-{n}" if with_ids else "",
            )
            game = (await client.call("ApplyMove", request)).game
        if game.moves_played == 100:
            return game
    raise AssertionError("no deal reached 100 moves")


async def test_a_100_move_game_takes_under_1_kib_of_redis(
    spawn_server: Callable[..., ServerProcess], connect: Callable[[str], Client], redis_url: str
) -> None:
    client = connect(spawn_server(*QUIET, env={"REDIS_URL": redis_url}).addr)
    game = await _hundred_moves(client, with_ids=False)
    sizes = game_footprint(redis_url, game.id)
    assert set(sizes) == {"g"} and sum(sizes.values()) < 1024, sizes  # the game hash is everything
    # With a request id on every move, each recorded request adds a few dozen bytes.
    game = await _hundred_moves(client, with_ids=True)
    sizes = game_footprint(redis_url, game.id)
    assert set(sizes) == {"g", "r"} and sizes["g"] < 1024 and sizes["r"] < 100 * 48, sizes
    # A watcher makes the event stream (and only then does it cost memory).
    stream = client.stub.WatchGame(
        pb.WatchGameRequest(game_id=game.id, after_version=101), metadata=bearer(client.token), timeout=10
    )
    for _ in range(50):
        if "e" in game_footprint(redis_url, game.id):
            break
        await asyncio.sleep(0.05)
    await client.call("Undo", pb.UndoRequest(game_id=game.id))
    assert (await stream.read()).event.kind == pb.GameEvent.KIND_UNDO
    stream.cancel()
    assert "e" in game_footprint(redis_url, game.id)


async def test_two_replicas_alternating_moves_never_lose_or_repeat_one(
    spawn_server: Callable[..., ServerProcess], connect: Callable[[str], Client], redis_url: str
) -> None:
    a = connect(spawn_server(*QUIET, env={"REDIS_URL": redis_url}).addr)
    b = connect(spawn_server(*QUIET, env={"REDIS_URL": redis_url}).addr)
    game = (await a.new_game("accordion-stock", seed=9)).game
    b.token = a.token
    rng = random.Random(9)
    acked: list[tuple[int, str]] = []
    # Alternating, each replica's cached copy is a version behind every other time: the CAS
    # finds it stale (with expected_version the client's version is the truth).
    for step in range(12):
        through = (a, b)[step % 2]
        move = rng.choice(list(game.legal_moves))
        reply = await through.call(
            "ApplyMove",
            pb.ApplyMoveRequest(
                game_id=game.id, move=move, expected_version=game.version, request_id=f"alt-{step}"
            ),
        )
        assert reply.game.version == game.version + 1 and reply.move.notation == move.notation
        acked.append((reply.game.version, reply.move.notation))
        game = reply.game
    # A move and its undo on one replica's cached game (played on since it was loaded), then an
    # undo through the other: each takes back the latest move.
    for through in (a, a, b):
        if through is a and len(acked) % 2:
            reply = await through.apply(game.id, "deal")
        else:
            reply = await through.call("Undo", pb.UndoRequest(game_id=game.id, expected_version=game.version))
        assert reply.game.version == game.version + 1
        acked.append((reply.game.version, reply.move.notation))
        game = reply.game
    # A stale cache without expected_version: A holds version v, B moves to v+1, A's move is
    # replayed on v+1 (conflict, reload, retry) rather than lost or applied to the old position.
    reply = await a.apply(game.id, "deal")
    acked.append((reply.game.version, reply.move.notation))
    reply = await b.apply(game.id, "deal", request_id="b-deal")
    acked.append((reply.game.version, reply.move.notation))
    stale = reply.game
    reply = await a.apply(game.id, "deal", request_id="a-deal")
    assert reply.game.version == stale.version + 1 and reply.game.moves_played == stale.moves_played + 1
    assert reply.game.stock_size == stale.stock_size - 1
    acked.append((reply.game.version, reply.move.notation))
    # ... and with a stale expected_version A says so, with the current version.
    err = await expect_error(
        a.apply(game.id, "deal", expected_version=stale.version), grpc.StatusCode.ABORTED, "VERSION_MISMATCH"
    )
    assert err.info.metadata["current_version"] == str(reply.game.version)
    # A retry through the other replica gets the first answer and applies nothing.
    again = await b.apply(game.id, "deal", request_id="a-deal")
    assert again == reply
    # Concurrent moves through both replicas, each retried with its request id until answered.

    async def deal(i: int) -> pb.ApplyMoveResponse:
        through = (a, b)[i % 2]
        while True:
            try:
                return await through.apply(game.id, "deal", request_id=f"race-{i}")
            except grpc.aio.AioRpcError as exc:
                assert exc.code() == grpc.StatusCode.ABORTED, exc

    raced = await asyncio.gather(*(deal(i) for i in range(8)))
    acked += sorted((r.game.version, r.move.notation) for r in raced)
    versions = [v for v, _ in acked]
    assert versions == list(range(2, 2 + len(acked))), versions  # none lost, none twice
    final = await b.get(game.id)
    assert final.version == 1 + len(acked) and final == max(raced, key=lambda r: r.game.version).game
    assert await a.get(game.id) == final
    # The log (WatchGame, through either replica) is exactly the acknowledged moves.
    stream = a.stub.WatchGame(pb.WatchGameRequest(game_id=game.id), metadata=bearer(a.token), timeout=10)
    events = [(await stream.read()).event for _ in acked]
    stream.cancel()
    assert [(e.version, e.move.notation) for e in events] == acked
    assert events[-1].game == final


async def test_a_new_game_request_record_is_small_and_answers_retries(
    spawn_server: Callable[..., ServerProcess], connect: Callable[[str], Client], redis_url: str
) -> None:
    """NewGame's idempotency record holds the sealed token and the game id, not the reply (the
    game as dealt is rebuilt from its header): a few hundred bytes, and a retry gets the same."""
    client = connect(spawn_server(*QUIET, env={"REDIS_URL": redis_url}).addr)
    request = pb.NewGameRequest(variant="accordion-stock", seed=12, request_id="3f1c-retry-me")
    first = await client.stub.NewGame(request, timeout=10)
    client.token = first.token
    await client.apply(first.game.id, "deal")  # the game moves on; the retry still gets version 1
    assert await client.stub.NewGame(request, timeout=10) == first
    with redis.Redis.from_url(redis_url) as r:
        claims = list(r.scan_iter(match="*{req:*"))
        assert len(claims) == 1 and int(r.memory_usage(claims[0], samples=0) or 0) < 512


async def test_a_wrong_token_on_a_cached_game_costs_the_store_call_an_unknown_id_does(
    spawn_server: Callable[..., ServerProcess],
    connect: Callable[[str], Client],
    redis_url: str,
    redis_server: RedisServer,
) -> None:
    """No existence oracle by latency (issue 28 item 7): a wrong token on a game the server has
    cached must not be refused from the cache alone (~220 µs sooner than an unknown id, which
    costs a Redis round trip). Both must send Redis the same commands, and both are NOT_FOUND."""
    client = connect(spawn_server(*QUIET, env={"REDIS_URL": redis_url}).addr)
    rng = random.Random(7)
    game = (await client.new_game("accordion-stock", seed=3)).game
    game = await play(client, game, rng, rid="warm")  # cached, as after any move
    sent: dict[str, list[str]] = {}
    client.token = "w" * 43  # first, a call that loads the store's scripts into Redis (once a server)
    warm = pb.ApplyMoveRequest(game_id="B" * 22, move=game.legal_moves[0], expected_version=game.version)
    await expect_error(client.call("ApplyMove", warm), grpc.StatusCode.NOT_FOUND)
    for case, game_id in (("wrong token", game.id), ("unknown id", "A" * 22)):
        client.token = "w" * 43
        monitor = await asyncio.to_thread(Monitor, redis_server.port)
        move = pb.ApplyMoveRequest(game_id=game_id, move=game.legal_moves[0], expected_version=game.version)
        await expect_error(client.call("ApplyMove", move), grpc.StatusCode.NOT_FOUND)
        lines = await asyncio.to_thread(monitor.stop)
        sent[case] = [Monitor.command(ln) for ln in lines if "lua]" not in ln]
    # One script call each (the LOAD script checks the credential in Redis: store/credentials.py).
    assert sent["wrong token"] == sent["unknown id"] == ["EVALSHA"], sent
