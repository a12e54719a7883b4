"""Solve a full-information position: a winning line, a proof that none exists, or "unknown".

Pure functions of engine positions: no I/O, no clock except for the optional time
budget. Which search runs is what the game says fits it (``Rules.search(state)``, a
record from ``engine.search``), looked up in the registry of families
(``solver/registry.py``: one folder of ``solver/`` a family, its README.md its page); this
module imports no game module (docs/solver.md):

- stacking games (Accordion, Relaxed Accordion, Accordion's Revenge, 23 Skidoo), all
  cards face up: depth-first search over the sequence of pile *tops* (the cards under
  a top never matter again except for the final count), a dead-state table, move
  ordering that buries the top with the fewest partners first, a prune for a top that
  shares rank and suit with no other top, and restarts with growing node limits;
- the eliminators where the cards *between* a matching pair leave (Royal Marriage,
  Push Pin, Double Jump, French): an exact interval dynamic programme, O(n³);
- Concertina and Bayan: depth-first search over the subsets of the row;
- anything else with no hidden cards (The Queen and Her Lad once its stock is empty):
  a generic depth-first search through the engine's own rules, in Python (also the
  tableau games' search where their compiled core is not built).

Hidden information is refused: a position with cards in the stock raises
``HiddenInformationError`` (the solver would have to read the stock), and a game whose
search is ``NoSearch`` (Cribbage Solitaire) raises ``UnsupportedGameError``. French's REDEAL
is a chance move (a shuffle of the remaining cards), so the solver never plans through it: before the redeal
it answers "won without the redeal" or "no sequence of removals wins without it"
(``SolveResult.without_redeal``, from ``Search.chance_ahead``); after the redeal the
position is solved outright.

A search stops early, answering UNKNOWN, when its budget runs out or when the caller sets
its ``StopFlag`` from another thread (a cancelled call): the compiled core and the Python
path both look at the flag every 1024 positions.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum

from ..engine.core import Rules, State
from ..engine.errors import EngineError
from ..engine.game import Game
from ..engine.hint import visible_move
from ..engine.moves import Move
from ..engine.search import NoSearch
from .family import LOST, UNKNOWN, WON, Budget
from .registry import HAVE_C as HAVE_C
from .registry import family_of

IMPLEMENTATIONS = ("c", "python") if HAVE_C else ("python",)


class StopFlag:
    """Stops a running search from another thread: ``set()`` and the search answers UNKNOWN
    at its next check (every 1024 positions). One flag per search; a set flag stays set.

    The flag is one byte of a ``bytearray`` so the compiled core can read it without the GIL.
    """

    __slots__ = ("flag",)

    def __init__(self) -> None:
        self.flag = bytearray(1)

    def set(self) -> None:
        self.flag[0] = 1

    def is_set(self) -> bool:
        return bool(self.flag[0])


class SolverError(EngineError):
    """The solver cannot answer for this game or position."""

    reason = "SOLVER_REFUSED"


class HiddenInformationError(SolverError):
    """The position has face-down cards (a stock): solving it would reveal them."""

    reason = "HIDDEN_INFORMATION"


class UnsupportedGameError(SolverError):
    """A game the solver does not search (Cribbage Solitaire: a score race, not a win/loss puzzle)."""

    reason = "SOLVER_UNSUPPORTED"


class Outcome(str, Enum):
    WON = "WON"  # ``moves`` win from the position
    LOST = "LOST"  # proven: an exhaustive search found no win
    UNKNOWN = "UNKNOWN"  # the budget ran out first


@dataclass(frozen=True)
class SolveResult:
    """What ``solve`` found.

    ``moves`` (only for WON) are engine moves from the position solved, each legal in
    turn (``Game.play`` accepts them) and ending in a won game. ``nodes`` counts the
    positions visited (cells of the interval programme for the inner eliminators).
    ``without_redeal`` is True when the position still had French's REDEAL to come:
    the verdict is about winning without it. ``progress`` (Klondike; Emperor and Spider from the
    compiled cores; else 0): the most progress of a position the search visited, cards on the
    foundations (Spider's suits lifted off) plus cards turned up since the position solved (the
    sampled Hint's score of a world left UNKNOWN).
    """

    outcome: Outcome
    moves: tuple[Move, ...]
    nodes: int
    seconds: float
    method: str
    implementation: str
    without_redeal: bool = False
    progress: int = 0

    @property
    def won(self) -> bool:
        return self.outcome is Outcome.WON

    @property
    def lost(self) -> bool:
        return self.outcome is Outcome.LOST

    @property
    def unknown(self) -> bool:
        return self.outcome is Outcome.UNKNOWN


_OUTCOMES = {WON: Outcome.WON, LOST: Outcome.LOST, UNKNOWN: Outcome.UNKNOWN}


def _unpack(game_or_state: Game | State, rules: Rules | None) -> tuple[Rules, State]:
    if isinstance(game_or_state, Game):
        return game_or_state.rules, game_or_state.state
    if isinstance(game_or_state, State):
        if rules is None:
            raise TypeError("solve(state, rules): a State needs its Rules")
        return rules, game_or_state
    raise TypeError(f"solve() takes a Game or a State, not {type(game_or_state).__name__}")


def check_solvable(rules: Rules, state: State) -> None:
    """Raise unless ``solve`` may search this position.

    Raises:
        HiddenInformationError: the stock holds cards.
        UnsupportedGameError: Cribbage Solitaire.
    """
    search = rules.search(state)
    if isinstance(search, NoSearch):
        raise UnsupportedGameError(f"{type(rules).__name__}: {search.reason}")
    if rules.hides_anything(state):
        raise HiddenInformationError(
            f"{type(rules).__name__}: cards are face down (in the stock or under the tableau); the solver "
            "works only on positions with every card known (dealing=all or open=true, or once nothing is "
            "hidden)"
        )


def solve(
    game_or_state: Game | State,
    rules: Rules | None = None,
    *,
    max_nodes: int | None = None,
    max_seconds: float | None = None,
    impl: str | None = None,
    stop: StopFlag | None = None,
    equivalent_runs: bool = True,
) -> SolveResult:
    """Search the position for a win.

    Args:
        game_or_state: a ``Game`` (its rules are used) or a ``State`` with ``rules``.
        max_nodes: stop after visiting this many positions (None: no limit).
        max_seconds: stop after about this long (None: no limit). With neither budget
            the search runs until it wins or proves the loss.
        impl: ``"c"``, ``"python"`` or None (the compiled core when it is built).
        stop: set it from another thread to end the search early (answer UNKNOWN).
        equivalent_runs: Klondike with partial runs: a run hung on either of two twins is one
            position (docs/solver.md, *Equivalent runs*); False searches them apart, as the
            Hint's sampled worlds do (``sampling._world_scores`` says why).

    Raises:
        HiddenInformationError, UnsupportedGameError: see ``check_solvable``.
        ValueError: a budget that is not positive; ``impl="c"`` where it is not built.
    """
    rules, state = _unpack(game_or_state, rules)
    check_solvable(rules, state)
    if max_nodes is not None and (not isinstance(max_nodes, int) or max_nodes < 1):
        raise ValueError(f"max_nodes={max_nodes!r}: a positive number of positions, or None")
    if max_seconds is not None and not max_seconds > 0:
        raise ValueError(f"max_seconds={max_seconds!r}: a positive number of seconds, or None")
    if impl not in (None, "c", "python"):
        raise ValueError(f"impl={impl!r}: choose 'c', 'python' or None")
    if impl == "c" and not HAVE_C:
        raise ValueError("the compiled solver is not built here; use impl='python' (or None)")
    started = time.perf_counter()
    search = rules.search(state)
    budget = Budget(
        max_nodes=max_nodes or 0,
        max_seconds=float(max_seconds or 0.0),
        stop=stop.flag if stop is not None else None,
        impl=impl,
        equivalent_runs=equivalent_runs,
    )
    found = family_of(search).solve(search, rules, state, budget)
    outcome = _OUTCOMES[found.code]
    return SolveResult(
        outcome=outcome,
        moves=tuple(found.moves) if outcome is Outcome.WON else (),
        nodes=found.nodes,
        seconds=time.perf_counter() - started,
        method=found.method,
        implementation=found.implementation,
        without_redeal=search.chance_ahead,
        progress=found.progress,
    )


# --- hints ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Hint:
    """A suggested move and where it came from.

    ``source`` is ``"solver"`` when ``move`` starts a win the solver found,
    ``"heuristic"`` otherwise (hidden cards, a proven loss, or the budget ran out);
    ``outcome`` is the solver's verdict, or None when it was not asked (hidden cards).
    """

    move: Move | None
    source: str
    outcome: Outcome | None


def hint(
    game_or_state: Game | State,
    rules: Rules | None = None,
    *,
    max_nodes: int | None = None,
    max_seconds: float | None = 0.25,
    impl: str | None = None,
    stop: StopFlag | None = None,
) -> Hint:
    """The first move of a win when the solver finds one in budget, else a heuristic move.

    Never peeks: with cards in the stock the solver is not asked, and the heuristic
    looks only at the row (``engine.hint.visible_move``).
    """
    rules, state = _unpack(game_or_state, rules)
    legal = rules.legal_moves(state)
    if not legal:
        return Hint(None, "heuristic", None)
    try:
        check_solvable(rules, state)
    except SolverError:
        return Hint(visible_move(rules, state, legal), "heuristic", None)
    result = solve(state, rules, max_nodes=max_nodes, max_seconds=max_seconds, impl=impl, stop=stop)
    if result.won and result.moves:
        return Hint(result.moves[0], "solver", result.outcome)
    return Hint(visible_move(rules, state, legal), "heuristic", result.outcome)


def best_move(
    game_or_state: Game | State,
    rules: Rules | None = None,
    *,
    max_nodes: int | None = None,
    max_seconds: float | None = 0.25,
    impl: str | None = None,
) -> Move | None:
    """The hint's move (``hint``): the first move of a found win, else a heuristic move; None when
    the game is over."""
    return hint(game_or_state, rules, max_nodes=max_nodes, max_seconds=max_seconds, impl=impl).move


# --- winnable deals -----------------------------------------------------------------------


def _open_equivalent(game: Game) -> tuple[Rules, State]:
    """The position to solve to decide whether a new game's deal can be won.

    A full-information deal is itself; a deal from the stock is decided face up when the
    game says dealing order cannot matter (``Rules.face_up_equivalent``: a stacking game or
    Bayan with ``compel=none``); a game with face-down cards and an ``open`` option is decided
    on the same position dealt open (``Rules.dealt_open``: Klondike, …): the moves that win a
    deal are the same whether the player sees its cards or not, so "winnable" is a fact of the
    cards. The answer is about the deal; no hint or reply shows a hidden card.
    """
    rules, state = game.rules, game.state
    if not rules.hides_anything(state):
        return rules, state
    found = rules.face_up_equivalent(state) or rules.dealt_open(state)
    if found is not None and not found[0].hides_anything(found[1]):
        return found
    check_solvable(rules, state)  # raises
    return rules, state  # pragma: no cover


def find_winnable_seed(
    variant: str,
    options: Mapping[str, object] | None = None,
    start_seed: int = 0,
    max_tries: int = 100,
    budget: float | None = 0.5,
    *,
    max_nodes: int | None = None,
    impl: str | None = None,
    new_game: Callable[..., Game] | None = None,
    stop: StopFlag | None = None,
) -> tuple[int, SolveResult] | None:
    """The first seed from ``start_seed`` on whose deal the solver wins, with the win; None if none
    in ``max_tries``.

    ``budget`` is seconds per deal (None: no limit); a deal whose search runs out of
    budget is skipped, as is a proven loss. Seeds wrap around at 2**64.

    Raises:
        UnknownVariantError, InvalidOptionError: as ``new_game``.
        HiddenInformationError: a variant dealt from the stock whose deals cannot be
            decided face up (``compel`` must/strict, The Queen and Her Lad).
        UnsupportedGameError: Cribbage Solitaire.
    """
    if new_game is None:
        from ..engine.game import new_game as _new_game

        new_game = _new_game
    for k in range(max_tries):
        seed = (start_seed + k) % (1 << 64)
        game = new_game(variant, options, seed=seed)
        rules, state = _open_equivalent(game)
        result = solve(state, rules, max_nodes=max_nodes, max_seconds=budget, impl=impl, stop=stop)
        if result.won:
            return seed, result
        if stop is not None and stop.is_set():
            return None
    return None
