"""The Spider search in pure Python: ``_cspider.c`` step for step (docs/solver.md, "Spider").

Same position data, same move order, same node counting, same cut-offs, so with a node budget
both return the same verdict, the same moves and the same node count. The table of positions
seen is keyed by the exact canonical position (C uses two 64-bit hashes of the same form).
"""

from __future__ import annotations

import heapq

from .._pycommon import Search, deep_recursion
from .._pycommon import Stop as _Stop
from .._pycommon import rank as _rank
from ..row._pysolver import LOST, UNKNOWN, WON

MAXDEPTH = 1000
MAXPILE = 104  # the compiled core's room per pile: a move past it is not searched (hand-made positions only)
QUICK_NODES = 1_000_000  # positions of the quick pass, which looks for a win only
NARROW_BEAMS = (16, 32, 64)  # beam widths before the quick pass (cheap)
WIDE_BEAMS = (128, 256, 512, 1024, 2048, 4096, 8192)  # and after it
# The staged pass (two or four suits, first): positions a stage, a setting's first size then 4 times
# more up to the last.
STAGE_LAST_NODES = 1_280_000
# Its settings, run in turn, each from scratch (as C's StageSetting): the first stages' size, how
# many positions a stage DEALs from, how many piles each must differ in from those taken before
# it (0: the best, whatever they are), the positions the setting may make (0: the rest).
StageSetting = tuple[int, int, int, int]
STAGE_SETTINGS: tuple[StageSetting, ...] = (
    (20_000, 2, 0, 3_000_000),
    (10_000, 2, 3, 3_000_000),
    (20_000, 3, 0, 0),
)
MAXCARDS = 104  # a deal's cards: C packs a stage's positions in that room
PILES = 10
SUIT = 13
PRIORITIES = 7

# The worth of a position (docs/solver.md, "Spider"; only the order matters), as C's Weights:
# a suit lifted off, a face-down card, a pile with one, a space, a card built in suit, on the
# rank only, a break.
Weights = tuple[int, int, int, int, int, int, int]
BEAM_WEIGHTS: Weights = (400, 12, 0, 30, 10, 4, 6)
STAGE_WEIGHTS: Weights = (400, 40, 60, 60, 30, 0, 25)

# Zones of the primitive moves handed back (as in _cklondike.c): a DEAL comes from the stock.
Z_TAB, Z_STOCK = 0, 2
DEAL_MOVE = (Z_STOCK, 0, Z_TAB, 0, 0)

# Moves: (src, dst, count); src -1 is the DEAL; count < 0 a run of -count cards, several units,
# moved by way of the spaces (the staged pass; ``run_moves``).
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


