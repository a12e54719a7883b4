"""What tests/faults/test_fuzz.py sends: the server it aims at (``Target``: its protected games and
its playground) and the Hypothesis strategies that make requests of every RPC, hand-made per RPC
or generic from a request's descriptor, with hostile fields and ``authorization`` metadata of
every shape (a protected game never gets its own token)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from hypothesis import strategies as st

from accordion.server import AccordionServer
from accordion.v1 import accordion_pb2 as pb

DESCRIPTOR = pb.DESCRIPTOR.services_by_name["AccordionService"]
LIMIT = 64 * 1024  # the server's receive limit


@dataclass
class Target:
    server: AccordionServer
    addr: str
    redis_url: str  # "" for the memory backend
    protected: dict[str, str]  # game id -> token (never sent with its own game)
    playground: tuple[str, str]  # (game id, token): fuzzed with its own token
    playground_moves: list[str]  # its legal moves at the start (notations)


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
