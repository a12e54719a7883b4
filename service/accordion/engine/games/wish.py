"""Wish: 32 cards (A, 7–K of each suit; the seed: "remove all 2s–6s") in eight piles of four.

Seed 004 deals one pile at a time (cards 1–4 make pile 1, bottom to top, and so on); each
pile's top card is face up, the three under it face down. Two top cards of the same rank on
two different piles are removed (a REMOVE naming the two piles); the card left on top turns
up. Won when all 32 are removed. The removed cards lie face up on one discard pile, shown as
the foundation zone, so every card stays in the position.
"""

from __future__ import annotations

from ..cards import RANK, make_card
from ..core import State, Variant, register
from ..moves import Move, MoveKind, Remove, remove
from ..rng import SplitMix64
from ..search import Search, TopPairsSearch
from ..tableau import DOWN, FOUNDATIONS, OPEN, TABLEAU, TableauRules, turned_up
from ..words import card, no_pile

PILES = 8
PILE_SIZE = 4
RANKS = (1, 7, 8, 9, 10, 11, 12, 13)
DECK = tuple(sorted(make_card(rank, suit) for suit in range(4) for rank in RANKS))


class WishRules(TableauRules):
    """Pairs of top cards of equal rank leave the layout."""

    options = (OPEN,)
    move_kinds = (MoveKind.REMOVE,)

    def deck(self) -> list[int]:
        return list(DECK)

    def start(self, cards: list[int], gen: SplitMix64) -> State:
        piles = tuple(tuple(cards[i : i + PILE_SIZE]) for i in range(0, len(cards), PILE_SIZE))
        return self.layout(piles, (PILE_SIZE - 1,) * PILES, foundations=1)

    def has_stock(self) -> bool:
        return False

    def legal_moves(self, state: State) -> tuple[Move, ...]:
        tops = [RANK[pile[-1]] if pile else 0 for pile in TABLEAU.get(state)]
        out: list[Move] = []
        for i, rank in enumerate(tops):
            if rank:
                for j in range(i + 1, len(tops)):
                    if tops[j] == rank:
                        out.append(remove(i, j))
        return tuple(out)

    def explain(self, state: State, move: Move) -> str | None:
        if not isinstance(move, Remove):
            return None
        tableau = TABLEAU.get(state)
        for p in move.positions:
            if not 0 <= p < len(tableau):
                return no_pile(p + 1, len(tableau))
        if len(set(move.positions)) != 2 or len(move.positions) != 2:
            return "two top cards of the same rank, on two different piles, go together: name those two piles"
        for p in move.positions:
            if not tableau[p]:
                return f"pile {p + 1} is empty"
        a, b = (tableau[p][-1] for p in move.positions)
        return None if RANK[a] == RANK[b] else f"{card(a)} and {card(b)} are not the same rank"

    def apply(self, state: State, move: Move) -> State:
        assert isinstance(move, Remove)
        tableau, down = list(TABLEAU.get(state)), list(DOWN.get(state))
        removed = []
        for i in move.positions:
            removed.append(tableau[i][-1])
            tableau[i] = tableau[i][:-1]
            down[i] = turned_up(tableau[i], down[i])
        discards = FOUNDATIONS.get(state)[0] + tuple(removed)
        replace = state._replace
        result: State = replace(tableau=tuple(tableau), down=tuple(down), foundations=(discards,))  # type: ignore[call-arg]
        return result

    def search(self, state: State) -> Search:
        """Pairs of equal top ranks leave (issue 13); hidden unless dealt ``open`` (``hides_anything``)."""
        return TopPairsSearch()

    def win_threshold(self) -> str:
        return f"all {len(DECK)} cards removed"


register(
    Variant(
        id="wish",
        name="Wish",
        rules=WishRules,
        description="32 cards (A, 7–K) in eight piles of four, only the tops face up: remove two top "
        "cards of the same rank; won when every card is removed.",
    )
)
