"""Push Pin: two decks in one row; remove 1 or 2 cards between a matching pair.

Seed 000 (about 0.05 % won): "played similarly to Royal Marriage" with two 52-card
decks shuffled together, all 104 dealt face up, no fixed cards. Every card value
appears twice (``deck_copies``); two copies of one card match each other.
"""

from __future__ import annotations

from typing import final

from ..core import Variant, register
from .eliminators import EliminatorRules


@final
class PushPinRules(EliminatorRules):
    """104 cards; 1 or 2 cards between a matching pair leave."""

    deck_copies = 2
    gaps = (1, 2)


register(
    Variant(
        id="push-pin",
        name="Push Pin",
        rules=PushPinRules,
        description="Two decks, 104 cards face up in a row: remove one card, or two adjacent cards, "
        "lying between two cards of the same rank or suit, until two cards remain "
        "(about 0.05 % won).",
        aliases=("Push Pin Solitaire", "Pushpin"),
    )
)
