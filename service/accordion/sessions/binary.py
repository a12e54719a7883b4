"""The byte-level pieces of the stored record: varints, a reader, and the event log's form.

An event is a move or an undo (``UNDO``, i.e. None: the undone move is the last one in play).
A move is 1 byte (deal 0xF0, redeal 0xF1), 2 (stack: from, to: both < 0xF0), or a few more
(remove: 0xF3, count, positions; claim: 0xF4, first, last, from, to, combo length, combo); an
undo is the byte 0xF2, a resignation (every game) 0xF5.

The tableau games add DRAW (0xF6) and a transfer (0xF7, then a byte of zones and flags, then the
piles, then the count if more than one card moves): ``zones`` is the source zone's index in
``_ZONES`` times 4 plus the target's; flag 0x10: a count byte follows; flag 0x20: both piles are
below 16 and share one byte (source × 16 + target), else each has its own byte. A move of a
Spider game is 3 or 4 bytes, so a game of hundreds of moves stays well under 2 KiB.
"""

from __future__ import annotations

from accordion.engine import Game, fields
from accordion.engine.moves import (
    DEAL,
    DRAW,
    REDEAL,
    RESIGN,
    Claim,
    Deal,
    Draw,
    Move,
    Redeal,
    Remove,
    Resign,
    Stack,
    Transfer,
    Zone,
    remove,
    stack,
    transfer,
)

UNDO = None  # an undo in an event list (the undone move is the last one in play)
Event = Move | None
_DEAL, _REDEAL, _UNDO, _REMOVE, _CLAIM, _RESIGN, _DRAW, _TRANSFER = (
    0xF0,
    0xF1,
    0xF2,
    0xF3,
    0xF4,
    0xF5,
    0xF6,
    0xF7,
)
_ZONES = (Zone.TABLEAU, Zone.FOUNDATION, Zone.STOCK, Zone.WASTE)  # a zone's index: its 2 bits in a transfer
_ZONE_INDEX = {zone: i for i, zone in enumerate(_ZONES)}
_COUNTED, _PACKED = 0x10, 0x20  # a transfer's flags (see the module's docstring)
_MAX_ROW = 104  # the longest row of any game (Push Pin's two decks)
_STACKS = [[stack(a, b) for b in range(_MAX_ROW)] for a in range(_MAX_ROW)]  # interned, by (from, to)


class Reader(fields.Reader):
    """The engine's record reader (``InvalidStateError``, a ValueError, on truncated or malformed
    input), and the header's length-prefixed texts."""

    __slots__ = ()

    def text(self) -> str:
        return self.take(self.varint()).decode()


def encode_event(move: Event) -> bytes:
    """One move (or ``UNDO``) in the stored log's form."""
    if move is None:
        return b"\xf2"
    if isinstance(move, Stack):
        return bytes((move.src, move.dst))
    if move is DEAL or isinstance(move, Deal):
        return b"\xf0"
    if move is REDEAL or isinstance(move, Redeal):
        return b"\xf1"
    if isinstance(move, Remove):
        return bytes((_REMOVE, len(move.positions), *move.positions))
    if isinstance(move, Resign):
        return b"\xf5"
    if isinstance(move, Transfer):
        return _encode_transfer(move)
    if isinstance(move, Draw):
        return b"\xf6"
    assert isinstance(move, Claim)
    combo = move.combo.encode()
    return bytes((_CLAIM, move.first, move.last, move.src, move.dst, len(combo))) + combo


def _encode_transfer(move: Transfer) -> bytes:
    head = _ZONE_INDEX[move.src_zone] * 4 + _ZONE_INDEX[move.dst_zone]
    counted = move.count != 1
    if counted:
        head |= _COUNTED
    if move.src < 16 and move.dst < 16:
        out = bytes((_TRANSFER, head | _PACKED, move.src * 16 + move.dst))
    else:
        out = bytes((_TRANSFER, head, move.src, move.dst))
    return out + bytes((move.count,)) if counted else out


def _read_transfer(buf: bytes, pos: int) -> tuple[Transfer, int]:
    """The transfer whose 0xF7 is at ``pos``, and the position after it."""
    head = buf[pos + 1]
    if head & _PACKED:
        src, dst = divmod(buf[pos + 2], 16)
        pos += 3
    else:
        src, dst = buf[pos + 2], buf[pos + 3]
        pos += 4
    count = 1
    if head & _COUNTED:
        count = buf[pos]
        pos += 1
    zones = head & 0x0F
    return transfer(_ZONES[zones >> 2], src, _ZONES[zones & 3], dst, count), pos


def read_events(r: Reader, count: int) -> list[Event]:
    """``count`` events from ``r`` (the hot loop of every load: one pass, no per-event calls)."""
    buf = r.buf
    out: list[Event] = []
    pos = r.pos
    for _ in range(count):
        b = buf[pos]
        if b < 0xF0:
            out.append(_STACKS[b][buf[pos + 1]])
            pos += 2
        elif b == _DEAL:
            out.append(DEAL)
            pos += 1
        elif b == _UNDO:
            out.append(UNDO)
            pos += 1
        elif b == _REDEAL:
            out.append(REDEAL)
            pos += 1
        elif b == _REMOVE:
            n = buf[pos + 1]
            out.append(remove(*buf[pos + 2 : pos + 2 + n]))
            pos += 2 + n
        elif b == _CLAIM:
            first, last, src, dst, n = buf[pos + 1 : pos + 6]
            out.append(Claim(first, last, buf[pos + 6 : pos + 6 + n].decode(), src, dst))
            pos += 6 + n
        elif b == _RESIGN:
            out.append(RESIGN)
            pos += 1
        elif b == _TRANSFER:
            move, pos = _read_transfer(buf, pos)
            out.append(move)
        elif b == _DRAW:
            out.append(DRAW)
            pos += 1
        else:
            raise ValueError(f"unknown event byte {b:#x}")
    if pos > len(buf):
        raise ValueError("truncated event log")
    r.pos = pos
    return out


def in_play(base_moves: list[Move], events: list[Event]) -> list[Move]:
    """The moves in play after ``events``, from ``base_moves`` (an undo takes back the last)."""
    moves = list(base_moves)
    for ev in events:
        if ev is None:
            moves.pop()
        else:
            moves.append(ev)
    return moves


def play_event(game: Game, event: Event) -> tuple[Move, str]:
    """Apply one logged event to ``game`` (a move, or None for an undo): the move played or
    taken back, and its notation in the position it is played from."""
    if event is None:
        move = game.undo()
        return move, game.move_text(move)
    text = game.move_text(event)
    game.play(event)
    return event, text