class _Search(Search[_Pos, Move]):
    """Spider's passes on the common ``Search``: its quick pass has no share of a time budget (no
    ``quick_deadline``): it ends at its node count."""

    def __init__(self, max_nodes: int, max_seconds: float, stop: bytearray | None) -> None:
        super().__init__(max_nodes, max_seconds, stop)
        self.staged = False  # the staged pass: runs through spaces too, no DEAL
        self.stage_branch, self.stage_spread = 2, 0  # the staged pass's setting

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
        for i, pile in enumerate(piles):
            if not self.staged or not spaces or not pile:
                continue
            # A run of m >= 2 units, each on a card one rank higher than its foot, onto a pile
            # whose top is one rank above the run's foot, when m - 1 spaces hold the units
            # above the lowest (as C).
            n, d = len(pile), down[i]
            k = unit_length(pile, d)
            for _ in range(len(spaces)):
                if n - k <= d or _rank(pile[n - k - 1]) != _rank(pile[n - k]) + 1:
                    break
                k += 1
                while n - k > d and pile[n - k - 1] == pile[n - k] + 1 and _rank(pile[n - k]) != 13:
                    k += 1
                low = _rank(pile[n - k])
                for j, other in enumerate(piles):
                    if j != i and other and _rank(other[-1]) == low + 1:
                        by_class[P_FREE].append((i, j, -k))
        if s.stock and not spaces and not self.staged:
            by_class[P_DEAL].append(DEAL)
        return [m for moves in by_class for m in moves]

    @staticmethod
    def key(s: _Pos) -> tuple[object, ...]:
        piles = [(s.down[i], tuple(p)) for i, p in enumerate(s.piles)]
        if not s.stock:
            piles.sort()  # no DEAL ahead: the piles' order never matters
        return tuple(piles), len(s.stock)

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
        return self.descend(s, [mv for mv in self.gen_moves(s) if _fits(s, mv)], _child)

    def beam(self, root: _Pos, width: int) -> bool:
        """One beam of ``width`` from the root over the quick pass's moves (as C's ``beam``)."""
        return self.beam_unseen(
            root, width, MAXDEPTH, _child, _fits, _won, lambda pos: worth(pos, BEAM_WEIGHTS)
        )

    def stage(self, root: _Pos, stage_nodes: int) -> bool:
        """The stage from ``root`` (in the table already), then the stages after the DEALs from
        its best positions (as C's ``stage``): True with the line in ``self.path``."""
        pool: list[_Pos] = []
        parent: list[int] = []
        moves: list[Move] = []
        worths: list[int] = []
        taken: list[bool] = []  # chosen to DEAL from already
        heap: list[tuple[int, int]] = []  # (-worth, index): best first, then the one made first

        def keep(s: _Pos, at: int, mv: Move) -> None:
            w = worth(s, STAGE_WEIGHTS)
            heapq.heappush(heap, (-w, len(pool)))
            worths.append(w)
            taken.append(False)
            pool.append(s)
            parent.append(at)
            moves.append(mv)

        def line(at: int) -> list[Move] | None:
            """The moves from the stage's root to position ``at``; None past MAXDEPTH."""
            out: list[Move] = []
            while parent[at] >= 0:
                out.append(moves[at])
                at = parent[at]
            return out[::-1] if len(self.path) + len(out) < MAXDEPTH else None

        if _cards(root) > MAXCARDS:
            return False  # hand-made positions only
        keep(root, -1, DEAL)
        made = 0
        while heap and made < stage_nodes:
            _, at = heapq.heappop(heap)
            cur = pool[at]
            for mv in self.gen_moves(cur):
                if made >= stage_nodes:
                    break
                if not _fits(cur, mv):
                    continue
                self.count_node()
                made += 1
                child = cur.copy()
                apply(child, mv)
                if _won(child):
                    found = line(at)
                    if found is None:
                        continue
                    self.path += found + [mv]
                    return True
                k = self.key(child)
                if k in self.seen or _cards(child) > MAXCARDS:
                    continue
                self.seen.add(k)
                keep(child, at, mv)
        leaves: list[tuple[_Pos, list[Move]]] = []
        while root.stock and len(leaves) < self.stage_branch:
            # The best that may DEAL; with a spread, the best that differs enough from those taken.
            best = apart = -1
            for q, s in enumerate(pool):
                if taken[q] or not all(s.piles):
                    continue
                if best < 0 or worths[q] > worths[best]:
                    best = q
                if (apart < 0 or worths[q] > worths[apart]) and all(
                    _piles_apart(s, leaf) >= self.stage_spread for leaf, _ in leaves
                ):
                    apart = q
            if apart >= 0:
                best = apart
            if best < 0:
                break
            taken[best] = True
            found = line(best)
            if found is not None:
                leaves.append((pool[best], found))
        for s, moves_to in leaves:
            if not _fits(s, DEAL):
                continue
            depth = len(self.path)
            self.path += moves_to + [DEAL]
            self.count_node()
            child = s.copy()
            apply(child, DEAL)
            if _won(child):
                return True
            k = self.key(child)
            if k not in self.seen:
                self.seen.add(k)
                if self.stage(child, stage_nodes):
                    return True
            del self.path[depth:]
        return False


def _piles_apart(s: _Pos, t: _Pos) -> int:
    """In how many piles two positions differ (cards or face-down count; as C's ``spread_from``)."""
    return sum(p != q or d != e for p, q, d, e in zip(s.piles, t.piles, s.down, t.down))


def _cards(s: _Pos) -> int:
    return sum(len(p) for p in s.piles)


def _child(s: _Pos, mv: Move) -> _Pos:
    made = s.copy()
    apply(made, mv)
    return made


def _won(s: _Pos) -> bool:
    return not s.stock and not any(s.piles)


def worth(s: _Pos, weights: Weights) -> int:
    """Suits lifted off, face-down cards, piles with one, spaces, and each face-up card on
    another: built in suit, on the rank only, or a break (as C's ``worth``)."""
    w_found, w_down, w_down_pile, w_space, w_suited, w_ranked, w_break = weights
    v = w_found * s.found
    for pile, d in zip(s.piles, s.down):
        if not pile:
            v += w_space
            continue
        v -= w_down * d + (w_down_pile if d else 0)
        for j in range(d + 1, len(pile)):
            lo, hi = pile[j - 1], pile[j]
            if lo == hi + 1 and _rank(hi) != 13:
                v += w_suited
            elif _rank(lo) == _rank(hi) + 1:
                v += w_ranked
            else:
                v -= w_break
    return v


def _fits(s: _Pos, mv: Move) -> bool:
    if mv[0] < 0:
        return all(len(p) < MAXPILE for p in s.piles)
    return len(s.piles[mv[1]]) + abs(mv[2]) <= MAXPILE


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
    count = abs(count)
    run = s.piles[src][-count:]
    del s.piles[src][-count:]
    s.piles[dst].extend(run)
    _turn_up(s, src)
    _lift_off(s, dst)


