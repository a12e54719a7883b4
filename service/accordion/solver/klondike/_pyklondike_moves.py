"""The moves of a Klondike position for the pure-Python search (``_pyklondike.py``), as
``_cklondike.c``'s ``gen_moves`` (``_cklondike_moves.h``): the same moves in the same order.
``_Moves`` is the part of ``_pyklondike._Search`` that makes them; it reads the search's rules.
"""

from __future__ import annotations

from ._pycommon import builds_alternate as _builds_on
from ._pycommon import rank as _rank
from ._pycommon import red_suit as _red_suit
from ._pyklondike_pos import (
    M_FOUND_TAB,
    M_RUN,
    M_TAB_FOUND,
    M_TAL_FOUND,
    M_TAL_TAB,
    M_TWIN_HOME,
    MAXMOVES,
    Move,
    _Pos,
    twin_of,
)


class _Moves:
    """The move generator of ``_pyklondike._Search``, which sets these rules (see its ``__init__``)."""

    draw: int
    partial: bool
    fret: bool
    keep_cur: bool
    cut: bool
    twins: bool
    safe_two: bool
    loose_safe: bool
    safe_talon: bool
    loose_talon: bool
    root_redeal: bool
    path: list[Move]  # the line to the position at hand (RestartingSearch's)
    layer: int

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

    def safe_talon_card(self, s: _Pos) -> Move | None:
        """A safe talon card home alone (as _cklondike.c's ``safe_talon_card``), passes unlimited:
        turning one, the lowest talon index of the safe cards in reach; turning more, the talon's
        last card when ``cur`` is canonically 0. ``loose_talon`` (tests only, unsound) drops the
        conditions on the passes and ``cur``."""
        n = len(s.talon)
        if not n or (s.redeals >= 0 and not self.loose_talon):
            return None
        if self.draw > 1:
            x = s.talon[-1]
            canonical = s.redeals < 0 and (s.cur % self.draw == 0 or s.cur == n)
            if (canonical or self.loose_talon) and s.found[x // 13] == _rank(x) - 1 and self.safe(s, x):
                return (M_TAL_FOUND, 0, 0, 1, n - 1, 0)  # drawn to without a REDEAL from any cur
            return None
        home = [(q, w) for q, w in self.talon_reach(s) if s.found[s.talon[q] // 13] == _rank(s.talon[q]) - 1]
        home = [(q, w) for q, w in home if self.safe(s, s.talon[q])]
        if not home:
            return None
        q, w = min(home)
        return (M_TAL_FOUND, 0, 0, 1, q, w)

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
        if self.safe_talon:
            home = self.safe_talon_card(s)
            if home is not None:
                return [home]
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
