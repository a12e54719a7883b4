"""The solver: search over engine positions for games with every card face up. No I/O.

    >>> from accordion.engine import new_game
    >>> from accordion.solver import solve
    >>> game = new_game("accordion", seed=7)
    >>> result = solve(game, max_seconds=1.0)
    >>> result.outcome, len(result.moves)  # doctest: +SKIP
    (<Outcome.WON: 'WON'>, 51)
    >>> for move in result.moves:  # doctest: +SKIP
    ...     game.play(move)

``solve`` answers WON (with the moves), LOST (proven by exhaustive search) or
UNKNOWN (budget spent); ``hint``/``best_move`` give the next move for a Hint;
``find_winnable_seed`` finds a deal the solver wins, for "winnable deals only".
Each family of games has its folder here (``registry.py`` maps the engine's search records to
them): its compiled core, built at install time, and where the core is not built, Python: the
row games' and Klondike's twins (the same verdicts), the other games through the generic search.
See docs/solver.md.
"""

from .core import (
    HAVE_C,
    IMPLEMENTATIONS,
    HiddenInformationError,
    Hint,
    Outcome,
    SolverError,
    SolveResult,
    StopFlag,
    UnsupportedGameError,
    best_move,
    check_solvable,
    find_winnable_seed,
    hint,
    solve,
)
from .sampling import SampledHint, can_sample, layout, sampled_hint

__all__ = [
    "HAVE_C",
    "IMPLEMENTATIONS",
    "HiddenInformationError",
    "Hint",
    "Outcome",
    "SolveResult",
    "SolverError",
    "StopFlag",
    "UnsupportedGameError",
    "best_move",
    "check_solvable",
    "find_winnable_seed",
    "hint",
    "solve",
    "SampledHint",
    "can_sample",
    "layout",
    "sampled_hint",
]
