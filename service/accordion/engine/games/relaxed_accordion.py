"""Relaxed Accordion: Accordion where a pile may also move right, onto the pile 1 or 3 places on.

A peer variant from PySolFC (not in the seeds); docs/games.md, "Relaxed
Accordion". Everything else is Accordion's, options included (``dealing``, ``compel``,
``leap``, ``win_piles``).

Readings:

- ``leap`` sets the long distance on both sides (3, or 2).
- ``compel=strict``: a pile that can move the short distance, to either side, may not
  move the long distance to either side (Dick's "nearest neighbour" applied both ways).
  It may still choose between its left and right neighbour.
- Legal STACKs come out by source pile, then left-near, right-near, left-far, right-far;
  DEAL (when legal) last, as in Accordion.
"""

from __future__ import annotations

from typing import final

from ..cards import DECK_SIZE, MATCH
from ..core import Variant, register
from ..moves import Move
from .accordion import LEFT, RIGHT, StackingRules

# A sentinel card beyond either end of the row that matches nothing, so the loop needs no bounds tests.
_NONE = DECK_SIZE
_MATCH_X: tuple[tuple[bool, ...], ...] = tuple(r + (False,) for r in MATCH) + ((False,) * (DECK_SIZE + 1),)


@final
class RelaxedAccordionRules(StackingRules):
    """Accordion with rightward moves too."""

    rightward = True

    def stack_moves(self, tops: list[int]) -> list[Move]:
        """Every STACK, by source: left-near, right-near, left-far, right-far (``strict``: near only
        if any)."""
        near, far = self.distances
        ln, rn, lf, rf = LEFT[near], RIGHT[near], LEFT[far], RIGHT[far]
        pad = [_NONE] * far
        t = pad + tops + pad  # tops[i] is t[i + far]
        strict = self.compel == "strict"
        out: list[Move] = []
        append = out.append
        for i in range(len(tops)):
            j = i + far
            m = _MATCH_X[t[j]]
            if strict:
                moved = False
                if m[t[j - near]]:
                    append(ln[i])
                    moved = True
                if m[t[j + near]]:
                    append(rn[i])
                    moved = True
                if moved:
                    continue
            else:
                if m[t[j - near]]:
                    append(ln[i])
                if m[t[j + near]]:
                    append(rn[i])
            if m[t[j - far]]:
                append(lf[i])
            if m[t[j + far]]:
                append(rf[i])
        return out


register(
    Variant(
        id="relaxed-accordion",
        name="Relaxed Accordion",
        rules=RelaxedAccordionRules,
        description="Accordion where a pile may move onto the pile 1 or 3 places to its left "
        "or to its right when the top cards match.",
    )
)
