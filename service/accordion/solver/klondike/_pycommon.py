"""What the Klondike twin builds on (the C cores share the same in ``_ccommon.h``; the Streets,
Emperor and Spider twins that shared it too were dropped in issue 30):
card arithmetic, the exception that unwinds a search, the beam pass (Spider's, Emperor's and
Klondike's), and the searches' common part (``Search``: node counting, the depth-first step, the
full search; ``RestartingSearch``: the quick passes with restart noise, Klondike's and Emperor's)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Generic, Protocol, TypeVar

from ...engine.rng import SplitMix64 as _SplitMix  # the C cores' restart noise (_ccommon.h)


def rank(c: int) -> int:
    """A card's rank, 1 (Ace) to 13 (King); cards are 0..51 (0..103 for two decks), suit by suit."""
    return c % 13 + 1


def red_suit(s: int) -> bool:
    return s == 1 or s == 2


def builds_alternate(x: int, host: int) -> bool:
    """``x`` goes on ``host``: one rank lower, the other colour."""
    return rank(host) == rank(x) + 1 and red_suit(host // 13) != red_suit(x // 13)


class Stop(Exception):
    """Unwinds a search at its budget or stop flag."""


@contextmanager
def deep_recursion(max_depth: int) -> Iterator[None]:
    """Room on Python's stack for a depth-first search ``max_depth`` moves deep (a frame or two a
    move), the old limit back after it."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, max_depth * 2 + 500))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


Q = TypeVar("Q")  # a position
M = TypeVar("M")  # a move
K = TypeVar("K")  # a position's key in a table of positions seen


def unseen(seen: set[K], key: Callable[[Q], K]) -> Callable[[Q, int], bool]:
    """A beam's ``keep`` that takes a position not seen before and records it as seen."""

    def keep(pos: Q, depth: int) -> bool:
        k = key(pos)
        if k in seen:
            return False
        seen.add(k)
        return True

    return keep


def beam(
    root: Q,
    width: int,
    max_depth: int,
    moves: Callable[[Q, int], Iterable[M]],
    child: Callable[[Q, M], Q],
    made: Callable[[Q], None],
    won: Callable[[Q], bool],
    worth: Callable[[Q], int],
    keep: Callable[[Q, int], bool],
) -> list[M] | None:
    """One beam of ``width`` from ``root`` (as the C cores' ``beam``): each layer is every move
    from every position of the one before, and the ``width`` best children are kept, best by
    ``worth``, then by the order they were made in, the ones ``keep`` refuses left out (``keep``
    records a child as seen: a position not seen before, not a dead end). ``moves(position,
    depth)`` gives a position's moves at that depth, ``child(position, move)`` a new position,
    ``made(child)`` counts it as a node (it may raise ``Stop``). Returns the line to a won
    position, or None when a layer is empty or ``max_depth`` is reached."""
    layer = [root]
    links: list[list[tuple[int, M]]] = [[]]  # per layer: (position in the layer before, move)
    for depth in range(max_depth):
        children: list[tuple[int, int, int, M]] = []
        for p, pos in enumerate(layer):
            for mv in moves(pos, depth):
                made_child = child(pos, mv)
                made(made_child)
                if won(made_child):
                    line = [mv]
                    for d in range(depth, 0, -1):
                        p, back = links[d][p]
                        line.append(back)
                    return line[::-1]
                children.append((-worth(made_child), len(children), p, mv))
        children.sort(key=lambda m: m[:2])
        kept: list[Q] = []
        kept_links: list[tuple[int, M]] = []
        for _, _, p, mv in children:
            if len(kept) >= width:
                break
            remade = child(layer[p], mv)  # made again rather than every child kept till the sort
            if not keep(remade, depth + 1):
                continue
            kept.append(remade)
            kept_links.append((p, mv))
        if not kept:
            return None
        layer = kept
        links.append(kept_links)
    return None


class Position(Protocol):
    def copy(self: Q) -> Q: ...


P = TypeVar("P", bound=Position)  # a search's position, which it copies to make a child


class Search(Generic[P, M]):
    """What the tableau searches (Klondike, Emperor, Spider) keep alike: the node budget, the clock
    and the stop flag (as the C cores count nodes), the table of positions seen and the line."""

    def __init__(self, max_nodes: int, max_seconds: float, stop: bytearray | None) -> None:
        self.max_nodes = max_nodes
        self.deadline = time.monotonic() + max_seconds if max_seconds > 0 else 0.0
        # the quick passes end here, their share of a time budget (0.0: none); quick_over once they did
        self.quick_deadline = 0.0
        self.quick_over = False
        self.stop = stop
        self.nodes = 0
        self.truncated = False
        self.quick = False  # a quick pass: unproven cuts, so only a win it finds counts
        self.stopped = False  # by the clock or the caller, not by a node limit
        self.seen: set[tuple[object, ...]] = set()
        self.path: list[M] = []

    def dfs(self, s: P) -> bool:
        raise NotImplementedError

    def gen_moves(self, s: P) -> list[M]:
        raise NotImplementedError

    def key(self, s: P) -> tuple[object, ...]:
        raise NotImplementedError

    def count_node(self) -> None:
        """One more position; raises ``Stop`` past the node limit, the clock, the stop flag or the
        quick passes' share of the time."""
        self.nodes += 1
        if self.max_nodes and self.nodes > self.max_nodes:
            raise Stop
        if (self.nodes & 1023) == 0:
            now = time.monotonic() if self.deadline else 0.0
            if (self.stop is not None and self.stop[0]) or (self.deadline and now > self.deadline):
                self.stopped = True
                raise Stop
            if self.quick and self.quick_deadline and now > self.quick_deadline:
                self.quick_over = True  # not stopped: the full search has the rest
                raise Stop

    def restart(self) -> None:
        """Forget the pass before: its table of positions seen and its line."""
        self.seen.clear()
        self.path.clear()

    def descend(self, s: P, moves: list[M], child: Callable[[P, M], P]) -> bool:
        """Each move from ``s`` in turn, depth first: True once one leads to a win (the line in
        ``self.path``)."""
        for mv in moves:
            made = child(s, mv)
            self.path.append(mv)
            if self.dfs(made):
                return True
            self.path.pop()
        return False

    def full_search(self, root: P, max_nodes: int) -> bool:
        """The full search from scratch (after the quick passes, whose cuts may lose wins): its
        failure alone proves a loss."""
        self.quick = False
        self.restart()
        self.truncated = False
        self.max_nodes = max_nodes
        return self.dfs(root.copy())

    def beam_unseen(
        self,
        root: P,
        width: int,
        max_depth: int,
        child: Callable[[P, M], P],
        fits: Callable[[P, M], bool],
        won: Callable[[P], bool],
        worth: Callable[[P], int],
    ) -> bool:
        """One ``beam`` of ``width`` from ``root`` over the moves that ``fits`` lets through, each
        child kept that was not seen before (Emperor's and Spider's, as C's ``beam``): True with
        the line in ``self.path``; False when a layer is empty or ``max_depth`` is reached."""
        self.seen.clear()
        self.seen.add(self.key(root))

        def moves(pos: P, depth: int) -> list[M]:
            return [mv for mv in self.gen_moves(pos) if fits(pos, mv)]

        line = beam(
            root,
            width,
            max_depth,
            moves,
            child,
            lambda pos: self.count_node(),
            won,
            worth,
            unseen(self.seen, self.key),
        )
        if line is None:
            return False
        self.path = line
        return True


class RestartingSearch(Search[P, M]):
    """A search whose quick passes restart with the move order shaken (Klondike's and Emperor's)."""

    def __init__(self, max_nodes: int, max_seconds: float, stop: bytearray | None) -> None:
        super().__init__(max_nodes, max_seconds, stop)
        self.cut = False  # a quick pass with the unproven cuts (else the full search's moves)
        self.noisy = False  # a restart: the move order is shaken by ``rng``
        self.rng = _SplitMix(0)

    def shake(self, moves: list[M]) -> None:
        """Restart noise: half the time another move goes first (the rest keep their order)."""
        if self.noisy and len(moves) > 1:
            z = self.rng.next()
            if z & 1:
                j = (z >> 1) % len(moves)
                moves[0], moves[j] = moves[j], moves[0]

    def quick_passes(
        self,
        root: P,
        max_nodes: int,
        quick_nodes: int,
        restart_nodes: int,
        quick_total: int,
        full_moves_every: int,
        between: Callable[[], bool | None] | None = None,
    ) -> bool:
        """The quick passes (as the C cores' schedule, argued in _cklondike.c): the first in the
        plain order with the cut, of ``quick_nodes`` positions; then restarts of ``restart_nodes``
        with the order shaken, every ``full_moves_every``-th with the full search's moves, the
        last cut short at ``quick_total`` (their share of the budget). ``between`` runs after each
        pass cut short: True a win, False no more passes, None go on. True when a pass wins; False
        when one sees its whole space without a win, or the share is spent. Raises ``Stop`` when
        the budget or the stop flag ends the search."""
        npass = 0
        while True:
            pass_limit = self.nodes + (restart_nodes if npass > 0 else quick_nodes)
            if npass > 0 and pass_limit > quick_total:
                pass_limit = quick_total  # the last restart is cut short: the full search keeps its share
            self.max_nodes = min(max_nodes, pass_limit) if max_nodes else pass_limit
            self.noisy = npass > 0
            self.cut = not (npass > 0 and full_moves_every > 0 and npass % full_moves_every == 0)
            self.rng = _SplitMix(npass)
            self.restart()
            try:
                return self.dfs(root.copy())  # a win, or the pass's whole space seen
            except Stop:
                if self.stopped or (max_nodes and self.nodes >= max_nodes):
                    raise
                if self.nodes >= quick_total or self.quick_over:
                    return False
            if between is not None:
                won = between()
                if won is not None:
                    return won
            npass += 1

    def full_search(self, root: P, max_nodes: int) -> bool:
        self.noisy = False
        self.cut = False
        return super().full_search(root, max_nodes)
