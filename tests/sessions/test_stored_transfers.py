"""A tableau game's stored log, read with the zones' declared codes (engine/moves.py ``ZONE_CODES``).

stored_transfers.json was written by the tree before the codes were declared (main at 55ac8bc,
make_stored_transfers.py): every game stored then loads, replays and dumps to the same bytes, and
every transfer reads to the same move and is written as the same bytes (the two-bit form, as small
as it was). The form for a kind of zone coded 4 or more (flag 0x40: a byte a code) is checked
here with cases written by hand from the format's description (sessions/binary.py).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from accordion import engine
from accordion.bytecodec import Reader
from accordion.engine.moves import DRAW, ZONE_CODES, Transfer, Zone, transfer
from accordion.sessions import binary
from accordion.sessions.errors import GameCorrupt
from accordion.sessions.record import Stored, load_stored

GOLDEN = json.loads((Path(__file__).parent / "stored_transfers.json").read_text())
GAME_ID = "abcdefghijklmnopqrstuv"


def _read(blob: bytes, count: int) -> list[binary.Event]:
    reader = Reader(blob)
    events = binary.read_events(reader, count)
    assert reader.pos == len(blob)
    return events


@pytest.mark.parametrize("case", GOLDEN["games"], ids=lambda c: f"{c['variant']}-{c['seed']}")
def test_a_tableau_game_stored_before_loads_replays_and_dumps_the_same(case: dict[str, Any]) -> None:
    data = bytes.fromhex(case["data"])
    stored = load_stored(GAME_ID, data, case["version"])
    assert stored.game.state_string() == case["final"]
    assert stored.dump() == data  # byte for byte: the two-bit form is still what is written
    states = [stored.game_at(v).state_string() for v in range(1, stored.version + 1)]
    assert hashlib.sha256("\n".join(states).encode()).hexdigest() == case["states_sha256"]


@pytest.mark.parametrize("case", GOLDEN["transfers"], ids=lambda c: c["bytes"])
def test_each_transfer_stored_before_reads_and_writes_the_same(case: dict[str, Any]) -> None:
    src_zone, src, dst_zone, dst, count = case["move"]
    move = transfer(Zone(src_zone), src, Zone(dst_zone), dst, count)
    blob = bytes.fromhex(case["bytes"])
    assert _read(blob, 1) == [move]
    assert binary.encode_event(move) == blob


# (bytes, the transfer as (source zone, pile, target zone, pile, count)): the coded form.
CODED = [
    ("f760000112", (Zone.TABLEAU, 1, Zone.FOUNDATION, 2, 1)),  # packed piles
    ("f7500300140105", (Zone.WASTE, 20, Zone.TABLEAU, 1, 5)),  # piles apart, counted
    ("f7700203000d", (Zone.STOCK, 0, Zone.WASTE, 0, 13)),  # packed, counted
    ("f74001000267", (Zone.FOUNDATION, 2, Zone.TABLEAU, 103, 1)),  # piles apart
]


@pytest.mark.parametrize("blob,move", CODED, ids=[c[0] for c in CODED])
def test_the_coded_form_reads_a_byte_a_zone_code(blob: str, move: tuple[Zone, int, Zone, int, int]) -> None:
    src_zone, src, dst_zone, dst, count = move
    assert _read(bytes.fromhex(blob), 1) == [transfer(src_zone, src, dst_zone, dst, count)]


def test_a_log_mixing_both_forms_reads_in_order() -> None:
    two_bit = binary.encode_event(transfer(Zone.WASTE, 0, Zone.TABLEAU, 6))
    coded = bytes.fromhex(CODED[1][0])
    events = _read(two_bit + coded + b"\xf6" + coded + two_bit, 5)
    assert events == [
        transfer(Zone.WASTE, 0, Zone.TABLEAU, 6),
        transfer(Zone.WASTE, 20, Zone.TABLEAU, 1, 5),
        DRAW,
        transfer(Zone.WASTE, 20, Zone.TABLEAU, 1, 5),
        transfer(Zone.WASTE, 0, Zone.TABLEAU, 6),
    ]


def test_a_zone_coded_4_or_more_is_written_coded_and_its_size_is_two_bytes_more() -> None:
    """No such zone exists yet: the codes are given as numbers, as a new kind's would be."""
    assert binary.transfer_bytes(4, 1, 0, 2, 1) == bytes.fromhex("f760040012")
    assert binary.transfer_bytes(0, 1, 9, 20, 3) == bytes.fromhex("f7500009011403")
    for src_code, dst_code in ((0, 3), (3, 0), (1, 1)):
        two_bit = binary.transfer_bytes(src_code, 1, dst_code, 2, 1)
        assert len(two_bit) == 3 and not two_bit[1] & 0x40


def test_an_unknown_zone_code_is_a_corrupt_game() -> None:
    stored = Stored.new(engine.new_game("klondike", seed=3))
    move = next(m for m in stored.game.legal_moves() if isinstance(m, Transfer))
    stored.play(move)
    data = stored.dump()
    event = binary.encode_event(move)
    at = len(data) - len(engine.encode_state(stored.game.rules, stored.game.state)) - len(event)
    assert data[at : at + len(event)] == event  # the log's one event, just before the position
    coded = binary.transfer_bytes(7, move.src, ZONE_CODES[move.dst_zone], move.dst, 1)
    with pytest.raises(ValueError, match="unknown zone code"):
        _read(coded, 1)
    with pytest.raises(GameCorrupt):
        load_stored(GAME_ID, data[:at] + coded + data[at + len(event) :], stored.version)
