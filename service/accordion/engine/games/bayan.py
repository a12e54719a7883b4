"""Bayan: two matching cards 1 or 3 places apart are both discarded; won when the row is empty.

A peer variant from PySolFC (not in the seeds); docs/games.md,
"Bayan". It is Accordion's shape (distances 1 and 3) but cards leave play instead of
stacking, so every pile is one card and a position holds part of the deck (``discards``).

Readings:

- Move REMOVE ``x3-4`` (neighbours) or ``x3,6`` (three apart): both cards leave and the
  gaps close. A pair is one move whichever card is thought of as moving, so "either
  direction" adds nothing. Moves come out by the left card, neighbour first; DEAL last.
- Option ``dealing``: ``all`` (default, 52 cards face up) or ``stock`` (the row starts with
  one card; DEAL is legal whenever the stock has cards, at any time). There is no
  ``compel``, ``leap`` or ``win_piles``.
- Won when the row and the stock are both empty. Penalty: cards in play (row + stock).
- Family ``stacking``: it is listed with Accordion's peers and uses its distances,
  though it discards like an eliminator.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, final

from ..cards import DECK_SIZE, MATCH
from ..core import Option, OptionValue, Rules, State, Variant, register
from ..moves import DEAL, Deal, Move, MoveKind, Remove, remove
from ..rng import SplitMix64
from ..search import Removal, RemoveSearch, Search
from ..words import card, no_pile
from .accordion import DEALING, deal_words

# Interned moves by the left card's position: neighbours, and cards three apart.
_MAX_ROW = DECK_SIZE
_NEAR = tuple(remove(i, i + 1) for i in range(_MAX_ROW))
_FAR = tuple(remove(i, i + 3) for i in range(_MAX_ROW))


@final
class BayanRules(Rules):
    """Discard matching pairs 1 or 3 apart until the row is empty."""

    family = "stacking"
    discards = True
    options: ClassVar[tuple[Option, ...]] = (DEALING,)
    move_kinds = (MoveKind.REMOVE, MoveKind.DEAL)
    dealing: str

    def __init__(self, values: Mapping[str, OptionValue]) -> None:
        super().__init__(values)
        self.dealing = str(values.get("dealing", "all"))

    def start(self, cards: list[int], gen: SplitMix64) -> State:
        if self.dealing == "stock":
            return self.state(((cards[0],),), tuple(cards[1:]))
        return super().start(cards, gen)

    def legal_moves(self, state: State) -> tuple[Move, ...]:
        tops = [p[-1] for p in state.row]
        n = len(tops)
        out: list[Move] = []
        append = out.append
        for i in range(n - 1):
            m = MATCH[tops[i]]
            if m[tops[i + 1]]:
                append(_NEAR[i])
            if i + 3 < n and m[tops[i + 3]]:
                append(_FAR[i])
        if state.stock:
            append(DEAL)
        return tuple(out)

    def explain(self, state: State, move: Move) -> str | None:
        if isinstance(move, Deal):
            return deal_words(self.dealing, "none", state)
        if not isinstance(move, Remove):
            return None
        tops = [p[-1] for p in state.row]
        for p in move.positions:
            if not 0 <= p < len(tops):
                return no_pile(p + 1, len(tops), "card")
        if len(move.positions) != 2 or move.positions[1] - move.positions[0] not in (1, 3):
            return "two matching cards 1 or 3 apart go together: name those two"
        a, b = (tops[p] for p in move.positions)
        return None if MATCH[a][b] else f"{card(a)} and {card(b)} do not match in suit or rank"

    def apply(self, state: State, move: Move) -> State:
        if isinstance(move, Remove):
            i, j = move.positions
            row = state.row
            return state._replace(row=row[:i] + row[i + 1 : j] + row[j + 1 :])
        if isinstance(move, Deal):
            return state._replace(row=state.row + ((state.stock[0],),), stock=state.stock[1:])
        raise TypeError(f"{type(self).__name__} has no move {move!r}")

    def is_won(self, state: State) -> bool:
        return not state.row and not state.stock

    def penalty(self, state: State) -> int:
        return sum(len(p) for p in state.row) + len(state.stock)

    def win_threshold(self) -> str:
        return "empty row"

    def search(self, state: State) -> Search:
        return RemoveSearch(removal=Removal.PAIRS, one=True, two=True, win_cards=0)

    def face_up_equivalent(self, state: State) -> tuple[Rules, State] | None:
        # DEAL is legal at any time, so dealing everything first loses nothing (as Accordion
        # with compel=none).
        if self.dealing != "stock":
            return None
        cards = [c for p in state.row for c in p] + list(state.stock)
        open_rules = type(self)({**self.values, "dealing": "all"})
        return open_rules, open_rules.state(tuple((c,) for c in cards))


register(
    Variant(
        id="bayan",
        name="Bayan",
        rules=BayanRules,
        description="All 52 cards face up in a row; discard two cards 1 or 3 places apart when "
        "they match in rank or suit, until none are left.",
    )
)
