"""Accordion: stack a pile onto its left neighbour or the pile three to its left when the tops match.

Seeds 001–004; the options fix the readings on which they disagree
(docs/games.md, "Accordion"). The peer variants
(Relaxed Accordion, Accordion's Revenge, 23 Skidoo) subclass ``StackingRules``
and change only where a pile may go or what counts as a win.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, final

from mypy_extensions import mypyc_attr

from ..cards import DECK_SIZE, MATCH
from ..core import Option, OptionValue, Rules, State, Variant, register
from ..moves import DEAL, Deal, Move, MoveKind, Stack, stack
from ..rng import SplitMix64
from ..search import Search, StackSearch
from ..words import card, no_pile

DEALING = Option(
    "dealing",
    "all",
    ("all", "stock"),
    "all: every card face up from the start; stock: dealt one by one with DEAL",
)
COMPEL = Option(
    "compel",
    "none",
    ("none", "must", "strict"),
    "none: any legal move; must: no DEAL while a STACK is legal; "
    "strict: as must, and a pile that can slide may not leap",
)
LEAP = Option("leap", 3, (3, 2), "how many piles to the left a leap reaches")
WIN_PILES = Option("win_piles", 1, range(1, 53), "a game that ends with this many piles or fewer is won")

# Interned moves by distance: LEFT[d][i] is Stack(i, i - d), RIGHT[d][i] is Stack(i, i + d).
# Rows are at most 104 piles. Entries that point off the row exist only to keep the
# tables dense; the move loops never hand them out.
MAX_ROW = 2 * DECK_SIZE
LEFT = {d: [stack(i, i - d) for i in range(MAX_ROW)] for d in (1, 2, 3)}
RIGHT = {d: [stack(i, i + d) for i in range(MAX_ROW)] for d in (1, 2, 3)}


# A base of games: a game may also be declared in interpreted code (a test, a plug-in); mypyc
# then checks for overrides on each call of its methods (leaf games are @final, and fast).
@mypyc_attr(allow_interpreted_subclasses=True)
class StackingRules(Rules):
    """Piles move whole onto a matching pile a fixed distance away; won in one pile."""

    family = "stacking"
    options: ClassVar[tuple[Option, ...]] = (DEALING, COMPEL, LEAP, WIN_PILES)
    move_kinds = (MoveKind.STACK, MoveKind.DEAL)
    # Moves to the right too (Relaxed Accordion).
    rightward: ClassVar[bool] = False
    dealing: str
    compel: str
    leap: int
    win_piles: int

    def __init__(self, values: Mapping[str, OptionValue]) -> None:
        super().__init__(values)
        # A variant without an option (no ``leap`` in 23 Skidoo, no ``win_piles`` in
        # Accordion's Revenge) has the fixed value.
        self.dealing = str(values.get("dealing", "all"))
        self.compel = str(values.get("compel", "none"))
        self.leap = int(values.get("leap", 3))
        self.win_piles = int(values.get("win_piles", 1))

    @property
    def distances(self) -> tuple[int, int]:
        """The slide and the leap, nearest first."""
        return (1, self.leap)

    def start(self, cards: list[int], gen: SplitMix64) -> State:
        if self.dealing == "stock":
            return self.state(((cards[0],),), tuple(cards[1:]))
        return super().start(cards, gen)

    def stack_moves(self, tops: list[int]) -> list[Move]:
        """Every leftward STACK, by source then nearest destination; ``strict`` keeps only the nearest."""
        near, far = self.distances
        slides, leaps = LEFT[near], LEFT[far]
        strict = self.compel == "strict"
        out: list[Move] = []
        for i in range(near, len(tops)):
            m = MATCH[tops[i]]
            if m[tops[i - near]]:
                out.append(slides[i])
                if strict:
                    continue
            if i >= far and m[tops[i - far]]:
                out.append(leaps[i])
        return out

    def legal_moves(self, state: State) -> tuple[Move, ...]:
        out = self.stack_moves([p[-1] for p in state.row])
        if state.stock and (self.compel == "none" or not out):
            out.append(DEAL)
        return tuple(out)

    def explain(self, state: State, move: Move) -> str | None:
        if isinstance(move, Deal):
            stackable = bool(self.stack_moves([p[-1] for p in state.row]))
            return deal_words(self.dealing, self.compel if stackable else "none", state)
        if not isinstance(move, Stack):
            return None
        row, src, dst = state.row, move.src, move.dst
        for pile in (src, dst):
            if not 0 <= pile < len(row):
                return no_pile(pile + 1, len(row))
        if src == dst:
            return "a pile cannot go onto itself"
        near, far = self.distances
        moving, onto = row[src][-1], row[dst][-1]
        sides = "left or right" if self.rightward else "left"
        where = f"the pile {near} or {far} to its {sides}"
        distance = abs(src - dst) if self.rightward else src - dst
        if distance not in (near, far):
            side = "left" if dst < src else "right"
            return f"{card(moving)} can go only onto {where}; {card(onto)} is {abs(src - dst)} to its {side}"
        if not MATCH[moving][onto]:
            return (
                f"{card(moving)} can go onto {where} when they match in suit or rank: {card(onto)} does not "
                "match"
            )
        if self.compel == "strict" and distance == far:
            neighbours = [src - near] + ([src + near] if self.rightward else [])
            if any(0 <= n < len(row) and MATCH[moving][row[n][-1]] for n in neighbours):
                return (
                    f"{card(moving)} can go onto its neighbour, so it must go there "
                    f"(a pile that can move {near} must not leap {far})"
                )
        return None

    def apply(self, state: State, move: Move) -> State:
        if isinstance(move, Stack):
            row = list(state.row)
            row[move.dst] = row[move.dst] + row[move.src]
            del row[move.src]
            return state._replace(row=tuple(row))
        if isinstance(move, Deal):
            return state._replace(row=state.row + ((state.stock[0],),), stock=state.stock[1:])
        raise TypeError(f"{type(self).__name__} has no move {move!r}")

    def is_won(self, state: State) -> bool:
        return not state.stock and len(state.row) <= self.win_piles

    def penalty(self, state: State) -> int:
        largest = max(map(len, state.row), default=0)
        return DECK_SIZE * self.deck_copies - largest

    def win_threshold(self) -> str:
        return "1 pile" if self.win_piles == 1 else f"{self.win_piles} piles or fewer"

    def goal(self, state: State) -> int:
        """The card that must top the last pile, or -1 for any (Accordion's Revenge has one)."""
        return -1

    def search(self, state: State) -> Search:
        near, far = self.distances
        return StackSearch(
            near=near,
            far=far,
            right=self.rightward,
            strict=self.compel == "strict",
            win_piles=self.win_piles,
            goal=self.goal(state),
        )

    def face_up_equivalent(self, state: State) -> tuple[Rules, State] | None:
        # With compel=none one may deal every card before moving, and every move made while
        # dealing is a move of the open row (piles only move among cards already dealt).
        if self.dealing != "stock" or self.compel != "none":
            return None
        cards = [c for p in state.row for c in p] + list(state.stock)
        open_rules = type(self)({**self.values, "dealing": "all"})
        return open_rules, open_rules.state(tuple((c,) for c in cards))


def deal_words(dealing: str, compel: str, state: State) -> str | None:
    """Why DEAL is refused in a stacking game (Bayan too); ``compel`` is "none" when no pile can
    be stacked now."""
    if not state.stock:
        return (
            "the stock is empty"
            if dealing == "stock"
            else "there is no stock: every card was dealt at the start"
        )
    if compel != "none":
        return "while a pile can be stacked, it must be before the next card is dealt"
    return None


@final
class AccordionRules(StackingRules):
    """Accordion with every option of the spec."""


register(
    Variant(
        id="accordion",
        name="Accordion",
        rules=AccordionRules,
        description="All 52 cards face up in a row; stack a pile onto the pile 1 or 3 to its left "
        "when the top cards match in rank or suit, until one pile holds every card.",
        aliases=("Accordion Solitaire", "Tower of Babel", "Methuselah", "Leapfrog"),
    )
)
register(
    Variant(
        id="accordion-stock",
        name="Accordion (dealt one by one)",
        rules=AccordionRules,
        description="Accordion dealt one card at a time from the stock; deal whenever you like.",
        preset={"dealing": "stock"},
    )
)
register(
    Variant(
        id="compacted",
        name="Compacted Accordion",
        rules=AccordionRules,
        description="Accordion dealt one by one where every available stack must be made before "
        "the next card is dealt (about 0.05 % won).",
        aliases=("Compacted Initial Deal",),
        preset={"dealing": "stock", "compel": "must"},
    )
)
register(
    Variant(
        id="idle-year",
        name="The Idle Year",
        rules=AccordionRules,
        description="Dick's 1883 rules: dealt one by one, a pile must move if it can, and to its "
        "nearest neighbour when it has the choice.",
        aliases=("The Idle Year",),
        preset={"dealing": "stock", "compel": "strict"},
    )
)
