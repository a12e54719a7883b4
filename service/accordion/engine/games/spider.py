"""Spider: 104 cards in ten piles; build down regardless of suit, lift off full suits K..A.

Option ``suits``: 4 (two full decks), 2 (♠ and ♥, four times each), 1 (♠, eight times).
Option ``layout``:

- ``seed`` (seed 004): ten piles of five dealt by rows (card k to pile (k mod 10) + 1), four
  face down and one face up; the stock of 54 gives five DEALs of ten and a final DEAL of four
  onto piles 1–4.
- ``standard`` (Windows): 54 cards by rows, so piles 1–4 hold six and 5–10 five, all but the
  top face down; the stock of 50 gives five DEALs of ten.

A *unit* is a pile's top card with the face-up cards under it that continue one suit in
sequence. Any top part of the unit moves onto a pile whose top is one rank higher (any suit),
or into an empty pile. DEAL (one card face up on each pile, left to right) is legal only when
no pile is empty. A full suit K (deepest) .. A (top) on top of a pile is lifted off to the
foundations as part of the move that completed it, and the card left on top turns up.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..cards import RANK
from ..core import Option, OptionValue, Row, State, Variant, register
from ..moves import DEAL, Deal, Move, MoveKind, Transfer
from ..rng import SplitMix64
from ..search import Search, SpiderSearch
from ..tableau import DOWN, FOUNDATIONS, OPEN, TABLEAU, TABLEAU_TO_TABLEAU, TableauRules, turned_up
from ..words import cards_count

PILES = 10
SUIT_SIZE = 13
COMPLETE_SUITS = 8
KING = 13

SUITS = Option(
    "suits", 4, (4, 2, 1), "suits in the 104 cards: 4 (two decks), 2 (♠ ♥ four times), 1 (♠ eight times)"
)
LAYOUT = Option(
    "layout",
    "seed",
    ("seed", "standard"),
    "seed: ten piles of five and a final DEAL of four; standard (Windows): 54 cards dealt, five DEALs of ten",
)
# Cards dealt to the tableau before play, by layout.
DEALT = {"seed": 50, "standard": 54}


def deck_of(suits: int) -> list[int]:
    """The 104 cards in canonical order: the first ``suits`` suits' 13 cards (A..K, ♠ ♥ ♦ ♣
    order), repeated to make 104."""
    return list(range(SUIT_SIZE * suits)) * (COMPLETE_SUITS // suits)


def unit_length(pile: tuple[int, ...], down: int) -> int:
    """How many top cards of ``pile`` make its unit: face-up cards continuing one suit in
    sequence from the top (``card + 1`` is the same suit one rank higher, below a King)."""
    n = 1
    lowest = len(pile) - down  # face-up cards only
    while n < lowest:
        card = pile[-n]
        if RANK[card] == KING or pile[-n - 1] != card + 1:
            break
        n += 1
    return n


def lifts_off(pile: tuple[int, ...], down: int) -> bool:
    """Whether the top of ``pile`` is a full face-up suit, K deepest and A on top."""
    if len(pile) - down < SUIT_SIZE:
        return False
    ace = pile[-1]
    if RANK[ace] != 1:
        return False
    return all(pile[-1 - k] == ace + k for k in range(1, SUIT_SIZE))


class SpiderRules(TableauRules):
    """Spider with the seed's layout (default) or Windows'; 1, 2 or 4 suits."""

    options = (SUITS, LAYOUT, OPEN)
    move_kinds = (MoveKind.MOVE, MoveKind.DEAL)

    suits: int
    dealt: int

    def __init__(self, values: Mapping[str, OptionValue]) -> None:
        super().__init__(values)
        self.suits = int(values.get("suits", 4))
        self.dealt = DEALT[str(values.get("layout", "seed"))]

    def deck(self) -> list[int]:
        return deck_of(self.suits)

    def start(self, cards: list[int], gen: SplitMix64) -> State:
        piles: list[list[int]] = [[] for _ in range(PILES)]
        for k in range(self.dealt):  # by rows
            piles[k % PILES].append(cards[k])
        return self.layout(
            tuple(map(tuple, piles)),
            tuple(len(p) - 1 for p in piles),
            tuple(cards[self.dealt :]),
            foundations=COMPLETE_SUITS,
        )

    def has_waste(self) -> bool:
        return False  # DEAL puts the stock's cards straight onto the tableau

    def plain_count(self, state: State, pile: int) -> int:
        """``3>7`` moves the whole unit when it can (else the longest part that can)."""
        tableau = TABLEAU.get(state)
        return unit_length(tableau[pile], DOWN.get(state)[pile]) if tableau[pile] else 0

    # --- why a move is not legal (TableauRules.explain) ------------------------------------
    def explain(self, state: State, move: Move) -> str | None:
        if isinstance(move, Deal):
            if not state.stock:
                return "the stock is empty"
            if not all(TABLEAU.get(state)):
                return "you can deal only when no pile is empty"
            return None
        return super().explain(state, move)

    def count_words(self, state: State, pile: int, count: int) -> str | None:
        unit = unit_length(TABLEAU.get(state)[pile], DOWN.get(state)[pile])
        if count <= unit:
            return None
        which = "top card moves alone" if unit == 1 else f"top {cards_count(unit)} do"
        return f"only cards of one suit in sequence move together: pile {pile + 1}'s {which}"

    def build_words(self, moving: int, onto: int) -> str | None:
        return self.any_suit_words(moving, onto)

    def foundation_words(self, foundations: Row, moving: int, dst: int) -> str | None:
        return "cards leave for the foundations only as a full suit, King to Ace, lifted off by itself"

    def legal_moves(self, state: State) -> tuple[Move, ...]:
        tableau, down = TABLEAU.get(state), DOWN.get(state)
        # The piles each rank can go onto: those topped one rank higher; and the spaces.
        onto: list[list[int]] = [[] for _ in range(KING + 1)]
        spaces: list[int] = []
        for j, pile in enumerate(tableau):
            if pile:
                onto[RANK[pile[-1]] - 1].append(j)
            else:
                spaces.append(j)
        out: list[Move] = []
        for i, pile in enumerate(tableau):
            if not pile:
                continue
            moves = TABLEAU_TO_TABLEAU[i]  # [dst][count]: the shared transfers
            for count in range(1, unit_length(pile, down[i]) + 1):
                for j in onto[RANK[pile[-count]]]:
                    out.append(moves[j][count])
                for j in spaces:
                    out.append(moves[j][count])
        if state.stock and not spaces:
            out.append(DEAL)
        return tuple(out)

    def apply(self, state: State, move: Move) -> State:
        if isinstance(move, Deal):
            return self._deal(state)
        assert isinstance(move, Transfer)
        after = self.apply_transfer(state, move)
        return self._lift_off(after, (move.dst,))

    def _deal(self, state: State) -> State:
        stock = state.stock
        n = min(PILES, len(stock))
        tableau = tuple(pile + (stock[j],) if j < n else pile for j, pile in enumerate(TABLEAU.get(state)))
        replace: Any = state._replace
        dealt: State = replace(stock=stock[n:], tableau=tableau)
        return self._lift_off(dealt, range(n))

    def _lift_off(self, state: State, piles: Any) -> State:
        """``state`` with every full suit on top of one of ``piles`` lifted off to the next empty
        foundation (A at the bottom, K on top, as built up), the card under it turned up."""
        tableau, down = TABLEAU.get(state), DOWN.get(state)
        lifted = [j for j in piles if lifts_off(tableau[j], down[j])]
        if not lifted:
            return state
        table, counts = list(tableau), list(down)
        foundations = list(FOUNDATIONS.get(state))
        for j in lifted:
            suit = table[j][-SUIT_SIZE:]
            table[j] = table[j][:-SUIT_SIZE]
            counts[j] = turned_up(table[j], counts[j])
            foundations[foundations.index(())] = suit[::-1]
        replace: Any = state._replace
        result: State = replace(tableau=tuple(table), down=tuple(counts), foundations=tuple(foundations))
        return result

    def win_threshold(self) -> str:
        return "all eight suits lifted off"

    def search(self, state: State) -> Search:
        """The solver's description (issue 13); it reads the cards from the state's fields."""
        return SpiderSearch(sampling=True)


register(
    Variant(
        id="spider",
        name="Spider",
        rules=SpiderRules,
        description="104 cards in ten piles, mostly face down: build down regardless of suit, move runs "
        "of one suit, DEAL ten more when no pile is empty; each full suit K..A lifts off.",
    )
)
