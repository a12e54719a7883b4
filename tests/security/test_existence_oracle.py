"""A wrong token tells nothing of whether a game exists (issue 28 item 7), byte for byte.

For every RPC that acts on a game, a wrong token on an existing game the server has cached
(one move made: the state after any move) and the same token on an unknown id of the same
length must get replies a client cannot tell apart: the same status code, message, initial
metadata and trailing metadata (every key, every value's bytes, grpc-status-details-bin
included), over a real channel to a real server process, on each store. (Their latency is
bench/oracle.py's: timings are no test's business on a shared machine.) What can be counted is:
the two paths do the same work, so nothing but noise is left to time: the store is asked the
same and answers the same (Redis: the same commands, the same replies, seen by MONITOR), and
the session layer takes the same steps (the same store failures counted, the same exception,
the cache left as it was).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import grpc
import grpc.aio
import pytest
from redis.asyncio import Redis

from accordion import engine, sessions
from accordion.sessions import tokens
from accordion.sessions.flow import Observer
from accordion.store import open_store
from accordion.store.credentials import holds
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


class _StoreCalls(Observer):
    """What the flow tells of its store calls (the metrics' interface): failures, in order."""

    def __init__(self) -> None:
        self.failed: list[tuple[str, str]] = []

    def store_failed(self, operation: str, kind: str) -> None:
        self.failed.append((operation, kind))


async def test_a_wrong_token_takes_the_steps_an_unknown_id_takes(store_url: str) -> None:
    """In the session layer, on each store: the same exception (not a subclass), the same store
    failures counted, and the cache exactly as it was (a wrong token neither takes nor puts back
    a cached game, so not even the cache's order tells that it was there)."""
    store = open_store(store_url)
    calls = _StoreCalls()
    flow = sessions.Sessions(store, game_ttl=60, observer=calls)
    try:
        games = []
        for seed in (1, 2, 3):
            dealt = await flow.deal(engine.new_game("accordion", {}, seed=seed), None)
            assert isinstance(dealt, sessions.Dealt)
            games.append(dealt.game_id)
        cached = flow.cache.order()
        assert cached == games  # the first dealt is the least recently used
        seen_by_kind = {}
        for kind, game_id in (("wrong token", games[0]), ("unknown id", UNKNOWN_ID)):
            calls.failed.clear()
            for call in (
                flow.play(game_id, WRONG, lambda game: game.legal_moves()[0], None),
                flow.undo(game_id, WRONG, None, expected=1),
                flow.open(game_id, WRONG, None, shared=True),
                flow.share(game_id, WRONG, None),
            ):
                with pytest.raises(sessions.GameNotFound) as refused:
                    await call
                assert refused.value.game_id == game_id
                assert flow.cache.order() == cached, kind
                calls.failed.append(("raised", type(refused.value).__name__))
            seen_by_kind[kind] = list(calls.failed)
        assert seen_by_kind["wrong token"] == seen_by_kind["unknown id"]
        assert ("load", "not_found") in seen_by_kind["unknown id"]
    finally:
        await store.close()


_ARG = re.compile(rb'"((?:[^"\\]|\\.)*)"')
_ESCAPED = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"a": b"\a", b"b": b"\b", b"\\": b"\\", b'"': b'"'}


def _command(line: bytes) -> tuple[str, list[bytes]]:
    """A MONITOR line: who sent it ("lua" for a script's own calls) and the command's bytes
    (Redis writes them quoted, with C escapes and \\xHH)."""
    head, _, rest = line.partition(b"] ")
    args = []
    for quoted in _ARG.findall(rest):
        out, i = bytearray(), 0
        while i < len(quoted):
            if quoted[i : i + 1] == b"\\":
                if quoted[i + 1 : i + 2] == b"x":
                    out.append(int(quoted[i + 2 : i + 4], 16))
                    i += 4
                else:
                    out += _ESCAPED[quoted[i + 1 : i + 2]]
                    i += 2
            else:
                out.append(quoted[i])
                i += 1
        args.append(bytes(out))
    return ("lua" if head.endswith(b" lua") else "server"), args


