"""The binary state record: one position as bytes, driven by the game's field declarations.

    row     varint length, then the row's cards, the first card of each pile with the high bit set
    stock   varint length, then a byte a card
    fields  for each declared field whose value is not its default, in declaration order:
            its tag (one byte), then its codec's bytes

The record is the tail of a stored game's blob, so ``decode_state`` reads to the end of
``data``. The bytes are those the service has always stored (tags: rng 1, score 2,
redeals 3, goal 4, marks 5), so games stored before the declarations still load.
"""

from __future__ import annotations

from typing import Any

from .core import Rules
from .errors import InvalidStateError
from .fields import Field, Pile, Reader, Row, State, varint


class _RowPieces(dict[Pile, bytes]):
    """A pile's bytes in the record (its first card with the high bit set), made on first use
    (a record is written for every move); emptied when full."""

    def __missing__(self, pile: Pile) -> bytes:
        if len(self) >= 200_000:
            self.clear()
        piece = self[pile] = bytes((pile[0] | 0x80, *pile[1:]))
        return piece


_ROW_PIECES = _RowPieces()


def encode_state(rules: Rules, state: State) -> bytes:
    """``state`` as a binary record (see the module's docstring)."""
    return encode_fields(rules.fields, state)


def encode_fields(fields: tuple[Field[Any], ...], state: State) -> bytes:
    """``encode_state`` with the game's declared fields given (``fields.fields_of(state)``
    reads them off the position)."""
    row = b"".join(map(_ROW_PIECES.__getitem__, state.row))
    out = bytearray(varint(len(row)))
    out += row
    out += varint(len(state.stock))
    out += bytes(state.stock)
    for field in fields:
        value = getattr(state, field.name, field.default)
        if value != field.default:
            out.append(field.tag)
            field.codec.write(value, out)
    return bytes(out)


def decode_state(rules: Rules, data: bytes) -> State:
    """The position in ``data`` (a whole record, as ``encode_state`` writes it).

    Raises:
        InvalidStateError: truncated, a value that is not a card, or a tag the game does not declare.
    """
    r = Reader(data)
    n = r.varint()
    cards = r.take(n)
    row: list[Pile] = []
    start = 0
    for i in range(1, n + 1):
        if i == n or cards[i] & 0x80:
            if not cards[start] & 0x80:
                raise InvalidStateError("a pile without its first card")
            row.append((cards[start] & 0x7F, *cards[start + 1 : i]))
            start = i
    stock = tuple(r.take(r.varint()))
    if any(c >= 52 for pile in row for c in pile) or any(c >= 52 for c in stock):
        raise InvalidStateError("not a card")
    by_tag = rules.fields_by_tag
    values: dict[str, Any] = {}
    while not r.at_end():
        tag = r.byte()
        field = by_tag.get(tag)
        if field is None:
            raise InvalidStateError(f"{type(rules).__name__} has no state field with tag {tag}")
        values[field.name] = field.codec.read(r)
    rows: Row = tuple(row)
    return rules.state(rows, stock, **values)
