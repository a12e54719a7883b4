"""Klondike (draw three) and the seed's "Solitaire" (Klondike turning one card).

Seed 004: seven piles dealt by rows (one card on each of piles 1–7, then on piles 2–7, …), each
pile's top card face up; the 24 left are the stock. Build down in alternating colours; a run
moves "as a unit" (the whole face-up part; ``partial_runs`` lets any top part move); only a
King, or a run headed by one, goes into a space; foundations up in suit from the Ace.

REDEAL turns the waste over as the new stock, at most ``passes`` − 1 times, and only after a
move other than DRAW since the previous REDEAL (or the deal): so a game with unlimited passes
still ends, with no legal move left, when going through the stock changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ..cards import RANK, SUIT
from ..core import Option, OptionValue, State, Variant, register
from ..fields import COUNT, Field
from ..moves import DRAW, REDEAL, Draw, Move, MoveKind, Redeal, Transfer
from ..rng import SplitMix64
from ..search import KlondikeSearch, Search
from ..tableau import (
    FOUNDATION_TO_TABLEAU,
    ONTO_ALTERNATE,
    OPEN,
    TABLEAU_FIELDS,
    TABLEAU_TO_FOUNDATION,
    WASTE,
    WASTE_TO_FOUNDATION,
    WASTE_TO_TABLEAU,
    TableauRules,
    face_up_count,
    tableau_to_tableau,
)
from ..words import card

PILES = 7
KING = 13

DRAW_COUNT = Option("draw", 3, (3, 1), "cards turned from the stock onto the waste by one DRAW")
PASSES = Option(
    "passes", 0, range(0, 10), "passes through the stock (0 = unlimited): REDEAL is allowed passes - 1 times"
)
PARTIAL_RUNS = Option(
    "partial_runs",
    False,
    (False, True),
    "any top part of a face-up run may move (the seed: the whole run, as a unit)",
)
FOUNDATION_RETURN = Option(
    "foundation_return", False, (False, True), "a foundation's top card may come back onto the tableau"
)

REDEALS = Field("redeals", 0, COUNT, tag=14)
# 1 once a move other than DRAW was made since the previous REDEAL (or the deal).
MOVED = Field("moved", 0, COUNT, tag=15)


class KlondikeRules(TableauRules):
    """Klondike with the seed's rules and the options of the spec's table."""

    options = (DRAW_COUNT, PASSES, PARTIAL_RUNS, FOUNDATION_RETURN, OPEN)
    move_kinds = (MoveKind.MOVE, MoveKind.DRAW, MoveKind.REDEAL)
    fields: ClassVar[tuple[Field[Any], ...]] = (*TABLEAU_FIELDS, REDEALS, MOVED)

    draw: int
    passes: int
    partial_runs: bool
    foundation_return: bool

    def __init__(self, values: Mapping[str, OptionValue]) -> None:
        super().__init__(values)
        self.draw = int(values.get("draw", 3))
        self.passes = int(values.get("passes", 0))
        self.partial_runs = bool(values.get("partial_runs", False))
        self.foundation_return = bool(values.get("foundation_return", False))

    def start(self, cards: list[int], gen: SplitMix64) -> State:
        piles: list[list[int]] = [[] for _ in range(PILES)]
        k = 0
        for row in range(PILES):  # by rows: piles row+1 .. 7 get one card each
            for i in range(row, PILES):
                piles[i].append(cards[k])
                k += 1
        return self.layout(tuple(map(tuple, piles)), tuple(range(PILES)), tuple(cards[k:]))

    def legal_moves(self, state: State) -> tuple[Move, ...]:
        # Hot: plain attribute reads of the position and the shared moves from the tables.
        s: Any = state
        tableau, down, foundations, waste = s.tableau, s.down, s.foundations, s.waste
        out: list[Move] = []
        append = out.append
        heights = [len(f) for f in foundations]
        if self.foundation_return and sum(heights) == 52:
            return ()  # won: a card could still come back off a foundation, but the game is over
        where: dict[int, int] = {}  # top card → its pile
        spaces: list[int] = []
        for i, pile in enumerate(tableau):
            if pile:
                top = pile[-1]
                where[top] = i
                if heights[SUIT[top]] == RANK[top] - 1:
                    append(TABLEAU_TO_FOUNDATION[i][SUIT[top]])
            else:
                spaces.append(i)
        if waste:
            card = waste[-1]
            if heights[SUIT[card]] == RANK[card] - 1:
                append(WASTE_TO_FOUNDATION[SUIT[card]])
            for j in _targets(card, where, spaces):
                append(WASTE_TO_TABLEAU[j])
        partial = self.partial_runs
        for i, pile in enumerate(tableau):
            if not pile:
                continue
            size = len(pile)
            for h in range(down[i], size) if partial else (down[i],):
                for j in _targets(pile[h], where, spaces):
                    if j != i:
                        append(tableau_to_tableau(i, j, size - h))
        if self.foundation_return:
            for f, pile in enumerate(foundations):
                if pile:
                    for j in _targets(pile[-1], where, spaces):
                        append(FOUNDATION_TO_TABLEAU[f][j])
        if state.stock:
            append(DRAW)
        elif waste and s.moved and (not self.passes or s.redeals < self.passes - 1):
            append(REDEAL)
        return tuple(out)

    # --- why a move is not legal (TableauRules.explain) ------------------------------------
    def explain(self, state: State, move: Move) -> str | None:
        if isinstance(move, Redeal):
            if state.stock:
                return "you can turn the waste over only when the stock is empty"
            if not WASTE.get(state):
                return "the waste is empty: there is nothing to turn over"
            if self.passes and REDEALS.get(state) >= self.passes - 1:
                passes = "1 pass" if self.passes == 1 else f"{self.passes} passes"
                return f"no pass is left: this game allows {passes} through the stock"
            if not MOVED.get(state):
                return "turn the waste over again only after a move other than a draw"
            return None
        if isinstance(move, Draw) and not state.stock:
            if WASTE.get(state):
                return "the stock is empty: turn the waste over with redeal"
            return "the stock and the waste are empty"
        return super().explain(state, move)

    def returns_from_foundations(self) -> bool:
        return self.foundation_return

    def space_words(self, moving: int) -> str | None:
        if RANK[moving] == KING:
            return None
        return f"only a King can go into an empty pile, not {card(moving)}"

    def count_words(self, state: State, pile: int, count: int) -> str | None:
        up = face_up_count(state, pile)
        if self.partial_runs or count == up:
            return None
        return f"a face-up run moves as a whole: pile {pile + 1}'s {up} face-up cards go together"

    def apply(self, state: State, move: Move) -> State:
        replace: Any = state._replace
        if isinstance(move, Draw):
            stock = state.stock
            result: State = replace(stock=stock[self.draw :], waste=WASTE.get(state) + stock[: self.draw])
            return result
        if isinstance(move, Redeal):  # the waste turned over: drawn again in the same order
            result = replace(stock=WASTE.get(state), waste=(), redeals=REDEALS.get(state) + 1, moved=0)
            return result
        assert isinstance(move, Transfer)
        return self.apply_transfer(state, move, moved=1)

    def search(self, state: State) -> Search:
        """The solver's description (K13, issue 13): the rules as options, the pass count and
        whether a REDEAL is allowed now; the solver reads the cards from the state's fields."""
        return KlondikeSearch(
            draw=self.draw,
            passes=self.passes,
            partial_runs=self.partial_runs,
            foundation_return=self.foundation_return,
            redeals_used=REDEALS.get(state),
            moved=bool(MOVED.get(state)),
            sampling=True,
        )

    def seen_stock(self, state: State) -> bool:
        """After a REDEAL the stock is the waste turned over, drawn again in the same order, and
        the player was shown that waste whole: every stock card since is one they saw, in order
        (cards leave the stock only onto the waste). Before the first REDEAL no stock card was
        ever turned."""
        return REDEALS.get(state) > 0

    def summary(self, state: State) -> list[str]:
        used = REDEALS.get(state)
        return [f"pass {used + 1} of {self.passes}" if self.passes else f"pass {used + 1} (unlimited)"]


def _targets(card: int, where: dict[int, int], spaces: list[int]) -> list[int]:
    """The tableau piles ``card`` (heading whatever lies on it) may go onto: a top one rank
    higher in the other colour, or a space when it is a King."""
    if RANK[card] == KING:
        return spaces
    return [where[c] for c in ONTO_ALTERNATE[card] if c in where]


register(
    Variant(
        id="klondike",
        name="Klondike",
        rules=KlondikeRules,
        description="Seven piles, the top cards face up: build down in alternating colours and up on "
        "the foundations in suit from the Ace; turn the stock three cards at a time.",
    )
)
register(
    Variant(
        id="klondike-draw-one",
        name="Klondike (draw one)",
        rules=KlondikeRules,
        description='Klondike turning one card at a time from the stock: the seed\'s "Solitaire".',
        aliases=("Solitaire", "Klondike draw one"),
        preset={"draw": 1},
    )
)
