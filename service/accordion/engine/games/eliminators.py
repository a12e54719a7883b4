"""The eliminators' shared rules: REMOVE a run of cards lying between a matching pair.

Seed 000 (Royal Marriage, Push Pin, Double Jump, French, Concertina) and seed 002
(The Queen and Her Lad); docs/games.md, "The eliminators". Every pile
is one card; removed cards leave play (``discards``). The games differ only in how many
cards may lie between the pair (``gaps``), whether the middle or the outer pair leaves
(``outer``), and a few hooks (fixed cards in the deal, French's redeal, QHL's stock).

Legal moves come out ordered by their leftmost removed position, then shorter first.
"""

from __future__ import annotations

from typing import ClassVar

from mypy_extensions import mypyc_attr

from ..cards import DECK_SIZE, MATCH
from ..core import Row, Rules, State
from ..moves import Move, MoveKind, Remove, remove
from ..search import Removal, RemoveSearch, Search
from ..words import card, cards_count, no_pile

# The longest row any eliminator has (Push Pin's two decks).
MAX_ROW = 2 * DECK_SIZE
# A sentinel card past the row's right end that matches nothing, so the hot loop needs no bounds test.
_NONE = DECK_SIZE
_MATCH_X: tuple[tuple[bool, ...], ...] = tuple(row + (False,) for row in MATCH)

# Interned moves keyed by the position of the pair's left card i.
# Inner (the cards between leave): 1 between → remove(i+1); 2 between → remove(i+1, i+2).
INNER1 = tuple(remove(i + 1) for i in range(MAX_ROW))
_INNER2 = tuple(remove(i + 1, i + 2) for i in range(MAX_ROW))
# Outer (Concertina: the pair leaves, the middle stays): remove(i, i+2) or remove(i, i+3).
_OUTER1 = tuple(remove(i, i + 2) for i in range(MAX_ROW))
_OUTER2 = tuple(remove(i, i + 3) for i in range(MAX_ROW))


def removals(tops: list[int], one: bool, two: bool, outer: bool = False) -> list[Move]:
    """Every REMOVE with one (``one``) or two (``two``) cards between a matching pair.

    ``outer`` names the pair itself as the cards that leave (Concertina). Either way
    the moves of one pair's left card share their leftmost removed position, and the
    shorter comes first, so scanning left cards in order gives the documented order.
    """
    n = len(tops)
    if n < 3:
        return []
    s1, s2 = (_OUTER1, _OUTER2) if outer else (INNER1, _INNER2)
    t = tops + [_NONE]
    out: list[Move] = []
    append = out.append
    if one and two:
        for i, a, c, d in zip(range(n - 2), t, t[2:], t[3:]):
            m = _MATCH_X[a]
            if m[c]:
                append(s1[i])
            if m[d]:
                append(s2[i])
    elif one:
        for i, a, c in zip(range(n - 2), t, t[2:]):
            if _MATCH_X[a][c]:
                append(s1[i])
    elif two:
        for i, a, d in zip(range(n - 3), t, t[3:]):
            if _MATCH_X[a][d]:
                append(s2[i])
    return out


def without(row: Row, positions: tuple[int, ...]) -> Row:
    """``row`` with the piles at ``positions`` (ascending) taken out; the gaps close."""
    out = row[: positions[0]]
    for a, b in zip(positions, positions[1:]):
        if b > a + 1:
            out += row[a + 1 : b]
    return out + row[positions[-1] + 1 :]


# A base of games: a game may also be declared in interpreted code (a test, a plug-in); mypyc
# then checks for overrides on each call of its methods (leaf games are @final, and fast).
@mypyc_attr(allow_interpreted_subclasses=True)
class EliminatorRules(Rules):
    """Cards dealt face up in one row; REMOVE cards lying between a matching pair; won at two cards.

    Subclasses set ``gaps`` (how many cards may lie between the pair) and ``outer``.
    """

    family = "eliminator"
    discards = True
    move_kinds: ClassVar[tuple[MoveKind, ...]] = (MoveKind.REMOVE,)
    # How many cards may lie between the matching pair: a subset of (1, 2).
    gaps: ClassVar[tuple[int, ...]] = (1, 2)
    # True when the matching pair leaves and the cards between stay (Concertina).
    outer: ClassVar[bool] = False
    # The cards a win leaves in play.
    WIN_CARDS: ClassVar[int] = 2

    def removals(self, state: State) -> list[Move]:
        """The legal REMOVE moves, in the documented order."""
        return removals([p[0] for p in state.row], 1 in self.gaps, 2 in self.gaps, self.outer)

    def legal_moves(self, state: State) -> tuple[Move, ...]:
        return tuple(self.removals(state))

    def explain(self, state: State, move: Move) -> str | None:
        if not isinstance(move, Remove):
            return None
        tops = [p[0] for p in state.row]
        positions = move.positions
        for p in positions:
            if not 0 <= p < len(tops):
                return no_pile(p + 1, len(tops), "card")
        if self.outer:  # Concertina: the REMOVE names the matching pair itself
            between = positions[-1] - positions[0] - 1
            if len(positions) != 2 or between not in self.gaps:
                return f"name the two matching cards with {self.gap_text()} between them"
            a, b = tops[positions[0]], tops[positions[1]]
            return None if MATCH[a][b] else f"{card(a)} and {card(b)} do not match in suit or rank"
        if any(b != a + 1 for a, b in zip(positions, positions[1:])):
            return "the cards that go must lie side by side"
        words = self.between_words(tops, positions)
        if words is not None:
            return words
        left, right = positions[0] - 1, positions[-1] + 1
        them = "it" if len(positions) == 1 else "them"
        if left < 0 or right >= len(tops):
            return (
                f"cards go only from between a matching pair: {them} {'needs' if them == 'it' else 'need'} "
                "a card on each side"
            )
        a, b = tops[left], tops[right]
        if not MATCH[a][b]:
            return f"{card(a)} and {card(b)} around {them} do not match in suit or rank"
        return None

    def gap_text(self) -> str:
        """``1 or 2 cards``, ``exactly 1 card``."""
        if len(self.gaps) > 1:
            return " or ".join(map(str, self.gaps)) + " cards"
        return "exactly " + cards_count(self.gaps[0])

    def between_words(self, tops: list[int], positions: tuple[int, ...]) -> str | None:
        """Why these cards (side by side) may not go as the cards between a pair, whatever the pair."""
        if len(positions) not in self.gaps:
            return f"{'only ' if len(self.gaps) > 1 else ''}{self.gap_text()} between a matching pair can go"
        return None

    def apply(self, state: State, move: Move) -> State:
        if isinstance(move, Remove):
            return state._replace(row=without(state.row, move.positions))
        raise TypeError(f"{type(self).__name__} has no move {move!r}")

    def is_won(self, state: State) -> bool:
        # "Only two cards remain". Fewer counts too: a position loaded from a state
        # string with an odd count can reach one card in Concertina.
        return not state.stock and len(state.row) <= self.WIN_CARDS

    def penalty(self, state: State) -> int:
        """Cards in play (row and stock) beyond the two a win leaves."""
        return max(0, len(state.row) + len(state.stock) - self.WIN_CARDS)

    def win_threshold(self) -> str:
        return f"{self.WIN_CARDS} cards"

    def search(self, state: State) -> Search:
        return RemoveSearch(
            removal=Removal.OUTER if self.outer else Removal.INNER,
            one=1 in self.gaps,
            two=2 in self.gaps,
            win_cards=self.WIN_CARDS,
        )
