"""The Emperor search in pure Python: ``_cemperor.c`` step for step (docs/solver.md, "Emperor").

Same position data, same move order, same node counting, same cut-offs, so with a node budget
both return the same verdict, the same moves and the same node count. The table of positions
seen is keyed by the exact canonical position (C uses two 64-bit hashes of the same form).
"""

from __future__ import annotations

from .._pycommon import RestartingSearch, deep_recursion
from .._pycommon import Stop as _Stop
from .._pycommon import builds_alternate as _builds_on
from .._pycommon import rank as _rank
from .._pycommon import red_suit as _red_suit
from ..row._pysolver import LOST, UNKNOWN, WON

MAXDEPTH = 1000
MAXPILE = 48  # the compiled core's room per pile: a move past it is not searched (hand-made positions only)
# Positions of the first quick pass, of each restart and of all the quick passes (as _cemperor.c).
QUICK_NODES = 200_000
RESTART_NODES = 50_000
QUICK_TOTAL = 16_000_000
FULL_MOVES_EVERY = 2  # every so many restarts, a quick pass takes the full search's moves
QUICK_PERCENT = 75  # the quick passes' share of a node or time budget: the full search has the rest
BEAM_FIRST, BEAM_LAST = 16, 2048  # the beams before the quick passes: 16, 32, ... 2048 wide, each twice

# Zones of the primitive moves handed back (as in _cklondike.c).
Z_TAB, Z_FOUND, Z_STOCK, Z_WASTE = 0, 1, 2, 3
DRAW_MOVE = (Z_STOCK, 0, Z_WASTE, 0, 0)

# Macro moves: (kind, src, dst, talon index)
M_TAB_FOUND, M_TAB_TAB, M_TAL_FOUND, M_TAL_TAB = range(4)

Move = tuple[int, int, int, int]


class _Pos:
    """Piles (lists of cards), down counts, eight foundation heights (suit s: s and s + 4), talon, cur."""

    __slots__ = ("piles", "down", "found", "talon", "cur")

    def __init__(
        self, piles: list[list[int]], down: list[int], found: list[int], talon: list[int], cur: int
    ) -> None:
        self.piles = piles
        self.down = down
        self.found = found
        self.talon = talon
        self.cur = cur

    def copy(self) -> _Pos:
        return _Pos(
            [list(p) for p in self.piles], list(self.down), list(self.found), list(self.talon), self.cur
        )


def _home(s: _Pos, x: int) -> int:
    """The foundation card x goes onto (its suit's first that takes it, as the engine), or -1."""
    su, below = x // 13, _rank(x) - 1
    if s.found[su] == below:
        return su
    if s.found[su + 4] == below:
        return su + 4
    return -1


