"""Wish's family (``TopPairsSearch``): pairs of equal tops off the piles, exact in milliseconds
in Python (``_pywish``; README.md), so it has no compiled core."""

from __future__ import annotations

from ...engine.cards import RANK
from ...engine.core import Rules, State
from ...engine.moves import remove
from ...engine.search import TopPairsSearch
from ...engine.tableau import TABLEAU
from ..family import Budget, Family, Found
from . import _pywish


def solve_wish(search: TopPairsSearch, rules: Rules, state: State, budget: Budget) -> Found:
    """The piles as ranks (suits never matter in Wish); the removals back as engine moves."""
    piles = [bytes(RANK[c] for c in pile) for pile in TABLEAU.get(state)]
    code, raw, nodes = _pywish.pairs_solve(piles, budget.max_nodes, budget.max_seconds, stop=budget.stop)
    return Found(code, [remove(i, j) for i, j in raw], nodes, "pairs-dfs", "python")


FAMILY = Family("wish", TopPairsSearch, solve_wish, compiled=True)  # no core to build
