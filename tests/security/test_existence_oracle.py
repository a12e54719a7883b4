"""A wrong token tells nothing of whether a game exists (issue 28 item 7), byte for byte.

For every RPC that acts on a game, a wrong token on an existing game the server has cached
(one move made: the state after any move) and the same token on an unknown id of the same
length must get replies a client cannot tell apart: the same status code, message, initial
metadata and trailing metadata (every key, every value's bytes, grpc-status-details-bin
included), over a real channel to a real server process, on each store. (Their latency is
bench/oracle.py's: timings are no test's business on a shared machine.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import grpc.aio

from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc
from server_launcher import ServerProcess
from tests.api.helpers import bearer

WRONG = "w" * 43  # as long as a real token
UNKNOWN_ID = "A" * 22  # as long as a real id


def game_requests(game: pb.Game) -> list[tuple[str, Any]]:
    """One request for every RPC on a game (WatchGame, a stream, is read apart)."""
    gid = game.id
    return [
        ("GetGame", pb.GetGameRequest(game_id=gid)),
        ("GetGamePicture", pb.GetGamePictureRequest(game_id=gid)),
        ("LegalMoves", pb.LegalMovesRequest(game_id=gid)),
        ("Score", pb.ScoreRequest(game_id=gid)),
        ("ApplyMove", pb.ApplyMoveRequest(game_id=gid, move=game.legal_moves[0])),
        ("ApplyMove", pb.ApplyMoveRequest(game_id=gid, move=pb.Move(notation="x1-2"))),  # unreadable too
        (
            "ApplyMove",
            pb.ApplyMoveRequest(game_id=gid, move=game.legal_moves[0], expected_version=game.version),
        ),
        ("ApplyMove", pb.ApplyMoveRequest(game_id=gid, move=game.legal_moves[0], request_id="r-1")),
        ("Undo", pb.UndoRequest(game_id=gid)),
        ("Hint", pb.HintRequest(game_id=gid)),
        ("Solve", pb.SolveRequest(game_id=gid, max_millis=100)),
        ("ShareGame", pb.ShareGameRequest(game_id=gid)),
    ]


def seen(exc: grpc.aio.AioRpcError) -> dict[str, Any]:
    """Everything a client gets back from a failed call (not grpc's client-side debug string),
    the call's own ``x-request-id`` (a counter, new for every call, unrelated to the game) masked."""

    def plain(k: str, v: str | bytes) -> tuple[str, str | bytes]:
        return (k, "<id>") if k == "x-request-id" else (k, bytes(v) if isinstance(v, bytes) else v)

    return {
        "code": exc.code(),
        "details": exc.details(),
        "initial": sorted(plain(k, v) for k, v in exc.initial_metadata()),
        "trailing": sorted(plain(k, v) for k, v in exc.trailing_metadata()),
    }


async def refused(call: Any) -> dict[str, Any]:
    try:
        await call
    except grpc.aio.AioRpcError as exc:
        return seen(exc)
    raise AssertionError("a wrong token was accepted")


async def watch_refused(stub: pb_grpc.AccordionServiceStub, game_id: str) -> dict[str, Any]:
    call = stub.WatchGame(pb.WatchGameRequest(game_id=game_id), metadata=bearer(WRONG), timeout=10)
    try:
        await call.read()
    except grpc.aio.AioRpcError as exc:
        return seen(exc)
    finally:
        call.cancel()
    raise AssertionError("a wrong token was accepted")


async def test_a_wrong_token_and_an_unknown_id_get_the_same_bytes(
    spawn_server: Callable[..., ServerProcess], store_url: str
) -> None:
    server = spawn_server("--redis-url", store_url)
    async with grpc.aio.insecure_channel(server.addr) as channel:
        stub = pb_grpc.AccordionServiceStub(channel)
        dealt = await stub.NewGame(pb.NewGameRequest(variant="accordion", seed=5), timeout=10)
        move = pb.ApplyMoveRequest(game_id=dealt.game.id, move=dealt.game.legal_moves[0])
        game = (await stub.ApplyMove(move, metadata=bearer(dealt.token), timeout=10)).game  # cached now
        unknown = pb.Game()
        unknown.CopyFrom(game)
        unknown.id = UNKNOWN_ID
        for (method, request), (_, unknown_request) in zip(
            game_requests(game), game_requests(unknown), strict=True
        ):
            rpc = getattr(stub, method)
            existing = await refused(rpc(request, metadata=bearer(WRONG), timeout=10))
            assert existing["code"] == grpc.StatusCode.NOT_FOUND, (method, existing)
            assert [k for k, _ in existing["trailing"]] == ["grpc-status-details-bin", "x-request-id"], (
                existing
            )
            absent = await refused(rpc(unknown_request, metadata=bearer(WRONG), timeout=10))
            assert existing == absent, f"{method}({request}): a wrong token told the game exists"
        assert await watch_refused(stub, game.id) == await watch_refused(stub, UNKNOWN_ID)
        # The game is as it was: no refused call changed it.
        got = await stub.GetGame(pb.GetGameRequest(game_id=game.id), metadata=bearer(dealt.token), timeout=10)
        assert got.game == game
