"""The tableau games' moves on the wire and in the stored log: shapes, encodings, round trips.

The games themselves are played in test_tableau_play.py (over real gRPC); here are the pieces
that translate: a request MOVE's shape checks (before any store call), the log's bytes of a
Transfer and a Draw, and the Move message of each.
"""

from __future__ import annotations

import itertools

import pytest

from accordion import engine
from accordion.api import codec, wire
from accordion.engine.moves import DRAW, Transfer, Zone, transfer
from accordion.sessions import binary, replies
from accordion.v1 import accordion_pb2 as pb

ZONES = list(Zone)


def _events(moves: list[binary.Event]) -> list[binary.Event]:
    blob = b"".join(binary.encode_event(m) for m in moves)
    reader = binary.Reader(blob, 0)
    back = binary.read_events(reader, len(moves))
    assert reader.pos == len(blob)
    return back


@pytest.mark.parametrize("src_zone,dst_zone", list(itertools.product(ZONES, ZONES)))
def test_every_transfer_round_trips_through_the_log(src_zone: Zone, dst_zone: Zone) -> None:
    moves: list[binary.Event] = [
        transfer(src_zone, src, dst_zone, dst, count)
        for src, dst, count in [
            (0, 0, 1),
            (3, 7, 1),
            (9, 9, 13),
            (15, 0, 2),
            (16, 3, 1),
            (2, 103, 104),
            (103, 103, 1),
        ]
    ]
    moves += [DRAW, binary.UNDO, DRAW]
    assert _events(moves) == moves


def test_a_spider_move_is_three_or_four_bytes_and_a_draw_one() -> None:
    assert len(binary.encode_event(transfer(Zone.TABLEAU, 9, Zone.TABLEAU, 0, 1))) == 3
    assert len(binary.encode_event(transfer(Zone.TABLEAU, 9, Zone.TABLEAU, 0, 12))) == 4
    assert len(binary.encode_event(transfer(Zone.WASTE, 0, Zone.FOUNDATION, 7))) == 3
    assert binary.encode_event(DRAW) == b"\xf6"


def test_stream_events_carry_the_new_moves() -> None:
    for event in (
        transfer(Zone.TABLEAU, 2, Zone.FOUNDATION, 1),
        DRAW,
        transfer(Zone.FOUNDATION, 0, Zone.TABLEAU, 6),
    ):
        assert replies.stream_event_value(replies.stream_event(event)) == (True, event)


def test_a_truncated_transfer_is_refused() -> None:
    blob = binary.encode_event(transfer(Zone.TABLEAU, 20, Zone.TABLEAU, 3, 5))
    for cut in range(1, len(blob)):
        with pytest.raises((ValueError, IndexError)):
            binary.read_events(binary.Reader(blob[:cut], 0), 1)


def test_encode_move_of_a_transfer_and_a_draw() -> None:
    msg = wire.encode_move(transfer(Zone.TABLEAU, 2, Zone.TABLEAU, 6, 3), "3>7 x3")
    assert msg == pb.Move(
        kind=pb.MOVE_KIND_MOVE,
        from_zone=pb.ZONE_KIND_TABLEAU,
        to_zone=pb.ZONE_KIND_TABLEAU,
        from_pile=3,
        to_pile=7,
        count=3,
        notation="3>7 x3",
    )
    msg = wire.encode_move(transfer(Zone.WASTE, 0, Zone.FOUNDATION, 1), "w>f")
    assert (msg.from_zone, msg.from_pile, msg.to_zone, msg.to_pile, msg.count) == (
        pb.ZONE_KIND_WASTE,
        1,
        pb.ZONE_KIND_FOUNDATION,
        2,
        1,
    )
    assert wire.encode_move(DRAW, "draw") == pb.Move(kind=pb.MOVE_KIND_DRAW, notation="draw")


