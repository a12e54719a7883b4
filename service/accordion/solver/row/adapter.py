"""The row games' family: the stacking games (``StackSearch``) and the eliminators
(``RemoveSearch``), on the compiled core ``_csolver`` or its twin ``_pysolver`` (README.md)."""

from __future__ import annotations

from typing import Protocol

from ...engine.core import Rules, State
from ...engine.moves import Deal, Move, Redeal, remove, stack
from ...engine.search import Removal, RemoveSearch, StackSearch
from ..family import LOST, Budget, Family, Found
from . import _pysolver

try:  # the compiled core, built by setup.py; optional
    from . import _csolver  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - exercised on machines without a compiler
    _csolver = None


class RowCore(Protocol):
    """``_csolver`` and ``_pysolver``: the same three searches, step for step."""

    def stack_solve(
        self,
        tops: bytes,
        near: int,
        far: int,
        right: bool,
        strict: bool,
        win_piles: int,
        goal: int,
        max_nodes: int = 0,
        max_seconds: float = 0.0,
        restarts: bool = True,
        stop: bytearray | None = None,
    ) -> tuple[int, list[tuple[int, int]], int]: ...

    def elim_dp(
        self,
        cards: bytes,
        one: bool,
        two: bool,
        max_nodes: int = 0,
        max_seconds: float = 0.0,
        stop: bytearray | None = None,
    ) -> tuple[int, list[tuple[int, ...]], int]: ...

    def elim_solve(
        self,
        cards: bytes,
        mode: int,
        one: bool,
        two: bool,
        win_cards: int,
        max_nodes: int = 0,
        max_seconds: float = 0.0,
        restarts: bool = True,
        stop: bytearray | None = None,
    ) -> tuple[int, list[tuple[int, ...]], int]: ...


CORE: RowCore | None = _csolver  # a module attribute, so that a test can take the core away


def _backend(budget: Budget) -> tuple[RowCore, str]:
    if CORE is not None and budget.compiled(CORE):
        return CORE, "c"
    return _pysolver, "python"


def solve_stacking(search: StackSearch, rules: Rules, state: State, budget: Budget) -> Found:
    """Depth-first search over the sequence of pile tops (docs/solver.md, "Stacking games")."""
    backend, implementation = _backend(budget)
    tops = bytes(p[-1] for p in state.row)
    if search.goal >= 0 and search.goal not in tops:
        return Found(LOST, [], 1, "stack-dfs", implementation)
    code, raw, nodes = backend.stack_solve(
        tops,
        search.near,
        search.far,
        search.right,
        search.strict,
        search.win_piles,
        search.goal,
        budget.max_nodes,
        budget.max_seconds,
        stop=budget.stop,
    )
    moves: list[Move] = [stack(s, d) for s, d in raw]
    if search.win_piles > 1:
        moves = _play_out(rules, state, moves)
    return Found(code, moves, nodes, "stack-dfs", implementation)


def solve_removal(search: RemoveSearch, rules: Rules, state: State, budget: Budget) -> Found:
    """The inner eliminators by the interval programme, the others by depth-first search over the
    subsets of the row (docs/solver.md, "Eliminators")."""
    backend, implementation = _backend(budget)
    if search.removal is Removal.INNER:
        cards = bytes(p[0] for p in state.row)
        code, raw, nodes = backend.elim_dp(
            cards, search.one, search.two, budget.max_nodes, budget.max_seconds, stop=budget.stop
        )
        method = "interval-dp"
    else:
        pairs = search.removal is Removal.PAIRS
        cards = bytes(p[-1] if pairs else p[0] for p in state.row)
        code, raw, nodes = backend.elim_solve(
            cards,
            _pysolver.MODE_PAIRS if pairs else _pysolver.MODE_OUTER,
            search.one,
            search.two,
            search.win_cards,
            budget.max_nodes,
            budget.max_seconds,
            stop=budget.stop,
        )
        method = "subset-dfs"
    return Found(code, [remove(*m) for m in raw], nodes, method, implementation)


def _play_out(rules: Rules, state: State, moves: list[Move]) -> list[Move]:
    """Play on after the win threshold (``win_piles`` > 1 piles) is met until no move is left, so
    the game's status is WON: fewer piles than the threshold stay fewer."""
    for m in moves:
        state = rules.apply(state, m)
    out = list(moves)
    while True:
        legal = [m for m in rules.legal_moves(state) if not isinstance(m, (Deal, Redeal))]
        if not legal:
            return out
        out.append(legal[0])
        state = rules.apply(state, legal[0])


STACKING = Family("row", StackSearch, solve_stacking, compiled=CORE is not None)
REMOVAL = Family("row", RemoveSearch, solve_removal, compiled=CORE is not None)
