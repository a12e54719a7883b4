"""Small late-game positions of Emperor and Spider, and the brute force that decides them with
nothing but the engine's own rules: what the two-deck searches' verdicts are checked against
(test_emperor_spider.py, test_spider.py)."""

from __future__ import annotations

import random

from accordion.engine.core import Rules, State
from accordion.engine.tableau import DOWN, FOUNDATIONS, TABLEAU, WASTE

from .helpers import search_every_move


def brute_force(rules: Rules, state: State, limit: int = 4_000) -> bool | None:
    """Whether the position can be won: depth-first through every legal move, positions seen once.
    With no stock left the piles' order is left out of the position seen (no rule then names a
    pile: only a DEAL puts card j on pile j), which keeps Spider's many spaces small enough."""

    def key(s: State) -> object:
        if s.stock:
            return s
        return tuple(sorted(zip(DOWN.get(s), TABLEAU.get(s)))), FOUNDATIONS.get(s), WASTE.get(s)

    return search_every_move(rules, state, limit, key)


def small_emperor(rules: Rules, rng: random.Random) -> State:
    """A late-game Emperor position: two suits open (both their foundations up to a random rank
    7..12), the others complete; the cards left over the ten piles (one each first, the ones
    under the top face down), the waste and the stock."""
    open_suits = rng.sample(range(4), 2)
    heights = [rng.randint(7, 12) if f % 4 in open_suits else 13 for f in range(8)]
    out = [f % 4 * 13 + r for f in range(8) for r in range(heights[f], 13)]
    rng.shuffle(out)
    piles: list[list[int]] = [[] for _ in range(10)]
    waste: list[int] = []
    stock: list[int] = []
    for j, card in enumerate(out):
        where = rng.random()
        (
            piles[j]
            if j < 10
            else waste
            if where < 0.2
            else stock
            if where < 0.5
            else piles[rng.randrange(10)]
        ).append(card)
    state = rules.layout(
        tuple(map(tuple, piles)), tuple(max(0, len(p) - 1) for p in piles), tuple(stock), foundations=8
    )
    foundations = tuple(tuple(f % 4 * 13 + r for r in range(heights[f])) for f in range(8))
    return state._replace(foundations=foundations, waste=tuple(waste))


def small_spider(rules: Rules, rng: random.Random, suits: int) -> State:
    """A late-game Spider position: seven suits lifted off, the eighth's cards over a few piles
    (some face down) and a stock of 0, 4 or 10 (with fewer than ten cards on the tableau no DEAL
    can ever be made: lost, which the search must prove by exhausting every move)."""
    kinds = [k % suits for k in range(8)]
    rng.shuffle(kinds)
    out = [kinds[7] * 13 + r for r in range(13)]
    rng.shuffle(out)
    stock_size = rng.choice((0, 0, 4, 10))
    stock, rest = out[:stock_size], out[stock_size:]
    piles: list[list[int]] = [[] for _ in range(10)]
    for card in rest:
        piles[rng.randrange(4)].append(card)
    down = tuple(rng.randint(max(0, len(p) - 3), max(0, len(p) - 1)) for p in piles)
    state = rules.layout(tuple(map(tuple, piles)), down, tuple(stock), foundations=8)
    foundations = tuple(
        tuple(kinds[k] * 13 + r for r in reversed(range(13))) if k < 7 else () for k in range(8)
    )
    return state._replace(foundations=foundations)
