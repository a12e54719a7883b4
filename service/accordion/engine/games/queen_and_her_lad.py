"""The Queen and Her Lad: dealt one by one from Q♥ to J♥; remove single cards and runs of matching pairs.

Seed 002 (Whitmore Jones): the Queen of Hearts is dealt first and the Knave of Hearts is
the last card of the stock. DEAL is legal whenever the stock has cards. REMOVE takes
the cards lying between a matching pair when they are

- one card;
- two adjacent cards that also match each other;
- a run of 2k cards that splits, from its left end, into k consecutive matching pairs
  (Whitmore Jones allows three or four pairs; the spec allows any k ≥ 1, and k = 1 is
  the two-card case).

Won when only Q♥ and J♥ remain and the stock is empty. Q♥ never leaves (nothing lies
to its left) and J♥ never leaves (nothing is dealt after it).
"""

from __future__ import annotations

from typing import final

from ..cards import DECK_SIZE, MATCH, card_text, make_card
from ..core import State, Variant, register
from ..errors import InvalidDealError
from ..moves import DEAL, Deal, Move, MoveKind, remove
from ..rng import SplitMix64
from ..search import GenericSearch, Search
from ..words import card
from .eliminators import INNER1, EliminatorRules

HEARTS = 1
QUEEN_OF_HEARTS = make_card(12, HEARTS)
JACK_OF_HEARTS = make_card(11, HEARTS)


@final
class QueenAndHerLadRules(EliminatorRules):
    """Dealt from the stock; 1 card, or k ≥ 1 adjacent matching pairs, between a matching pair leave."""

    move_kinds = (MoveKind.REMOVE, MoveKind.DEAL)

    def order_deal(self, gen: SplitMix64) -> list[int]:
        cards = [c for c in range(DECK_SIZE) if c not in (QUEEN_OF_HEARTS, JACK_OF_HEARTS)]
        gen.shuffle(cards)
        return [QUEEN_OF_HEARTS, *cards, JACK_OF_HEARTS]

    def check_deal(self, cards: list[int]) -> None:
        super().check_deal(cards)
        if cards[0] != QUEEN_OF_HEARTS or cards[-1] != JACK_OF_HEARTS:
            raise InvalidDealError(
                f"a queen-and-her-lad deal starts with QH and ends with JH; this one starts with "
                f"{card_text(cards[0])!r} and ends with {card_text(cards[-1])!r}"
            )

    def start(self, cards: list[int], gen: SplitMix64) -> State:
        return self.state(((cards[0],),), tuple(cards[1:]))

    def search(self, state: State) -> Search:
        # Runs of pairs leave too: none of the row searches has that rule.
        return GenericSearch()

    def removals(self, state: State) -> list[Move]:
        tops = [p[0] for p in state.row]
        n = len(tops)
        out: list[Move] = []
        for i in range(n - 2):
            m = MATCH[tops[i]]
            if m[tops[i + 2]]:  # one card between; the shortest removal at i+1 comes first
                out.append(INNER1[i])
            p = i + 1  # the first card of the run's next pair
            while p + 1 < n and MATCH[tops[p]][tops[p + 1]]:
                j = p + 2  # the card right of the run of pairs i+1 .. p+1
                if j < n and m[tops[j]]:
                    out.append(remove(*range(i + 1, j)))
                p = j
        return out

    def explain(self, state: State, move: Move) -> str | None:
        if isinstance(move, Deal):
            return "the stock is empty" if not state.stock else None
        return super().explain(state, move)

    def between_words(self, tops: list[int], positions: tuple[int, ...]) -> str | None:
        if len(positions) == 1:
            return None
        if len(positions) % 2:
            return "one card can go, or pairs of cards that match each other, between a matching pair"
        for a, b in zip(positions[::2], positions[1::2]):
            if not MATCH[tops[a]][tops[b]]:
                return (
                    f"cards between a matching pair go in pairs that match: {card(tops[a])} and "
                    f"{card(tops[b])} do not"
                )
        return None

    def legal_moves(self, state: State) -> tuple[Move, ...]:
        out = self.removals(state)
        if state.stock:
            out.append(DEAL)
        return tuple(out)

    def apply(self, state: State, move: Move) -> State:
        if isinstance(move, Deal):
            return state._replace(row=state.row + ((state.stock[0],),), stock=state.stock[1:])
        return super().apply(state, move)

    def is_won(self, state: State) -> bool:
        return (
            not state.stock
            and len(state.row) == 2
            and {state.row[0][0], state.row[1][0]} == {QUEEN_OF_HEARTS, JACK_OF_HEARTS}
        )


register(
    Variant(
        id="queen-and-her-lad",
        name="The Queen and Her Lad",
        rules=QueenAndHerLadRules,
        description="Dealt one by one from the Queen of Hearts to the Knave of Hearts: remove a card, or "
        "a run of adjacent matching pairs, lying between two cards of the same rank or suit, "
        "until only the Queen and her Lad remain.",
        aliases=("Queen and Her Lad", "The Queen and Her Knave"),
    )
)
