"""Accordion's Revenge: Accordion that is won only when a goal card, drawn at the start, tops the last pile.

A peer variant from PySolFC (not in the seeds); docs/games.md,
"Accordion's Revenge". Options ``dealing``, ``compel`` and ``leap`` as Accordion; no ``win_piles``
(the win is one pile, by definition).

Readings:

- The goal is drawn right after the deal with the game's generator (the same stream as
  the shuffle, or a fresh ``SplitMix64(seed)`` for an explicit deal):
  ``goal = cards[2 + gen.below(len(cards) - 2)]`` where ``cards`` is the deal order, so it
  is never among the first two cards dealt. Nothing is drawn later, so the generator's
  state is not part of the position (``draws_after_deal`` stays False); the goal is, in
  ``State.goal``, and it is public (``summary`` shows ``goal 7♥``).
- Won only when the stock is empty, one pile holds every card and its top is the goal.
  A game that ends in one pile with another card on top is lost.
- Penalty: cards outside the largest pile (seed 001), but never 0 for a lost game: a
  single final pile without the goal on top scores 1, so 0 still means exactly a win.
"""

from __future__ import annotations

from typing import Any, ClassVar, final

from ..cards import card_text
from ..core import Option, Rules, State, Variant, register
from ..fields import CARD, Field
from ..rng import SplitMix64
from .accordion import COMPEL, DEALING, LEAP, StackingRules

# The goal card, public; -1 before one is drawn.
GOAL = Field("goal", -1, CARD, tag=4, show=lambda g: f"goal {card_text(g, symbols=True)}" if g >= 0 else None)


@final
class AccordionsRevengeRules(StackingRules):
    """Accordion with a goal card that must end on top."""

    options: ClassVar[tuple[Option, ...]] = (DEALING, COMPEL, LEAP)
    fields: ClassVar[tuple[Field[Any], ...]] = (GOAL,)

    def start(self, cards: list[int], gen: SplitMix64) -> State:
        goal = cards[2 + gen.below(len(cards) - 2)]
        return GOAL.set(super().start(cards, gen), goal)

    def goal(self, state: State) -> int:
        return GOAL.get(state)

    def face_up_equivalent(self, state: State) -> tuple[Rules, State] | None:
        # The same cards face up keep the goal: it is part of the deal. Without it the position
        # decided had no goal (any one pile won), and NewGame(winnable_only) could deal a lost game.
        found = super().face_up_equivalent(state)
        if found is None:
            return None
        rules, face_up = found
        return rules, GOAL.set(face_up, GOAL.get(state))

    def is_won(self, state: State) -> bool:
        return not state.stock and len(state.row) == 1 and state.row[0][-1] == GOAL.get(state)

    def penalty(self, state: State) -> int:
        left = super().penalty(state)
        if left == 0 and not self.is_won(state):
            return 1
        return left

    def win_threshold(self) -> str:
        return "1 pile topped by the goal card"


register(
    Variant(
        id="accordions-revenge",
        name="Accordion's Revenge",
        rules=AccordionsRevengeRules,
        description="Accordion with a goal card drawn at the start (never one of the first two "
        "dealt): won only when every card is in one pile topped by the goal.",
        aliases=("Accordion's Revenge",),
    )
)
