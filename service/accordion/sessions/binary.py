"""The byte-level pieces of the stored record: varints, a reader, and the event log's form.

An event is a move or an undo (``UNDO``, i.e. None: the undone move is the last one in play).
A move is 1 byte (deal 0xF0, redeal 0xF1), 2 (stack: from, to: both < 0xF0), or a few more
(remove: 0xF3, count, positions; claim: 0xF4, first, last, from, to, combo length, combo); an
undo is the byte 0xF2, a resignation (every game) 0xF5.
"""

from __future__ import annotations

from accordion.engine import Game, fields
from accordion.engine.fields import varint
from accordion.engine.moves import (
    DEAL, REDEAL, RESIGN, Claim, Deal, Move, Redeal, Remove, Resign, Stack, remove, stack,
)

UNDO = None  # an undo in an event list (the undone move is the last one in play)
Event = Move | None
_DEAL, _REDEAL, _UNDO, _REMOVE, _CLAIM, _RESIGN = 0xF0, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5
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
    assert isinstance(move, Claim)
    combo = move.combo.encode()
    return bytes((_CLAIM, move.first, move.last, move.src, move.dst, len(combo))) + combo


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
