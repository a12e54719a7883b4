"""Concertina: when 1 or 2 cards lie between a matching pair, the pair leaves and the middle stays.

Seed 000: "the two surrounding cards are removed, leaving the middle card intact"
(and likewise around two adjacent cards). A REMOVE names the two outer cards:
``x6,8`` keeps the card at 7, ``x6,9`` keeps 7-8. Unlike the other eliminators the
ends of the row can leave. Every move takes two cards, so a 52-card game goes
52 → 50 → … → 2 and is won when two cards remain.
"""

from __future__ import annotations

from typing import final

from ..core import Variant, register
from .eliminators import EliminatorRules


@final
class ConcertinaRules(EliminatorRules):
    """The matching pair around 1 or 2 cards leaves; the cards between stay."""

    gaps = (1, 2)
    outer = True


register(
    Variant(
        id="concertina",
        name="Concertina",
        rules=ConcertinaRules,
        description="52 cards face up in a row: when one card, or two adjacent cards, lie between two "
        "cards of the same rank or suit, those two outer cards are removed and the middle "
        "stays, until two cards remain.",
        aliases=("Concertina Solitaire",),
    )
)
