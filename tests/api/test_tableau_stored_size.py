"""A tableau game's stored record stays small in Redis: a Spider game of 200 moves (two decks,
its whole log kept for undo and replay) under 2 KiB, measured on a real redis-server
(``HSTRLEN`` of the record and ``MEMORY USAGE`` of the game's key), played over real gRPC."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
import redis

from accordion.v1 import accordion_pb2 as pb

from .helpers import Client

MOVES = 200
LIMIT = 2048


async def _play(client: Client, variant: str, seed: int) -> tuple[str, int]:
    """MOVES moves (an undo where none is legal) through ApplyMove; the game id and version."""
    game = (await client.new_game(variant, seed=seed)).game
    rng = random.Random(seed)
    for _ in range(MOVES):
        legal = list(game.legal_moves)
        if legal:
            moves = [m for m in legal if m.kind != pb.MOVE_KIND_DEAL] or legal
            reply = await client.call(
                "ApplyMove", pb.ApplyMoveRequest(game_id=game.id, move=rng.choice(moves))
            )
        else:
            reply = await client.call("Undo", pb.UndoRequest(game_id=game.id))
        game = reply.game
    return game.id, game.version


@pytest.mark.parametrize("variant", ["spider", "emperor", "klondike"])
async def test_a_200_move_game_is_under_2_kib_in_redis(
    variant: str, start_server: Callable[..., Any], connect: Callable[[str], Client], redis_url: str
) -> None:
    served = await start_server(redis_url)
    client = connect(served.addr)
    game_id, version = await _play(client, variant, seed=5)
    assert version == MOVES + 1
    r = redis.Redis.from_url(redis_url)
    try:
        key = f"acc:{{{game_id}}}:g"
        record = r.hstrlen(key, "d")
        usage = r.memory_usage(key)
        print(f"{variant}: {MOVES} moves, record {record} bytes, MEMORY USAGE {usage} bytes")
        assert 0 < record < LIMIT, record
        assert usage is not None and usage < LIMIT, usage
    finally:
        r.close()
