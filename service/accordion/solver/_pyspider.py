"""The Spider search in pure Python: ``_cspider.c`` step for step (docs/solver.md, "Spider").

Same position data, same move order, same node counting, same cut-offs, so with a node budget
both return the same verdict, the same moves and the same node count. The table of positions
seen is keyed by the exact canonical position (C uses two 64-bit hashes of the same form).
"""

from __future__ import annotations

import time

import sys

from ._pycommon import Stop as _Stop, beam as _beam, rank as _rank
from ._pysolver import LOST, UNKNOWN, WON

MAXDEPTH = 1000
MAXPILE = 104  # the compiled core's room per pile: a move past it is not searched (hand-made positions only)
QUICK_NODES = 1_000_000  # positions of the quick pass, which looks for a win only
NARROW_BEAMS = (16, 32, 64)  # beam widths before the quick pass (cheap)
WIDE_BEAMS = (128, 256, 512, 1024, 2048, 4096, 8192)  # and after it
PILES = 10
SUIT = 13
PRIORITIES = 7

# The beam pass's worth of a position (docs/solver.md, "Spider"; only the order matters).
W_FOUND, W_DOWN, W_SPACE, W_SUITED, W_RANKED, W_BREAK = 400, 12, 30, 10, 4, 6

# Zones of the primitive moves handed back (as in _cklondike.c): a DEAL comes from the stock.
Z_TAB, Z_STOCK = 0, 2
DEAL_MOVE = (Z_STOCK, 0, Z_TAB, 0, 0)

# Moves: (src, dst, count); src -1 is the DEAL.
Move = tuple[int, int, int]
DEAL: Move = (-1, 0, 0)

# Move classes, tried in this order (docs/solver.md): onto a card of its suit one rank higher,
# a whole unit that turns a card, a whole unit that empties its pile, a whole unit off a card
# it was not built on, into a space, the rest, the DEAL.
P_SUIT, P_TURN, P_EMPTY, P_FREE, P_SPACE, P_REST, P_DEAL = range(PRIORITIES)


class _Pos:
    """Piles (lists of cards), down counts, the stock (dealt from the front), suits lifted off."""

    __slots__ = ("piles", "down", "stock", "found")

    def __init__(self, piles: list[list[int]], down: list[int], stock: list[int], found: int) -> None:
        self.piles = piles
        self.down = down
        self.stock = stock
        self.found = found

    def copy(self) -> _Pos:
        return _Pos([list(p) for p in self.piles], list(self.down), self.stock, self.found)


def unit_length(pile: list[int], down: int) -> int:
    n, up = 1, len(pile) - down
    while n < up:
        card = pile[-n]
        if _rank(card) == 13 or pile[-n - 1] != card + 1:
            break
        n += 1
    return n


