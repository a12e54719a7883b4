"""Royal Marriage: the Queen first, the King last, remove 1 or 2 cards between a matching pair.

Seed 000 (about 19 % won): the King and Queen of Hearts are taken out, the Queen is
dealt first, the other 50 cards shuffled after her, the King last. A card, or two
adjacent cards, between two cards of the same rank or suit leave the row. The ends
never leave (a removed card needs a neighbour on each side), so two cards left are
always the couple. Option ``suit`` (spec) picks the couple's suit; hearts by default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, final

from ..cards import DECK_SIZE, card_text, make_card
from ..core import Option, OptionValue, Variant, register
from ..errors import InvalidDealError
from ..rng import SplitMix64
from .eliminators import EliminatorRules

SUITS = ("spades", "hearts", "diamonds", "clubs")
QUEEN, KING = 12, 13
SUIT = Option("suit", "hearts", SUITS, "the suit of the Queen dealt first and the King dealt last")


@final
class RoyalMarriageRules(EliminatorRules):
    """1 or 2 cards between a matching pair leave; the couple is fixed at the ends."""

    options: ClassVar[tuple[Option, ...]] = (SUIT,)
    gaps = (1, 2)
    suit: str

    def __init__(self, values: Mapping[str, OptionValue]) -> None:
        super().__init__(values)
        self.suit = str(values.get("suit", "hearts"))

    @property
    def couple(self) -> tuple[int, int]:
        """The Queen and the King of the option's suit."""
        s = SUITS.index(self.suit)
        return make_card(QUEEN, s), make_card(KING, s)

    def order_deal(self, gen: SplitMix64) -> list[int]:
        q, k = self.couple
        cards = [c for c in range(DECK_SIZE) if c not in (q, k)]
        gen.shuffle(cards)
        return [q, *cards, k]

    def check_deal(self, cards: list[int]) -> None:
        super().check_deal(cards)
        q, k = self.couple
        if cards[0] != q or cards[-1] != k:
            raise InvalidDealError(
                f"a royal-marriage deal (suit={self.suit}) starts with {card_text(q)} and ends with "
                f"{card_text(k)}; this one starts with {card_text(cards[0])!r} and ends with "
                f"{card_text(cards[-1])!r}"
            )


register(
    Variant(
        id="royal-marriage",
        name="Royal Marriage",
        rules=RoyalMarriageRules,
        description="The Queen of Hearts first, the King of Hearts last, 50 cards between: remove one "
        "card, or two adjacent cards, lying between two cards of the same rank or suit, "
        "until only the couple remains (about 19 % won).",
        aliases=("Royal Marriage Solitaire",),
    )
)
