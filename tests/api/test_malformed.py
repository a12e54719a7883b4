"""Malformed requests of every RPC are INVALID_ARGUMENT with a reason, never INTERNAL or UNKNOWN."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import grpc.aio
import pytest

from accordion.api.service import SERVICE
from accordion.v1 import accordion_pb2 as pb

from .helpers import Client, expect_error

GOOD_ID = "A" * 22  # well-formed; the game need not exist, shape checks come first
STACK = pb.MOVE_KIND_STACK


def cases() -> list[tuple[str, str, Callable[[str], Any]]]:
    """(RPC, what is wrong, request for a real game id)."""
    long = "x" * 300
    return [
        ("ListVariants", "variant name too long", lambda g: pb.ListVariantsRequest(variant=long)),
        ("ListVariants", "unknown variant", lambda g: pb.ListVariantsRequest(variant="nope")),
        ("NewGame", "no variant", lambda g: pb.NewGameRequest(seed=1)),
        ("NewGame", "unknown variant", lambda g: pb.NewGameRequest(variant="nope", seed=1)),
        (
            "NewGame",
            "unknown option",
            lambda g: pb.NewGameRequest(variant="accordion", options={"colour": "red"}),
        ),
        ("NewGame", "option value", lambda g: pb.NewGameRequest(variant="accordion", options={"leap": "x"})),
        ("NewGame", "empty option name", lambda g: pb.NewGameRequest(variant="accordion", options={"": "1"})),
        (
            "NewGame",
            "too many options",
            lambda g: pb.NewGameRequest(variant="accordion", options={f"o{i}": "1" for i in range(40)}),
        ),
        ("NewGame", "empty deal", lambda g: pb.NewGameRequest(variant="accordion", deal=pb.CardList())),
        (
            "NewGame",
            "short deal",
            lambda g: pb.NewGameRequest(variant="accordion", deal=pb.CardList(cards=["AS"])),
        ),
        (
            "NewGame",
            "not a card",
            lambda g: pb.NewGameRequest(variant="accordion", deal=pb.CardList(cards=["?"])),
        ),
        (
            "NewGame",
            "blank card",
            lambda g: pb.NewGameRequest(variant="accordion", deal=pb.CardList(cards=[" "])),
        ),
        ("NewGame", "request id too long", lambda g: pb.NewGameRequest(variant="accordion", request_id=long)),
        (
            "NewGame",
            "request id control char",
            lambda g: pb.NewGameRequest(variant="accordion", request_id="a\nb"),
        ),
        ("GetGame", "no game id", lambda g: pb.GetGameRequest()),
        ("GetGame", "game id charset", lambda g: pb.GetGameRequest(game_id="!" * 22)),
        ("GetGamePicture", "no game id", lambda g: pb.GetGamePictureRequest()),
        ("GetGamePicture", "game id charset", lambda g: pb.GetGamePictureRequest(game_id="!" * 22)),
        ("LegalMoves", "game id too short", lambda g: pb.LegalMovesRequest(game_id="abc")),
        ("LegalMoves", "game id too long", lambda g: pb.LegalMovesRequest(game_id=long)),
        ("Score", "no game id", lambda g: pb.ScoreRequest()),
        ("Hint", "game id with slash", lambda g: pb.HintRequest(game_id="a/" * 11)),
        ("Solve", "no game id", lambda g: pb.SolveRequest()),
        ("Solve", "negative node budget", lambda g: pb.SolveRequest(game_id=g, max_nodes=-5)),
        ("Solve", "negative time budget", lambda g: pb.SolveRequest(game_id=g, max_millis=-1)),
        (
            "NewGame",
            "winnable_only with a deal",
            lambda g: pb.NewGameRequest(
                variant="accordion", winnable_only=True, deal=pb.CardList(cards=["AS", "2S"])
            ),
        ),
        ("ApplyMove", "no move", lambda g: pb.ApplyMoveRequest(game_id=g)),
        ("ApplyMove", "empty move", lambda g: pb.ApplyMoveRequest(game_id=g, move=pb.Move())),
        (
            "ApplyMove",
            "blank notation",
            lambda g: pb.ApplyMoveRequest(game_id=g, move=pb.Move(notation="  ")),
        ),
        (
            "ApplyMove",
            "gibberish notation",
            lambda g: pb.ApplyMoveRequest(game_id=g, move=pb.Move(notation="fly")),
        ),
        (
            "ApplyMove",
            "notation too long",
            lambda g: pb.ApplyMoveRequest(game_id=g, move=pb.Move(notation=long)),
        ),
        (
            "ApplyMove",
            "stack without piles",
            lambda g: pb.ApplyMoveRequest(game_id=g, move=pb.Move(kind=STACK)),
        ),
        (
            "ApplyMove",
            "negative pile",
            lambda g: pb.ApplyMoveRequest(game_id=g, move=pb.Move(kind=STACK, from_pile=-2, to_pile=1)),
        ),
        (
            "ApplyMove",
            "fields of another kind",
            lambda g: pb.ApplyMoveRequest(game_id=g, move=pb.Move(kind=pb.MOVE_KIND_DEAL, positions=[1])),
        ),
        (
            "ApplyMove",
            "remove without positions",
            lambda g: pb.ApplyMoveRequest(game_id=g, move=pb.Move(kind=pb.MOVE_KIND_REMOVE)),
        ),
        (
            "ApplyMove",
            "positions out of order",
            lambda g: pb.ApplyMoveRequest(
                game_id=g, move=pb.Move(kind=pb.MOVE_KIND_REMOVE, positions=[3, 2])
            ),
        ),
        (
            "ApplyMove",
            "claim window backwards",
            lambda g: pb.ApplyMoveRequest(
                game_id=g,
                move=pb.Move(
                    kind=pb.MOVE_KIND_CLAIM,
                    window_first=5,
                    window_last=3,
                    combo="run",
                    from_pile=5,
                    to_pile=4,
                ),
            ),
        ),
        ("ApplyMove", "unknown kind", lambda g: pb.ApplyMoveRequest(game_id=g, move=pb.Move(kind=99))),
        (
            "ApplyMove",
            "fields without kind",
            lambda g: pb.ApplyMoveRequest(game_id=g, move=pb.Move(from_pile=2, to_pile=1, notation="deal")),
        ),
        (
            "ApplyMove",
            "expected version zero",
            lambda g: pb.ApplyMoveRequest(game_id=g, move=pb.Move(notation="deal"), expected_version=0),
        ),
        (
            "ApplyMove",
            "bad game id",
            lambda g: pb.ApplyMoveRequest(game_id="-", move=pb.Move(notation="deal")),
        ),
        ("Undo", "no game id", lambda g: pb.UndoRequest()),
        ("Undo", "negative expected version", lambda g: pb.UndoRequest(game_id=g, expected_version=-1)),
        ("Undo", "request id with spaces", lambda g: pb.UndoRequest(game_id=g, request_id=" x ")),
        ("WatchGame", "no game id", lambda g: pb.WatchGameRequest()),
        ("WatchGame", "negative after_version", lambda g: pb.WatchGameRequest(game_id=g, after_version=-1)),
        ("ShareGame", "no game id", lambda g: pb.ShareGameRequest()),
        ("ShareGame", "bad game id", lambda g: pb.ShareGameRequest(game_id="-", rotate_watch_token=True)),
        ("NewGame", "deal code too long", lambda g: pb.NewGameRequest(deal_code="A" * 65)),
        ("NewGame", "deal code blank", lambda g: pb.NewGameRequest(deal_code=" ")),
    ]


def test_every_rpc_has_malformed_cases() -> None:
    assert {m.name for m in SERVICE.methods} == {rpc for rpc, _, _ in cases()}


async def call(client: Client, rpc: str, request: Any) -> Any:
    if rpc == "WatchGame":
        stream = client.stub.WatchGame(
            request, metadata=(("authorization", f"Bearer {client.token}"),), timeout=5
        )
        try:
            return await stream.read()
        finally:
            stream.cancel()
    return await client.call(rpc, request, timeout=5)


@pytest.mark.parametrize(("rpc", "why", "make"), cases(), ids=[f"{r}-{w}" for r, w, _ in cases()])
async def test_malformed_request_is_invalid_argument(client: Client, rpc: str, why: str, make: Any) -> None:
    game = (await client.new_game("accordion", seed=3)).game
    err = await expect_error(call(client, rpc, make(game.id)), grpc.StatusCode.INVALID_ARGUMENT)
    assert err.info.reason, why
    if err.info.reason in (
        "INVALID_REQUEST",
        "INVALID_OPTION",
        "UNKNOWN_VARIANT",
        "INVALID_CARD",
        "INVALID_DEAL",
    ):
        assert err.bad_request is not None and err.bad_request.field_violations, "field violations say where"
    assert (await client.get(game.id)).version == 1


# Bytes no message parses: an unterminated varint, a truncated field, a string that is not UTF-8.
GARBAGE = [b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", b"\x0a\x05ab", b"\x0a\x02\xff\xfe"]


@pytest.mark.parametrize("method", [m.name for m in SERVICE.methods])
@pytest.mark.parametrize("payload", GARBAGE, ids=["varint", "truncated", "utf8"])
async def test_undecodable_bytes_are_invalid_argument(client: Client, method: str, payload: bytes) -> None:
    path = f"/{SERVICE.full_name}/{method}"
    streaming = SERVICE.methods_by_name[method].server_streaming
    raw = (client.channel.unary_stream if streaming else client.channel.unary_unary)(path)
    call = raw(payload, timeout=5)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        if streaming:
            await call.read()
        else:
            await call
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value.details()
    assert "not a valid message" in (caught.value.details() or "")
