"""What the pure-Python twins of the tableau searches share (as the C cores share ``_ccommon.h``):
card arithmetic, the exception that unwinds a search, the quick-pass-then-full-search driver and
the beam pass (Spider's and Klondike's)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Protocol, TypeVar


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


P = TypeVar("P", contravariant=True)


class TwoPassSearch(Protocol[P]):
    quick: bool
    max_nodes: int
    nodes: int
    stopped: bool
    truncated: bool

    def dfs(self, root: P) -> bool: ...

    def restart(self) -> None:
        """Forget the quick pass: its table of positions seen and its line."""


def quick_then_full(search: TwoPassSearch[P], fresh: Callable[[], P], max_nodes: int, quick_nodes: int,
                    max_depth: int) -> bool:
    """The quick pass (cuts that may lose wins, at most ``quick_nodes`` positions), then, if it
    found no win, the full search from scratch, whose failure alone proves a loss, as the C
    cores do. ``fresh()`` gives a new copy of the root position for each pass (a pass changes it).
    Raises ``Stop`` when the budget or the stop flag ends the search."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, max_depth * 2 + 500))
    try:
        search.quick = True
        search.max_nodes = min(max_nodes, quick_nodes) if max_nodes else quick_nodes
        try:
            won = search.dfs(fresh())
        except Stop:
            if search.stopped or (max_nodes and search.nodes >= max_nodes):
                raise
            won = False
        if not won:
            search.quick = False
            search.restart()
            search.truncated = False
            search.max_nodes = max_nodes
            won = search.dfs(fresh())
        return won
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


def beam(root: Q, width: int, max_depth: int, moves: Callable[[Q, int], Iterable[M]],
         child: Callable[[Q, M], Q], made: Callable[[Q], None], won: Callable[[Q], bool],
         worth: Callable[[Q], int], keep: Callable[[Q, int], bool]) -> list[M] | None:
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
