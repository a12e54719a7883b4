"""The Klondike search in pure Python: ``_cklondike.c`` step for step (docs/solver.md, "Klondike").

Same position data, same move order, same node counting, same cut-offs, so with a node budget
both return the same verdict, the same moves and the same node count. The table of positions
seen is keyed by the exact canonical position (C uses two 64-bit hashes of the same form).
"""

from __future__ import annotations

from ...engine.moves import ZONE_CODES, Zone
from ..family import LOST, UNKNOWN, WON
from ._pycommon import RestartingSearch, deep_recursion
from ._pycommon import Stop as _Stop
from ._pycommon import beam as _beam
from ._pycommon import builds_alternate as _builds_on
from ._pycommon import rank as _rank
from ._pycommon import red_suit as _red_suit

MAXMOVES = 200
MAXDEPTH = 1000
QUICK_NODES = 100_000  # positions of the first quick pass, which looks for a win only
RESTART_NODES = 30_000  # positions of each restart of the quick pass (at most QUICK_NODES)
QUICK_TOTAL = 2_000_000  # positions of all the quick passes together
FULL_MOVES_EVERY = 2  # every so many restarts, a quick pass takes the full search's moves
# The beams, one after each quick pass: widths BEAM_FIRST_WIDTH, twice that, ... BEAM_LAST_WIDTH
# (turning three; turning one only when asked).
BEAM_FIRST_WIDTH = 64
BEAM_LAST_WIDTH = 2048
# A beam's worth of a position (as _cklondike.c's worth): cards home, face down, in the talon, spaces.
W_HOME, W_DOWN, W_TALON, W_SPACE = 10, 25, 15, 5

# Zones of the primitive moves handed back: the zones' stable codes (as _cklondike.c's).
Z_TAB, Z_FOUND, Z_STOCK, Z_WASTE = (
    ZONE_CODES[z] for z in (Zone.TABLEAU, Zone.FOUNDATION, Zone.STOCK, Zone.WASTE)
)
DRAW_MOVE = (Z_STOCK, 0, Z_WASTE, 0, 0)
REDEAL_MOVE = (Z_WASTE, 0, Z_STOCK, 0, 0)

# Macro moves: (kind, src, dst, count, talon index, wrap). M_TWIN_HOME (equivalent runs only): a
# card covered by a run goes home after its run moves onto its twin, a pile top.
M_TAB_FOUND, M_TAL_FOUND, M_TAL_TAB, M_RUN, M_FOUND_TAB, M_TWIN_HOME = range(6)

Move = tuple[int, int, int, int, int, int]


class _Pos:
    """One position: piles (lists of cards), down counts, foundation counts, talon, cur, redeals left."""

    __slots__ = ("piles", "down", "found", "talon", "cur", "redeals")

    def __init__(
        self,
        piles: list[list[int]],
        down: list[int],
        found: list[int],
        talon: list[int],
        cur: int,
        redeals: int,
    ) -> None:
        self.piles = piles
        self.down = down
        self.found = found
        self.talon = talon
        self.cur = cur
        self.redeals = redeals

    def copy(self) -> _Pos:
        return _Pos(
            [list(p) for p in self.piles],
            list(self.down),
            list(self.found),
            list(self.talon),
            self.cur,
            self.redeals,
        )


