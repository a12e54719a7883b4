"""The open single-card tableau search in pure Python: ``_cstreets.c`` step for step
(docs/solver.md, "Streets and Alleys").

Same position data, same move order, same node counting, same cut-offs, so with a node budget
both return the same verdict, the same moves and the same node count. The table of positions
seen is keyed by the exact canonical position (the piles sorted; C sums two 64-bit hashes of
the same multiset).
"""

from __future__ import annotations

import heapq
import time

from .._pycommon import Stop as _Stop
from .._pycommon import rank as _rank
from .._pycommon import red_suit as _red_suit
from ..row._pysolver import LOST, UNKNOWN, WON, _SplitMix

MAXDEPTH = 200_000  # deeper positions are cut (then LOST is not claimed), as in C
TO_FOUND = 255
FIRST_ATTEMPT = 20_000  # restarts: the first attempt's positions, each next one twice as many
BEST_FIRST_NODES = 400_000  # the best-first pass between the first attempt and the second
BUILD_ANY_SUIT, BUILD_ALTERNATE, BUILD_SAME_SUIT = 0, 1, 2

# A move: (source pile, destination pile or TO_FOUND)
SMove = tuple[int, int]
# A position the best-first pass reached: piles, foundations, the card the move into it moved
# (-1 at the root), the index of the position it was reached from, and that move.
_BState = tuple[tuple[tuple[int, ...], ...], tuple[int, ...], int, int, SMove]


