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
from dataclasses import dataclass, fields
from typing import Any

import grpc
import grpc.aio
import pytest
import redis
import structlog
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accordion.server import AccordionServer, Config, configure_logging
from accordion.store import GameRecord
from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc

# Not `serial` (unlike the rest of tests/faults): one in-process server on this test's own port and
# the worker's own redis-server, no processes started, no timing asked of anyone (a slow reply is
# DEADLINE_EXCEEDED, which is allowed), so it runs in the parallel phase (tests/conftest.py).

DESCRIPTOR = pb.DESCRIPTOR.services_by_name["AccordionService"]
SERVICE = DESCRIPTOR.full_name
# Every RPC the contract has, read from it: a new one is fuzzed too (with requests built from
# its descriptor until it gets hand-made strategies below).
RPCS = [m.name for m in DESCRIPTOR.methods]
STREAMING = {m.name for m in DESCRIPTOR.methods if m.server_streaming}
# Small solver budgets, so Solve/Hint/winnable NewGame calls stay quick (only those that exist).
SMALL_BUDGETS = {"solve_max_seconds": 0.2, "hint_max_seconds": 0.05, "winnable_max_seconds": 0.3}
FORBIDDEN = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN, grpc.StatusCode.UNIMPLEMENTED}
EXAMPLES_PER_BACKEND = 1500
# How often each kind of case comes. Over-limit requests are rare: grpc takes a few hundred
# milliseconds to refuse each (the client is stalled by flow control until the reset arrives).
FLAVOURS = ["fields"] * 24 + ["generic"] * 8 + ["other-type"] * 14 + ["raw"] * 12 + ["oversize"]
LIMIT = 64 * 1024


# --- the server and its games ------------------------------------------------------------------


@dataclass
class Target:
    server: AccordionServer
    addr: str
    redis_url: str  # "" for the memory backend
    protected: dict[str, str]  # game id -> token (never sent with its own game)
    playground: tuple[str, str]  # (game id, token): fuzzed with its own token
    playground_moves: list[str]  # its legal moves at the start (notations)


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


# --- strategies -------------------------------------------------------------------------------

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)  # protobuf strings: valid UTF-8
ASCII = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=60)  # metadata values


