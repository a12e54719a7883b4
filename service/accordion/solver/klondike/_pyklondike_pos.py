"""Klondike's positions for the pure-Python search (``_pyklondike.py``): the limits, the macro
moves, the position (``_Pos``) and a move's effect on it (``apply``), the proofs of loss before a
search (``never_free``, ``stuck``) and a win's macro moves as primitive ones (``expand``); each as
``_cklondike.c``'s (its ``_cklondike_state.h``, ``_cklondike_moves.h``, ``_cklondike_search.h``).
"""

from __future__ import annotations

from ...engine.moves import ZONE_CODES, Zone
from ._pycommon import builds_alternate as _builds_on
from ._pycommon import rank as _rank

MAXMOVES = 200
MAXDEPTH = 1000

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
