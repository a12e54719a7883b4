"""The Klondike search in pure Python: ``_cklondike.c`` step for step (docs/solver.md, "Klondike").

Same position data, same move order, same node counting, same cut-offs, so with a node budget
both return the same verdict, the same moves and the same node count. The table of positions
seen is keyed by the exact canonical position (C uses two 64-bit hashes of the same form).
"""

from __future__ import annotations

from ..family import LOST, UNKNOWN, WON
from ._pycommon import RestartingSearch, deep_recursion
from ._pycommon import Stop as _Stop
from ._pycommon import beam as _beam
from ._pycommon import builds_alternate as _builds_on
from ._pyklondike_moves import _Moves
from ._pyklondike_pos import (
    M_TWIN_HOME,
    MAXDEPTH,
    MAXMOVES,
    Move,
    _child,
    _Pos,
    _won,
    dominating_curs,
    expand,
    never_free,
    stuck,
)

# What the tests and the adapter read here (the position and its rules live in _pyklondike_pos.py).
__all__ = ["M_TWIN_HOME", "_Pos", "_Search", "dominating_curs", "klondike_solve", "never_free", "stuck"]

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


class _Search(_Moves, RestartingSearch[_Pos, Move]):
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
        self.safe_talon = True  # a safe talon card home alone (``safe_talon_card``); off only for comparisons
        self.loose_talon = False  # tests only: ``safe_talon`` without its passes and cur conditions
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
    safe_talon: bool = True,
    loose_talon: bool = False,
    min_table_slots: int = 0,
) -> tuple[int, list[tuple[int, int, int, int, int]], int]:
    """As ``_cklondike.klondike_solve``: (outcome, primitive moves of a win, nodes); ``progress[0]``
    gets the most progress of a position searched (``_Search.progress_of``); ``dominance=False``
    turns the full search's talon dominance off, ``dead_ends=False`` the dead-end test and
    ``equivalent_runs=False`` the equivalent runs (for comparisons); ``beam_first``/``beam_last``
    the beams' widths (``beam_first=0``: no beams; -1: BEAM_FIRST_WIDTH turning more than one
    card, else none, as C); ``safe_two=False`` the safe rule one rank further (``loose_safe``: an
    unsound form of it, tests only); ``safe_talon=False`` a safe talon card home alone
    (``loose_talon``: an unsound form of it, tests only). ``min_table_slots`` is C's table limit:
    a Python set has none."""
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
    search.safe_talon = safe_talon
    search.loose_talon = loose_talon
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
