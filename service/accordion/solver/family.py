"""What every family of searches shares: the verdict codes, the budget a search is given, the
answer it gives back, and ``Family``, the entry in the registry (``solver/registry.py``).

A family is one folder of ``solver/``: the search (a C core, and a Python twin where one is kept
as the readable reference), its adapter from the engine's search record (``engine/search.py``)
to the search's plain arguments and from its primitive moves back to engine moves, and its page
of docs (README.md). ``solve`` (``solver/core.py``) looks the record's type up in the registry
and calls the family's entry point; nothing here imports a game module or another family.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from ..engine.core import Rules, State
from ..engine.moves import ZONE_CODES, ZONE_OF_CODE, Move, Zone, transfer
from ..engine.search import Search

# A search's verdict, as every core and twin returns it (first of its (code, moves, nodes)).
UNKNOWN, WON, LOST = 0, 1, 2

# The tableau cores answer in the zones' stable codes (engine/moves.py ZONE_CODES; _ccommon.h's
# Z_TAB, Z_FOUND, Z_STOCK, Z_WASTE, held equal to them by tests/engine/test_zones_declared.py).
CORE_ZONES = ZONE_OF_CODE
Z_STOCK = ZONE_CODES[Zone.STOCK]

S = TypeVar("S", bound=Search)
S_contra = TypeVar("S_contra", bound=Search, contravariant=True)


@dataclass(frozen=True)
class Budget:
    """How long a search may run and how: ``max_nodes`` positions (0: no limit), ``max_seconds``
    (0: no limit), the stop flag's byte (``StopFlag.flag``), the implementation asked for (``"c"``,
    ``"python"`` or None: the compiled core where it is built), and Klondike's equivalent runs."""

    max_nodes: int = 0
    max_seconds: float = 0.0
    stop: bytearray | None = None
    impl: str | None = None
    equivalent_runs: bool = True

    def compiled(self, core: object | None) -> bool:
        """Whether to run the compiled ``core``: it is built and Python was not asked for.
        (``solve`` has already refused ``impl="c"`` in a build without every core.)"""
        return core is not None and self.impl != "python"


@dataclass(frozen=True)
class Found:
    """A family's answer: the verdict code, the engine moves of a win (each legal in turn from the
    position solved), the positions visited, the method and implementation that ran, and the
    progress score (``SolveResult.progress``: Klondike's, Emperor's and Spider's cores)."""

    code: int
    moves: list[Move]
    nodes: int
    method: str
    implementation: str
    progress: int = 0


class EntryPoint(Protocol[S_contra]):
    """A family's search: the engine's record of the position's search, the position, a budget."""

    def __call__(self, search: S_contra, rules: Rules, state: State, budget: Budget, /) -> Found: ...


@dataclass(frozen=True)
class Family(Generic[S]):
    """One entry of the registry: the search record it answers, its entry point, and whether its
    compiled core is built here (a family with no core counts as built)."""

    name: str  # its folder under solver/
    kind: type[S]
    solve: EntryPoint[S]
    compiled: bool


def core_moves(
    raw: list[tuple[int, int, int, int, int]], from_stock: Move, to_stock: Move | None = None
) -> list[Move]:
    """A tableau core's primitive moves ``(src_zone, src, dst_zone, dst, count)`` as engine moves:
    a move out of the stock is ``from_stock`` (Klondike's and Emperor's DRAW, Spider's DEAL), one
    back into it ``to_stock`` (Klondike's REDEAL)."""
    moves: list[Move] = []
    for src_zone, src, dst_zone, dst, count in raw:
        if src_zone == Z_STOCK:
            moves.append(from_stock)
        elif dst_zone == Z_STOCK and to_stock is not None:
            moves.append(to_stock)
        else:
            moves.append(transfer(CORE_ZONES[src_zone], src, CORE_ZONES[dst_zone], dst, count))
    return moves
