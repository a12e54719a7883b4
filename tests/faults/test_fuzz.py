"""Fuzz every RPC: thousands of Hypothesis-made requests, never INTERNAL, no crash, no game changed.

A real in-process server on each backend (memory, and a real redis-server) runs on the test's
event loop; the fuzzer, on a worker thread, calls it through a plain gRPC channel with
identity serializers, so it can send any bytes:

* random bytes as the request body (sometimes beyond the 64 KiB receive limit);
* another message type's bytes sent to a method (other requests, a Game, a GameEvent);
* well-typed requests with hostile fields: huge strings (up to and past the limit), ids of
  every shape, other games' tokens, random moves and notations, extreme integers and
  unknown enum values, random options and deals, odd ``authorization`` metadata; hand-made
  per RPC, and generic ones built from each request's descriptor.

Every RPC the service descriptor lists is fuzzed, so a new one is covered without a change here.

Three *protected* games are never sent their own token: they must come out exactly as they
went in (GetGame, and the stored record, events and replies). One *playground* game is sent
its own token, so random moves reach the engine (it may legally change). Every status must be
one the service means to send: never INTERNAL or UNKNOWN (nor UNIMPLEMENTED). At the end the
server still answers and reports SERVING. Hypothesis runs derandomized and without its
example database, so CI sees the same cases every time.
"""

from __future__ import annotations

import asyncio
import io
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import fields
from typing import Any

import grpc
import grpc.aio
import pytest
import redis
import structlog
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accordion.server import AccordionServer, Config, configure_logging
from accordion.store import GameRecord
from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc

from .fuzz_requests import (
    BIG_BYTES,
    DESCRIPTOR,
    INT64,
    LIMIT,
    TEXT,
    Target,
    from_descriptor,
    game_ids,
    metadata,
    requests,
)

# Not `serial` (unlike the rest of tests/faults): one in-process server on this test's own port and
# the worker's own redis-server, no processes started, no timing asked of anyone (a slow reply is
# DEADLINE_EXCEEDED, which is allowed), so it runs in the parallel phase (tests/conftest.py).

SERVICE = DESCRIPTOR.full_name
# Every RPC the contract has, read from it: a new one is fuzzed too (with requests built from
# its descriptor until it gets hand-made strategies in fuzz_requests.py).
RPCS = [m.name for m in DESCRIPTOR.methods]
STREAMING = {m.name for m in DESCRIPTOR.methods if m.server_streaming}
# Small solver budgets, so Solve/Hint/winnable NewGame calls stay quick (only those that exist).
SMALL_BUDGETS = {"solve_max_seconds": 0.2, "hint_max_seconds": 0.05, "winnable_max_seconds": 0.3}
FORBIDDEN = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN, grpc.StatusCode.UNIMPLEMENTED}
EXAMPLES_PER_BACKEND = 1500
# How often each kind of case comes. Over-limit requests are rare: grpc takes a few hundred
# milliseconds to refuse each (the client is stalled by flow control until the reset arrives).
FLAVOURS = ["fields"] * 24 + ["generic"] * 8 + ["other-type"] * 14 + ["raw"] * 12 + ["oversize"]


# --- the server and its games ------------------------------------------------------------------


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


@pytest.fixture
def server_log() -> Iterator[io.StringIO]:
    """The server's log lines at warning level and above (none are expected), not the console."""
    stream = io.StringIO()
    configure_logging("warning", stream=stream)
    try:
        yield stream
    finally:
        structlog.reset_defaults()


@pytest.fixture
async def target(store_url: str, server_log: io.StringIO) -> AsyncIterator[Target]:
    """A server on this test's event loop (the fuzzer calls it from a worker thread), and 4 games."""
    budgets = {k: v for k, v in SMALL_BUDGETS.items() if k in {f.name for f in fields(Config)}}
    config = Config(
        listen="127.0.0.1:0",
        redis_url="" if store_url == "memory://" else store_url,
        health_interval=0.2,
        grace=0.5,
        watch_rate=0,
        **budgets,
    )
    server = AccordionServer(config)
    addr = f"127.0.0.1:{await server.start()}"
    try:
        async with grpc.aio.insecure_channel(addr) as channel:
            stub = pb_grpc.AccordionServiceStub(channel)
            games = {}
            for seed in (1, 2, 3, 4):
                new = await stub.NewGame(pb.NewGameRequest(variant="accordion", seed=seed), timeout=10)
                game = new.game
                for _ in range(3):  # a few moves, so there are events and replies to protect
                    reply = await stub.ApplyMove(
                        pb.ApplyMoveRequest(
                            game_id=game.id, move=game.legal_moves[0], request_id=f"{game.id}-{game.version}"
                        ),
                        metadata=bearer(new.token),
                        timeout=10,
                    )
                    game = reply.game
                games[game.id] = (new.token, [m.notation for m in game.legal_moves])
        ids = list(games)
        yield Target(
            server,
            addr,
            "" if store_url == "memory://" else store_url,
            {i: games[i][0] for i in ids[:3]},
            (ids[3], games[ids[3]][0]),
            games[ids[3]][1],
        )
    finally:
        await server.stop(grace=0)


