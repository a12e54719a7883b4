"""The stored form of a game: one compact binary record, and every reader of earlier forms.

A game is stored as one blob (``Stored.dump``), about 20 bytes plus two per move for a
52-card Accordion game:

  0x01                              format
  varint n, head[n]                 the replay header, fixed for the game's life:
                                    variant id, non-default options, seed (8 bytes), explicit deal
  varint base                       the version the event log starts after (1: from the deal)
  varint k, k moves                 the moves in play at ``base`` (empty unless the log was trimmed)
  varint m, m events                every move and undo since ``base``, in version order
  state                             the current position (``engine.encode_state``: the game's declared fields)

so ``version == base + m`` (checked on load), the game resumes without replaying anything,
undo rebuilds earlier positions by replay, and the game at any version since ``base`` (a
replayed reply, WatchGame's catch-up) is a replay of the log. The log keeps the last
``EVENTS_KEPT`` events or so (a longer one is trimmed by moving ``base`` on).

Games stored by earlier versions as JSON (``Game.snapshot``, starting with ``{``) still load:
their log starts at the version they were stored at. The record holds the seed and the
stock, so it never leaves the server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from accordion import engine
from accordion.bytecodec import Reader, varint
from accordion.engine import Game
from accordion.engine.moves import Move

from .binary import UNDO, Event, encode_event, in_play, play_event, read_events
from .errors import GameCorrupt

FORMAT = 1
EVENTS_KEPT = 1000
_TRIM_EVERY = 100  # trim in steps: the log holds EVENTS_KEPT .. EVENTS_KEPT + _TRIM_EVERY events
Head = tuple[engine.Variant, engine.Rules, int, tuple[int, ...] | None]


def _encode_head(game: Game) -> bytes:
    variant = game.variant
    defaults = variant.defaults()
    options = [(k, str(v)) for k, v in game.rules.values.items() if defaults.get(k) != v]
    vid = variant.id.encode()
    out = bytearray(varint(len(vid)) + vid + varint(len(options)))
    for name, value in options:
        out += varint(len(name)) + name.encode() + varint(len(value.encode())) + value.encode()
    out += game.seed.to_bytes(8, "little")
    if game.deal is None:
        out += b"\x00"
    else:
        out += varint(len(game.deal)) + bytes(game.deal)
    return bytes(out)


def decode_head(head: bytes) -> Head:
    """A replay header (``_encode_head``): variant, rules, seed, explicit deal (deal codes keep one)."""
    return _decode_head(head)


def _decode_head(head: bytes) -> Head:
    r = Reader(head)
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


_HEADS: dict[bytes, Head] = {}


def _head(head: bytes) -> Head:
    found = _HEADS.get(head)
    if found is None:
        if len(_HEADS) > 10_000:
            _HEADS.clear()
        found = _HEADS[head] = _decode_head(head)
    return found


class Stored:
    """A game as stored: the header, the event log and the live ``Game``.

    Mutations go through ``play`` and ``undo`` so that the log follows the game; ``dump`` is
    the blob to store, ``version`` the version it is at.
    """

    __slots__ = ("game", "head", "base", "base_moves", "events", "_log", "version")

    def __init__(
        self,
        game: Game,
        head: bytes,
        base: int,
        base_moves: list[Move],
        events: list[Event],
        log: bytes | None = None,
    ) -> None:
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
            self.base_moves = in_play(self.base_moves, dropped)
            self.base += _TRIM_EVERY
            self._log = None

    def dump(self) -> bytes:
        if self._log is None:
            self._log = b"".join(encode_event(e) for e in self.events)
        return b"".join(
            (
                b"\x01",
                varint(len(self.head)),
                self.head,
                varint(self.base),
                varint(len(self.base_moves)),
                b"".join(encode_event(m) for m in self.base_moves),
                varint(len(self.events)),
                self._log,
                engine.encode_state(self.game.rules, self.game.state),
            )
        )

    def fresh_game(self) -> Game:
        """A new ``Game`` at the current position (the live one may be shared)."""
        variant, rules, seed, deal = _head(self.head)
        moves = in_play(self.base_moves, self.events)
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
        game = self.first_game()
        for move in in_play(self.base_moves, self.events[: version - self.base]):
            game.play(move)
        return game


def load_stored(game_id: str, data: bytes, version: int) -> Stored:
    """The stored game at ``version``, from this format or an earlier one. Raises ``GameCorrupt``."""
    try:
        if data[:1] == b"{":  # the JSON snapshot of earlier versions
            return Stored.new(Game.from_snapshot(json.loads(data)), version)
        if data[:1] != b"\x01":
            raise ValueError("unknown format")
        r = Reader(data, 1)
        head = r.take(r.varint())
        variant, rules, seed, deal = _head(head)
        base = r.varint()
        base_moves = read_events(r, r.varint())
        count = r.varint()
        log_start = r.pos
        events = read_events(r, count)
        log = data[log_start : r.pos]
        state = engine.decode_state(rules, data[r.pos :])
        moves_at_base = [m for m in base_moves if m is not None]
        if base + count != version or len(moves_at_base) != len(base_moves):
            raise ValueError(f"the log ends at version {base + count}, the record is at {version}")
        game = Game.resume(variant, rules, seed, deal, state, in_play(moves_at_base, events))
        return Stored(game, head, base, moves_at_base, events, log)
    except (ValueError, KeyError, TypeError, IndexError) as exc:  # EngineError is a ValueError
        raise GameCorrupt(game_id) from exc
