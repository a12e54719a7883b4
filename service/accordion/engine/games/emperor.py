"""Emperor: 104 cards; ten piles of four (three face down, then one face up), one card at a time.

Dealt by rows (card k to pile (k mod 10) + 1): the first three rows face down, the fourth
face up; the 64 left are the stock. DRAW turns the stock's top card onto the waste (one
pass, no REDEAL). A tableau top card or the waste's top goes onto a foundation of its suit
(two per suit, A up to K), onto a tableau top one rank higher of the other colour, or into an
empty pile. Aces are compelled (the seed: "aces must be placed as foundations as soon as
possible"): while an Ace is a top card or the waste's top, only Aces to the foundations are
legal (RESIGN stays allowed). The two foundations of a suit are interchangeable, so a card
that could go to either is one move: to the first (foundation s, then s + 4 for suit s).
"""

from __future__ import annotations

from ..cards import RANK, SUIT
from ..core import State, Variant, register
from ..moves import DRAW, Draw, Move, MoveKind, Transfer, Zone
from ..rng import SplitMix64
from ..search import EmperorSearch, Search
from ..tableau import (
    BUILDS_ON,
    FOUNDATIONS,
    OPEN,
    TABLEAU,
    TABLEAU_TO_FOUNDATION,
    TABLEAU_TO_TABLEAU,
    WASTE,
    WASTE_TO_FOUNDATION,
    WASTE_TO_TABLEAU,
    TableauRules,
)
from ..words import card

PILES = 10
ROWS = 4
SUITS = 4

# SINGLE_CARD[i][j]: the shared move of pile i's top card onto pile j.
SINGLE_CARD = tuple(tuple(row[1] for row in TABLEAU_TO_TABLEAU[i]) for i in range(PILES))


def foundation_for(card: int, foundations: tuple[tuple[int, ...], ...]) -> int:
    """The foundation ``card`` goes onto (its suit's first that takes it), or -1."""
    suit, below = SUIT[card], RANK[card] - 1
    if len(foundations[suit]) == below:
        return suit
    if len(foundations[suit + SUITS]) == below:
        return suit + SUITS
    return -1


class EmperorRules(TableauRules):
    """Emperor as the spec reads seed 004 (and PySolFC, Morehead & Mott-Smith)."""

    options = (OPEN,)
    move_kinds = (MoveKind.MOVE, MoveKind.DRAW)
    deck_copies = 2

    def listed_foundation(self, state: State, foundation: int) -> int:
        """Naming either foundation of a suit when both take the card is the one move listed (to the
        first, as ``foundation_for`` chooses): they are interchangeable when equally high."""
        foundations, first = FOUNDATIONS.get(state), foundation % SUITS
        return first if len(foundations[first]) == len(foundations[foundation]) else foundation

    def start(self, cards: list[int], gen: SplitMix64) -> State:
        dealt = PILES * ROWS
        piles = tuple(tuple(cards[j:dealt:PILES]) for j in range(PILES))  # by rows
        return self.layout(piles, (ROWS - 1,) * PILES, tuple(cards[dealt:]), foundations=2 * SUITS)

    def plain_count(self, state: State, pile: int) -> int:
        return 1  # one card at a time

    def count_words(self, state: State, pile: int, count: int) -> str | None:
        return "cards move one at a time" if count != 1 else None

    def compelled_words(self, state: State, move: Move) -> str | None:
        """Aces are compelled: while one is a top card or the waste's top, only Aces go, to the
        foundations."""
        tops = [pile[-1] for pile in TABLEAU.get(state) if pile] + list(WASTE.get(state)[-1:])
        aces = [c for c in tops if RANK[c] == 1]
        if not aces:
            return None
        if isinstance(move, Transfer) and move.dst_zone is Zone.FOUNDATION and move.count == 1:
            # (the source is there: ``transfer_words`` checked it before asking)
            pile = WASTE.get(state) if move.src_zone is Zone.WASTE else TABLEAU.get(state)[move.src]
            if move.src_zone is not Zone.FOUNDATION and RANK[pile[-1]] == 1:
                return None
        return f"{card(aces[0])} must go to the foundations first: Aces go there as soon as they can"

    def legal_moves(self, state: State) -> tuple[Move, ...]:
        tableau, foundations, waste = TABLEAU.get(state), FOUNDATIONS.get(state), WASTE.get(state)
        tops = [pile[-1] if pile else -1 for pile in tableau]
        # (card, its moves to the foundations by foundation, its moves to the tableau by pile, pile it is on)
        movable = [
            (card, TABLEAU_TO_FOUNDATION[i], SINGLE_CARD[i], i) for i, card in enumerate(tops) if card >= 0
        ]
        if waste:
            movable.append((waste[-1], WASTE_TO_FOUNDATION, WASTE_TO_TABLEAU, -1))
        out: list[Move] = []
        if any(RANK[m[0]] == 1 for m in movable):  # compelled: only Aces to the foundations
            for card, homes, _, _ in movable:
                if RANK[card] == 1:
                    out.append(homes[foundation_for(card, foundations)])
            return tuple(out)
        for card, homes, onto, src in movable:
            home = foundation_for(card, foundations)
            if home >= 0:
                out.append(homes[home])
            builds = BUILDS_ON[card]
            for j, top in enumerate(tops):
                if (top < 0 or builds[top]) and j != src:
                    out.append(onto[j])
        if state.stock:
            out.append(DRAW)
        return tuple(out)

    def apply(self, state: State, move: Move) -> State:
        if isinstance(move, Draw):
            replace = state._replace
            drawn: State = replace(stock=state.stock[1:], waste=WASTE.get(state) + state.stock[:1])  # type: ignore[call-arg]
            return drawn
        assert isinstance(move, Transfer)
        return self.apply_transfer(state, move)

    def search(self, state: State) -> Search:
        """The solver's description (issue 13); it reads the cards from the state's fields."""
        return EmperorSearch(sampling=True)


register(
    Variant(
        id="emperor",
        name="Emperor",
        rules=EmperorRules,
        description="Two decks: ten piles of four, the top cards face up; move one card at a time down "
        "in alternating colours, Aces at once to the foundations, turn the stock once.",
    )
)
