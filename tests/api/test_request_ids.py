"""Request ids under API keys (real server processes with a keys file), and bounded errors.

A NewGame request id unseals the game's token on a retry, so it is scoped to the caller where
there is one: the same request id under another API key is another request, and gets a game
(and token) of its own, never the first caller's. Checked on the memory store (one process)
and on Redis with two processes, the keys' calls going to different processes.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest

from accordion.api.apikeys import hash_key
from accordion.v1 import accordion_pb2 as pb

from .helpers import Client, ServerProcess, bearer, expect_error

KEYS = {name: f"acc_{name}_{secrets.token_urlsafe(24)}" for name in ("alice", "bob", "carol")}


def keys_file(folder: Path) -> Path:
    path = folder / "api-keys.json"
    entries = [{"name": name, "sha256": hash_key(key), "rate": 0} for name, key in KEYS.items()]
    path.write_text(json.dumps({"keys": entries}))
    return path


def as_key(name: str, token: str = "") -> tuple[tuple[str, str], ...]:
    return (("x-api-key", KEYS[name]), *(bearer(token) if token else ()))


@pytest.mark.parametrize("backend", ["memory", "redis"])
async def test_a_newgame_request_id_under_another_api_key_gets_no_token(
    backend: str,
    spawn_server: Callable[..., ServerProcess],
    connect: Callable[[str], Client],
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    args = ("--api-keys-file", str(keys_file(tmp_path)), "--workers", "1")
    if backend == "redis":
        env = {"REDIS_URL": str(request.getfixturevalue("redis_url"))}
        first_server, second_server = spawn_server(*args, env=env), spawn_server(*args, env=env)
    else:
        first_server = second_server = spawn_server(*args)
    alice, bob = connect(first_server.addr), connect(second_server.addr)
    rid = "shared-request-id"  # e.g. a weak id two callers both chose, or one seen by another
    ask = pb.NewGameRequest(variant="accordion-stock", request_id=rid)  # a random (hidden) deal

    first = await alice.stub.NewGame(ask, metadata=as_key("alice"), timeout=10)
    assert await alice.stub.NewGame(ask, metadata=as_key("alice"), timeout=10) == first  # a retry
    theirs = await bob.stub.NewGame(ask, metadata=as_key("bob"), timeout=10)
    assert theirs.game.id != first.game.id and theirs.token != first.token, "bob got alice's game"
    assert first.token not in theirs.SerializeToString().decode(errors="replace")
    # Bob's token does not open Alice's game (answered as an unknown game), and Alice's game is
    # as she left it; her retry through the other process still gets her own game and token.
    await expect_error(
        bob.stub.GetGame(
            pb.GetGameRequest(game_id=first.game.id), metadata=as_key("bob", theirs.token), timeout=5
        ),
        grpc.StatusCode.NOT_FOUND,
        "GAME_NOT_FOUND",
    )
    assert await bob.stub.NewGame(ask, metadata=as_key("alice"), timeout=10) == first
    assert await bob.stub.NewGame(ask, metadata=as_key("bob"), timeout=10) == theirs  # bob's own retry
    # Scoped, not global: another request under the id is refused per caller only.
    other = pb.NewGameRequest(variant="accordion", seed=5, request_id=rid)
    await expect_error(
        alice.stub.NewGame(other, metadata=as_key("alice"), timeout=10),
        grpc.StatusCode.INVALID_ARGUMENT,
        "REQUEST_ID_REUSED",
    )
    carols = await alice.stub.NewGame(other, metadata=as_key("carol"), timeout=10)
    assert carols.game.id not in (first.game.id, theirs.game.id) and carols.game.variant == "accordion"
    got = await alice.stub.GetGame(
        pb.GetGameRequest(game_id=first.game.id), metadata=as_key("alice", first.token), timeout=5
    )
    assert got.game == first.game


async def test_a_2000_position_remove_is_a_small_invalid_argument(
    spawn_server: Callable[..., ServerProcess], connect: Callable[[str], Client]
) -> None:
    """Issue 14 item 7: the repeated fields of a move are capped by validation, and an error never
    echoes the request whole (before: >16 KiB of trailers, RESOURCE_EXHAUSTED at the client)."""
    client = connect(spawn_server().addr)
    game = (await client.new_game("push-pin", seed=3)).game
    huge = pb.Move(kind=pb.MOVE_KIND_REMOVE, positions=range(1, 2001))
    request = pb.ApplyMoveRequest(game_id=game.id, move=huge)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await client.call("ApplyMove", request)
    err = await expect_error(_raise(caught.value), grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    assert err.bad_request is not None
    assert [(v.field, v.description) for v in err.bad_request.field_violations] == [
        ("move.positions", "at most 104 positions")
    ]
    trailers = sum(len(k) + len(v) for k, v in caught.value.trailing_metadata() or ())
    assert trailers < 1024, trailers
    # At the cap, an illegal REMOVE is refused by the rules, its echo cut short, with the legal moves.
    at_cap = pb.Move(kind=pb.MOVE_KIND_REMOVE, positions=range(1, 105))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await client.call("ApplyMove", pb.ApplyMoveRequest(game_id=game.id, move=at_cap))
    err = await expect_error(_raise(caught.value), grpc.StatusCode.FAILED_PRECONDITION, "ILLEGAL_MOVE")
    assert err.legal is not None and len(err.legal.moves) == len(game.legal_moves)
    assert err.message.startswith(
        "x1-104 is not legal: only 1 or 2 cards between a matching pair can go; legal now: "
    )
    trailers = sum(len(k) + len(v) for k, v in caught.value.trailing_metadata() or ())
    assert trailers < 8192, trailers
    assert (await client.get(game.id)).version == 1, "nothing changed"


async def _raise(exc: BaseException) -> None:
    raise exc


async def test_an_error_with_many_long_field_violations_stays_small(client: Client) -> None:
    """32 options, each with a 200-character name and a value over the limit: 32 violations
    whose field paths echo the names. The error keeps the first 8, each cut short."""
    options = {f"{i:02d}" + "n" * 198: "v" * 201 for i in range(32)}
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await client.stub.NewGame(pb.NewGameRequest(variant="accordion", options=options), timeout=10)
    err = await expect_error(_raise(caught.value), grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    assert err.bad_request is not None and len(err.bad_request.field_violations) == 8
    assert all(len(v.field) <= 100 for v in err.bad_request.field_violations)
    assert err.message.startswith("invalid request (32 problems, the first 8 listed): options[")
    trailers = sum(len(k) + len(v) for k, v in caught.value.trailing_metadata() or ())
    assert trailers < 8192, trailers