class _Search(RestartingSearch[_Pos, Move]):
    """Emperor's passes on the common ``RestartingSearch``; the quick passes' cut (``cut``): a
    card off a face-up card only to use the card uncovered."""

    def __init__(
        self, max_nodes: int, max_seconds: float, stop: bytearray | None, quick_percent: int = QUICK_PERCENT
    ) -> None:
        super().__init__(max_nodes, max_seconds, stop)
        if max_seconds > 0:  # the quick passes' share of the time
            self.quick_deadline = self.deadline - max_seconds * (100 - quick_percent) / 100

    @staticmethod
    def safe(s: _Pos, x: int) -> bool:
        r, su = _rank(x), x // 13
        if r <= 2:
            return True
        for t in range(4):
            if _red_suit(t) != _red_suit(su) and min(s.found[t], s.found[t + 4]) < r - 1:
                return False
        return True

    @staticmethod
    def reach(s: _Pos) -> list[int]:
        out: list[int] = []
        if s.cur > 0:
            out.append(s.cur - 1)
        for p in range(s.cur, len(s.talon)):
            out.append(p)
            if _rank(s.talon[p]) == 1:
                break  # an Ace on the waste is compelled: no DRAW past it
        return out

    @staticmethod
    def can_receive(s: _Pos, x: int, skip: int, reach: list[int]) -> bool:
        for q in reach:
            if _builds_on(s.talon[q], x):
                return True
        for t, pile in enumerate(s.piles):
            if t != skip and pile and _builds_on(pile[-1], x):
                return True
        return False

    @staticmethod
    def first_empty(s: _Pos) -> int:
        for i, pile in enumerate(s.piles):
            if not pile:
                return i
        return -1

    @staticmethod
    def onto(s: _Pos, x: int, src: int, m: list[Move], kind: int, tidx: int) -> None:
        """x onto every pile that takes it (not its own), then into the first space."""
        for t, pile in enumerate(s.piles):
            if t != src and pile and _builds_on(x, pile[-1]):
                m.append((kind, src, t, tidx))
        e = _Search.first_empty(s)
        if e >= 0:
            m.append((kind, src, e, tidx))

    def gen_moves(self, s: _Pos) -> list[Move]:
        piles, down = s.piles, s.down
        for i, pile in enumerate(piles):  # compelled Aces
            if pile and _rank(pile[-1]) == 1:
                return [(M_TAB_FOUND, i, 0, 0)]
        if s.cur > 0 and _rank(s.talon[s.cur - 1]) == 1:
            return [(M_TAL_FOUND, 0, 0, s.cur - 1)]
        for i, pile in enumerate(piles):
            if pile and _home(s, pile[-1]) >= 0 and self.safe(s, pile[-1]):
                return [(M_TAB_FOUND, i, 0, 0)]
        if s.cur > 0 and _home(s, s.talon[s.cur - 1]) >= 0 and self.safe(s, s.talon[s.cur - 1]):
            return [(M_TAL_FOUND, 0, 0, s.cur - 1)]
        m: list[Move] = []
        for i, pile in enumerate(piles):  # 1. tableau tops to the foundations
            if pile and _home(s, pile[-1]) >= 0:
                m.append((M_TAB_FOUND, i, 0, 0))
        for dn in range(max(down), 0, -1):  # 2. tops that turn a card, most face down first
            for i, pile in enumerate(piles):
                if down[i] == dn and len(pile) == dn + 1:
                    self.onto(s, pile[-1], i, m, M_TAB_TAB, 0)
        reach = self.reach(s)
        for q in reach:  # 3. talon cards to the foundations, then onto the piles
            if _home(s, s.talon[q]) >= 0:
                m.append((M_TAL_FOUND, 0, 0, q))
        for q in reach:
            if _rank(s.talon[q]) != 1:  # a drawn Ace is compelled: it only goes up
                self.onto(s, s.talon[q], -1, m, M_TAL_TAB, q)
        for i, pile in enumerate(piles):  # 4. lone cards onto other piles (they leave a space)
            if len(pile) == 1 and down[i] == 0:
                for t, other in enumerate(piles):
                    if t != i and other and _builds_on(pile[0], other[-1]):
                        m.append((M_TAB_TAB, i, t, 0))
        for i, pile in enumerate(piles):  # 5. tops off face-up cards
            n = len(pile)
            if n - down[i] < 2:
                continue
            if self.cut:  # only to use the card uncovered at once
                under = pile[-2]
                if _home(s, under) < 0 and not self.can_receive(s, under, i, reach):
                    continue
            self.onto(s, pile[-1], i, m, M_TAB_TAB, 0)
        return m

    @staticmethod
    def key(s: _Pos) -> tuple[object, ...]:
        piles = tuple(sorted((s.down[i], tuple(p)) for i, p in enumerate(s.piles)))
        return piles, tuple(s.talon), s.cur

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
        moves = self.gen_moves(s)
        self.shake(moves)
        return self.descend(s, [mv for mv in moves if _fits(s, mv)], _child)

    def beam(self, root: _Pos, width: int) -> bool:
        """One beam of ``width`` from the root over the current pass's moves (as C's ``beam``)."""
        return self.beam_unseen(root, width, MAXDEPTH, _child, _fits, _won, worth)


def _child(s: _Pos, mv: Move) -> _Pos:
    made = s.copy()
    apply(made, mv)
    return made


def _won(s: _Pos) -> bool:
    """The talon empty, nothing face down, every pile built down from its bottom: the lowest top
    can always go up next."""
    return (
        not s.talon
        and not any(s.down)
        and all(_builds_on(p[j], p[j - 1]) for p in s.piles for j in range(1, len(p)))
    )


def _fits(s: _Pos, mv: Move) -> bool:
    """The move fits in the compiled core's compact position (a pile past MAXPILE does not)."""
    return not (mv[0] in (M_TAB_TAB, M_TAL_TAB) and len(s.piles[mv[2]]) >= MAXPILE)


# The beam's worth of a position (as C's ``worth``): cards home, face-down cards, waste cards under
# the waste's top, spaces.
W_HOME, W_DOWN, W_BURIED, W_SPACE = 10, 12, 3, 5


def worth(s: _Pos) -> int:
    v = -W_BURIED * max(s.cur - 1, 0) + W_HOME * sum(s.found)
    for pile, d in zip(s.piles, s.down):
        v += W_SPACE if not pile else -W_DOWN * d
    return v


def _turn_up(s: _Pos, i: int) -> None:
    if s.piles[i] and s.down[i] >= len(s.piles[i]):
        s.down[i] = len(s.piles[i]) - 1


