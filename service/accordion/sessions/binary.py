"""The byte-level pieces of the stored record: varints, a reader, and the event log's form.

An event is a move or an undo (``UNDO``, i.e. None: the undone move is the last one in play).
A move is 1 byte (deal 0xF0, redeal 0xF1), 2 (stack: from, to: both < 0xF0), or a few more
(remove: 0xF3, count, positions; claim: 0xF4, first, last, from, to, combo length, combo); an
undo is the byte 0xF2, a resignation (every game) 0xF5.

The tableau games add DRAW (0xF6) and a transfer: 0xF7, a head byte (zones and flags), the two
zones' codes if flag 0x40, the piles, the count if more than one card moves. Zones are their
stable codes (engine/moves.py ``ZONE_CODES``). Flag 0x40 clear: the head's low four bits are the
source's code times 4 plus the target's (both below 4: the form every version wrote and reads);
set: those bits are 0 and a byte of each code follows the head (source, then target), for a kind
of zone coded 4 or more. Flag 0x10: a count byte follows; flag 0x20: both piles are below 16 and
share one byte (source × 16 + target), else each has its own byte. A move of a Spider game is 3
or 4 bytes, so a game of hundreds of moves stays well under 2 KiB.
"""

from __future__ import annotations

from accordion.bytecodec import Reader
from accordion.engine import Game
from accordion.engine.moves import (
    DEAL,
    DRAW,
    REDEAL,
    RESIGN,
    ZONE_CODES,
    ZONE_OF_CODE,
    Claim,
    Deal,
    Draw,
    Move,
    Redeal,
    Remove,
    Resign,
    Stack,
    Transfer,
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
_COUNTED, _PACKED, _CODED = 0x10, 0x20, 0x40  # a transfer's flags (see the module's docstring)
_IN_HEAD = 4  # zone codes below this fit the head's two bits each
_MAX_ROW = 104  # the longest row of any game (Push Pin's two decks)
_STACKS = [[stack(a, b) for b in range(_MAX_ROW)] for a in range(_MAX_ROW)]  # interned, by (from, to)


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
    return transfer_bytes(
        ZONE_CODES[move.src_zone], move.src, ZONE_CODES[move.dst_zone], move.dst, move.count
    )


def transfer_bytes(src_code: int, src: int, dst_code: int, dst: int, count: int) -> bytes:
    """A transfer's bytes from its zones' codes: the two-bit form where both codes fit it (as
    small as every earlier version wrote), else the codes in a byte each (flag 0x40)."""
    counted = count != 1
    head = _COUNTED if counted else 0
    packed = src < 16 and dst < 16
    if packed:
        head |= _PACKED
    if src_code < _IN_HEAD and dst_code < _IN_HEAD:
        head |= src_code * 4 + dst_code
        out = bytes((_TRANSFER, head, src * 16 + dst)) if packed else bytes((_TRANSFER, head, src, dst))
    else:
        zones = (_TRANSFER, head | _CODED, src_code, dst_code)
        out = bytes((*zones, src * 16 + dst)) if packed else bytes((*zones, src, dst))
    return out + bytes((count,)) if counted else out


def _read_transfer(buf: bytes, pos: int) -> tuple[Transfer, int]:
    """The transfer whose 0xF7 is at ``pos``, and the position after it."""
    head = buf[pos + 1]
    if head & _CODED:
        src_code, dst_code = buf[pos + 2], buf[pos + 3]
        pos += 4
    else:
        src_code, dst_code = (head >> 2) & 3, head & 3
        pos += 2
    if head & _PACKED:
        src, dst = divmod(buf[pos], 16)
        pos += 1
    else:
        src, dst = buf[pos], buf[pos + 1]
        pos += 2
    count = 1
    if head & _COUNTED:
        count = buf[pos]
        pos += 1
    src_zone, dst_zone = ZONE_OF_CODE.get(src_code), ZONE_OF_CODE.get(dst_code)
    if src_zone is None or dst_zone is None:
        raise ValueError(f"unknown zone code in a transfer: {src_code}, {dst_code}")
    return transfer(src_zone, src, dst_zone, dst, count), pos


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
