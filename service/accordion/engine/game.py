"""A game in play: rules + position + history, with undo/redo, state strings and replays.

``Game`` is the only mutable object in the engine. Positions are immutable
``State`` values, so undo is popping the previous one: exact by construction.

RESIGN (every game) is handled here once, not by the games: it does not change the
position, so a game is resigned while its last move in play is RESIGN. A resigned game is
LOST with the position's penalty and lists no legal move; undo takes the resignation back
like any move. RESIGN is allowed exactly while the game is in progress and is never listed
among the legal moves (the status rule ignores it, and a client picking listed moves at
random must not end its game by it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .cards import card_text, parse_cards
from .core import OptionValue, Rules, State, Status, Variant, find_variant
from .errors import (
    EngineError,
    IllegalMoveError,
    InvalidDealError,
    InvalidStateError,
    NothingToRedoError,
    NothingToUndoError,
)
from .moves import RESIGN, Move, MoveKind
from .notation import illegal_move, move_text, parse_move, render
from .rng import MASK64, SplitMix64
from .state_string import format_state, parse_state
from .zones import ZoneView


@dataclass(frozen=True)
class Replay:
    """Everything needed to rebuild a game exactly: variant, options, seed or deal, moves."""

    variant: str
    options: Mapping[str, object]  # as given (values or their text): new_game resolves them
    seed: int
    deal: tuple[int, ...] | None = None
    moves: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"variant": self.variant, "options": dict(self.options), "seed": self.seed}
        if self.deal is not None:
            out["deal"] = " ".join(card_text(c) for c in self.deal)
        out["moves"] = list(self.moves)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Replay:
        try:
            deal = data.get("deal")
            return cls(
                variant=str(data["variant"]),
                options=dict(data.get("options") or {}),
                seed=int(data.get("seed", 0)),
                deal=tuple(parse_cards(deal)) if isinstance(deal, str) else (tuple(deal) if deal else None),
                moves=tuple(str(m) for m in data.get("moves", ())),
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, EngineError):
                raise
            raise InvalidStateError(f"not a replay record: {exc}") from None


@dataclass(frozen=True)
class GameView:
    """What a player may see: everything but the stock's order."""

    variant: str
    options: Mapping[str, OptionValue]
    row: tuple[tuple[int, ...], ...]
    stock_size: int
    status: Status
    legal_moves: tuple[str, ...]
    penalty: int
    score: int
    threshold_met: bool
    moves_played: int
    text: str
    extras: tuple[str, ...] = field(default=())
    # Tableau games: the layout zone by zone, face-down cards counted and (unless open) unnamed.
    zones: tuple[ZoneView, ...] = field(default=())


