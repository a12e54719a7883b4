"""Streets and Alleys' family (``OpenTableauSearch``): an open tableau of single cards, on the
compiled core ``_cstreets`` (README.md)."""

from __future__ import annotations

from typing import Protocol

from ...engine.core import Rules, State
from ...engine.moves import Zone, transfer
from ...engine.search import Build, OpenTableauSearch
from ...engine.tableau import FOUNDATIONS, TABLEAU
from ..family import Budget, Family, Found
from ..generic.adapter import solve_generic

try:  # the compiled core, built by setup.py; optional
    from . import _cstreets  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - exercised on machines without a compiler
    _cstreets = None

# The core's build rules (``_cstreets.c``: BUILD_ANY_SUIT, BUILD_ALTERNATE, BUILD_SAME_SUIT).
BUILD_ANY_SUIT, BUILD_ALTERNATE, BUILD_SAME_SUIT = 0, 1, 2
BUILDS = {Build.ANY_SUIT: BUILD_ANY_SUIT, Build.ALTERNATE: BUILD_ALTERNATE, Build.SAME_SUIT: BUILD_SAME_SUIT}


class StreetsCore(Protocol):
    def streets_solve(
        self,
        piles: list[bytes],
        found: list[int],
        build: int,
        space_any: bool,
        max_nodes: int = 0,
        max_seconds: float = 0.0,
        stop: bytearray | None = None,
    ) -> tuple[int, list[tuple[int, int, int]], int]: ...


CORE: StreetsCore | None = _cstreets  # a module attribute, so that a test can take the core away


def solve_streets(search: OpenTableauSearch, rules: Rules, state: State, budget: Budget) -> Found:
    """Hand an open single-card tableau to the core as plain data (foundations by suit); its moves
    ``(to_foundation, src, dst)`` back as engine moves. Without the core: the generic search."""
    if CORE is None or not budget.compiled(CORE):
        return solve_generic(search, rules, state, budget)
    code, raw, nodes = CORE.streets_solve(
        [bytes(p) for p in TABLEAU.get(state)],
        [len(f) for f in FOUNDATIONS.get(state)],
        BUILDS[search.build],
        search.space_any,
        budget.max_nodes,
        budget.max_seconds,
        stop=budget.stop,
    )
    moves = [
        transfer(Zone.TABLEAU, src, Zone.FOUNDATION if zone else Zone.TABLEAU, dst, 1)
        for zone, src, dst in raw
    ]
    return Found(code, list(moves), nodes, "open-tableau-dfs", "c")


FAMILY = Family("streets", OpenTableauSearch, solve_streets, compiled=CORE is not None)
