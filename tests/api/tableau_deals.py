"""Explicit deals of the tableau games that are known to be won, built from the spec's dealing
rules (variants.md, "The other games of seed 004"), and the way to win each.

Each deal is made from the piles it should produce (bottom → top) and the stock (drawn first
first), then laid out in the order the game deals: the service gets only the card list. A deal
whose winning line is "any move to the foundations (or any pair), else turn the stock" is
``greedy``; Spider's line is a list of moves written here (``spider_win``).

Cards are the engine's numbers: suit ♠ ♥ ♦ ♣ = 0..3, ``card = suit * 13 + rank - 1``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from accordion.engine.cards import card_text


def card(rank: int, suit: int) -> int:
    return suit * 13 + rank - 1


@dataclass(frozen=True)
class Deal:
    variant: str
    options: dict[str, str]
    cards: tuple[int, ...]
    moves: tuple[str, ...] = ()  # the winning line as notation; empty: play greedily
    hidden: bool = True  # whether the deal has face-down cards (or a stock)

    @property
    def texts(self) -> list[str]:
        return [card_text(c) for c in self.cards]


def by_rows(piles: list[list[int]], rows: Callable[[int], list[int]]) -> list[int]:
    """The deal order of ``piles`` when round ``r`` deals one card to each pile of ``rows(r)``."""
    out, depth = [], [0] * len(piles)
    r = 0
    while any(depth[p] < len(piles[p]) for p in range(len(piles))):
        for p in rows(r):
            if depth[p] < len(piles[p]):
                out.append(piles[p][depth[p]])
                depth[p] += 1
        r += 1
    return out


def sorted_piles(cards: list[int], sizes: list[int]) -> list[list[int]]:
    """``cards`` (in the order they must reach the foundations) dealt round the piles, each
    pile with its first card on top: the next card due is always a top card."""
    piles: list[list[int]] = [[] for _ in sizes]
    p = 0
    for c in cards:
        while len(piles[p]) == sizes[p]:
            p = (p + 1) % len(sizes)
        piles[p].append(c)
        p = (p + 1) % len(sizes)
    return [pile[::-1] for pile in piles]


def _in_order(ranks: range, copies: int = 1) -> list[int]:
    """Cards rank by rank, suit by suit within a rank (each ``copies`` times)."""
    return [card(r, s) for r in ranks for s in range(4) for _ in range(copies)]


def klondike_win(draw: int) -> Deal:
    """The stock holds A–6 of every suit, turned up in foundation order; the tableau 7–K,
    each pile with its lowest card on top."""
    stock = _in_order(range(1, 7))
    if draw == 3:  # each DRAW of three shows its last card: reverse each three
        stock = [c for i in range(0, 24, 3) for c in reversed(stock[i : i + 3])]
    piles = sorted_piles(_in_order(range(7, 14)), list(range(1, 8)))
    tableau = by_rows(piles, lambda r: list(range(r, 7)) if r < 7 else [])
    variant = "klondike" if draw == 3 else "klondike-draw-one"
    return Deal(variant, {}, tuple(tableau + stock))


def emperor_win() -> Deal:
    """The stock (64) holds both decks' A–8, turned up in foundation order; the tableau (ten
    piles of four) 9–K, each pile with its lowest card on top."""
    stock = _in_order(range(1, 9), copies=2)
    piles = sorted_piles(_in_order(range(9, 14), copies=2), [4] * 10)
    tableau = by_rows(piles, lambda r: list(range(10)))
    return Deal("emperor", {}, tuple(tableau + stock))


def streets_win() -> Deal:
    """Every row with its lowest card outermost. Card k goes to column k div 4, row k mod 4
    (+4 in the odd columns): rows 1–4 get seven cards, rows 5–8 six."""
    piles = sorted_piles(_in_order(range(1, 14)), [7, 7, 7, 7, 6, 6, 6, 6])
    tableau = by_rows(piles, lambda r: [0, 1, 2, 3] if r % 2 == 0 else [4, 5, 6, 7])
    return Deal("streets-and-alleys", {}, tuple(tableau), hidden=False)


def wish_win() -> Deal:
    """Piles 1–4 are A 7 8 9 of one suit each, piles 5–8 10 J Q K: tops pair off level by level."""
    piles = [[card(r, s) for r in (1, 7, 8, 9)] for s in range(4)]
    piles += [[card(r, s) for r in (10, 11, 12, 13)] for s in range(4)]
    return Deal("wish", {}, tuple(c for pile in piles for c in pile))


@dataclass
class _SpiderPlan:
    """Spider (layout seed, 1 or 4 suits): which run (0..7) each card ends in decides its suit."""

    suits: int
    piles: list[list[tuple[int, int]]] = field(default_factory=lambda: [[] for _ in range(10)])

    def c(self, rank: int, run: int) -> int:
        return card(rank, 0 if self.suits == 1 else run % 4)


def spider_win(suits: int = 4) -> Deal:
    """Ten piles of five (four face down), the stock's six DEALs, and a line that lifts off all
    eight suits. The face-down groups are ascending (bottom → top), so each one, once exposed,
    goes card by card onto a run one rank higher (or stays to be taken later), emptying its pile;
    empty piles take whole runs (K…8) so the groups under them come free.

    Runs R0..R7 are built on the Kings that top piles 1–8; the DEALs give them Q, J, 10, 9, 8
    and piles 1–4 a 7; piles 9 and 10 get A, 2 … 6 (face up) for R0 and R1.
    """
    p = _SpiderPlan(suits)
    c = p.c
    hidden = [  # bottom → top, four face-down cards per pile
        [c(1, 3), c(2, 3), c(1, 2), c(2, 2)],  # P1: 2,A → R2; 2,A → R3
        [c(1, 4), c(2, 4), c(3, 5), c(3, 4)],  # P2: 3 → R4, 3 → R5, 2,A → R4
        [c(1, 5), c(2, 5), c(3, 7), c(3, 6)],  # P3: 3 → R6, 3 → R7, 2,A → R5
        [c(1, 6), c(1, 7), c(2, 7), c(2, 6)],  # P4: 2 → R6, 2,A → R7, A → R6
        [c(r, 4) for r in (4, 5, 6, 7)],  # P5 → R4
        [c(r, 5) for r in (4, 5, 6, 7)],  # P6 → R5
        [c(r, 6) for r in (4, 5, 6, 7)],  # P7 → R6
        [c(r, 7) for r in (4, 5, 6, 7)],  # P8 → R7
        [c(r, 2) for r in (3, 4, 5, 6)],  # P9 → R2
        [c(r, 3) for r in (3, 4, 5, 6)],  # P10 → R3
    ]
    tops = [c(13, run) for run in range(8)] + [c(1, 0), c(1, 1)]
    first = [card_ for row in range(4) for card_ in (hidden[p_][row] for p_ in range(10))]
    first += tops
    stock: list[int] = []
    for deal, rank in enumerate((12, 11, 10, 9, 8)):
        stock += [c(rank, run) for run in range(8)] + [c(deal + 2, 0), c(deal + 2, 1)]
    stock += [c(7, run) for run in range(4)]
    moves = ["deal"] * 6
    moves += ["9>1"] * 6 + ["10>2"] * 6  # A..6 onto R0 and R1: both lift off
    moves += ["9>3"] * 4 + ["10>4"] * 4  # 6..3 onto R2 (pile 3) and R3 (pile 4): piles 9, 10 empty
    moves += ["1>3", "1>3", "1>4", "1>4"]  # 2, A: R2 lifts; 2, A: R3 lifts; pile 1 empty
    moves += ["5>1", "6>9", "7>10"]  # R4, R5, R6 (K..8) into the empty piles
    moves += ["5>1"] * 4  # 7..4 onto R4: pile 5 empty
    moves += ["8>5"]  # R7 into pile 5
    moves += ["6>9"] * 4 + ["7>10"] * 4 + ["8>5"] * 4  # onto R5, R6, R7
    moves += ["2>1", "2>9", "2>1", "2>1"]  # 3 → R4, 3 → R5, 2, A → R4 lifts
    moves += ["3>10", "3>5", "3>9", "3>9"]  # 3 → R6, 3 → R7, 2, A → R5 lifts
    moves += ["4>10", "4>5", "4>5", "4>10"]  # 2 → R6, 2 → R7, A → R7 lifts, A → R6 lifts
    options = {"suits": str(suits)} if suits != 4 else {}
    return Deal("spider", options, tuple(first + stock), tuple(moves))


WINS: dict[str, Callable[[], Deal]] = {
    "klondike": lambda: klondike_win(3),
    "klondike-draw-one": lambda: klondike_win(1),
    "emperor": emperor_win,
    "spider": spider_win,
    "streets-and-alleys": streets_win,
    "wish": wish_win,
}
HIDDEN_VARIANTS = ["klondike", "klondike-draw-one", "emperor", "spider", "wish"]
