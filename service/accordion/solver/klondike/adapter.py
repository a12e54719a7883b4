"""Klondike's family (``KlondikeSearch``): the compiled core ``_cklondike`` or its twin
``_pyklondike``, the readable reference of the subtlest search (README.md)."""

from __future__ import annotations

from typing import Protocol

from ...engine.core import Rules, State
from ...engine.moves import DRAW, REDEAL, Move
from ...engine.search import KlondikeSearch
from ...engine.tableau import DOWN, FOUNDATIONS, TABLEAU, WASTE
from ..family import Budget, Family, Found, core_moves
from . import _pyklondike

try:  # the compiled core, built by setup.py; optional
    from . import _cklondike  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - exercised on machines without a compiler
    _cklondike = None


class KlondikeCore(Protocol):
    """``_cklondike`` and ``_pyklondike`` (whose signature has the search's settings too)."""

    def klondike_solve(
        self,
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
        *,
        progress: bytearray | None = None,
        equivalent_runs: bool = True,
    ) -> tuple[int, list[tuple[int, int, int, int, int]], int]: ...


CORE: KlondikeCore | None = _cklondike  # a module attribute, so that a test can take the core away


def klondike_solve(
    backend: KlondikeCore,
    search: KlondikeSearch,
    state: State,
    max_nodes: int,
    max_seconds: float,
    stop: bytearray | None,
    progress: bytearray | None = None,
    equivalent_runs: bool = True,
) -> tuple[int, list[Move], int]:
    """Hand a Klondike position to ``backend`` as plain data; its primitive moves as engine moves.

    The talon is the waste (bottom to top) then the stock (drawing order); ``cur`` is the
    waste's length. Foundations are indexed by suit, as the game keeps them.
    """
    waste = WASTE.get(state)
    redeals = -1 if search.passes == 0 else max(0, search.passes - 1 - search.redeals_used)
    code, raw, nodes = backend.klondike_solve(
        [bytes(p) for p in TABLEAU.get(state)],
        list(DOWN.get(state)),
        [len(f) for f in FOUNDATIONS.get(state)],
        bytes(waste) + bytes(state.stock),
        len(waste),
        search.draw,
        redeals,
        search.partial_runs,
        search.foundation_return,
        search.moved,
        max_nodes,
        max_seconds,
        stop=stop,
        progress=progress,
        equivalent_runs=equivalent_runs,
    )
    return code, core_moves(raw, DRAW, REDEAL), nodes


def solve_klondike(search: KlondikeSearch, rules: Rules, state: State, budget: Budget) -> Found:
    """The family's entry point: the compiled core unless Python is asked for or it is not built."""
    backend: KlondikeCore = _pyklondike
    implementation = "python"
    if CORE is not None and budget.compiled(CORE):
        backend, implementation = CORE, "c"
    progress = bytearray(1)  # the most progress of a position visited (``SolveResult.progress``)
    code, moves, nodes = klondike_solve(
        backend,
        search,
        state,
        budget.max_nodes,
        budget.max_seconds,
        budget.stop,
        progress,
        budget.equivalent_runs,
    )
    return Found(code, moves, nodes, "klondike-dfs", implementation, progress[0])


FAMILY = Family("klondike", KlondikeSearch, solve_klondike, compiled=CORE is not None)
