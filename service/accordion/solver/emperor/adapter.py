"""Emperor's family (``EmperorSearch``): two decks, one pass through the stock, on the compiled
core ``_cemperor`` (README.md)."""

from __future__ import annotations

from typing import Protocol

from ...engine.core import Rules, State
from ...engine.moves import DRAW
from ...engine.search import EmperorSearch
from ...engine.tableau import DOWN, FOUNDATIONS, TABLEAU, WASTE
from ..family import Budget, Family, Found, core_moves
from ..generic.adapter import solve_generic

try:  # the compiled core, built by setup.py; optional
    from . import _cemperor  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - exercised on machines without a compiler
    _cemperor = None


class EmperorCore(Protocol):
    def emperor_solve(
        self,
        piles: list[bytes],
        downs: list[int],
        found: list[int],
        talon: bytes,
        cur: int,
        max_nodes: int = 0,
        max_seconds: float = 0.0,
        stop: bytearray | None = None,
        progress: bytearray | None = None,
    ) -> tuple[int, list[tuple[int, int, int, int, int]], int]: ...


CORE: EmperorCore | None = _cemperor  # a module attribute, so that a test can take the core away


def core_args(state: State) -> tuple[list[bytes], list[int], list[int], bytes, int]:
    """The position as the core takes it: the piles and their face-down counts, the eight
    foundations' heights, the talon (the waste bottom to top, then the stock) and the waste's length."""
    waste = WASTE.get(state)
    return (
        [bytes(p) for p in TABLEAU.get(state)],
        list(DOWN.get(state)),
        [len(f) for f in FOUNDATIONS.get(state)],
        bytes(waste) + bytes(state.stock),
        len(waste),
    )


def solve_emperor(search: EmperorSearch, rules: Rules, state: State, budget: Budget) -> Found:
    """The core's primitive moves back as engine moves (a move out of the stock is a DRAW).
    Without the core: the generic search."""
    if CORE is None or not budget.compiled(CORE):
        return solve_generic(search, rules, state, budget)
    progress = bytearray(1)  # the most progress of a position searched (``SolveResult.progress``)
    code, raw, nodes = CORE.emperor_solve(
        *core_args(state), budget.max_nodes, budget.max_seconds, stop=budget.stop, progress=progress
    )
    return Found(code, core_moves(raw, DRAW), nodes, "emperor-dfs", "c", progress[0])


FAMILY = Family("emperor", EmperorSearch, solve_emperor, compiled=CORE is not None)