def huge(max_bytes: int = LIMIT - 1024) -> st.SearchStrategy[str]:
    """Long strings cheaply: one character (1 to 4 UTF-8 bytes) repeated, mostly short, now and
    then up to just under the 64 KiB limit (the ``oversize`` cases go past it)."""
    small = st.integers(0, min(2048, max_bytes))
    bigs = [n for n in (4096, 16384, 32768, LIMIT - 1024) if n <= max_bytes]
    sizes = st.one_of(small, small, small, st.sampled_from(bigs)) if bigs else small
    chars = st.sampled_from(["x", "é", "🂡", "\0", ">"])
    return st.builds(lambda ch, n: ch * (n // len(ch.encode())), chars, sizes)


def text_field(*realistic: str, long: bool = True) -> st.SearchStrategy[str]:
    """A string field: random text, a realistic value, or (``long``) a long one. Collections get
    short ones only, so that a request rarely sums past the limit by accident."""
    real = [st.sampled_from(realistic)] if realistic else []
    return st.one_of(TEXT, huge() if long else huge(512), *real)


# Around the receive limit, cheaply (Hypothesis draws bytes one by one: a 64 KiB st.binary overruns).
BIG_BYTES = st.builds(
    lambda b, n: (b * (n // len(b) + 1))[:n],
    st.binary(min_size=1, max_size=16),
    st.integers(LIMIT - 64, LIMIT + 64),
)
INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)
SMALL = st.integers(-3, 60)
NOTATIONS = [
    "8D>9D",
    "deal",
    "x7-8",
    "redeal",
    "claim 3-5 run 5>3",
    "10D>4D",
    "KC>3C",
    "1>2",
    "52>49",
    ">",
    "x",
    "",
]
ID_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"


def moves() -> st.SearchStrategy[pb.Move]:
    return st.builds(
        pb.Move,
        kind=st.one_of(st.integers(0, 6), INT32),  # unknown enum values too (proto3 enums are open)
        from_pile=st.one_of(SMALL, INT32),
        to_pile=st.one_of(SMALL, INT32),
        positions=st.lists(st.one_of(SMALL, INT32), max_size=8),
        window_first=st.one_of(SMALL, INT32),
        window_last=st.one_of(SMALL, INT32),
        combo=text_field("pair", "three", "flush", "run", "straight-flush", "fifteen"),
        notation=text_field(*NOTATIONS),
    )


def game_ids(t: Target) -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(list(t.protected)),
        st.just(t.playground[0]),  # twice: the way into the engine
        st.just(t.playground[0]),
        st.text(st.sampled_from(ID_CHARS), min_size=22, max_size=22),  # well-formed, unknown
        TEXT,
        huge(),
    )


def requests(t: Target, method: str, game_id: str) -> st.SearchStrategy[Any]:
    """A well-typed request for ``method`` on ``game_id`` with hostile field values."""
    rid = text_field("r1", "retry-1", " padded ", "a\nb")
    maybe_version = st.one_of(st.none(), INT64, st.integers(-2, 12))
    if method == "ListVariants":
        variant = text_field("accordion", "push-pin", "French", "nope")
        return st.builds(pb.ListVariantsRequest, variant=variant)
    if method == "NewGame":
        cards = st.lists(text_field("AS", "10H", "TH", "8♦", "KC", "?", long=False), max_size=110)
        start = st.one_of(
            st.just({}),
            st.builds(lambda s: {"seed": s}, st.integers(0, 2**64 - 1)),
            st.builds(lambda c: {"deal": pb.CardList(cards=c)}, cards),
        )
        return st.builds(
            lambda variant, options, start, request_id: pb.NewGameRequest(
                variant=variant, options=options, request_id=request_id, **start
            ),
            text_field("accordion", "royal-marriage", "cribbage-solitaire", "french", "nope"),
            st.dictionaries(
                text_field("leap", "decks", "redeals", long=False),
                text_field("1", "3", "yes", "-1", long=False),
                max_size=40,
            ),
            start,
            rid,
        )
    if method in ("GetGame", "LegalMoves", "Score", "Hint"):
        return st.just(getattr(pb, f"{method}Request")(game_id=game_id))
    if method == "ApplyMove":
        legal = t.playground_moves if game_id == t.playground[0] else []
        as_text = st.builds(lambda n: pb.Move(notation=n), st.sampled_from(legal or NOTATIONS))
        move = st.one_of(moves(), as_text)
        return st.builds(
            lambda m, v, r, has_move: pb.ApplyMoveRequest(
                game_id=game_id,
                request_id=r,
                **({"move": m} if has_move else {}),
                **({} if v is None else {"expected_version": v}),
            ),
            move,
            maybe_version,
            rid,
            st.booleans(),
        )
    if method == "Undo":
        return st.builds(
            lambda v, r: pb.UndoRequest(
                game_id=game_id, request_id=r, **({} if v is None else {"expected_version": v})
            ),
            maybe_version,
            rid,
        )
    if method == "WatchGame":
        after = st.one_of(INT64, SMALL)
        return st.builds(lambda v: pb.WatchGameRequest(game_id=game_id, after_version=v), after)
    return from_descriptor(t, DESCRIPTOR.methods_by_name[method].input_type, game_id)


_SCALARS: dict[int, st.SearchStrategy[Any]] = {
    FieldDescriptor.TYPE_BOOL: st.booleans(),
    FieldDescriptor.TYPE_BYTES: st.binary(max_size=64),
    FieldDescriptor.TYPE_DOUBLE: st.floats(),
    FieldDescriptor.TYPE_FLOAT: st.floats(width=32),
    **{
        k: st.one_of(SMALL, INT32)
        for k in (
            FieldDescriptor.TYPE_INT32,
            FieldDescriptor.TYPE_SINT32,
            FieldDescriptor.TYPE_SFIXED32,
            FieldDescriptor.TYPE_ENUM,
        )
    },
    **{
        k: st.one_of(SMALL, INT64)
        for k in (FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_SINT64, FieldDescriptor.TYPE_SFIXED64)
    },
    **{k: st.integers(0, 2**32 - 1) for k in (FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_FIXED32)},
    **{k: st.integers(0, 2**64 - 1) for k in (FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64)},
}


def from_descriptor(t: Target, desc: Descriptor, game_id: str, depth: int = 0) -> st.SearchStrategy[Message]:
    """Any message, from its descriptor: each field left out or set to a hostile value of its type
    (``game_id`` fields get ``game_id``; unknown enum values included; messages two levels deep)."""
    cls = message_factory.GetMessageClass(desc)

    def value(f: FieldDescriptor) -> st.SearchStrategy[Any]:
        if f.type == FieldDescriptor.TYPE_STRING:
            return st.just(game_id) if f.name == "game_id" else text_field("accordion", "1", "yes")
        if f.type == FieldDescriptor.TYPE_MESSAGE:
            return from_descriptor(t, f.message_type, game_id, depth + 1)
        return _SCALARS[f.type]

    optional: dict[str, st.SearchStrategy[Any]] = {}
    for f in desc.fields:
        if f.type == FieldDescriptor.TYPE_MESSAGE and f.message_type.GetOptions().map_entry:
            k, v = f.message_type.fields_by_name["key"], f.message_type.fields_by_name["value"]
            optional[f.name] = st.dictionaries(value(k), value(v), max_size=5)
        elif f.type == FieldDescriptor.TYPE_MESSAGE and depth >= 2:
            continue
        elif f.is_repeated:
            optional[f.name] = st.lists(value(f), max_size=6)
        else:
            optional[f.name] = value(f)
    if any(f.name == "game_id" for f in desc.fields):
        optional.pop("game_id")
        required = {"game_id": st.just(game_id)}
    else:
        required = {}
    return st.fixed_dictionaries(required, optional=optional).map(lambda kw: cls(**kw))


def metadata(t: Target, game_id: str | None) -> st.SearchStrategy[tuple[tuple[str, str], ...]]:
    """``authorization`` of every shape; a protected game never gets its own token."""
    allowed = [tok for gid, tok in t.protected.items() if gid != game_id] + [t.playground[1]]
    token = st.one_of(st.sampled_from(allowed), ASCII, huge(2048).map(lambda s: "x" * len(s)))
    if game_id == t.playground[0]:
        token = st.one_of(st.just(t.playground[1]), st.just(t.playground[1]), token)
    value = st.one_of(
        st.builds("Bearer {}".format, token),
        st.builds("bearer  {} ".format, token),
        st.builds("Basic {}".format, token),
        token,
        st.just("Bearer"),
    )
    header = st.one_of(
        st.builds(lambda v: (("authorization", v),), value),
        st.builds(lambda v, w: (("authorization", v), ("authorization", w)), value, value),
        st.builds(lambda v: (("x-other", v),), ASCII),
        st.just(()),
    )
    return header


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