class Game:
    """One game. Build it with ``new_game``, ``replay`` or ``Game.from_state_string``."""

    def __init__(self, variant: Variant, rules: Rules, seed: int, deal: tuple[int, ...] | None, state: State):
        self.variant = variant
        self.rules = rules
        self.seed = seed
        self.deal = deal
        self._state = state
        self._legal: tuple[Move, ...] | None = None
        # What the player sees of the position (``Rules.zones``): a reply needs it for its zones,
        # its piles and its text, so it is made once per position.
        self._zones: tuple[ZoneView, ...] | None = None
        self._texts: tuple[str, ...] | None = None  # the notation of each legal move (replies list it)
        self._history: list[tuple[Move, State]] = []  # (move, position before it)
        self._redo: list[Move] = []
        # Moves known only as text or as values, for a game restored from a snapshot or by
        # ``resume``: the positions before them are rebuilt by replay when first needed (undo).
        self._unreplayed: tuple[str | Move, ...] = ()

    # --- reading -------------------------------------------------------------
    @property
    def state(self) -> State:
        return self._state

    @property
    def options(self) -> dict[str, OptionValue]:
        return dict(self.rules.values)

    def legal_moves(self) -> tuple[Move, ...]:
        """The moves the rules allow now (none once the game is over, resigned included).
        RESIGN is never listed."""
        if self._legal is None:
            self._legal = () if self.resigned else self.rules.legal_moves(self._state)
        return self._legal

    @property
    def status(self) -> Status:
        if self.resigned:
            return Status.LOST
        return self.rules.status(self._state, self.legal_moves())

    @property
    def resigned(self) -> bool:
        """Whether the player resigned: the last move in play is RESIGN."""
        if self._history:
            return self._history[-1][0].kind is MoveKind.RESIGN
        if self._unreplayed:
            last = self._unreplayed[-1]
            return _is_resign_text(last) if isinstance(last, str) else last.kind is MoveKind.RESIGN
        return False

    def can_resign(self) -> bool:
        """RESIGN is allowed while the game is in progress (compulsions do not forbid it)."""
        return self.status is Status.IN_PROGRESS

    @property
    def penalty(self) -> int:
        return self.rules.penalty(self._state)

    @property
    def score(self) -> int:
        """Cribbage points (0 in other games)."""
        return self.rules.score(self._state)

    @property
    def threshold_met(self) -> bool:
        return self.rules.threshold_met(self._state)

    @property
    def moves(self) -> list[Move]:
        if self._unreplayed:
            self._rebuild_history()
        return [m for m, _ in self._history]

    @property
    def positions(self) -> list[State]:
        """Every position the game went through, oldest first, the current one last (moves
        undone are not among them)."""
        if self._unreplayed:
            self._rebuild_history()
        return [before for _, before in self._history] + [self._state]

    @property
    def move_texts(self) -> list[str]:
        if any(not isinstance(m, str) for m in self._unreplayed):
            self._rebuild_history()  # a move value's text depends on the position it was played in
        texts = [m for m in self._unreplayed if isinstance(m, str)]
        return texts + [move_text(before, m, self.rules) for m, before in self._history]

    @property
    def move_count(self) -> int:
        return len(self._unreplayed) + len(self._history)

    def move_text(self, move: Move) -> str:
        return move_text(self._state, move, self.rules)

    def legal_texts(self) -> list[str]:
        if self._texts is None:
            state = self._state
            self._texts = tuple([move_text(state, m, self.rules) for m in self.legal_moves()])
        return list(self._texts)

    def is_legal(self, move: Move) -> bool:
        """Whether ``move`` is legal now. Legal moves are mostly the shared (interned) instances, so
        an identity scan (C-level: ``id`` and int compares) finds them without a dataclass
        ``__eq__`` per move listed before it; an equal copy is found by the second scan."""
        legal = self.legal_moves()
        return (
            id(move) in map(id, legal)
            or move in legal
            or (move.kind is MoveKind.RESIGN and self.can_resign())
        )

    def can_undo(self) -> bool:
        return bool(self._history)

    def can_redo(self) -> bool:
        return bool(self._redo)

    # --- playing -------------------------------------------------------------
    def parse_move(self, text: str) -> Move:
        """The legal move ``text`` names (see ``notation``); raises if none."""
        move = parse_move(self.rules, self._state, self.legal_moves(), text)
        if move.kind is MoveKind.RESIGN and not self.can_resign():
            raise illegal_move(self.rules, self._state, move, (), ())
        return move

    def play(self, move: Move | str) -> Move:
        """Play a legal move, given as a ``Move`` or as text. Nothing changes on error.

        Raises:
            InvalidMoveError, IllegalMoveError: as ``parse_move``.
        """
        if isinstance(move, str):
            move = self.parse_move(move)
        elif not self.is_legal(move):
            raise self.illegal(move)
        self._advance(move)
        self._redo.clear()
        return move

    def illegal(self, move: Move) -> IllegalMoveError:
        """The error for ``move``, not legal now: why, in the player's words, and the legal moves."""
        return illegal_move(self.rules, self._state, move, self.legal_moves(), self.legal_texts())

    def _advance(self, move: Move) -> None:
        self._history.append((move, self._state))
        if move.kind is not MoveKind.RESIGN:  # (RESIGN leaves the position as it is)
            self._state = self.rules.apply(self._state, move)
        self._legal = self._texts = self._zones = None

    def undo(self) -> Move:
        """Take back the last move; the position is restored exactly."""
        if self._unreplayed:
            self._rebuild_history()
        if not self._history:
            raise NothingToUndoError("nothing to undo: no move has been played")
        self.rules.check_undo(self._history[-1][1], self._state)  # the game's undo option
        move, before = self._history.pop()
        self._state = before
        self._legal = self._texts = self._zones = None
        self._redo.append(move)
        return move

    def redo(self) -> Move:
        """Play again the last move undone."""
        if not self._redo:
            raise NothingToRedoError("nothing to redo")
        move = self._redo.pop()
        self._advance(move)
        return move

    # --- records ---------------------------------------------------------------
    def record(self) -> Replay:
        return Replay(self.variant.id, self.options, self.seed, self.deal, tuple(self.move_texts))

    def state_string(self, hide_stock: bool = False) -> str:
        """The compact position (variant, options, row, stock, extras). See ``from_state_string``.

        With ``hide_stock`` the stock shows only its size (``#30``) and the string
        no longer round-trips: it is what a player may see. A resigned game's string ends
        with the word ``resigned``.
        """
        text = format_state(self.variant, self.rules, self._state, hide_stock)
        return text + " " + RESIGNED if self.resigned else text

    @classmethod
    def from_state_string(cls, text: str) -> Game:
        """The game at the position ``text`` gives. A resigned one (``… resigned``) is that
        position with RESIGN as its one move, so undo takes the resignation back."""
        text, resigned = _split_resigned(text)
        variant, rules, state = parse_state(text)
        game = cls(variant, rules, 0, None, state)
        if resigned:
            game._history.append((RESIGN, state))
        return game

    def snapshot(self) -> dict[str, Any]:
        """The replay record plus the current state string: enough to resume without replaying."""
        return {**self.record().to_dict(), "state": self.state_string()}

    @classmethod
    def from_snapshot(cls, data: Mapping[str, Any]) -> Game:
        """Resume a game saved by ``snapshot``; undo rebuilds earlier positions by replay on demand."""
        rec = Replay.from_dict(data)
        # (A resigned game's moves end with ``resign``: they, not the state string, say so.)
        variant, rules, state = parse_state(_split_resigned(str(data["state"]))[0])
        if variant.id != find_variant(rec.variant).id:
            raise InvalidStateError("snapshot state and record name different variants")
        game = cls(variant, variant.make_rules(rec.options), rec.seed, rec.deal, state)
        game._unreplayed = rec.moves
        return game

    @classmethod
    def resume(
        cls,
        variant: Variant,
        rules: Rules,
        seed: int,
        deal: tuple[int, ...] | None,
        state: State,
        moves: Sequence[Move],
    ) -> Game:
        """A game at ``state`` reached by ``moves`` (legal, from the deal of ``seed``/``deal``),
        without replaying them: undo rebuilds the earlier positions by replay when first needed.
        Nothing is checked here; a ``state`` that does not follow from the moves is found out then
        (``InvalidStateError``)."""
        game = cls(variant, rules, seed, deal, state)
        game._unreplayed = tuple(moves)
        return game

    def _rebuild_history(self) -> None:
        moves = self._unreplayed
        # The position the unreplayed moves lead to: before the first move played since.
        current = self._history[0][1] if self._history else self._state
        fresh = new_game(self.variant, self.options, seed=self.seed, deal=self.deal)
        for move in moves:
            fresh.play(move)
        if fresh.state != current:
            raise InvalidStateError("snapshot state does not follow from its moves")
        self._history = fresh._history + self._history
        self._unreplayed = ()

    def deal_order(self) -> tuple[int, ...]:
        """The cards of this game's deal in dealing order, what ``new_game(deal=...)`` takes to
        deal it again: the explicit deal, or the seed's shuffle (for a game loaded from a state
        string, which knows neither, the seed 0's). Internal: it names hidden cards."""
        if self.deal is not None:
            return self.deal
        return tuple(self.rules.order_deal(SplitMix64(self.seed)))

    def zones(self) -> tuple[ZoneView, ...]:
        """The layout zone by zone as the player sees it (none for row games)."""
        if self._zones is None:
            self._zones = self.rules.zones(self._state)
        return self._zones

    def hides_anything(self) -> bool:
        """Whether any card is hidden from the player now (a stock card, a face-down card)."""
        return self.rules.hides_anything(self._state)

    def view(self, symbols: bool = True, width: int | None = None) -> GameView:
        return GameView(
            variant=self.variant.id,
            options=self.options,
            row=self._state.row,
            stock_size=len(self._state.stock),
            status=self.status,
            legal_moves=tuple(self.legal_texts()),
            penalty=self.penalty,
            score=self.score,
            threshold_met=self.threshold_met,
            moves_played=self.move_count,
            text=self.render(symbols, width),
            extras=tuple(self.rules.summary(self._state)),
            zones=self.zones(),
        )

    def render(self, symbols: bool = True, width: int | None = None) -> str:
        return render(self.rules, self._state, symbols, width, self.zones())

    def __repr__(self) -> str:
        return f"<Game {self.state_string(hide_stock=True)}>"


