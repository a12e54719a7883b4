"""Tokens and ids: every call on a game needs its token; a failed call changes nothing."""

from __future__ import annotations

import asyncio
import hashlib
import re
from typing import Any

import grpc
import grpc.aio
import pytest
import redis

from accordion.sessions.tokens import Access
from accordion.v1 import accordion_pb2 as pb

from .conftest import Running
from .helpers import Client, expect_error

RID = "a-request-id-that-must-not-be-stored"


def game_calls(game: pb.Game) -> list[tuple[str, Any]]:
    """One request for every RPC that acts on an existing game (WatchGame is checked apart)."""
    return [
        ("GetGame", pb.GetGameRequest(game_id=game.id)),
        ("LegalMoves", pb.LegalMovesRequest(game_id=game.id)),
        ("ApplyMove", pb.ApplyMoveRequest(game_id=game.id, move=game.legal_moves[0])),
        ("Undo", pb.UndoRequest(game_id=game.id)),
        ("Score", pb.ScoreRequest(game_id=game.id)),
        ("Hint", pb.HintRequest(game_id=game.id)),
    ]


async def watch_first(client: Client, game_id: str, token: str | None) -> None:
    metadata = (("authorization", f"Bearer {token}"),) if token else None
    call = client.stub.WatchGame(pb.WatchGameRequest(game_id=game_id), metadata=metadata, timeout=5)
    try:
        await call.read()
    finally:
        call.cancel()


async def test_missing_or_wrong_tokens_are_refused_and_change_nothing(client: Client) -> None:
    """A wrong token is answered exactly as an unknown id (NOT_FOUND, same message and details),
    so it tells nothing about which game ids exist."""
    mine = (await client.new_game("accordion", seed=7)).game
    my_token = client.token
    played = await client.apply(mine.id, mine.legal_moves[0].notation)  # so Undo would have work to do
    theirs = Client(client.channel, client.stub)
    await theirs.new_game("accordion", seed=8)
    unknown = pb.Game(id="A" * 22, legal_moves=played.game.legal_moves)
    for (method, request), (_, unknown_request) in zip(
        game_calls(played.game), game_calls(unknown), strict=True
    ):
        await expect_error(
            client.call(method, request, token=""), grpc.StatusCode.UNAUTHENTICATED, "MISSING_TOKEN"
        )
        no_game = await expect_error(
            client.call(method, unknown_request, token=my_token), grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND"
        )
        for wrong in (theirs.token, my_token[:-1]):
            err = await expect_error(
                client.call(method, request, token=wrong), grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND"
            )
            assert (err.message, err.info, err.bad_request, err.legal) == (
                no_game.message,
                no_game.info,
                no_game.bad_request,
                no_game.legal,
            ), "a wrong token and an unknown id get the same answer"
        # Not a bearer credential at all.
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await getattr(client.stub, method)(
                request, metadata=(("authorization", f"Basic {my_token}"),), timeout=5
            )
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    await expect_error(watch_first(client, mine.id, None), grpc.StatusCode.UNAUTHENTICATED, "MISSING_TOKEN")
    await expect_error(
        watch_first(client, mine.id, theirs.token), grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND"
    )
    await expect_error(watch_first(client, "A" * 22, my_token), grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND")
    assert await client.get(mine.id) == played.game, "nothing changed"


async def test_ids_and_tokens_are_long_random_and_distinct(client: Client) -> None:
    replies = [await client.new_game("accordion", seed=1) for _ in range(20)]
    ids = {r.game.id for r in replies}
    tokens = {r.token for r in replies}
    assert len(ids) == 20 and len(tokens) == 20, "same deal, still distinct ids and tokens"
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{22}", i) for i in ids), "128 random bits, URL-safe"
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{43}", t) for t in tokens), "256 random bits"


async def test_tokens_are_stored_hashed(served: Running, client: Client) -> None:
    plain = await client.new_game("accordion", seed=1)
    with_id = await client.stub.NewGame(
        pb.NewGameRequest(variant="accordion", seed=2, request_id=RID), timeout=5
    )
    for reply in (plain, with_id):
        record = await served.server.store.load(reply.game.id)
        # The access record (issue 29): the play token's and the watch token's hashes.
        access = Access.load(record.token_hash)
        assert access.play_hash == hashlib.sha256(reply.token.encode()).digest()
        assert access.watch_hash == hashlib.sha256(reply.watch_token.encode()).digest()
        for secret in (reply.token, reply.watch_token):
            assert secret.encode() not in record.data + record.token_hash
    if served.server.config.redis_url:  # every byte Redis holds, idempotency records included
        with redis.Redis.from_url(served.server.config.redis_url) as r:
            dump = b"".join(_key_bytes(r, k) for k in r.scan_iter("*"))
        assert dump and with_id.game.id.encode() in dump
        for reply in (plain, with_id):
            assert reply.token.encode() not in dump and reply.watch_token.encode() not in dump
        assert RID.encode() not in dump, "the request id (which unseals the token) is stored hashed"


def _key_bytes(r: redis.Redis, key: bytes) -> bytes:
    kind = r.type(key)
    if kind == b"hash":
        return key + b"".join(k + v for k, v in r.hgetall(key).items())
    if kind == b"stream":
        return key + b"".join(b"".join(k + v for k, v in f.items()) for _, f in r.xrange(key))
    if kind == b"string":
        return key + (r.get(key) or b"")
    return key + repr(kind).encode()


async def test_losing_new_games_leave_no_orphans(served: Running, client: Client) -> None:
    request = pb.NewGameRequest(variant="accordion", seed=4, request_id="race")
    replies = await asyncio.gather(*(client.stub.NewGame(request, timeout=10) for _ in range(6)))
    winner = replies[0].game.id
    if served.server.config.redis_url:
        with redis.Redis.from_url(served.server.config.redis_url) as r:
            games = {k for k in r.scan_iter("*:g")}
        assert len(games) == 1 and winner.encode() in next(iter(games))
    else:
        from accordion.store import MemoryStore

        assert isinstance(served.server.store, MemoryStore)
        assert list(served.server.store._games) == [winner]  # white-box: no orphan games
