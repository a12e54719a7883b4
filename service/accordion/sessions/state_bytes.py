"""The binary STATE part of the stored record: ``encode_state`` / ``decode_state``.

# ---------------------------------------------------------------------------------------------
# TO BE REPLACED AT MERGE: the engine's declaration-driven ``engine.encode_state(rules, state)``
# and ``engine.decode_state(rules, data)`` write and read exactly these bytes. These two
# functions are today's, unchanged, kept here in one place so that the switch is two call
# sites in ``record.py`` (``Stored.dump`` and ``load_stored``) and the removal of this file.
# This is the only code of the session layer that reads a State's fields beyond row and stock.
# ---------------------------------------------------------------------------------------------

Layout: varint n, the row's n bytes (each pile's first card with the high bit set), varint k,
the stock's k cards, then tagged extras, each only when not at its default: 1 the generator
(8 bytes LE), 2 the score (zigzag varint), 3 redeals (varint), 4 the goal card (a byte),
5 the marks (count, then per mark: count, then (card, zigzag height) pairs).
"""

from __future__ import annotations

from typing import Any

from accordion.engine.core import State

from .binary import Reader, unzigzag, varint, zigzag


class _RowPieces(dict[tuple[int, ...], bytes]):
    """A pile in the stored row (its first card with the high bit set), made on first use."""

    def __missing__(self, pile: tuple[int, ...]) -> bytes:
        if len(self) >= 200_000:
            self.clear()
        piece = self[pile] = bytes((pile[0] | 0x80, *pile[1:]))
        return piece


_ROW_PIECES = _RowPieces()


def _encode_row(row: tuple[tuple[int, ...], ...]) -> bytes:
    return b"".join(map(_ROW_PIECES.__getitem__, row))


def encode_state(state: State) -> bytes:
    row = _encode_row(state.row)  # the high bit starts a pile
    out = bytearray(varint(len(row)))
    out += row
    out += varint(len(state.stock))
    out += bytes(state.stock)
    if state.rng:
        out += b"\x01" + state.rng.to_bytes(8, "little")
    if state.score:
        out += b"\x02" + varint(zigzag(state.score))
    if state.redeals:
        out += b"\x03" + varint(state.redeals)
    if state.goal >= 0:
        out += bytes((4, state.goal))
    if state.marks:
        out += b"\x05" + varint(len(state.marks))
        for mark in state.marks:
            out += varint(len(mark))
            for card, h in mark:
                out += bytes((card,)) + varint(zigzag(h))
    return bytes(out)


def decode_state(r: Reader) -> State:
    n = r.varint()
    cards = r.take(n)
    row: list[tuple[int, ...]] = []
    start = 0
    for i in range(1, n + 1):
        if i == n or cards[i] & 0x80:
            if not cards[start] & 0x80:
                raise ValueError("a pile without its first card")
            row.append((cards[start] & 0x7F, *cards[start + 1 : i]))
            start = i
    stock = tuple(r.take(r.varint()))
    fields: dict[str, Any] = {}
    while r.pos < len(r.buf):
        tag = r.byte()
        if tag == 1:
            fields["rng"] = int.from_bytes(r.take(8), "little")
        elif tag == 2:
            fields["score"] = unzigzag(r.varint())
        elif tag == 3:
            fields["redeals"] = r.varint()
        elif tag == 4:
            fields["goal"] = r.byte()
        elif tag == 5:
            fields["marks"] = tuple(
                tuple((r.byte(), unzigzag(r.varint())) for _ in range(r.varint())) for _ in range(r.varint())
            )
        else:
            raise ValueError(f"unknown state field {tag}")
    if any(c >= 52 for pile in row for c in pile) or any(c >= 52 for c in stock):
        raise ValueError("not a card")
    return State(tuple(row), stock, **fields)
