"""23 Skidoo: Accordion where a pile moves 2 or 3 piles to the left instead of 1 or 3.

A peer variant from PySolFC (not in the seeds); docs/games.md, "23
Skidoo". Options ``dealing``, ``compel`` and ``win_piles`` (no ``leap``: the distances
are fixed).

Readings:

- ``win_piles`` defaults to 2, in the option itself: piles 2 apart or more can never make
  one pile out of the last two, so one pile is out of reach.
- ``compel=strict``: a pile that can move 2 may not move 3 (2 is its nearest reach).
- Penalty: cards outside the largest pile, as every stacking game (seed 001), so a win
  with two piles scores the smaller pile's size, the same as Accordion with ``win_piles``.
"""

from __future__ import annotations

from typing import ClassVar, final

from ..core import Option, Variant, register
from .accordion import COMPEL, DEALING, StackingRules

WIN_PILES_2 = Option("win_piles", 2, range(1, 53), "a game that ends with this many piles or fewer is won")


@final
class TwentyThreeSkidooRules(StackingRules):
    """Stacking at distances 2 and 3."""

    options: ClassVar[tuple[Option, ...]] = (DEALING, COMPEL, WIN_PILES_2)

    @property
    def distances(self) -> tuple[int, int]:
        return (2, 3)


register(
    Variant(
        id="23-skidoo",
        name="23 Skidoo",
        rules=TwentyThreeSkidooRules,
        description="Accordion where a pile moves onto the pile 2 or 3 places to its left when "
        "the top cards match; won with two piles.",
        aliases=("23 Skidoo", "Twenty-Three Skidoo"),
    )
)