class _Search:
    def __init__(self, max_nodes: int, max_seconds: float, stop: bytearray | None) -> None:
        self.max_nodes = max_nodes
        self.deadline = time.monotonic() + max_seconds if max_seconds > 0 else 0.0
        self.stop = stop
        self.nodes = 0
        self.truncated = False
        self.quick = False  # the first pass: unproven cuts, so only a win it finds counts
        self.stopped = False  # by the clock or the caller, not by a node limit
        self.seen: set[tuple[object, ...]] = set()
        self.path: list[Move] = []

    def restart(self) -> None:
        """Forget the quick pass: its table of positions seen and its line (``quick_then_full``)."""
        self.seen.clear()
        self.path.clear()

    def gen_moves(self, s: _Pos) -> list[Move]:
        piles, down = s.piles, s.down
        spaces = [j for j, p in enumerate(piles) if not p]
        if s.stock or not spaces:
            targets = spaces  # with a DEAL to come, which pile is which matters
        else:
            targets = spaces[:1]  # no DEAL ahead: the piles are a multiset, every space alike
        by_class: list[list[Move]] = [[] for _ in range(PRIORITIES)]
        quick = self.quick
        for i, pile in enumerate(piles):
            n = len(pile)
            if not n:
                continue
            u = unit_length(pile, down[i])
            for k in range(1, u + 1):
                x = pile[n - k]
                whole = k == u
                rest = n - k
                reveals = whole and rest == down[i] and rest > 0
                empties = rest == 0
                below = pile[rest - 1] if rest > down[i] else -1  # the face-up card under it
                natural = below >= 0 and _rank(below) == _rank(x) + 1
                for j, other in enumerate(piles):
                    if j == i or not other or _rank(other[-1]) != _rank(x) + 1:
                        continue
                    if other[-1] == x + 1 and below != x + 1:
                        cls = P_SUIT
                    elif reveals:
                        cls = P_TURN
                    elif empties:
                        cls = P_EMPTY
                    elif whole and not natural:
                        cls = P_FREE
                    else:
                        cls = P_REST
                    if quick and cls == P_REST:
                        continue
                    by_class[cls].append((i, j, k))
                if empties and not s.stock:
                    continue  # a whole pile into a space: the same position
                for j in targets:
                    cls = P_SPACE if reveals or (whole and not natural and not empties) else P_REST
                    if quick and cls == P_REST:
                        continue
                    by_class[cls].append((i, j, k))
        if s.stock and not spaces:
            by_class[P_DEAL].append(DEAL)
        return [m for moves in by_class for m in moves]

    @staticmethod
    def key(s: _Pos) -> tuple[object, ...]:
        piles = [(s.down[i], tuple(p)) for i, p in enumerate(s.piles)]
        if not s.stock:
            piles.sort()  # no DEAL ahead: the piles' order never matters
        return tuple(piles), len(s.stock)

    def count_node(self) -> None:
        """One more position; raises ``_Stop`` past the node budget, the clock or the stop flag."""
        self.nodes += 1
        if self.max_nodes and self.nodes > self.max_nodes:
            raise _Stop
        if (self.nodes & 1023) == 0 and (
            (self.stop is not None and self.stop[0]) or (self.deadline and time.monotonic() > self.deadline)
        ):
            self.stopped = True
            raise _Stop

    def dfs(self, s: _Pos) -> bool:
        self.count_node()
        if _won(s):
            return True
        k = self.key(s)
        if k in self.seen:
            return False
        self.seen.add(k)
        if len(self.path) >= MAXDEPTH:
            self.truncated = True
            return False
        for mv in self.gen_moves(s):
            if not _fits(s, mv):
                continue
            child = s.copy()
            apply(child, mv)
            self.path.append(mv)
            if self.dfs(child):
                return True
            self.path.pop()
        return False


    def beam(self, root: _Pos, width: int) -> bool:
        """One beam of ``width`` from the root over the quick pass's moves (as C's ``beam``,
        through ``_pycommon.beam``): True with the line in ``self.path``; False when a layer is
        empty or MAXDEPTH is reached."""
        self.seen.clear()
        self.seen.add(self.key(root))

        def child(pos: _Pos, mv: Move) -> _Pos:
            made = pos.copy()
            apply(made, mv)
            return made

        def keep(pos: _Pos, depth: int) -> bool:
            k = self.key(pos)
            if k in self.seen:
                return False
            self.seen.add(k)
            return True

        def moves(pos: _Pos, depth: int) -> list[Move]:
            return [mv for mv in self.gen_moves(pos) if _fits(pos, mv)]

        line = _beam(root, width, MAXDEPTH, moves, child, lambda pos: self.count_node(), _won, worth, keep)
        if line is None:
            return False
        self.path = line
        return True


def _won(s: _Pos) -> bool:
    return not s.stock and not any(s.piles)


def worth(s: _Pos) -> int:
    """Suits lifted off, face-down cards, spaces, and each face-up card on another: built in suit,
    on the rank only, or a break (as C's ``worth``)."""
    v = W_FOUND * s.found
    for pile, d in zip(s.piles, s.down):
        if not pile:
            v += W_SPACE
            continue
        v -= W_DOWN * d
        for j in range(d + 1, len(pile)):
            lo, hi = pile[j - 1], pile[j]
            if lo == hi + 1 and _rank(hi) != 13:
                v += W_SUITED
            elif _rank(lo) == _rank(hi) + 1:
                v += W_RANKED
            else:
                v -= W_BREAK
    return v


def _fits(s: _Pos, mv: Move) -> bool:
    if mv[0] < 0:
        return all(len(p) < MAXPILE for p in s.piles)
    return len(s.piles[mv[1]]) + mv[2] <= MAXPILE


def _turn_up(s: _Pos, i: int) -> None:
    if s.piles[i] and s.down[i] >= len(s.piles[i]):
        s.down[i] = len(s.piles[i]) - 1


