"""Protobuf ↔ engine, and the stored form of a game. No rules here: only translation.

The stored ``data`` blob is a compact binary form (``Stored``: the replay header, the log of
moves and undos, the current position); it holds the seed and the stock, so it never leaves
the server. ``load_stored`` is the one reader (it also reads the JSON of earlier versions).
``encode_game`` builds the ``Game`` message from cached serialized pieces (cards, piles, moves).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
from collections.abc import Iterator, Sequence
from typing import Any

from accordion import engine, solver
from accordion.engine import Game, Status
from accordion.engine.cards import card_text
from accordion.engine.core import State
from accordion.engine.moves import DEAL, REDEAL, Claim, Deal, Move, Redeal, Remove, Stack, remove, stack
from accordion.v1 import accordion_pb2 as pb

from . import errors

SOLVE_OUTCOMES = {
    solver.Outcome.WON: pb.SOLVE_OUTCOME_WON,
    solver.Outcome.LOST: pb.SOLVE_OUTCOME_LOST,
    solver.Outcome.UNKNOWN: pb.SOLVE_OUTCOME_UNKNOWN,
}

_STATUS = {
    Status.IN_PROGRESS: pb.GAME_STATUS_IN_PROGRESS,
    Status.WON: pb.GAME_STATUS_WON,
    Status.LOST: pb.GAME_STATUS_LOST,
}
MAX_NOTATION = 200  # longer text is no move of any game; refuse before the parser sees it


# --- stored form -----------------------------------------------------------------------
#
# A game is stored as one compact binary blob (``dump``/``Stored``), about 20 bytes plus two
# per move for a 52-card Accordion game:
#
#   0x01                              format
#   varint n, head[n]                 the replay header, fixed for the game's life:
#                                     variant id, non-default options, seed (8 bytes), explicit deal
#   varint base                       the version the event log starts after (1: from the deal)
#   varint k, k moves                 the moves in play at ``base`` (empty unless the log was trimmed)
#   varint m, m events                every move and undo since ``base``, in version order
#   state                             the current position (row, stock, generator, extras)
#
# so ``version == base + m`` (checked on load), the game resumes without replaying anything,
# undo rebuilds earlier positions by replay, and the game at any version since ``base`` (a
# replayed reply, WatchGame's catch-up) is a replay of the log. A move is 1 byte (deal), 2
# (stack: from, to) or a few more (remove, claim); an undo is 1 byte. The log keeps the last
# ``EVENTS_KEPT`` events or so (a longer one is trimmed by moving ``base`` on).
#
# Games stored by earlier versions as JSON (``Game.snapshot``, starting with ``{``) still load:
# their log starts at the version they were stored at.

FORMAT = 1
EVENTS_KEPT = 1000
_TRIM_EVERY = 100  # trim in steps: the log holds EVENTS_KEPT .. EVENTS_KEPT + _TRIM_EVERY events
_DEAL, _REDEAL, _UNDO, _REMOVE, _CLAIM = 0xF0, 0xF1, 0xF2, 0xF3, 0xF4
UNDO = None  # an undo in an event list (the undone move is the last one in play)
Event = Move | None
_MAX_ROW = 104  # the longest row of any game (Push Pin's two decks)
_STACKS = [[stack(a, b) for b in range(_MAX_ROW)] for a in range(_MAX_ROW)]  # interned, by (from, to)
_COMPACT = b"\x00"  # first byte of a compact idempotency reply (a serialized reply never starts so)
_EVENT = b"\xff"  # first byte of a compact stream event (a serialized GameEvent never starts so)


_SMALL = tuple(bytes((n,)) for n in range(0x80))


def _varint(n: int) -> bytes:
    if n < 0x80:
        return _SMALL[n]
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


class _Reader:
    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes, pos: int = 0) -> None:
        self.buf, self.pos = buf, pos

    def byte(self) -> int:
        b = self.buf[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        shift = result = 0
        while True:
            b = self.buf[self.pos]
            self.pos += 1
            result |= (b & 0x7F) << shift
            if b < 0x80:
                return result
            shift += 7
            if shift > 70:
                raise ValueError("varint too long")

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.buf):
            raise ValueError("truncated")
        out = self.buf[self.pos : self.pos + n]
        self.pos += n
        return out

    def text(self) -> str:
        return self.take(self.varint()).decode()


def _zigzag(n: int) -> int:
    return n * 2 if n >= 0 else -n * 2 - 1


def _unzigzag(n: int) -> int:
    return n >> 1 if not n & 1 else -(n >> 1) - 1


def play_event(game: Game, event: Event) -> tuple[Move, str]:
    """Apply one logged event to ``game`` (a move, or None for an undo): the move played or
    taken back, and its notation in the position it is played from."""
    if event is None:
        move = game.undo()
        return move, game.move_text(move)
    text = game.move_text(event)
    game.play(event)
    return event, text


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
    combo = move.combo.encode()
    return bytes((_CLAIM, move.first, move.last, move.src, move.dst, len(combo))) + combo


def _read_events(r: _Reader, count: int) -> list[Event]:
    buf, out = r.buf, []
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
        else:
            raise ValueError(f"unknown event byte {b:#x}")
    if pos > len(buf):
        raise ValueError("truncated event log")
    r.pos = pos
    return out


def _in_play(base_moves: list[Move], events: list[Event]) -> list[Move]:
    """The moves in play after ``events``, from ``base_moves`` (an undo takes back the last)."""
    moves = list(base_moves)
    for ev in events:
        if ev is None:
            moves.pop()
        else:
            moves.append(ev)
    return moves


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


def _encode_state(state: State) -> bytes:
    # The engine's record, driven by the game's field declarations (byte-identical to before).
    return engine.record.encode_fields(engine.fields.fields_of(state), state)


def _decode_state(r: _Reader) -> State:
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
            fields["score"] = _unzigzag(r.varint())
        elif tag == 3:
            fields["redeals"] = r.varint()
        elif tag == 4:
            fields["goal"] = r.byte()
        elif tag == 5:
            fields["marks"] = tuple(
                tuple((r.byte(), _unzigzag(r.varint())) for _ in range(r.varint())) for _ in range(r.varint())
            )
        else:
            raise ValueError(f"unknown state field {tag}")
    if any(c >= 52 for pile in row for c in pile) or any(c >= 52 for c in stock):
        raise ValueError("not a card")
    return State(tuple(row), stock, **fields)


def _encode_head(game: Game) -> bytes:
    variant = game.variant
    defaults = {o.name: o.default for o in variant.options}
    options = [(k, str(v)) for k, v in game.rules.values.items() if defaults.get(k) != v]
    vid = variant.id.encode()
    out = bytearray(_varint(len(vid)) + vid + _varint(len(options)))
    for name, value in options:
        out += _varint(len(name)) + name.encode() + _varint(len(value.encode())) + value.encode()
    out += game.seed.to_bytes(8, "little")
    if game.deal is None:
        out += b"\x00"
    else:
        out += _varint(len(game.deal)) + bytes(game.deal)
    return bytes(out)


def _decode_head(head: bytes) -> tuple[engine.Variant, engine.Rules, int, tuple[int, ...] | None]:
    r = _Reader(head)
    variant = engine.find_variant(r.text())
    options = {}
    for _ in range(r.varint()):
        name = r.text()
        options[name] = r.text()
    seed = int.from_bytes(r.take(8), "little")
    n = r.varint()
    deal = tuple(r.take(n)) if n else None
    if r.pos != len(head):
        raise ValueError("trailing bytes in the header")
    return variant, variant.make_rules(options), seed, deal


_HEADS: dict[bytes, tuple[engine.Variant, engine.Rules, int, tuple[int, ...] | None]] = {}


class Stored:
    """A game as stored: the header, the event log and the live ``Game``.

    Mutations go through ``play`` and ``undo`` so that the log follows the game; ``dump`` is
    the blob to store, ``version`` the version it is at.
    """

    __slots__ = ("game", "head", "base", "base_moves", "events", "_log", "version")

    def __init__(self, game: Game, head: bytes, base: int, base_moves: list[Move], events: list[Event],
                 log: bytes | None = None) -> None:
        self.game, self.head, self.base = game, head, base
        self.base_moves, self.events = base_moves, events
        self._log = log  # the events' encoding, kept to save re-encoding the log on each move
        self.version = base + len(events)

    @classmethod
    def new(cls, game: Game, version: int = 1) -> Stored:
        """A game just dealt (or any game, taken as the start of its log)."""
        return cls(game, _encode_head(game), version, list(game.moves), [], b"")

    def play(self, move: Move) -> None:
        self.game.play(move)
        self._append(move)

    def undo(self) -> Move:
        move = self.game.undo()
        self._append(UNDO)
        return move

    def _append(self, event: Event) -> None:
        self.events.append(event)
        if self._log is not None:
            self._log += encode_event(event)
        self.version += 1
        if len(self.events) > EVENTS_KEPT + _TRIM_EVERY:
            dropped, self.events = self.events[:_TRIM_EVERY], self.events[_TRIM_EVERY:]
            self.base_moves = _in_play(self.base_moves, dropped)
            self.base += _TRIM_EVERY
            self._log = None

    def dump(self) -> bytes:
        if self._log is None:
            self._log = b"".join(encode_event(e) for e in self.events)
        return b"".join((
            b"\x01", _varint(len(self.head)), self.head, _varint(self.base),
            _varint(len(self.base_moves)), b"".join(encode_event(m) for m in self.base_moves),
            _varint(len(self.events)), self._log, engine.encode_state(self.game.rules, self.game.state),
        ))

    def fresh_game(self) -> Game:
        """A new ``Game`` at the current position (the live one may be shared)."""
        variant, rules, seed, deal = _head(self.head)
        moves = _in_play(self.base_moves, self.events)
        return Game.resume(variant, rules, seed, deal, self.game.state, moves)

    def replay(self, after: int) -> Iterator[tuple[int, Event, Move, str, Game]]:
        """The events after version ``after`` (from ``base`` at the earliest), each as
        ``(version, event, move, notation, game)``: the move played or taken back, its notation
        in the position it is played from, and the game after the event (one ``Game``, changed
        in place: read it before the next). Raises ``EngineError`` if the log does not replay."""
        start = max(after, self.base)
        game = self.game_at(start)
        for i, event in enumerate(self.events[start - self.base :], start + 1):
            move, text = play_event(game, event)
            yield i, event, move, text, game

    def first_game(self) -> Game:
        """The game as it was dealt (version 1), from the header alone."""
        variant, rules, seed, deal = _head(self.head)
        return engine.new_game(variant, dict(rules.values), seed=seed, deal=deal)

    def game_at(self, version: int) -> Game:
        """The game as it was at ``version`` (``base`` .. ``self.version``), rebuilt by replay."""
        if not self.base <= version <= self.version:
            raise LookupError(f"version {version} is outside the stored log ({self.base}..{self.version})")
        variant, rules, seed, deal = _head(self.head)
        game = engine.new_game(variant, dict(rules.values), seed=seed, deal=deal)
        for move in _in_play(self.base_moves, self.events[: version - self.base]):
            game.play(move)
        return game


def _head(head: bytes) -> tuple[engine.Variant, engine.Rules, int, tuple[int, ...] | None]:
    found = _HEADS.get(head)
    if found is None:
        if len(_HEADS) > 10_000:
            _HEADS.clear()
        found = _HEADS[head] = _decode_head(head)
    return found


def load_stored(game_id: str, data: bytes, version: int) -> Stored:
    """The stored game at ``version``. Raises ``ApiError`` (DATA_LOSS) if unreadable."""
    try:
        if data[:1] == b"{":  # the JSON snapshot of earlier versions
            return Stored.new(Game.from_snapshot(json.loads(data)), version)
        if data[:1] != b"\x01":
            raise ValueError("unknown format")
        r = _Reader(data, 1)
        head = r.take(r.varint())
        variant, rules, seed, deal = _head(head)
        base = r.varint()
        base_moves = _read_events(r, r.varint())
        count = r.varint()
        log_start = r.pos
        events = _read_events(r, count)
        log = data[log_start : r.pos]
        state = engine.decode_state(rules, data[r.pos :])
        if base + count != version or None in base_moves:
            raise ValueError(f"the log ends at version {base + count}, the record is at {version}")
        game = Game.resume(variant, rules, seed, deal, state, _in_play(base_moves, events))  # type: ignore[arg-type]
        return Stored(game, head, base, base_moves, events, log)  # type: ignore[arg-type]
    except (ValueError, KeyError, TypeError, IndexError) as exc:  # EngineError is a ValueError
        raise errors.game_corrupt(game_id) from exc


def load_game(game_id: str, data: bytes, version: int) -> Game:
    """The engine game from its stored blob. Raises ``ApiError`` (DATA_LOSS) if unreadable."""
    return load_stored(game_id, data, version).game


def compact_reply(version: int) -> bytes:
    """What an idempotency record holds for a move or an undo: the version it made (the reply is
    the game's log replayed to there)."""
    return _COMPACT + _varint(version)


def compact_reply_version(blob: bytes) -> int | None:
    """The version of a compact reply; None for a serialized reply (recorded by earlier versions)."""
    return _Reader(blob, 1).varint() if blob[:1] == _COMPACT else None


def stream_event(event: Event) -> bytes:
    """What the watch stream carries for an event: its log form (the version is the entry's id)."""
    return _EVENT + encode_event(event)


def stream_event_value(payload: bytes) -> tuple[bool, Event]:
    """(readable, event) of a stream payload; (False, None) for a payload of an earlier version."""
    if payload[:1] != _EVENT or len(payload) < 2:
        return False, None
    try:
        return True, _read_events(_Reader(payload, 1), 1)[0]
    except (ValueError, IndexError):
        return False, None


def new_game_record(sealed_token: bytes, seeds_tried: int, game_id: str) -> bytes:
    """NewGame's idempotency record, compact: the sealed token, seeds_tried and the game id (the
    reply's game is the game as dealt, rebuilt from its stored header). First byte 0, which no
    record of earlier versions starts with (they start with the sealed token's length)."""
    return _COMPACT + _SMALL[len(sealed_token)] + sealed_token + _varint(seeds_tried) + game_id.encode()


def read_new_game_record(blob: bytes) -> tuple[bytes, int, str] | None:
    """(sealed token, seeds_tried, game id) of a compact record; None for an earlier version's."""
    if blob[:1] != _COMPACT:
        return None
    r = _Reader(blob, 1)
    sealed = r.take(r.byte())
    seeds_tried = r.varint()
    return sealed, seeds_tried, blob[r.pos :].decode()


def request_key(request_id: str) -> str:
    """The store's key for a client's request id: 72 bits of its SHA-256, 12 characters
    (shorter than most ids, and the id itself is never stored; two ids of one game collide
    with odds of about n² / 2⁷³ for n recorded ids)."""
    return base64.urlsafe_b64encode(hashlib.sha256(request_id.encode()).digest()[:9]).decode()


# --- engine → protobuf -----------------------------------------------------------------


def encode_card(card: int) -> pb.Card:
    suit = pb.Suit.ValueType(card // 13 + 1)  # the engine orders suits ♠ ♥ ♦ ♣, as the enum does from 1
    return pb.Card(rank=card % 13 + 1, suit=suit, text=card_text(card, symbols=True))


def encode_move(move: Move, notation: str) -> pb.Move:
    """A move with both faces: structured (1-based) and its notation."""
    msg = pb.Move(kind=pb.MoveKind.Value(f"MOVE_KIND_{move.kind.value}"), notation=notation)
    if isinstance(move, Stack):
        msg.from_pile, msg.to_pile = move.src + 1, move.dst + 1
    elif isinstance(move, Remove):
        msg.positions.extend(p + 1 for p in move.positions)
    elif isinstance(move, Claim):
        msg.window_first, msg.window_last, msg.combo = move.first + 1, move.last + 1, move.combo
        msg.from_pile, msg.to_pile = move.src + 1, move.dst + 1
    return msg


# Serialized pieces of the Game message, cached: building a pb.Card per card of the row and a
# pb.Move per legal move is most of the cost of a reply; their bytes are joined and parsed once
# instead (upb parses a few KB in microseconds). Bounded: cleared when full.
_CACHE_MAX = 200_000
_CARD_FIELDS = tuple(  # Pile.cards (field 1) entries
    b"\x0a" + _varint(len(b)) + b for b in (encode_card(c).SerializeToString() for c in range(52))
)
class _PieceCache(dict[Any, bytes]):
    """Serialized pieces by key, built on first use by ``make``; emptied when full."""

    def __init__(self, make: Any) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, key: Any) -> bytes:
        if len(self) >= _CACHE_MAX:
            self.clear()
        value = self[key] = self.make(key)
        return value


def _make_pile_field(pile: tuple[int, ...]) -> bytes:
    body = b"".join([_CARD_FIELDS[c] for c in pile])
    return b"\x2a" + _varint(len(body)) + body


def _make_move_field(key: tuple[Any, ...]) -> bytes:
    if len(key) == 3:  # a STACK, keyed by (from, to, notation): ints and a str hash fastest
        src, dst, notation = key
        text = notation.encode()
        # kind = STACK (1), from_pile (2), to_pile (3), notation (8): what upb writes, by hand.
        body = b"".join((b"\x08\x01\x10", _varint(src + 1), b"\x18", _varint(dst + 1), b"\x42",
                         _varint(len(text)), text))
    else:
        body = encode_move(key[0], key[-1]).SerializeToString()
    return b"\x42" + _varint(len(body)) + body


_PILE_FIELDS = _PieceCache(_make_pile_field)  # Game.piles (field 5) entries, by pile
_MOVE_FIELDS = _PieceCache(_make_move_field)  # Game.legal_moves (field 8) entries, by move and notation


def _move_keys(game: Game) -> list[tuple[Any, ...]]:
    return [
        (m.src, m.dst, t) if type(m) is Stack else (m, t)  # type: ignore[union-attr]
        for m, t in zip(game.legal_moves(), game.legal_texts(), strict=True)
    ]


def _legal_fields(game: Game) -> bytes:
    """Every legal move as repeated field 8 entries (Game.legal_moves)."""
    return b"".join(map(_MOVE_FIELDS.__getitem__, _move_keys(game)))


def encode_legal(game: Game) -> list[pb.Move]:
    return [encode_move(m, t) for m, t in zip(game.legal_moves(), game.legal_texts(), strict=True)]


def encode_legal_response(game: Game, version: int) -> pb.LegalMovesResponse:
    """``LegalMovesResponse(version, moves)`` from the cached move pieces (field 8 → field 2)."""
    msg = pb.LegalMovesResponse(version=version)
    msg.MergeFromString(b"".join([b"\x12" + _MOVE_FIELDS[k][1:] for k in _move_keys(game)]))  # field 8 → 2
    return msg


def seed_is_public(game: Game) -> bool:
    """Whether showing the seed reveals nothing hidden: no stock, no chance to come, or game over."""
    if game.status is not Status.IN_PROGRESS:
        return True
    return not game.state.stock and not game.rules.draws_after_deal


def _field(tag: bytes, data: bytes) -> bytes:
    return tag + _varint(len(data)) + data


def _int(n: int) -> bytes:
    """A varint field value; a negative int32/int64 is ten bytes of two's complement."""
    return _varint(n if n >= 0 else n + (1 << 64))


_STATUS_FIELDS = {status: b"\x38" + _varint(value) for status, value in _STATUS.items()}  # Game.status (7)
_HEAD_FIELDS: dict[tuple[str, tuple[tuple[str, Any], ...]], bytes] = {}  # variant (3) and options (4)


def _head_fields(game: Game) -> bytes:
    values = game.rules.values
    key = (game.variant.id, tuple(values.items()))
    found = _HEAD_FIELDS.get(key)
    if found is None:
        entries = [
            _field(b"\x22", _field(b"\x0a", k.encode()) + _field(b"\x12", str(v).encode()))
            for k, v in values.items()
        ]
        if len(_HEAD_FIELDS) >= 10_000:
            _HEAD_FIELDS.clear()
        found = _HEAD_FIELDS[key] = _field(b"\x1a", game.variant.id.encode()) + b"".join(entries)
    return found


def game_bytes(game: Game, game_id: str, version: int) -> bytes:
    """The serialized ``Game`` message, written field by field from cached pieces (the same
    message ``encode_game`` returns: that one is parsed from these bytes)."""
    state = game.state
    status = game.status
    rules = game.rules
    moves = game.move_count
    parts = [
        _field(b"\x0a", game_id.encode()),
        b"\x10" + _int(version),
        _head_fields(game),
        b"".join(map(_PILE_FIELDS.__getitem__, state.row)),
        b"\x30" + _varint(len(state.stock)) if state.stock else b"",
        _STATUS_FIELDS[status],
        _legal_fields(game),
    ]
    penalty, score = game.penalty, game.score
    if penalty:
        parts.append(b"\x48" + _int(penalty))
    if score:
        parts.append(b"\x50" + _int(score))
    if rules.threshold_met(state):
        parts.append(b"\x58\x01")
    if moves:
        parts.append(b"\x60" + _varint(moves))
    parts.append(_field(b"\x6a", game.render().encode()))
    parts.append(_field(b"\x72", game.state_string(hide_stock=True).encode()))
    parts.extend(_field(b"\x7a", extra.encode()) for extra in rules.summary(state))
    if status is not Status.IN_PROGRESS or (not state.stock and not rules.draws_after_deal):
        parts.append(b"\x80\x01" + _varint(game.seed))  # seed_is_public; optional: sent even if 0
    if moves:
        parts.append(b"\x88\x01\x01")  # can_undo
    return b"".join(parts)


def encode_game(game: Game, game_id: str, version: int) -> pb.Game:
    return pb.Game.FromString(game_bytes(game, game_id, version))


def _move_body(key: tuple[Any, ...]) -> bytes:
    """The serialized ``Move`` of a ``_MOVE_FIELDS`` key (its field without tag and length)."""
    field = _MOVE_FIELDS[key]
    i = 1
    while field[i] & 0x80:
        i += 1
    return field[i + 1 :]


def reply_bytes(move: Move, notation: str, game: Game, game_id: str, version: int) -> bytes:
    """A serialized ``ApplyMoveResponse`` or ``UndoResponse`` (both: move = 1, game = 2)."""
    return _field(b"\x0a", _move_body(
        (move.src, move.dst, notation) if type(move) is Stack else (move, notation)  # type: ignore[union-attr]
    )) + _field(b"\x12", game_bytes(game, game_id, version))


def encode_score(game: Game, version: int) -> pb.ScoreResponse:
    return pb.ScoreResponse(
        version=version,
        status=_STATUS[game.status],
        penalty=game.penalty,
        piles_left=len(game.state.row),
        stock_size=len(game.state.stock),
        cribbage_points=game.score,
        threshold_met=game.threshold_met,
    )


def encode_variant(variant: engine.Variant) -> pb.Variant:
    try:
        threshold = variant.make_rules().win_threshold()
    except NotImplementedError:
        threshold = ""
    return pb.Variant(
        id=variant.id,
        name=variant.name,
        description=variant.description,
        aliases=list(variant.aliases),
        options=[
            pb.VariantOption(
                name=o.name,
                default_value=str(o.default),
                allowed_values=o.allowed_text,
                description=o.description,
            )
            for o in variant.options
        ],
        family=variant.rules.family,
        move_kinds=[pb.MoveKind.Value(f"MOVE_KIND_{k.value}") for k in variant.rules.move_kinds],
        win_threshold=threshold,
    )


# --- protobuf → engine -------------------------------------------------------------------


def move_fields_problems(msg: pb.Move) -> list[tuple[str, str]]:
    """What is wrong with a move's shape, before any rule is consulted (field, description)."""
    if msg.kind == pb.MOVE_KIND_UNSPECIFIED:
        if not msg.notation.strip():
            return [("move", "give a move: its kind and fields, or its notation")]
        if any((msg.from_pile, msg.to_pile, msg.positions, msg.window_first, msg.window_last, msg.combo)):
            return [("move.kind", "structured fields are set but the kind is unspecified")]
        return _notation_problems(msg.notation)
    kind = _KIND_NAMES.get(msg.kind)
    if kind is None:
        return [("move.kind", f"unknown move kind {msg.kind}")]
    used = _FIELDS[kind]
    # (Every ApplyMove comes through here: the checks read each field once, in a fixed order.)
    out = [(f"move.{f}", f"not used by {kind}") for f in _UNUSED[kind] if _is_set(msg, f)]
    for f in _PILE_NUMBERS[kind]:
        if getattr(msg, f) < 1:
            out.append((f"move.{f}", "a 1-based pile number is required"))
    if "positions" in used:
        ps = list(msg.positions)
        if not ps or ps[0] < 1 or any(b <= a for a, b in itertools.pairwise(ps)):
            out.append(("move.positions", "1-based positions in ascending order are required"))
    if "combo" in used and not msg.combo:
        out.append(("move.combo", "a combination is required"))
    if kind == "MOVE_KIND_CLAIM" and msg.window_last < msg.window_first:
        out.append(("move.window_last", "the window runs left to right"))
    if msg.notation:
        out += _notation_problems(msg.notation)
    return out


def _notation_problems(text: str) -> list[tuple[str, str]]:
    if len(text) > MAX_NOTATION:
        return [("move.notation", f"longer than {MAX_NOTATION} characters")]
    return []


_FIELDS = {
    "MOVE_KIND_STACK": {"from_pile", "to_pile"},
    "MOVE_KIND_DEAL": set(),
    "MOVE_KIND_REDEAL": set(),
    "MOVE_KIND_REMOVE": {"positions"},
    "MOVE_KIND_CLAIM": {"from_pile", "to_pile", "window_first", "window_last", "combo"},
}
_ALL_FIELDS = ("from_pile", "to_pile", "positions", "window_first", "window_last", "combo")
_KIND_NAMES = {number: name for name, number in pb.MoveKind.items()}
_UNUSED = {kind: tuple(f for f in _ALL_FIELDS if f not in used) for kind, used in _FIELDS.items()}
_PILE_NUMBERS = {
    kind: tuple(f for f in ("from_pile", "to_pile", "window_first", "window_last") if f in used)
    for kind, used in _FIELDS.items()
}


def _is_set(msg: pb.Move, name: str) -> bool:
    value = getattr(msg, name)
    return bool(len(value)) if name == "positions" else bool(value)


def decode_move(msg: pb.Move, game: Game) -> Move:
    """The engine move a well-shaped request move names (``move_fields_problems`` was empty).

    Raises:
        engine.InvalidMoveError, engine.IllegalMoveError: unreadable notation, or not legal now.
        errors.ApiError: structured fields and notation that name different moves.
    """
    if msg.kind == pb.MOVE_KIND_UNSPECIFIED:
        return game.parse_move(msg.notation)
    move = _structured(msg)
    if not game.is_legal(move):
        legal = game.legal_texts()
        listing = ", ".join(legal) or "nothing (the game is over)"
        raise engine.IllegalMoveError(f"{_describe(msg)} is not legal now; legal now: {listing}", legal)
    # Clients mostly send back a move as listed, notation included: the canonical text needs no parse.
    if msg.notation and msg.notation != game.move_text(move) and game.parse_move(msg.notation) != move:
        raise errors.invalid_request([("move.notation", "names a different move than the structured fields")])
    return move


def _describe(msg: pb.Move) -> str:
    """A structured move in words, for messages (its notation may not exist: piles may be missing)."""
    kind = pb.MoveKind.Name(msg.kind).removeprefix("MOVE_KIND_")
    fields = ", ".join(
        f"{f}={getattr(msg, f) if f != 'positions' else list(msg.positions)}"
        for f in sorted(_FIELDS[pb.MoveKind.Name(msg.kind)])
    )
    return f"{kind}({fields})"


def _structured(msg: pb.Move) -> Move:
    kind = msg.kind
    if kind == pb.MOVE_KIND_STACK:
        return Stack(msg.from_pile - 1, msg.to_pile - 1)
    if kind == pb.MOVE_KIND_DEAL:
        return DEAL
    if kind == pb.MOVE_KIND_REDEAL:
        return REDEAL
    if kind == pb.MOVE_KIND_REMOVE:
        return Remove(tuple(p - 1 for p in msg.positions))
    return Claim(
        msg.window_first - 1,
        msg.window_last - 1,
        msg.combo.strip().lower(),
        msg.from_pile - 1,
        msg.to_pile - 1,
    )


def deal_cards(texts: Sequence[str]) -> list[int]:
    """An explicit deal's cards. Raises ``engine.InvalidCardError`` quoting the bad one."""
    return [engine.parse_card(t) for t in texts]
