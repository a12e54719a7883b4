"""Streets and Alleys: 52 cards face up in eight rows; one card at a time to the foundations,
onto a card one rank higher (any suit), or into an empty row.

Seed 004 deals columns of four alternately left and right of the centre: card k (0-based)
goes to column c = k div 4, and to row (k mod 4) + 1 when c is even (rows 1–4, seven cards
each) or row (k mod 4) + 5 when c is odd (rows 5–8, six cards each). Nothing comes back off
a foundation. A card can go back and forth for ever: RESIGN ends such a game.
"""

from __future__ import annotations

from typing import Any

from ..cards import RANK, SUIT
from ..core import State, Variant, register
from ..moves import Move, MoveKind, Transfer
from ..rng import SplitMix64
from ..search import Build, OpenTableauSearch, Search
from ..tableau import ONTO_ANY_SUIT, TABLEAU_TO_FOUNDATION, TABLEAU_TO_TABLEAU, TableauRules

ROWS = 8


class StreetsAndAlleysRules(TableauRules):
    """Every card face up from the deal: no stock, no waste, no face-down card."""

    move_kinds = (MoveKind.MOVE,)

    def start(self, cards: list[int], gen: SplitMix64) -> State:
        rows: list[list[int]] = [[] for _ in range(ROWS)]
        for k, card in enumerate(cards):
            rows[k % 4 + (4 if k // 4 % 2 else 0)].append(card)
        return self.layout(tuple(map(tuple, rows)), (0,) * ROWS)

    def plain_count(self, state: State, pile: int) -> int:
        return 1  # one card at a time

    def has_stock(self) -> bool:
        return False

    def count_words(self, state: State, pile: int, count: int) -> str | None:
        return "cards move one at a time" if count != 1 else None

    def build_words(self, moving: int, onto: int) -> str | None:
        return self.any_suit_words(moving, onto)

    def legal_moves(self, state: State) -> tuple[Move, ...]:
        s: Any = state
        tableau, foundations = s.tableau, s.foundations
        tops = [pile[-1] if pile else -1 for pile in tableau]
        where = {top: i for i, top in enumerate(tops) if top >= 0}
        spaces = [i for i, top in enumerate(tops) if top < 0]
        out: list[Move] = []
        for i, card in enumerate(tops):
            if card < 0:
                continue
            if len(foundations[SUIT[card]]) == RANK[card] - 1:
                out.append(TABLEAU_TO_FOUNDATION[i][SUIT[card]])
            targets = [where[c] for c in ONTO_ANY_SUIT[card] if c in where]
            for j in sorted(targets + spaces):
                out.append(TABLEAU_TO_TABLEAU[i][j][1])
        return tuple(out)

    def apply(self, state: State, move: Move) -> State:
        assert isinstance(move, Transfer)
        return self.apply_transfer(state, move)

    def search(self, state: State) -> Search:
        """Every card face up, one at a time, down in any suit, any card into a space (issue 13)."""
        return OpenTableauSearch(build=Build.ANY_SUIT, space_any=True)


register(
    Variant(
        id="streets-and-alleys",
        name="Streets and Alleys",
        rules=StreetsAndAlleysRules,
        description="52 cards face up in eight rows: move one outer card at a time to its foundation "
        "(A up in suit), onto a card one rank higher of any suit, or into an empty row.",
    )
)
