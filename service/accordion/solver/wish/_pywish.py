"""The top-pairs search (Wish; docs/solver.md, "Wish"), in Python only: exact and fast enough.

Two top cards of equal rank on two different piles leave together. A card never moves, so a
position is just the piles' heights: at most 5^8 = 390,625 of them for Wish's eight piles of
four, far fewer reachable. Depth-first search over heights with a table of the heights seen
(each expanded once, so an exhausted search proves the loss), and two cuts argued in
docs/solver.md:

- *forced pairs*: when every card left of a rank is on top of a pile, two of them are removed
  as the only move (any win removes them, and removing top cards early never blocks a move);
- *a pile holding more than half of a rank's cards left* is dead (each of them needs a partner
  on another pile).
"""

from __future__ import annotations

import time

from ..family import LOST, UNKNOWN, WON


class _Stop(Exception):
    """Unwinds the search at its budget or stop flag."""


def pairs_solve(
    piles: list[bytes], max_nodes: int = 0, max_seconds: float = 0.0, stop: bytearray | None = None
) -> tuple[int, list[tuple[int, int]], int]:
    """Piles of ranks (bottom to top) -> (outcome, [(pile, pile)] removals of a win, nodes)."""
    ranks = [list(p) for p in piles]
    n = len(ranks)
    heights = [len(p) for p in ranks]
    left: dict[int, int] = {}
    for p in ranks:
        for r in p:
            left[r] = left.get(r, 0) + 1
    deadline = time.monotonic() + max_seconds if max_seconds > 0 else 0.0
    seen: set[tuple[int, ...]] = set()
    path: list[tuple[int, int]] = []
    nodes = 0

    def dead() -> bool:
        for i in range(n):
            count: dict[int, int] = {}
            for r in ranks[i][: heights[i]]:
                count[r] = count.get(r, 0) + 1
            for r, k in count.items():
                if 2 * k > left[r]:
                    return True
        return False

    def moves() -> list[tuple[int, int]]:
        tops = [ranks[i][heights[i] - 1] if heights[i] else 0 for i in range(n)]
        shown: dict[int, list[int]] = {}
        for i, r in enumerate(tops):
            if r:
                shown.setdefault(r, []).append(i)
        for r, where in shown.items():
            if len(where) >= 2 and len(where) == left[r]:
                return [(where[0], where[1])]
        return [(i, j) for i in range(n) if tops[i] for j in range(i + 1, n) if tops[j] == tops[i]]

    def dfs() -> bool:
        nonlocal nodes
        nodes += 1
        if max_nodes and nodes > max_nodes:
            raise _Stop
        if (nodes & 1023) == 0 and (
            (stop is not None and stop[0]) or (deadline and time.monotonic() > deadline)
        ):
            raise _Stop
        if not any(heights):
            return True
        key = tuple(heights)
        if key in seen:
            return False
        seen.add(key)
        if dead():
            return False
        for i, j in moves():
            r = ranks[i][heights[i] - 1]
            heights[i] -= 1
            heights[j] -= 1
            left[r] -= 2
            path.append((i, j))
            if dfs():
                return True
            path.pop()
            heights[i] += 1
            heights[j] += 1
            left[r] += 2
        return False

    try:
        won = dfs()  # at most 16 removals deep for Wish: no recursion limit to raise
    except _Stop:
        return UNKNOWN, [], nodes
    return (WON, list(path), nodes) if won else (LOST, [], nodes)