def new_game(
    variant: str | Variant,
    options: Mapping[str, object] | None = None,
    seed: int | None = None,
    deal: Sequence[int] | str | None = None,
) -> Game:
    """A new game from a seed or from an explicit card list (deal order, left to right).

    With an explicit deal, ``seed`` (default 0) still drives later chance events.

    Raises:
        UnknownVariantError, InvalidOptionError, InvalidDealError.
    """
    v = variant if isinstance(variant, Variant) else find_variant(variant)
    rules = v.make_rules(options)
    if seed is None and deal is None:
        raise InvalidDealError("a new game needs a seed or a deal")
    seed = 0 if seed is None else seed
    if not isinstance(seed, int) or not 0 <= seed <= MASK64:
        raise InvalidDealError(f"seed {seed!r} is not an unsigned 64-bit integer")
    gen = SplitMix64(seed)
    if deal is None:
        cards = rules.order_deal(gen)
        dealt = None
    else:
        cards = parse_cards(deal) if isinstance(deal, str) else list(deal)
        if not all(isinstance(c, int) and 0 <= c < 52 for c in cards):
            raise InvalidDealError("a deal is a list of cards")
        rules.check_deal(cards)
        dealt = tuple(cards)
    return Game(v, rules, seed, dealt, rules.start(cards, gen))


def replay(record: Replay | Mapping[str, Any]) -> Game:
    """Rebuild a game from its replay record, checking every move."""
    rec = record if isinstance(record, Replay) else Replay.from_dict(record)
    game = new_game(rec.variant, rec.options, seed=rec.seed, deal=rec.deal)
    for text in rec.moves:
        game.play(text)
    return game


# --- state strings --------------------------------------------------------------

RESIGNED = "resigned"  # the last word of a resigned game's state string


def _split_resigned(text: str) -> tuple[str, bool]:
    """(the state string without its ``resigned`` word, whether it had it)."""
    head, _, last = text.rstrip().rpartition(" ")
    return (head, True) if last == RESIGNED and head else (text, False)


def _is_resign_text(text: str) -> bool:
    return text.strip().lower() == "resign"
