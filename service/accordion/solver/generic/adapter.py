"""The generic search: depth first through the engine's own rules, in Python (README.md). It
answers every full-information game with no search of its own (The Queen and Her Lad once its
stock is empty), and the tableau games whose compiled core is not built here."""

from __future__ import annotations

import time
from collections.abc import Iterator

from ...engine.core import Rules, State
from ...engine.moves import Move, Redeal
from ...engine.search import GenericSearch, Search
from ..family import LOST, UNKNOWN, WON, Budget, Family, Found

# French's REDEAL shuffles the cards left: a chance move, never planned through. A DEAL is not:
# the solver sees only positions that hide nothing, so the stock's order is known (Spider dealt
# open, searched here where its core is not built).
_CHANCE = (Redeal,)


def generic_solve(
    rules: Rules, state: State, max_nodes: int, max_seconds: float, stop: bytearray | None = None
) -> tuple[int, list[Move], int]:
    """Whether ``state`` can be won, depth first through every legal move the engine lists (its
    first move first), each position searched once: ``(code, moves of a win, positions)``.

    A position is counted each time it is reached, as a node, and searched only the first time;
    the stop flag and the clock are looked at every 1024 nodes. The search keeps its own stack (a
    position and the moves not yet tried from it), so a line hundreds of moves long (Spider,
    Emperor) needs no deep recursion, and a game whose moves can go back and forth (Streets and
    Alleys) never revisits a position on the line.
    """
    deadline = time.monotonic() + max_seconds if max_seconds > 0 else 0.0
    seen: set[State] = set()
    path: list[Move] = []  # the line to the position being visited
    frames: list[tuple[State, Iterator[Move]]] = []  # each position of the line, its moves not tried
    nodes = 0
    s = state
    while True:
        nodes += 1
        if (max_nodes and nodes > max_nodes) or (
            (nodes & 1023) == 0
            and ((stop is not None and stop[0]) or (deadline and time.monotonic() > deadline))
        ):
            return UNKNOWN, [], nodes
        if s not in seen:
            seen.add(s)
            legal = rules.legal_moves(s)
            if not legal and rules.is_won(s):
                return WON, path, nodes
            frames.append((s, iter([m for m in legal if not isinstance(m, _CHANCE)])))
        elif path:  # reached again: nothing new below it
            path.pop()
        while True:  # the next move to try, backing up from positions with none left
            if not frames:
                return LOST, [], nodes
            parent, untried = frames[-1]
            move = next(untried, None)
            if move is not None:
                path.append(move)
                s = rules.apply(parent, move)
                break
            frames.pop()
            if path:
                path.pop()


def solve_generic(search: Search, rules: Rules, state: State, budget: Budget) -> Found:
    """The family's entry point (any search record: the fallback of every other family)."""
    code, moves, nodes = generic_solve(rules, state, budget.max_nodes, budget.max_seconds, budget.stop)
    return Found(code, moves, nodes, "generic-dfs", "python")


FAMILY = Family("generic", GenericSearch, solve_generic, compiled=True)  # no core to build