def _builds_on(build: int, x: int, h: int) -> bool:
    if _rank(h) != _rank(x) + 1:
        return False
    if build == BUILD_ALTERNATE:
        return _red_suit(x // 13) != _red_suit(h // 13)
    if build == BUILD_SAME_SUIT:
        return x // 13 == h // 13
    return True


class _Frame:
    """One position on the current line: its moves, the next to try, the card the last one moved."""

    __slots__ = ("moves", "next", "card")

    def __init__(self, moves: list[SMove]) -> None:
        self.moves = moves
        self.next = 0
        self.card = -1


class _Search:
    def __init__(
        self,
        piles: list[list[int]],
        found: list[int],
        build: int,
        space_any: bool,
        max_nodes: int,
        max_seconds: float,
        stop: bytearray | None,
    ) -> None:
        self.piles = piles
        self.found = found
        self.builds = [[_builds_on(build, x, h) for h in range(52)] for x in range(52)]
        self.space_any = space_any
        self.frozen_test = True  # cut positions where some cards can never move (frozen)
        self.max_nodes = max_nodes
        self.start = time.monotonic()
        self.deadline = self.start + max_seconds if max_seconds > 0 else 0.0
        self.stop = stop
        self.nodes = 0
        self.truncated = False
        self.attempt = 0  # restarts so far
        self.rng = _SplitMix(0)  # the attempt's noise generator
        self.attempt_end = 0  # the node count at which this attempt gives up
        self.attempt_nodes = FIRST_ATTEMPT  # this attempt's allowance
        self.stopped = False  # by the clock or the caller, not by a node limit
        self.seen: set[tuple[tuple[int, ...], ...]] = set()
        self.path: list[SMove] = []
        self.frames: list[_Frame] = []

    # --- the rules of the search (see _cstreets.c for the why of each) ---

    def on_found(self, x: int) -> bool:
        return self.found[x // 13] == _rank(x) - 1

    def safe(self, x: int) -> bool:
        r = _rank(x)
        if r <= 2:
            return True
        for t in range(4):
            y = t * 13 + r - 2  # rank r - 1 of suit t
            if not self.builds[y][x] or self.found[t] >= r - 1:
                continue
            if self.found[t] < r - 2:
                return False
            for u in range(4):
                if self.builds[u * 13 + r - 3][y] and self.found[u] < r - 2:
                    return False
        return True

    def frozen(self) -> bool:
        """As C's frozen: whether some cards can never move again (then the position is lost).
        Pile i's bottom ``level[i]`` cards are the frozen set; each level is lowered while its
        highest card could go up (no lower card of its suit frozen) or onto a host (one not up
        and not under a frozen card); dead when every level stays above 0 (no pile can empty)."""
        piles = self.piles
        if not all(piles):
            return False
        where = {x: (i, j) for i, pile in enumerate(piles) for j, x in enumerate(pile)}
        level = [len(pile) for pile in piles]
        builds, found = self.builds, self.found
        changed = True
        while changed:
            changed = False
            for i, pile in enumerate(piles):
                while True:
                    x = pile[level[i] - 1]
                    s, r = x // 13, _rank(x)
                    ok = False
                    for q in range(found[s] + 1, r):  # a lower card of its suit frozen
                        p, j = where[s * 13 + q - 1]
                        if j < level[p]:
                            ok = True
                            break
                    if ok and r < 13:
                        for t in range(4):  # every host up or under a frozen card
                            h = t * 13 + r
                            if not builds[x][h] or found[t] > r:
                                continue
                            p, j = where[h]
                            if j + 1 >= level[p]:
                                ok = False
                                break
                    if ok:
                        break
                    level[i] -= 1
                    if level[i] == 0:
                        return False
                    changed = True
        return True

    def is_won(self) -> bool:
        for pile in self.piles:
            for j in range(1, len(pile)):
                if _rank(pile[j]) >= _rank(pile[j - 1]):
                    return False
        return True

    def pile_gap(self, i: int) -> tuple[int, int]:
        """(least rank - foundation height over pile i's cards, cards above the last such); (99, 0) empty."""
        best, depth = 99, 0
        pile = self.piles[i]
        for j, x in enumerate(pile):
            g = _rank(x) - self.found[x // 13]
            if g <= best:
                best, depth = g, len(pile) - 1 - j
        return best, depth

    def priority(self, i: int, t: int, gaps: list[tuple[int, int]], to_space: bool) -> int:
        pile = self.piles[i]
        if len(pile) >= 2 and self.on_found(pile[-2]):
            return 0
        if len(pile) == 1:
            return 1
        gap, deep = gaps[i]
        p = 2 + 16 * min(gap, 7) + min(deep, 15)
        if _rank(pile[-2]) == _rank(pile[-1]) + 1:
            p += 8
        if not to_space and gaps[t][0] <= 2:
            p += 4
        return p + (256 if to_space else 0)

    def noise(self) -> int:
        return self.rng.next() & 15 if self.attempt else 0

    def gen_moves(self, last: int) -> list[SMove]:
        """As C: ``last``, the card the move into this position moved (-1 at the root), does not
        move between piles (that is one move from the position before)."""
        piles = self.piles
        for i, pile in enumerate(piles):
            if pile and self.on_found(pile[-1]) and self.safe(pile[-1]):
                return [(i, TO_FOUND)]
        out: list[SMove] = [(i, TO_FOUND) for i, pile in enumerate(piles) if pile and self.on_found(pile[-1])]
        e = next((i for i, pile in enumerate(piles) if not pile), -1)
        ranked: list[tuple[int, SMove]] = []
        gaps = [self.pile_gap(i) for i in range(len(piles))]
        for i, pile in enumerate(piles):
            if not pile:
                continue
            x = pile[-1]
            if x == last:
                continue
            onto = self.builds[x]
            for t, other in enumerate(piles):
                if t != i and other and onto[other[-1]]:
                    ranked.append((self.priority(i, t, gaps, False) + self.noise(), (i, t)))
            if e >= 0 and len(pile) >= 2 and (self.space_any or _rank(x) == 13):
                ranked.append((self.priority(i, e, gaps, True) + self.noise(), (i, e)))
        ranked.sort(key=lambda pm: pm[0])  # stable, as C's insertion sort
        out += [mv for _, mv in ranked]
        return out

    def do(self, mv: SMove) -> int:
        x = self.piles[mv[0]].pop()
        if mv[1] == TO_FOUND:
            self.found[x // 13] += 1
        else:
            self.piles[mv[1]].append(x)
        return x

    def undo(self, mv: SMove, x: int) -> None:
        if mv[1] == TO_FOUND:
            self.found[x // 13] -= 1
        else:
            self.piles[mv[1]].pop()
        self.piles[mv[0]].append(x)

    def last_attempt(self) -> bool:
        """As C: this attempt runs to the end of the budget when the next could not finish."""
        following = 2 * self.attempt_nodes
        if self.max_nodes and self.max_nodes - self.nodes < following:
            return True
        if self.deadline:
            now = time.monotonic()
            spent = now - self.start
            if spent > 0 and (self.deadline - now) * self.nodes < spent * following:
                return True
        return False

    def enter(self) -> bool | None:
        """Enter the current position: True (won), False (seen before, or too deep), or None
        with its moves on the stack. Raises _Stop when the budget is spent."""
        self.nodes += 1
        if self.max_nodes and self.nodes > self.max_nodes:
            raise _Stop
        if self.nodes > self.attempt_end:
            if not self.last_attempt():
                raise _Stop
            self.attempt_end = 1 << 64
        if (self.nodes & 1023) == 0 and (
            (self.stop is not None and self.stop[0]) or (self.deadline and time.monotonic() > self.deadline)
        ):
            self.stopped = True
            raise _Stop
        if self.is_won():
            return True
        key = tuple(sorted(tuple(p) for p in self.piles))
        if key in self.seen:
            return False
        self.seen.add(key)
        if self.frozen_test and self.frozen():
            return False  # no win from here: nothing below it to expand
        if len(self.frames) >= MAXDEPTH:
            self.truncated = True
            return False
        self.frames.append(_Frame(self.gen_moves(self.frames[-1].card if self.frames else -1)))
        return None

    def score(self) -> int:
        """As C's bf_score: how far the position looks from a win, lower first."""
        up = sum(self.found)
        rises = blockers = spaces = 0
        for pile in self.piles:
            if not pile:
                spaces += 1
            for j, x in enumerate(pile):
                if j and _rank(x) >= _rank(pile[j - 1]):
                    rises += 1
                if _rank(x) == self.found[x // 13] + 1:
                    blockers += len(pile) - 1 - j
        return 1000 + 10 * (52 - up) + 6 * rises + 3 * blockers - 10 * spaces

    def best_first(self, allowance: int) -> bool:
        """As C's best_first: greedy best-first from the current (root) position, the least score
        first (the latest reached among equals), the same moves as the attempts. True (won, the
        line in ``path``) or False (every reachable position expanded: lost); raises _Stop after
        ``allowance`` positions or at the budget."""
        end = self.nodes + allowance
        self.nodes += 1
        if self.max_nodes and self.nodes > self.max_nodes:
            raise _Stop
        if self.is_won():
            self.path = []
            return True
        seen = {tuple(sorted(tuple(p) for p in self.piles))}
        states: list[_BState] = [(tuple(tuple(p) for p in self.piles), tuple(self.found), -1, 0, (0, 0))]
        heap = [(self.score(), 0)]
        while heap:
            _, neg = heapq.heappop(heap)
            piles, found, last, _, _ = states[-neg]
            self.piles = [list(p) for p in piles]
            self.found = list(found)
            for mv in self.gen_moves(last):
                x = self.do(mv)
                self.nodes += 1
                if (self.max_nodes and self.nodes > self.max_nodes) or self.nodes > end:
                    raise _Stop
                if (self.nodes & 1023) == 0 and (
                    (self.stop is not None and self.stop[0])
                    or (self.deadline and time.monotonic() > self.deadline)
                ):
                    self.stopped = True
                    raise _Stop
                if self.is_won():
                    line = [mv]
                    k = -neg
                    while k:
                        line.append(states[k][4])
                        k = states[k][3]
                    self.path = line[::-1]
                    return True
                piles_now = tuple(tuple(p) for p in self.piles)
                key = tuple(sorted(piles_now))  # shares the piles' tuples with the stored position
                if key not in seen:
                    seen.add(key)
                    if not (self.frozen_test and self.frozen()):  # a frozen position is lost: not stored
                        heapq.heappush(heap, (self.score(), -len(states)))
                        states.append((piles_now, tuple(self.found), x, -neg, mv))
                self.undo(mv, x)
        return False

    def dfs(self) -> bool:
        """A loop with the frames in a list, as C's (lines run long)."""
        r = self.enter()
        if r is not None:
            return r
        frames = self.frames
        while True:
            f = frames[-1]
            moves, k = f.moves, f.next
            if k > 0:
                self.undo(moves[k - 1], f.card)
            if k == len(moves):
                if len(frames) == 1:
                    return False
                frames.pop()
                continue
            f.next = k + 1
            f.card = self.do(moves[k])
            r = self.enter()
            if r:
                self.path = [fr.moves[fr.next - 1] for fr in frames]
                return True


def expand(path: list[SMove], piles: list[list[int]], found: list[int]) -> list[tuple[int, int, int]]:
    """The moves of a win as (dst_zone 0 tableau / 1 foundation, src, dst), then the play-out."""
    out: list[tuple[int, int, int]] = []
    for src, dst in path:
        x = piles[src].pop()
        if dst == TO_FOUND:
            out.append((1, src, x // 13))
            found[x // 13] += 1
        else:
            out.append((0, src, dst))
            piles[dst].append(x)
    while True:  # the lowest top goes up
        tops = [(_rank(p[-1]), i) for i, p in enumerate(piles) if p]
        if not tops:
            return out
        best = min(tops)[1]
        out.append((1, best, piles[best].pop() // 13))


def streets_solve(
    piles: list[bytes],
    found: list[int],
    build: int,
    space_any: bool,
    max_nodes: int = 0,
    max_seconds: float = 0.0,
    stop: bytearray | None = None,
    first_attempt: int = FIRST_ATTEMPT,
    best_first_nodes: int = BEST_FIRST_NODES,
    frozen_test: bool = True,
) -> tuple[int, list[tuple[int, int, int]], int]:
    """As ``_cstreets.streets_solve``: (outcome, moves of a win, nodes)."""
    if build not in (BUILD_ANY_SUIT, BUILD_ALTERNATE, BUILD_SAME_SUIT):
        raise ValueError("build is 0 (any suit), 1 (alternate colours) or 2 (same suit)")
    if first_attempt < 1:
        raise ValueError("first_attempt is at least 1")
    root = [list(p) for p in piles]
    search = _Search([list(p) for p in piles], list(found), build, space_any, max_nodes, max_seconds, stop)
    search.attempt_nodes = first_attempt
    search.frozen_test = frozen_test
    best_first_done = best_first_nodes == 0

    def reset() -> None:
        search.piles = [list(p) for p in piles]
        search.found = list(found)
        search.frames.clear()
        search.seen.clear()
        search.truncated = False

    while True:  # restarts, as in C: each attempt from the root with a fresh table
        search.attempt_end = search.nodes + search.attempt_nodes
        search.rng = _SplitMix(search.attempt)
        try:
            won = search.dfs()
            break
        except _Stop:
            if search.stopped or (max_nodes and search.nodes > max_nodes):
                return UNKNOWN, [], search.nodes
        reset()
        if not best_first_done:  # the best-first pass, between the first attempt and the second
            best_first_done = True
            try:
                won = search.best_first(best_first_nodes)
                break
            except _Stop:
                if search.stopped or (max_nodes and search.nodes > max_nodes):
                    return UNKNOWN, [], search.nodes
            reset()
        search.attempt += 1
        search.attempt_nodes *= 2
    if won:
        return WON, expand(search.path, root, list(found)), search.nodes
    return (UNKNOWN if search.truncated else LOST), [], search.nodes
