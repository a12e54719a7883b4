"""Double Jump: remove exactly two adjacent cards lying between a matching pair.

Seed 000 (about 0.04 % won): "Any two cards ... may be removed ... if they are
surrounded, on the right and left, of two other cards" of the same suit or rank.
Read, as the spec does, as two adjacent cards, and only two: a single card between
a matching pair does not go.
"""

from __future__ import annotations

from typing import final

from ..core import Variant, register
from .eliminators import EliminatorRules


@final
class DoubleJumpRules(EliminatorRules):
    """Exactly 2 cards between a matching pair leave."""

    gaps = (2,)


register(
    Variant(
        id="double-jump",
        name="Double Jump",
        rules=DoubleJumpRules,
        description="52 cards face up in a row: remove two adjacent cards lying between two cards "
        "of the same rank or suit, until two cards remain (about 0.04 % won).",
        aliases=("Double Jump Solitaire",),
    )
)