def _move(**fields: object) -> pb.Move:
    base: dict[str, object] = dict(
        kind=pb.MOVE_KIND_MOVE,
        from_zone=pb.ZONE_KIND_TABLEAU,
        to_zone=pb.ZONE_KIND_TABLEAU,
        from_pile=3,
        to_pile=7,
    )
    base.update(fields)
    return pb.Move(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "msg,field",
    [
        (_move(from_zone=pb.ZONE_KIND_UNSPECIFIED), "move.from_zone"),
        (_move(to_zone=99), "move.to_zone"),
        (_move(count=-1), "move.count"),
        (_move(count=105), "move.count"),
        (_move(from_pile=0), "move.from_pile"),
        (_move(from_pile=105), "move.from_pile"),
        (_move(to_pile=0), "move.to_pile"),  # 0 only to the foundations
        (_move(to_pile=-2, to_zone=pb.ZONE_KIND_FOUNDATION), "move.to_pile"),
        (_move(to_pile=1000), "move.to_pile"),
        (_move(positions=[1, 2]), "move.positions"),
        (_move(combo="run"), "move.combo"),
        (pb.Move(kind=pb.MOVE_KIND_DRAW, from_pile=1), "move.from_pile"),
        (pb.Move(kind=pb.MOVE_KIND_DRAW, count=2), "move.count"),
        (
            pb.Move(kind=pb.MOVE_KIND_STACK, from_pile=1, to_pile=2, from_zone=pb.ZONE_KIND_TABLEAU),
            "move.from_zone",
        ),
        (pb.Move(kind=pb.MOVE_KIND_REMOVE, positions=[1, 3], count=2), "move.count"),
        (pb.Move(count=3, notation="3>7"), "move.kind"),
        (pb.Move(to_zone=pb.ZONE_KIND_WASTE, notation="draw"), "move.kind"),
    ],
)
def test_a_badly_shaped_move_is_a_field_violation(msg: pb.Move, field: str) -> None:
    problems = codec.move_fields_problems(msg)
    assert field in [f for f, _ in problems], problems


@pytest.mark.parametrize(
    "msg",
    [
        _move(),
        _move(count=0),
        _move(count=104),
        _move(to_zone=pb.ZONE_KIND_FOUNDATION, to_pile=0),
        _move(from_zone=pb.ZONE_KIND_WASTE, from_pile=1, to_zone=pb.ZONE_KIND_FOUNDATION, to_pile=8),
        pb.Move(kind=pb.MOVE_KIND_DRAW),
        pb.Move(kind=pb.MOVE_KIND_DRAW, notation="draw"),
        pb.Move(kind=pb.MOVE_KIND_REMOVE, positions=[3, 5]),
        pb.Move(notation="w>f"),
    ],
)
def test_a_well_shaped_move_has_no_problems(msg: pb.Move) -> None:
    assert codec.move_fields_problems(msg) == []


def test_describe_names_the_zones() -> None:
    text = codec.describe(_move(count=2))
    assert text == "MOVE(count=2, from_pile=3, from_zone=tableau, to_pile=7, to_zone=tableau)"
    assert codec.describe(pb.Move(kind=pb.MOVE_KIND_DRAW)) == "DRAW()"


def test_a_request_move_is_decoded_without_interning_its_numbers() -> None:
    """A request's pile numbers are anyone's: decoding must not grow the engine's intern cache."""
    game = engine.new_game("klondike", seed=3)
    before = transfer.cache_info().currsize
    for n in range(1, 60):
        msg = _move(from_pile=n, to_pile=105 - n, count=n)
        assert codec.move_fields_problems(msg) == []
        with pytest.raises(engine.IllegalMoveError):
            codec.decode_move(msg, game)
    assert transfer.cache_info().currsize == before


def test_to_pile_0_takes_the_legal_move_to_a_foundation() -> None:
    game = engine.new_game("klondike-draw-one", seed=3)
    while not any(isinstance(m, Transfer) and m.dst_zone is Zone.FOUNDATION for m in game.legal_moves()):
        game.play(game.legal_moves()[-1])
    move = next(m for m in game.legal_moves() if isinstance(m, Transfer) and m.dst_zone is Zone.FOUNDATION)
    zone = {Zone.TABLEAU: pb.ZONE_KIND_TABLEAU, Zone.WASTE: pb.ZONE_KIND_WASTE}[move.src_zone]
    msg = _move(from_zone=zone, from_pile=move.src + 1, to_zone=pb.ZONE_KIND_FOUNDATION, to_pile=0)
    assert codec.decode_move(msg, game) == move


def test_a_move_naming_emperors_other_equal_foundation_is_the_listed_move() -> None:
    """Emperor's two foundations of a suit are one move when equally high: to_pile may name either."""
    game = engine.new_game("emperor", seed=3, options={"open": True})
    while not any(isinstance(m, Transfer) and m.dst_zone is Zone.FOUNDATION for m in game.legal_moves()):
        game.play(game.legal_moves()[-1])
    move = next(m for m in game.legal_moves() if isinstance(m, Transfer) and m.dst_zone is Zone.FOUNDATION)
    zone = {Zone.TABLEAU: pb.ZONE_KIND_TABLEAU, Zone.WASTE: pb.ZONE_KIND_WASTE}[move.src_zone]
    other = (move.dst + 4) % 8  # the suit's other foundation
    heights = [len(f) for f in game.state.foundations]  # type: ignore[attr-defined]
    assert heights[other] == heights[move.dst]  # (the first card up is an Ace: both still empty)
    msg = _move(from_zone=zone, from_pile=move.src + 1, to_zone=pb.ZONE_KIND_FOUNDATION, to_pile=other + 1)
    assert codec.decode_move(msg, game) == move