async def test_redis_is_asked_the_same_and_answers_the_same(
    spawn_server: Callable[..., ServerProcess], redis_url: str
) -> None:
    """A wrong token on an existing, cached game and on an unknown id, over gRPC to a real
    server on a real Redis: MONITOR shows the server sending Redis the same commands (the id
    apart), and each of them, sent again, gets the same reply: the existing game's data never
    leaves Redis for a wrong token, so the server has nothing more to read, parse or decode."""
    server = spawn_server("--redis-url", redis_url)
    client, monitoring = Redis.from_url(redis_url), Redis.from_url(redis_url)
    async with grpc.aio.insecure_channel(server.addr) as channel:
        stub = pb_grpc.AccordionServiceStub(channel)
        dealt = await stub.NewGame(pb.NewGameRequest(variant="accordion", seed=5), timeout=10)
        gid = dealt.game.id
        move = pb.ApplyMoveRequest(game_id=gid, move=dealt.game.legal_moves[0])
        await stub.ApplyMove(move, metadata=bearer(dealt.token), timeout=10)  # cached now
        requests = {
            kind: [
                ("ApplyMove", pb.ApplyMoveRequest(game_id=game_id, move=pb.Move(notation="x1-2"))),
                ("GetGame", pb.GetGameRequest(game_id=game_id)),
            ]
            for kind, game_id in (("existing", gid), ("unknown", UNKNOWN_ID))
        }
        for calls in requests.values():  # (the server's connections are open once these are answered)
            for method, request in calls:
                await refused(getattr(stub, method)(request, metadata=bearer(WRONG), timeout=10))
        await client.ping()  # (its connection is open: it sends nothing but the markers below)
        sent: dict[str, list[tuple[str, list[bytes]]]] = {}
        async with monitoring.monitor() as monitor:
            for kind, calls in requests.items():
                for method, request in calls:
                    await refused(getattr(stub, method)(request, metadata=bearer(WRONG), timeout=10))
                await client.echo(f"end of {kind}")  # where this kind's commands end
                sent[kind] = []
                while True:
                    who, args = _command(await monitor.connection.read_response())
                    if args[:2] == [b"ECHO", f"end of {kind}".encode()]:
                        break
                    if args[:1] == [b"PING"]:  # a connection's health check, whenever it falls due
                        continue
                    sent[kind].append((who, args))
        assert sent["existing"], "the server asked Redis nothing"
        as_unknown = [
            (who, [arg.replace(gid.encode(), UNKNOWN_ID.encode()) for arg in args])
            for who, args in sent["existing"]
        ]
        assert as_unknown == sent["unknown"]
        for (who, existing), (_, absent) in zip(sent["existing"], sent["unknown"], strict=True):
            if who != "lua":  # (a script's own calls are its caller's reply)
                assert await client.execute_command(*existing) == await client.execute_command(*absent), (
                    existing[:1]
                )
    await client.aclose()
    await monitoring.aclose()


def test_the_layout_is_the_access_records() -> None:
    """The stores' credential check (``store.credentials``) reads what ``sessions.tokens.Access``
    writes (its owner): were the record's layout to change, the stores would refuse the game's
    own tokens, and this fails first. (Here, not in tests/store: the store's tests import nothing
    that mypyc compiles.)"""
    for generation, code in ((0, ""), (0, "ABCDEFGHJKMNPQRS"), (300, "ABCDEFGHJKMNPQRS")):
        play = tokens.new_token()
        record = tokens.Access.for_token(play, generation, code).dump()
        watch = tokens.watch_token(play, generation)
        assert holds(record, tokens.hash_token(play)) and holds(record, tokens.hash_token(watch))
        assert not holds(record, tokens.hash_token(tokens.new_token()))
        assert not holds(record, tokens.hash_token(tokens.watch_token(play, generation + 1)))
    legacy = tokens.Access(tokens.hash_token("earlier")).dump()
    assert holds(legacy, tokens.hash_token("earlier")) and not holds(legacy, tokens.hash_token("later"))