def run_moves(s: _Pos, mv: Move) -> list[Move]:
    """The moves of a run moved by way of the spaces (count < 0) from ``s`` (as C's
    ``run_moves``): each unit above the lowest into a space of its own (the top one first), the
    lowest onto the target, then the others back onto it (the last put aside first)."""
    src, dst, count = mv
    pile, units, top = s.piles[src], [], 0
    while top < -count:
        u = 1
        while top + u < -count and pile[-top - u - 1] == pile[-top - u] + 1 and _rank(pile[-top - u]) != 13:
            u += 1
        units.append(u)
        top += u
    spaces = [j for j, p in enumerate(s.piles) if not p]
    aside = [(src, spaces[q], u) for q, u in enumerate(units[:-1])]
    back = [(spaces[q], dst, u) for q, u in reversed(list(enumerate(units[:-1])))]
    return aside + [(src, dst, units[-1])] + back


def expand(root: _Pos, path: list[Move]) -> list[tuple[int, int, int, int, int]]:
    """The moves of a win as primitive moves (a lift-off is part of the move that makes it; a
    run through spaces is told as its moves), replayed from ``root``."""
    out: list[tuple[int, int, int, int, int]] = []
    s = root.copy()
    for mv in path:
        for src, dst, count in run_moves(s, mv) if mv[2] < 0 else [mv]:
            out.append(DEAL_MOVE if src < 0 else (Z_TAB, src, Z_TAB, dst, count))
        apply(s, mv)
    return out


def spider_solve(
    piles: list[bytes],
    downs: list[int],
    found: int,
    stock: bytes,
    max_nodes: int = 0,
    max_seconds: float = 0.0,
    stop: bytearray | None = None,
    quick_nodes: int = QUICK_NODES,
    stages: tuple[StageSetting, ...] | None = None,
) -> tuple[int, list[tuple[int, int, int, int, int]], int]:
    """As ``_cspider.spider_solve``: (outcome, primitive moves of a win, nodes). ``stages`` (the
    staged pass's settings, STAGE_SETTINGS when None) lets a test see a staged win sooner and a
    benchmark try settings; ``quick_nodes`` (the quick pass's size) lets a test reach the beams
    within a small budget."""
    root = _Pos(
        [list(p) for p in piles],
        [min(d, max(len(p) - 1, 0)) for p, d in zip(piles, downs)],
        list(stock),
        found,
    )
    search = _Search(max_nodes, max_seconds, stop)
    try:
        with deep_recursion(MAXDEPTH):
            settings = STAGE_SETTINGS if stages is None else tuple(stages)
            won = _passes(search, root, max_nodes, quick_nodes, settings)
    except _Stop:
        return UNKNOWN, [], search.nodes
    if won is None:
        return UNKNOWN, [], search.nodes
    if won:
        return WON, expand(root, search.path), search.nodes
    return (UNKNOWN if search.truncated else LOST), [], search.nodes


def _passes(
    search: _Search, root: _Pos, max_nodes: int, quick_nodes: int, stages: tuple[StageSetting, ...]
) -> bool | None:
    """For two or four suits the staged pass, then the narrow beams, the quick pass, the wider beams,
    then from scratch the full search (as C's ``spider_solve``): True won, False lost (the full
    search alone), None the budget ended between passes. Raises ``_Stop`` when the budget or the stop flag
    ends a pass that counts."""

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
    # (~100,000) go after it, not before; two or four: the staged pass goes first (as C's suits_in_deal).
    suits = len({x // 13 for pile in root.piles for x in pile} | {x // 13 for x in root.stock})
    narrow_first = suits > 1
    for first_nodes, branch, spread, share in stages if suits > 1 else ():
        # Each setting from scratch within its share; one whose share ran out leaves the rest of
        # the budget to the next (as C).
        end = search.nodes + share if share else 0
        search.max_nodes = end if end and (not max_nodes or end < max_nodes) else max_nodes
        search.stage_branch, search.stage_spread = branch, spread
        stage_nodes = first_nodes
        try:
            while stage_nodes <= STAGE_LAST_NODES:
                if search.max_nodes and search.nodes >= search.max_nodes:
                    break
                search.restart()
                search.seen.add(search.key(root))
                search.staged = True
                try:
                    if search.stage(root.copy(), stage_nodes):
                        return True
                finally:
                    search.staged = False
                stage_nodes *= 4
        except _Stop:
            if search.stopped or not budget_left():
                raise
        search.max_nodes = max_nodes
        if not budget_left():
            return None
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
    return search.full_search(root, max_nodes)