def _take_talon(s: _Pos, q: int) -> int:
    s.cur = q
    return s.talon.pop(q)


def apply(s: _Pos, mv: Move) -> None:
    kind, src, dst, q = mv
    if kind == M_TAB_FOUND:
        x = s.piles[src].pop()
        s.found[_home(s, x)] += 1
        _turn_up(s, src)
    elif kind == M_TAB_TAB:
        s.piles[dst].append(s.piles[src].pop())
        _turn_up(s, src)
    elif kind == M_TAL_FOUND:
        x = s.talon[q]
        s.found[_home(s, x)] += 1
        _take_talon(s, q)
    else:
        s.piles[dst].append(_take_talon(s, q))


def expand(path: list[Move], s: _Pos) -> list[tuple[int, int, int, int, int]]:
    """The macro moves of a win as primitive moves, then the play-out (the lowest top goes up)."""
    out: list[tuple[int, int, int, int, int]] = []
    for mv in path:
        kind = mv[0]
        if kind in (M_TAL_FOUND, M_TAL_TAB):
            out += [DRAW_MOVE] * (mv[3] + 1 - s.cur)
            out.append(
                (Z_WASTE, 0, Z_FOUND, _home(s, s.talon[mv[3]]), 1)
                if kind == M_TAL_FOUND
                else (Z_WASTE, 0, Z_TAB, mv[2], 1)
            )
        elif kind == M_TAB_FOUND:
            out.append((Z_TAB, mv[1], Z_FOUND, _home(s, s.piles[mv[1]][-1]), 1))
        else:
            out.append((Z_TAB, mv[1], Z_TAB, mv[2], 1))
        apply(s, mv)
    while True:
        tops = [(_rank(p[-1]), i) for i, p in enumerate(s.piles) if p]
        if not tops:
            return out
        best = min(tops)[1]
        out.append((Z_TAB, best, Z_FOUND, _home(s, s.piles[best][-1]), 1))
        apply(s, (M_TAB_FOUND, best, 0, 0))


def emperor_solve(
    piles: list[bytes],
    downs: list[int],
    found: list[int],
    talon: bytes,
    cur: int,
    max_nodes: int = 0,
    max_seconds: float = 0.0,
    stop: bytearray | None = None,
    quick_nodes: int = QUICK_NODES,
    restart_nodes: int = RESTART_NODES,
    quick_total: int = QUICK_TOTAL,
    full_moves_every: int = FULL_MOVES_EVERY,
    quick_percent: int = QUICK_PERCENT,
    beam_first: int = BEAM_FIRST,
    beam_last: int = BEAM_LAST,
) -> tuple[int, list[tuple[int, int, int, int, int]], int]:
    """As ``_cemperor.emperor_solve``: (outcome, primitive moves of a win, nodes)."""
    root = _Pos(
        [list(p) for p in piles],
        [min(d, max(len(p) - 1, 0)) for p, d in zip(piles, downs)],
        list(found),
        list(talon),
        cur,
    )
    search = _Search(max_nodes, max_seconds, stop, quick_percent)
    try:
        with deep_recursion(MAXDEPTH):
            # the beams (beam_first, twice that, ... beam_last wide), then the quick passes (the
            # first in the plain order with the cut, then restarts with the order shaken, every
            # full_moves_every-th with the full search's moves), all within quick_total, then the
            # full search from scratch (as _cemperor.c, where the schedule is argued)
            search.quick = True
            won = False
            if max_nodes and quick_total > max_nodes // 100 * quick_percent:
                quick_total = max_nodes // 100 * quick_percent
            search.max_nodes = quick_total
            width, full = beam_first, False
            while 0 < width <= beam_last and search.nodes < quick_total and not won:
                # each width twice: over the first quick pass's moves (the cut), then the full search's
                search.cut = not full
                try:
                    won = search.beam(root.copy(), width)
                except _Stop:
                    if search.stopped or (max_nodes and search.nodes >= max_nodes):
                        raise
                    break  # the quick passes' share is spent: the full search has the rest
                width, full = (width * 2 if full else width), not full
            # (the first pass runs even with quick_total 0, which asks for no restarts)
            if not won and not search.quick_over and (search.nodes < quick_total or search.nodes == 0):
                won = search.quick_passes(
                    root, max_nodes, quick_nodes, restart_nodes, quick_total, full_moves_every
                )
            if not won:
                won = search.full_search(root, max_nodes)
    except _Stop:
        return UNKNOWN, [], search.nodes
    if won:
        return WON, expand(search.path, root), search.nodes
    return (UNKNOWN if search.truncated else LOST), [], search.nodes
