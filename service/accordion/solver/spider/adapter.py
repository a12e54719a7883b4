"""Spider's family (``SpiderSearch``): two decks, suits lifted off, DEALs from the stock, on the
compiled core ``_cspider`` (README.md)."""

from __future__ import annotations

from typing import Protocol

from ...engine.core import Rules, State
from ...engine.moves import DEAL, Move
from ...engine.search import SpiderSearch
from ...engine.tableau import DOWN, FOUNDATIONS, TABLEAU
from ..family import Budget, Family, Found, core_moves
from ..generic.adapter import solve_generic

try:  # the compiled core, built by setup.py; optional
    from . import _cspider  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - exercised on machines without a compiler
    _cspider = None


class SpiderCore(Protocol):
    def spider_solve(
        self,
        piles: list[bytes],
        downs: list[int],
        found: int,
        stock: bytes,
        max_nodes: int = 0,
        max_seconds: float = 0.0,
        stop: bytearray | None = None,
        progress: bytearray | None = None,
    ) -> tuple[int, list[tuple[int, int, int, int, int]], int]: ...


CORE: SpiderCore | None = _cspider  # a module attribute, so that a test can take the core away


def core_args(state: State) -> tuple[list[bytes], list[int], int, bytes]:
    """The position as the core takes it: the piles and their face-down counts, the count of
    suits lifted off, the stock (dealing order)."""
    return (
        [bytes(p) for p in TABLEAU.get(state)],
        list(DOWN.get(state)),
        sum(1 for f in FOUNDATIONS.get(state) if f),
        bytes(state.stock),
    )


def spider_moves(raw: list[tuple[int, int, int, int, int]]) -> list[Move]:
    """The core's primitive moves as engine moves (a move out of the stock is a DEAL)."""
    return core_moves(raw, DEAL)


def solve_spider(search: SpiderSearch, rules: Rules, state: State, budget: Budget) -> Found:
    """Without the core: the generic search."""
    if CORE is None or not budget.compiled(CORE):
        return solve_generic(search, rules, state, budget)
    progress = bytearray(1)  # the most progress of a position searched (``SolveResult.progress``)
    code, raw, nodes = CORE.spider_solve(
        *core_args(state), budget.max_nodes, budget.max_seconds, stop=budget.stop, progress=progress
    )
    return Found(code, spider_moves(raw), nodes, "spider-dfs", "c", progress[0])


FAMILY = Family("spider", SpiderSearch, solve_spider, compiled=CORE is not None)