class _Search(RestartingSearch[_Pos, Move]):
    def __init__(
        self,
        draw: int,
        partial: bool,
        fret: bool,
        root_redeal: bool,
        keep_cur: bool,
        max_nodes: int,
        max_seconds: float,
        stop: bytearray | None,
    ) -> None:
        super().__init__(max_nodes, max_seconds, stop)
        self.draw = draw
        self.partial = partial
        self.fret = fret
        self.root_redeal = root_redeal
        self.keep_cur = keep_cur
        if max_seconds > 0:  # the quick passes' share of the time: half
            self.quick_deadline = self.deadline - max_seconds / 2
        self.dominance = True  # talon dominance in the full search; off only for comparisons
        self.dead_ends = True  # a position with a card that can never depart is not expanded (``stuck``)
        self.safe_two = True  # ``safe`` one rank further; off only for comparisons
        self.loose_safe = False  # tests only: ``safe_two`` without its twin's-suit condition (unsound)
        self.twins = (
            False  # equivalent runs (partial runs only): a run on either of two twins is one position
        )
        self.layer = 0  # in a beam, the depth of the positions at hand (0 is the root, as an empty path)
        self.root_down = 0
        self.best = 0  # the most progress of a position visited (``progress_of``)

    def progress_of(self, s: _Pos) -> int:
        """Cards on the foundations plus cards turned up since the root (as _cklondike.c: the
        sampled Hint scores an undecided world by the best of these; the search never reads it)."""
        return sum(s.found) + self.root_down - sum(s.down)

    # --- the rules of the search (see _cklondike.c for the why of each) ---

    def safe(self, s: _Pos, x: int) -> bool:
        """Nothing x could carry is still to come (as _cklondike.c's ``safe``): the other colour
        one lower up (and with foundation_return its twin's suit two lower); or the other colour
        two lower and its twin's suit three lower up (two with foundation_return: *Safe one rank
        further*, docs/solver.md)."""
        r, su = _rank(x), x // 13
        if r <= 2:
            return True
        others = [t for t in range(4) if _red_suit(t) != _red_suit(su)]
        twin = next(t for t in range(4) if t != su and _red_suit(t) == _red_suit(su))
        near = all(s.found[t] >= r - 1 for t in others) and (not self.fret or s.found[twin] >= r - 2)
        two_lower = (
            self.safe_two
            and all(s.found[t] >= r - 2 for t in others)
            and (self.loose_safe or s.found[twin] >= (r - 2 if self.fret else r - 3))
        )
        return near or two_lower

    @staticmethod
    def worth_returning(s: _Pos, r: int, su: int) -> bool:
        for t in range(4):
            if t == su:
                continue
            if _red_suit(t) != _red_suit(su):
                if s.found[t] < r - 1:
                    return True
            elif s.found[t] < r - 2:
                return True
        return False

    def talon_reach(self, s: _Pos) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        n, d = len(s.talon), self.draw
        seen = set()
        if s.cur > 0:
            out.append((s.cur - 1, 0))
            seen.add(s.cur - 1)
        p = s.cur
        while p < n:
            p = min(p + d, n)
            out.append((p - 1, 0))
            seen.add(p - 1)
        if s.redeals != 0 and (self.path or self.layer or self.root_redeal):
            p = 0
            while p < n:
                p = min(p + d, n)
                if p - 1 not in seen:
                    out.append((p - 1, 1))
        return out

    def can_receive(self, s: _Pos, x: int, skip: int, reach: list[tuple[int, int]]) -> bool:
        for i, _ in reach:
            if _builds_on(s.talon[i], x):
                return True
        for t, pile in enumerate(s.piles):
            if t == skip:
                continue
            lo = s.down[t]
            hi = len(pile) if self.partial else (lo + 1 if len(pile) > lo else lo)
            for j in range(lo, hi):
                if _builds_on(pile[j], x):
                    return True
        if self.fret:
            for su in range(4):
                if s.found[su] and _builds_on(su * 13 + s.found[su] - 1, x):
                    return True
        return False

    def king_waiting(self, s: _Pos, reach: list[tuple[int, int]]) -> bool:
        for i, pile in enumerate(s.piles):
            if s.down[i] > 0 and len(pile) > s.down[i] and _rank(pile[s.down[i]]) == 13:
                return True
        for i, _ in reach:
            if _rank(s.talon[i]) == 13:
                return True
        return self.fret and 13 in s.found

    @staticmethod
    def first_empty(s: _Pos) -> int:
        for i, pile in enumerate(s.piles):
            if not pile:
                return i
        return -1

    @staticmethod
    def add(m: list[Move], move: Move) -> None:
        if len(m) < MAXMOVES:
            m.append(move)

    def run_moves(self, s: _Pos, i: int, j: int, m: list[Move], reach: list[tuple[int, int]]) -> None:
        pile = s.piles[i]
        x, count = pile[j], len(pile) - j
        if _rank(x) == 13:
            e = self.first_empty(s)
            if e >= 0 and j == s.down[i] and s.down[i] > 0:
                self.add(m, (M_RUN, i, e, count, 0, 0))
            return
        if j == 0:
            if not self.king_waiting(s, reach):
                return
        elif j > s.down[i]:
            under = pile[j - 1]
            if not (
                s.found[under // 13] == _rank(under) - 1
                or (not self.cut and self.can_receive(s, under, i, reach))
            ):
                return
        # with equivalent runs, a run that only moves from a twin onto the other stays in the same
        # position (but at a root barred from a REDEAL until a move is made)
        same = (
            twin_of(pile[j - 1])
            if self.twins and j > s.down[i] and (self.path or self.layer or self.root_redeal)
            else -1
        )
        for t, other in enumerate(s.piles):
            if t != i and other and _builds_on(x, other[-1]) and other[-1] != same:
                self.add(m, (M_RUN, i, t, count, 0, 0))

    def twin_home(
        self, s: _Pos, su: int, where: dict[int, tuple[int, int]], tops: bool, safe_only: bool, m: list[Move]
    ) -> bool:
        """With equivalent runs: the next card of suit su, face up, home as a top (when ``tops``) or,
        covered by a run while its twin is a top, after that run moves onto the twin (as C's twin_home)."""
        if s.found[su] >= 13:
            return False
        x = su * 13 + s.found[su]
        if x not in where or (safe_only and not self.safe(s, x)):
            return False
        i, j = where[x]
        if j == len(s.piles[i]) - 1:
            if not tops:
                return False
            self.add(m, (M_TAB_FOUND, i, 0, 1, 0, 0))
            return True
        t = where.get(twin_of(x))
        if t is None or t[1] != len(s.piles[t[0]]) - 1:
            return False
        self.add(m, (M_TWIN_HOME, i, t[0], len(s.piles[i]) - 1 - j, 0, 0))
        return True

    def gen_moves(self, s: _Pos) -> list[Move]:
        m: list[Move] = []
        found = s.found
        where: dict[int, tuple[int, int]] = {}  # with equivalent runs: each face-up card's (pile, place)
        if self.twins:
            where = {pile[j]: (i, j) for i, pile in enumerate(s.piles) for j in range(s.down[i], len(pile))}
            for su in range(4):  # a safe card home alone, the first by suit (whichever twin a run hangs on)
                if self.twin_home(s, su, where, True, True, m):
                    return m
        else:
            for i, pile in enumerate(s.piles):
                if len(pile) > s.down[i]:
                    x = pile[-1]
                    if found[x // 13] == _rank(x) - 1 and self.safe(s, x):
                        return [(M_TAB_FOUND, i, 0, 1, 0, 0)]
        if self.draw == 1 and s.cur > 0:
            x = s.talon[s.cur - 1]
            if found[x // 13] == _rank(x) - 1 and self.safe(s, x):
                return [(M_TAL_FOUND, 0, 0, 1, s.cur - 1, 0)]
        for i, pile in enumerate(s.piles):
            if len(pile) > s.down[i] and found[pile[-1] // 13] == _rank(pile[-1]) - 1:
                self.add(m, (M_TAB_FOUND, i, 0, 1, 0, 0))
        if self.twins:
            for su in range(4):
                self.twin_home(s, su, where, False, False, m)
        reach = self.talon_reach(s)
        for dn in range(max(s.down), 0, -1):
            for i, pile in enumerate(s.piles):
                if s.down[i] == dn and len(pile) > dn:
                    self.run_moves(s, i, dn, m, reach)
        for q, w in reach:
            x = s.talon[q]
            if found[x // 13] == _rank(x) - 1:
                self.add(m, (M_TAL_FOUND, 0, 0, 1, q, w))
        for q, w in reach:
            x = s.talon[q]
            if _rank(x) == 13:
                e = self.first_empty(s)
                if e >= 0:
                    self.add(m, (M_TAL_TAB, 0, e, 1, q, w))
                continue
            if (self.cut or not self.keep_cur) and not self.can_receive(s, x, -1, reach):
                continue
            for t, pile in enumerate(s.piles):
                if pile and _builds_on(x, pile[-1]):
                    self.add(m, (M_TAL_TAB, 0, t, 1, q, w))
        for i, pile in enumerate(s.piles):
            if s.down[i] == 0 and pile:
                self.run_moves(s, i, 0, m, reach)
        if self.partial:
            for i, pile in enumerate(s.piles):
                for j in range(len(pile) - 1, s.down[i], -1):
                    self.run_moves(s, i, j, m, reach)
        if self.fret and not self.cut:
            for su in range(4):
                r = found[su]
                if r == 0 or not self.worth_returning(s, r, su):
                    continue
                x = su * 13 + r - 1
                if not self.can_receive(s, x, -1, reach):
                    continue
                if r == 13:
                    e = self.first_empty(s)
                    if e >= 0:
                        self.add(m, (M_FOUND_TAB, su, e, 1, 0, 0))
                    continue
                for t, pile in enumerate(s.piles):
                    if pile and _builds_on(x, pile[-1]):
                        self.add(m, (M_FOUND_TAB, su, t, 1, 0, 0))
        return m

    def key(self, s: _Pos) -> tuple[object, ...]:
        if self.twins:
            # equivalent runs: each pile as its face-down cards and lowest face-up card, and the
            # face-up cards above those as one set (whichever twin each run hangs on)
            piles: tuple[object, ...] = tuple(
                sorted((s.down[i], tuple(p[: s.down[i] + 1])) for i, p in enumerate(s.piles))
            )
            up = frozenset(c for i, p in enumerate(s.piles) for c in p[s.down[i] + 1 :])
            piles = (piles, up)
        else:
            piles = tuple(sorted((s.down[i], tuple(p)) for i, p in enumerate(s.piles)))
        cur = -1
        if self.keep_cur:
            cur = 0 if s.redeals < 0 and (s.cur % self.draw == 0 or s.cur == len(s.talon)) else s.cur
        root_fixed = not self.path and not self.layer and not self.root_redeal  # the root may not REDEAL
        return piles, tuple(s.talon), cur, s.redeals, root_fixed

    def dominated(self, s: _Pos, k: tuple[object, ...]) -> bool:
        """Whether a position with the same piles and talon and a ``cur`` that reaches every talon
        card this one reaches is in the table (_cklondike.c's dominated argues it): a ``cur`` of
        the same class mod ``draw`` that is no larger, or any ``cur`` when this one is
        canonically 0."""
        piles, talon, cur, redeals, root_fixed = k
        assert isinstance(cur, int)
        return any(
            (piles, talon, q, redeals, root_fixed) in self.seen
            for q in dominating_curs(cur, len(s.talon), self.draw)
        )

    def made(self, s: _Pos) -> None:
        """One more position (of a pass or a beam): counted (``count_node``, which may raise
        ``_Stop``), and the most progress seen kept."""
        self.count_node()
        self.best = max(self.best, self.progress_of(s))

    def dfs(self, s: _Pos) -> bool:
        self.made(s)
        if _won(s):
            return True
        k = self.key(s)
        if k in self.seen:
            return False
        self.seen.add(k)
        # talon dominance: the full search only, with a REDEAL allowed (as _cklondike.c)
        if (
            not self.quick
            and self.dominance
            and self.keep_cur
            and s.redeals < 0
            and (self.path or self.root_redeal)
            and self.dominated(s, k)
        ):
            return False
        if self.dead_ends and stuck(s, self.fret):
            return False  # lost: see stuck (every pass: it only drops lost positions)
        if len(self.path) >= MAXDEPTH:
            self.truncated = True
            return False
        moves = self.gen_moves(s)
        if len(moves) >= MAXMOVES:
            self.truncated = True  # as _cklondike.c: a move may have been dropped, never claim LOST
        self.shake(moves)
        return self.descend(s, moves, _child)

    def beam(self, root: _Pos, width: int) -> bool:
        """One beam of ``width`` from the root over the passes' moves (as C's ``beam``,
        through ``_pycommon.beam``): children not seen before and not dead ends are kept, best
        by ``worth``. True with the line in ``self.path``. ``self.layer`` is the depth of the
        positions whose moves are made (the root alone may be barred from a REDEAL), then of the
        children being keyed."""
        self.seen.clear()
        self.path.clear()
        self.layer = 0
        self.seen.add(self.key(root))

        def moves(pos: _Pos, depth: int) -> list[Move]:
            self.layer = depth
            return self.gen_moves(pos)

        def keep(pos: _Pos, depth: int) -> bool:
            self.layer = depth
            k = self.key(pos)
            if k in self.seen:
                return False
            self.seen.add(k)
            return not (self.dead_ends and stuck(pos, self.fret))  # a dead end is lost

        try:
            line = _beam(root, width, MAXDEPTH, moves, _child, self.made, _won, self.worth, keep)
        finally:
            self.layer = 0
        if line is None:
            return False
        self.path = line
        return True

    def worth(self, s: _Pos) -> int:
        """A beam's worth of a position (as C's ``worth``; only the order matters): cards home,
        face-down cards, talon cards left, spaces."""
        return (
            W_HOME * sum(s.found)
            - W_TALON * len(s.talon)
            + sum(W_SPACE if not pile else -W_DOWN * s.down[i] for i, pile in enumerate(s.piles))
        )

    def quick_beam(self, root: _Pos, width: int, max_nodes: int, quick_total: int) -> bool:
        """One beam of ``width`` from the root with a fresh table and the full search's moves,
        within the quick passes' share of the budget (as C's ``quick_beam``): True a win (the
        line in ``self.path``), else False (no beam claims a loss). Raises ``_Stop`` when stopped."""
        self.max_nodes = min(max_nodes, quick_total) if max_nodes else quick_total
        self.noisy = False
        self.cut = False
        try:
            return self.beam(root.copy(), width)
        except _Stop:
            if self.stopped:
                raise
            return False


def twin_of(x: int) -> int:
    """A card's twin: the other card of its rank and colour (spades and clubs, hearts and diamonds)."""
    return (3 - x // 13) * 13 + x % 13


def _won(s: _Pos) -> bool:
    return not s.talon and not any(s.down)


def _child(s: _Pos, mv: Move) -> _Pos:
    made = s.copy()
    apply(made, mv)
    return made


def dominating_curs(cur: int, tlen: int, draw: int) -> list[int]:
    """The other canonical values of ``cur`` that reach every talon card ``cur`` reaches (passes
    unlimited, a REDEAL allowed): any, when ``cur`` is canonically 0; else the smaller ones of
    its class mod ``draw`` (as _cklondike.c's dominated)."""
    if cur == 0:
        return [q for q in range(1, tlen) if q % draw]
    return list(range(cur - draw, 0, -draw))


def never_free(s: _Pos) -> bool:
    """A proof of loss before any search: some card can never leave its pile (_cklondike.c's
    never_free argues it). ``available`` over-approximates every card that play can ever bring
    into reach; the pile's blocker (the lowest face-up card, then each face-down card beneath)
    leaves if it is a King, one of its hosts is available, or every lower card of its suit is."""
    available = set(s.talon)
    for su, n in enumerate(s.found):
        available.update(su * 13 + r for r in range(n))
    exposed = []
    for pile, dn in zip(s.piles, s.down):
        available.update(pile[dn:])
        exposed.append(dn + 1 if len(pile) > dn else 0)
    changed = True
    while changed:
        changed = False
        for i, pile in enumerate(s.piles):
            while exposed[i] > 0:
                y = pile[exposed[i] - 1]
                r, su = _rank(y), y // 13
                if not (
                    r == 13
                    or any(_builds_on(y, h) and h in available for h in range(52))
                    or all(su * 13 + q in available for q in range(r - 1))
                ):
                    break
                exposed[i] -= 1
                if exposed[i] > 0:
                    available.add(pile[exposed[i] - 1])
                changed = True
    return len(available) < 52


# The two cards each card can be built on (one rank higher, the other colour): ``stuck`` asks it
# for every card at every position, so it is looked up, not searched for.
_HOSTS = tuple(tuple(h for h in range(52) if _builds_on(x, h)) for x in range(52))


def stuck(s: _Pos, fret: bool) -> bool:
    """Whether some card not home can never depart from its place, so the position is lost
    (_cklondike.c's stuck argues it). ``departs`` over-approximates the cards that ever leave
    their place (what they lie on), as a least fixpoint: a face-down card needs the card on it
    gone first; its foundation needs every lower card of its suit gone (home) and nothing on it;
    a host needs to be a pile's top (now, or once the card on it is gone; from the talon once it
    is gone; from the foundation, with ``fret``, once it came back: as its foundation's top onto
    a host, or a King into a space); a King not at a pile's bottom needs a space (now, or once
    some pile's bottom card is gone)."""
    home = {su * 13 + r for su, n in enumerate(s.found) for r in range(n)}
    talon = set(s.talon)
    above: dict[int, int] = {}
    tops, bottoms, down = set(), set(), set()
    space = False
    for pile, dn in zip(s.piles, s.down):
        if not pile:
            space = True
            continue
        bottoms.add(pile[0])
        tops.add(pile[-1])
        for j in range(len(pile) - 1):
            above[pile[j]] = pile[j + 1]
        down.update(pile[:dn])
    out = [x for x in range(52) if x not in home]
    departs: set[int] = set()
    returns: set[int] = set()  # home cards that can come back (foundation_return)

    def host_free(h: int) -> bool:
        if h in home:
            return h in returns
        if h in talon:
            return h in departs
        return h in tops or (h in above and above[h] in departs)

    changed = True
    while changed:
        changed = False
        for x in sorted(home) if fret else ():
            # back only as its foundation's top, onto a host that is a top then (a King: a space)
            r, su = _rank(x), x // 13
            if x in returns or any(su * 13 + q in home and su * 13 + q not in returns for q in range(r, 13)):
                continue
            if r == 13:
                ok = space or any(b in departs for b in bottoms)
            else:
                ok = any(host_free(h) for h in _HOSTS[x])
            if ok:
                returns.add(x)
                changed = True
        for x in out:
            if x in departs:
                continue
            covered = x in above and above[x] not in departs  # the card on x stays
            if covered and x in down:
                continue  # never uncovered (yet)
            r, su = _rank(x), x // 13
            ok = False
            if not covered and all(su * 13 + q in home or su * 13 + q in departs for q in range(r - 1)):
                ok = True  # to its foundation
            elif r == 13:
                ok = x not in bottoms and (space or any(b in departs for b in bottoms))  # into a space
            else:
                ok = any(host_free(h) for h in _HOSTS[x])
            if ok:
                departs.add(x)
                changed = True
    return len(departs) < len(out)


def _turn_up(s: _Pos, i: int) -> None:
    if s.piles[i] and s.down[i] >= len(s.piles[i]):
        s.down[i] = len(s.piles[i]) - 1


def _take_talon(s: _Pos, mv: Move) -> int:
    x = s.talon.pop(mv[4])
    s.cur = mv[4]
    if mv[5] and s.redeals > 0:
        s.redeals -= 1
    return x


def apply(s: _Pos, mv: Move) -> None:
    kind, src, dst, count = mv[0], mv[1], mv[2], mv[3]
    if kind == M_TAB_FOUND:
        x = s.piles[src].pop()
        s.found[x // 13] += 1
        _turn_up(s, src)
    elif kind == M_TAL_FOUND:
        x = _take_talon(s, mv)
        s.found[x // 13] += 1
    elif kind == M_TAL_TAB:
        s.piles[dst].append(_take_talon(s, mv))
    elif kind == M_RUN:
        run = s.piles[src][-count:]
        del s.piles[src][-count:]
        s.piles[dst].extend(run)
        _turn_up(s, src)
    elif kind == M_FOUND_TAB:
        x = src * 13 + s.found[src] - 1
        s.found[src] -= 1
        s.piles[dst].append(x)
    else:  # M_TWIN_HOME: the run onto the twin, then the card home
        apply(s, (M_RUN, src, dst, count, 0, 0))
        apply(s, (M_TAB_FOUND, src, 0, 1, 0, 0))


def _draws(a: int, b: int, d: int) -> int:
    return (b - a + d - 1) // d


def expand(path: list[Move], s: _Pos, draw: int) -> list[tuple[int, int, int, int, int]]:
    """The macro moves of a win as primitive moves, then the play-out (the lowest top goes up)."""
    out: list[tuple[int, int, int, int, int]] = []
    for mv in path:
        kind = mv[0]
        if kind in (M_TAL_FOUND, M_TAL_TAB):
            start = s.cur
            if mv[5]:
                out += [DRAW_MOVE] * _draws(s.cur, len(s.talon), draw)
                out.append(REDEAL_MOVE)
                start = 0
            out += [DRAW_MOVE] * _draws(start, mv[4] + 1, draw)
            x = s.talon[mv[4]]
            out.append(
                (Z_WASTE, 0, Z_FOUND, x // 13, 1) if kind == M_TAL_FOUND else (Z_WASTE, 0, Z_TAB, mv[2], 1)
            )
        elif kind == M_TAB_FOUND:
            out.append((Z_TAB, mv[1], Z_FOUND, s.piles[mv[1]][-1] // 13, 1))
        elif kind == M_RUN:
            out.append((Z_TAB, mv[1], Z_TAB, mv[2], mv[3]))
        elif kind == M_TWIN_HOME:
            out.append((Z_TAB, mv[1], Z_TAB, mv[2], mv[3]))
            out.append((Z_TAB, mv[1], Z_FOUND, s.piles[mv[1]][-mv[3] - 1] // 13, 1))
        else:
            out.append((Z_FOUND, mv[1], Z_TAB, mv[2], 1))
        apply(s, mv)
    while True:
        tops = [(_rank(p[-1]), i) for i, p in enumerate(s.piles) if p]
        if not tops:
            return out
        best = min(tops)[1]
        out.append((Z_TAB, best, Z_FOUND, s.piles[best][-1] // 13, 1))
        apply(s, (M_TAB_FOUND, best, 0, 1, 0, 0))


def klondike_solve(
    piles: list[bytes],
    downs: list[int],
    found: list[int],
    talon: bytes,
    cur: int,
    draw: int,
    redeals: int,
    partial_runs: bool,
    foundation_return: bool,
    root_redeal: bool,
    max_nodes: int = 0,
    max_seconds: float = 0.0,
    stop: bytearray | None = None,
    quick_nodes: int = QUICK_NODES,
    quick_total: int = QUICK_TOTAL,
    progress: bytearray | None = None,
    full_moves_every: int = FULL_MOVES_EVERY,
    restart_nodes: int = RESTART_NODES,
    dominance: bool = True,
    dead_ends: bool = True,
    beam_first: int = -1,
    beam_last: int = BEAM_LAST_WIDTH,
    equivalent_runs: bool = True,
    safe_two: bool = True,
    loose_safe: bool = False,
    min_table_slots: int = 0,
) -> tuple[int, list[tuple[int, int, int, int, int]], int]:
    """As ``_cklondike.klondike_solve``: (outcome, primitive moves of a win, nodes); ``progress[0]``
    gets the most progress of a position searched (``_Search.progress_of``); ``dominance=False``
    turns the full search's talon dominance off, ``dead_ends=False`` the dead-end test and
    ``equivalent_runs=False`` the equivalent runs (for comparisons); ``beam_first``/``beam_last``
    the beams' widths (``beam_first=0``: no beams; -1: BEAM_FIRST_WIDTH turning more than one
    card, else none, as C); ``safe_two=False`` the safe rule one rank further (``loose_safe``: an
    unsound form of it, tests only). ``min_table_slots`` is C's table limit: a Python set has none."""
    if beam_first < 0:  # by the rules: turning one, the beams cost the restarts more wins than they made
        beam_first = BEAM_FIRST_WIDTH if draw > 1 else 0
    if progress is not None and len(progress) < 1:
        raise ValueError("progress is a writable buffer of at least one byte")
    root = _Pos(
        [list(p) for p in piles],
        [min(d, max(len(p) - 1, 0)) for p, d in zip(piles, downs)],
        list(found),
        list(talon),
        cur,
        redeals,
    )
    search = _Search(
        draw,
        partial_runs,
        foundation_return,
        root_redeal,
        not (draw == 1 and redeals < 0),
        max_nodes,
        max_seconds,
        stop,
    )
    search.root_down = sum(root.down)
    search.dominance = dominance
    search.dead_ends = dead_ends
    search.safe_two = safe_two
    search.loose_safe = loose_safe
    # the proof needs a run to move off a twin onto the other, and every face-up card but a pile's
    # lowest on a host (as play keeps it; a position made up with other face-up cards is not)
    search.twins = (
        equivalent_runs
        and partial_runs
        and all(
            _builds_on(p[j], p[j - 1]) for p, d in zip(root.piles, root.down) for j in range(d + 1, len(p))
        )
    )
    try:
        with deep_recursion(MAXDEPTH):
            # quick passes first (cuts that may lose wins; the next ones with restart noise, every
            # full_moves_every-th of them with the full search's moves; a beam after each),
            # then the full search from scratch (as _cklondike.c, where the schedule is argued)
            search.quick = True
            beam_width = beam_first  # the next beam's (as C)
            if never_free(root) or (dead_ends and stuck(root, foundation_return)):
                return LOST, [], 0
            if redeals >= 0:
                quick_total = 0
            if max_nodes and quick_total > max_nodes // 2:
                quick_total = max_nodes // 2

            def beam_after_pass() -> bool | None:
                """One beam after each pass cut short, widths doubling: True a win, False no more
                passes, None go on."""
                nonlocal beam_width
                if not 0 < beam_width <= beam_last:
                    return None
                won = search.quick_beam(root, beam_width, max_nodes, quick_total)
                beam_width *= 2
                if won or (max_nodes and search.nodes >= max_nodes):
                    return won
                if search.nodes >= quick_total or search.quick_over:
                    return False
                return None

            won = search.quick_passes(
                root,
                max_nodes,
                quick_nodes,
                min(restart_nodes, quick_nodes),
                quick_total,
                full_moves_every,
                beam_after_pass,
            )
            if not won and max_nodes and search.nodes >= max_nodes:
                raise _Stop  # no positions left for the full search: the quick passes' cuts prove nothing
            if not won:
                won = search.full_search(root, max_nodes)
    except _Stop:
        return UNKNOWN, [], search.nodes
    finally:
        if progress is not None:
            progress[0] = search.best
    if won:
        return WON, expand(search.path, root, draw), search.nodes
    return (UNKNOWN if search.truncated else LOST), [], search.nodes