async def snapshot(t: Target) -> dict[str, Any]:
    """Every protected game: as GetGame shows it, its stored record, and (Redis) its raw keys."""
    out: dict[str, Any] = {}
    async with grpc.aio.insecure_channel(t.addr) as channel:
        stub = pb_grpc.AccordionServiceStub(channel)
        for game_id, token in t.protected.items():
            shown = await stub.GetGame(pb.GetGameRequest(game_id=game_id), metadata=bearer(token), timeout=10)
            stored: GameRecord = await t.server.store.load(game_id)
            raw: Any = None
            if t.redis_url:
                with redis.Redis.from_url(t.redis_url) as c:
                    raw = (
                        c.hgetall(f"acc:{{{game_id}}}:g"),
                        c.xrange(f"acc:{{{game_id}}}:e"),
                        c.hgetall(f"acc:{{{game_id}}}:r"),
                        c.exists(f"acc:{{{game_id}}}:r0"),
                    )
            out[game_id] = (shown.SerializeToString(deterministic=True), stored, raw)
    return out


# --- the fuzz -----------------------------------------------------------------------------------


def fuzz(t: Target) -> tuple[Counter[str], Counter[str], Counter[str]]:
    """The Hypothesis run (blocking: it runs on a worker thread, the server on the test's loop)."""
    sent: Counter[str] = Counter()
    flavours: Counter[str] = Counter()
    codes: Counter[str] = Counter()
    channel = grpc.insecure_channel(t.addr)
    callables = {
        m: (channel.unary_stream if m in STREAMING else channel.unary_unary)(
            f"/{SERVICE}/{m}", request_serializer=None, response_deserializer=None
        )
        for m in RPCS
    }
    other_messages = st.one_of(
        st.builds(lambda g: pb.Game(id=g, version=3, variant="accordion"), TEXT),
        st.builds(lambda v: pb.GameEvent(version=v, kind=pb.GameEvent.KIND_MOVE), INT64),
        st.builds(lambda c: pb.CardList(cards=[c, c]), TEXT),
    )

    def send(method: str, body: bytes, md: tuple[tuple[str, str], ...]) -> grpc.StatusCode:
        try:
            if method in STREAMING:  # WatchGame: read what comes within a moment, then give up
                for _ in callables[method](body, metadata=md, timeout=0.25):
                    pass
            else:
                callables[method](body, metadata=md, timeout=10)
            return grpc.StatusCode.OK
        except grpc.RpcError as exc:
            return exc.code()  # type: ignore[no-any-return,attr-defined]

    @settings(
        max_examples=EXAMPLES_PER_BACKEND,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(method=st.sampled_from(RPCS), flavour=st.sampled_from(FLAVOURS), data=st.data())
    def one(method: str, flavour: str, data: st.DataObject) -> None:
        if flavour == "raw":
            body = data.draw(st.binary(max_size=512))
            md = data.draw(metadata(t, None))
        elif flavour == "oversize":  # past the receive limit: raw bytes, or a request with a huge field
            game_id = data.draw(game_ids(t))
            body = data.draw(
                st.one_of(
                    BIG_BYTES,
                    st.builds(
                        lambda r, pad: r.SerializeToString() + pb.Move(notation=pad).SerializeToString(),
                        requests(t, method, game_id),
                        st.just("x" * (LIMIT + 1)),
                    ),
                )
            )
            md = data.draw(metadata(t, game_id))
        elif flavour == "other-type":
            other = data.draw(st.sampled_from([m for m in RPCS if m != method]))
            msg = data.draw(st.one_of(requests(t, other, data.draw(game_ids(t))), other_messages))
            body, md = msg.SerializeToString(), data.draw(metadata(t, None))
        elif flavour == "generic":  # any field of the request, from its descriptor
            game_id = data.draw(game_ids(t))
            request = DESCRIPTOR.methods_by_name[method].input_type
            body = data.draw(from_descriptor(t, request, game_id)).SerializeToString()
            md = data.draw(metadata(t, game_id))
        else:
            game_id = data.draw(game_ids(t))
            body = data.draw(requests(t, method, game_id)).SerializeToString()
            md = data.draw(metadata(t, game_id))
        code = send(method, body, md)
        sent[method] += 1
        flavours[flavour] += 1
        codes[code.name] += 1
        assert code not in FORBIDDEN, (method, flavour, code, body[:200], md)

    try:
        one()
    finally:
        channel.close()
    return sent, flavours, codes


async def test_fuzz_every_rpc_never_internal_no_crash_no_change(
    target: Target, server_log: io.StringIO
) -> None:
    t = target
    before = await snapshot(t)
    sent, flavours, codes = await asyncio.to_thread(fuzz, t)
    backend = "redis" if t.redis_url else "memory"
    print(
        f"\nfuzz ({backend}): {sum(sent.values())} requests; by RPC {dict(sent)}; "
        f"by kind {dict(flavours)}; statuses {dict(codes)}"
    )
    assert sum(sent.values()) >= EXAMPLES_PER_BACKEND
    assert all(sent[m] >= EXAMPLES_PER_BACKEND // 20 for m in RPCS), sent
    assert codes["OK"] > 0 and codes["INVALID_ARGUMENT"] > 0 and codes["NOT_FOUND"] > 0, codes
    assert codes["RESOURCE_EXHAUSTED"] > 0, "nothing went past the 64 KiB limit"
    # The server is up and serving, and no protected game changed in any way.
    async with grpc.aio.insecure_channel(t.addr) as channel:
        health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
    assert health.status == health_pb2.HealthCheckResponse.SERVING
    assert await snapshot(t) == before
    assert "unhandled exception" not in server_log.getvalue(), server_log.getvalue()[-3000:]