def _lift_off(s: _Pos, j: int) -> None:
    """A full suit, K deepest and A on top, on top of pile j leaves it; the card under turns up."""
    pile = s.piles[j]
    if len(pile) - s.down[j] < SUIT or _rank(pile[-1]) != 1:
        return
    ace = pile[-1]
    for k in range(1, SUIT):
        if pile[-1 - k] != ace + k:
            return
    del pile[-SUIT:]
    s.found += 1
    _turn_up(s, j)


def apply(s: _Pos, mv: Move) -> None:
    src, dst, count = mv
    if src < 0:
        n = min(PILES, len(s.stock), len(s.piles))
        for j in range(n):
            s.piles[j].append(s.stock[j])
        s.stock = s.stock[n:]
        for j in range(n):
            _lift_off(s, j)
        return
    run = s.piles[src][-count:]
    del s.piles[src][-count:]
    s.piles[dst].extend(run)
    _turn_up(s, src)
    _lift_off(s, dst)


def expand(path: list[Move]) -> list[tuple[int, int, int, int, int]]:
    """The moves of a win as primitive moves (a lift-off is part of the move that makes it)."""
    return [DEAL_MOVE if src < 0 else (Z_TAB, src, Z_TAB, dst, count) for src, dst, count in path]


def spider_solve(piles: list[bytes], downs: list[int], found: int, stock: bytes,
                 max_nodes: int = 0, max_seconds: float = 0.0, stop: bytearray | None = None,
                 quick_nodes: int = QUICK_NODES) -> tuple[int, list[tuple[int, int, int, int, int]], int]:
    """As ``_cspider.spider_solve``: (outcome, primitive moves of a win, nodes). ``quick_nodes``
    (the quick pass's size) lets a test reach the beams within a small budget."""
    root = _Pos([list(p) for p in piles], [min(d, max(len(p) - 1, 0)) for p, d in zip(piles, downs)],
                list(stock), found)
    search = _Search(max_nodes, max_seconds, stop)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, MAXDEPTH * 2 + 500))
    try:
        won = _passes(search, root, max_nodes, quick_nodes)
    except _Stop:
        return UNKNOWN, [], search.nodes
    finally:
        sys.setrecursionlimit(limit)
    if won is None:
        return UNKNOWN, [], search.nodes
    if won:
        return WON, expand(search.path), search.nodes
    return (UNKNOWN if search.truncated else LOST), [], search.nodes


def _passes(search: _Search, root: _Pos, max_nodes: int, quick_nodes: int) -> bool | None:
    """The narrow beams, the quick pass, the wider beams, then from scratch the full search (as
    C's ``spider_solve``): True won, False lost (the full search alone), None the budget ended
    between passes. Raises ``_Stop`` when the budget or the stop flag ends a pass that counts."""

    def budget_left() -> bool:
        return not max_nodes or search.nodes < max_nodes

    def beams(widths: tuple[int, ...]) -> bool | None:
        """The beams of ``widths`` in turn, each from the root with a fresh table: True a win,
        None the budget ended before one, False none won."""
        for width in widths:
            if not budget_left():
                return None
            search.restart()
            if search.beam(root.copy(), width):
                return True
        return False

    search.quick = True
    search.max_nodes = max_nodes
    # One suit: the quick pass wins such deals in a few thousand positions, so the narrow beams
    # (~100,000) go after it, not before (as C's one_suit).
    narrow_first = len({x // 13 for pile in root.piles for x in pile} | {x // 13 for x in root.stock}) > 1
    won = beams(NARROW_BEAMS if narrow_first else ())
    if won is not False:
        return won
    if not budget_left():
        return None
    search.restart()
    quick_end = search.nodes + quick_nodes
    search.max_nodes = min(max_nodes, quick_end) if max_nodes else quick_end
    try:
        if search.dfs(root.copy()):
            return True
    except _Stop:
        if search.stopped:
            raise
    search.max_nodes = max_nodes
    won = beams(WIDE_BEAMS if narrow_first else NARROW_BEAMS + WIDE_BEAMS)
    if won is not False:
        return won
    if not budget_left():
        return None
    search.quick = False
    search.restart()
    search.truncated = False
    return search.dfs(root.copy())
