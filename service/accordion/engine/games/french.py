"""French Solitaire: remove exactly 1 card between a matching pair; one REDEAL when stuck.

Seed 000 (about 0.5 % won): "if the player has no more moves after his first initial
deal, and there are more than two cards remaining ... he may gather all the cards up
still remaining in the layout, shuffle them together, and then deal these cards out
again" — won "after one or two deals". REDEAL is legal only when no removal is,
more than two cards remain and no redeal has been used (spec). The shuffle continues
the game's seeded generator from the state (``State.rng``), so a redeal is fixed by
the seed and the moves before it, and clients can reproduce it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar, final

from ..core import State, Variant, register
from ..fields import COUNT, HEX64, Field
from ..moves import REDEAL, Move, MoveKind, Redeal
from ..rng import SplitMix64
from ..search import Search
from .eliminators import EliminatorRules

MAX_REDEALS = 1
# The generator's state after the deal (and after each redeal): it fixes the next shuffle,
# so it is hidden from players, and written in the full state string even when 0.
RNG = Field("rng", 0, HEX64, tag=1, hidden=True, text_at_default=True)
REDEALS = Field(
    "redeals", 0, COUNT, tag=3, show=lambda n: "redeal used" if n >= MAX_REDEALS else "redeal available"
)


@final
class FrenchRules(EliminatorRules):
    """Exactly 1 card between a matching pair leaves; one seeded redeal of the remaining row."""

    move_kinds = (MoveKind.REMOVE, MoveKind.REDEAL)
    gaps = (1,)
    # The redeal's shuffle draws from the generator after the deal.
    draws_after_deal = True
    MAX_REDEALS = MAX_REDEALS
    fields: ClassVar[tuple[Field[Any], ...]] = (RNG, REDEALS)

    def start(self, cards: list[int], gen: SplitMix64) -> State:
        return RNG.set(super().start(cards, gen), gen.state)

    def legal_moves(self, state: State) -> tuple[Move, ...]:
        out = self.removals(state)
        if not out and len(state.row) > self.WIN_CARDS and REDEALS.get(state) < self.MAX_REDEALS:
            return (REDEAL,)
        return tuple(out)

    def explain(self, state: State, move: Move) -> str | None:
        if isinstance(move, Redeal):
            if REDEALS.get(state) >= self.MAX_REDEALS:
                return "the one redeal is used"
            if self.removals(state):
                return "you may redeal only when no card can be removed"
            return None
        return super().explain(state, move)

    def apply(self, state: State, move: Move) -> State:
        if isinstance(move, Redeal):
            gen = SplitMix64(0)
            gen.state = RNG.get(state)
            cards = [p[0] for p in state.row]  # gathered in row order, then shuffled
            gen.shuffle(cards)
            return self.state(
                tuple((c,) for c in cards), state.stock, rng=gen.state, redeals=REDEALS.get(state) + 1
            )
        return super().apply(state, move)

    def search(self, state: State) -> Search:
        chance_ahead = REDEALS.get(state) < self.MAX_REDEALS and len(state.row) > self.WIN_CARDS
        return replace(super().search(state), chance_ahead=chance_ahead)


register(
    Variant(
        id="french",
        name="French Solitaire",
        rules=FrenchRules,
        description="52 cards face up in a row: remove a card lying between two cards of the same rank "
        "or suit; once, when stuck, shuffle the remaining cards and deal them again; won "
        "when two cards remain (about 0.5 % won).",
    )
)
