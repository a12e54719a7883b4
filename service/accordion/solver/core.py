"""Solve a full-information position: a winning line, a proof that none exists, or "unknown".

Pure functions of engine positions: no I/O, no clock except for the optional time
budget. Which search runs is what the game says fits it (``Rules.search(state)``, a
record from ``engine.search``); this module imports no game module (docs/solver.md):

- stacking games (Accordion, Relaxed Accordion, Accordion's Revenge, 23 Skidoo), all
  cards face up: depth-first search over the sequence of pile *tops* (the cards under
  a top never matter again except for the final count), a dead-state table, move
  ordering that buries the top with the fewest partners first, a prune for a top that
  shares rank and suit with no other top, and restarts with growing node limits;
- the eliminators where the cards *between* a matching pair leave (Royal Marriage,
  Push Pin, Double Jump, French): an exact interval dynamic programme, O(n³);
- Concertina and Bayan: depth-first search over the subsets of the row;
- anything else with no hidden cards (The Queen and Her Lad once its stock is empty):
  a generic depth-first search through the engine's own rules, in Python.

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
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from ..engine.cards import RANK
from ..engine.core import Rules, State
from ..engine.errors import EngineError
from ..engine.game import Game
from ..engine.hint import visible_move
from ..engine.moves import DEAL, DRAW, REDEAL, Deal, Move, Redeal, Zone, remove, stack, transfer
from ..engine.search import (
    Build,
    EmperorSearch,
    KlondikeSearch,
    NoSearch,
    OpenTableauSearch,
    Removal,
    RemoveSearch,
    Search,
    SpiderSearch,
    StackSearch,
    TopPairsSearch,
)
from ..engine.tableau import DOWN, FOUNDATIONS, TABLEAU, WASTE
from . import _pyemperor, _pyklondike, _pysolver, _pyspider, _pystreets, _pywish

try:  # the compiled core, built by setup.py; optional
    from . import _csolver  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - exercised on machines without a compiler
    _csolver = None
try:  # the compiled Klondike search, built beside it
    from . import _cklondike  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    _cklondike = None
try:  # the compiled open-tableau search (Streets and Alleys), built beside them
    from . import _cstreets  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    _cstreets = None
try:  # the compiled Emperor and Spider searches, built beside it
    from . import _cemperor, _cspider  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    _cemperor = _cspider = None

# Every compiled core built (a missing one would quietly leave its games on the Python path).
HAVE_C = None not in (_csolver, _cklondike, _cstreets, _cemperor, _cspider)
IMPLEMENTATIONS = ("c", "python") if HAVE_C else ("python",)

_CHANCE = (Deal, Redeal)


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


_OUTCOMES = {_pysolver.WON: Outcome.WON, _pysolver.LOST: Outcome.LOST, _pysolver.UNKNOWN: Outcome.UNKNOWN}


def _backend(impl: str | None) -> Any:
    if impl is None:
        return _csolver if HAVE_C else _pysolver
    if impl == "python":
        return _pysolver
    if impl == "c":
        if not HAVE_C:
            raise ValueError("the compiled solver is not built here; use impl='python' (or None)")
        return _csolver
    raise ValueError(f"impl={impl!r}: choose 'c', 'python' or None")


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
    nodes_limit = max_nodes or 0
    seconds_limit = float(max_seconds or 0.0)
    started = time.perf_counter()
    moves: list[Move]
    search = rules.search(state)
    flag = stop.flag if stop is not None else None
    backend: Any = _pysolver
    progress = bytearray(1)  # written by the Klondike, Emperor and Spider (compiled) searches only
    if isinstance(search, StackSearch):
        backend = _backend(impl)
        tops = bytes(p[-1] for p in state.row)
        if search.goal >= 0 and search.goal not in tops:
            code, raw, nodes = _pysolver.LOST, [], 1
        else:
            code, raw, nodes = backend.stack_solve(
                tops,
                search.near,
                search.far,
                search.right,
                search.strict,
                search.win_piles,
                search.goal,
                nodes_limit,
                seconds_limit,
                stop=flag,
            )
        moves = [stack(s, d) for s, d in raw]
        method = "stack-dfs"
    elif isinstance(search, RemoveSearch):
        backend = _backend(impl)
        if search.removal is Removal.INNER:
            cards = bytes(p[0] for p in state.row)
            code, raw, nodes = backend.elim_dp(
                cards, search.one, search.two, nodes_limit, seconds_limit, stop=flag
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
                nodes_limit,
                seconds_limit,
                stop=flag,
            )
            method = "subset-dfs"
        moves = [remove(*m) for m in raw]
    elif isinstance(search, KlondikeSearch):
        backend = _cklondike if _backend(impl) is _csolver else _pyklondike
        code, moves, nodes = _klondike_solve(
            backend, search, state, nodes_limit, seconds_limit, flag, progress, equivalent_runs
        )
        method = "klondike-dfs"
    elif isinstance(search, OpenTableauSearch):
        backend = _streets_backend(impl)
        code, moves, nodes = _streets_solve(backend, search, state, nodes_limit, seconds_limit, flag)
        method = "open-tableau-dfs"
    elif isinstance(search, TopPairsSearch):
        backend = _pywish  # exact in milliseconds in Python (docs/solver.md, "Wish"): no compiled twin
        piles = [bytes(RANK[c] for c in pile) for pile in TABLEAU.get(state)]
        code, raw, nodes = _pywish.pairs_solve(piles, nodes_limit, seconds_limit, stop=flag)
        moves = [remove(i, j) for i, j in raw]
        method = "pairs-dfs"
    elif isinstance(search, EmperorSearch):
        compiled = _backend(impl) is _csolver and _cemperor is not None
        backend = _cemperor if compiled else _pyemperor
        code, moves, nodes = _two_deck_solve(
            backend.emperor_solve,
            DRAW,
            state,
            True,
            nodes_limit,
            seconds_limit,
            flag,
            progress if compiled else None,
        )
        method = "emperor-dfs"
    elif isinstance(search, SpiderSearch):
        compiled = _backend(impl) is _csolver and _cspider is not None
        backend = _cspider if compiled else _pyspider
        code, moves, nodes = _two_deck_solve(
            backend.spider_solve,
            DEAL,
            state,
            False,
            nodes_limit,
            seconds_limit,
            flag,
            progress if compiled else None,
        )
        method = "spider-dfs"
    else:
        code, moves, nodes = _generic_solve(rules, state, nodes_limit, seconds_limit, flag)
        method = "generic-dfs"

    outcome = _OUTCOMES[code]
    if outcome is Outcome.WON:
        moves = _finish(rules, state, moves, search)
    else:
        moves = []
    return SolveResult(
        outcome=outcome,
        moves=tuple(moves),
        nodes=nodes,
        seconds=time.perf_counter() - started,
        method=method,
        implementation="python" if backend in (_pysolver, _pyklondike) or backend in _PY_TWINS else "c",
        without_redeal=search.chance_ahead,
        progress=progress[0],
    )


_ZONES = (Zone.TABLEAU, Zone.FOUNDATION, Zone.STOCK, Zone.WASTE)  # the core's zone numbers 0..3


def _klondike_solve(
    backend: Any,
    search: KlondikeSearch,
    state: State,
    max_nodes: int,
    max_seconds: float,
    stop: bytearray | None,
    progress: bytearray | None = None,
    equivalent_runs: bool = True,
) -> tuple[int, list[Move], int]:
    """Hand a Klondike position to the search as plain data; its primitive moves as engine moves.

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
    moves: list[Move] = []
    for src_zone, src, dst_zone, dst, count in raw:
        if src_zone == _pyklondike.Z_STOCK:
            moves.append(DRAW)
        elif dst_zone == _pyklondike.Z_STOCK:
            moves.append(REDEAL)
        else:
            moves.append(transfer(_ZONES[src_zone], src, _ZONES[dst_zone], dst, count))
    return code, moves, nodes


_PY_TWINS = (
    _pystreets,
    _pywish,
    _pyemperor,
    _pyspider,
)  # the Python-only paths of the tableau searches below
_BUILDS = {
    Build.ANY_SUIT: _pystreets.BUILD_ANY_SUIT,
    Build.ALTERNATE: _pystreets.BUILD_ALTERNATE,
    Build.SAME_SUIT: _pystreets.BUILD_SAME_SUIT,
}


def _streets_backend(impl: str | None) -> Any:
    """The open-tableau search: compiled where ``impl`` asks for C (or by default) and it is built."""
    if _backend(impl) is _pysolver or (impl is None and _cstreets is None):
        return _pystreets
    if _cstreets is None:
        raise ValueError("the compiled open-tableau search is not built here; use impl='python' (or None)")
    return _cstreets


def _streets_solve(
    backend: Any,
    search: OpenTableauSearch,
    state: State,
    max_nodes: int,
    max_seconds: float,
    stop: bytearray | None,
) -> tuple[int, list[Move], int]:
    """Hand an open single-card tableau to the search as plain data (foundations by suit)."""
    code, raw, nodes = backend.streets_solve(
        [bytes(p) for p in TABLEAU.get(state)],
        [len(f) for f in FOUNDATIONS.get(state)],
        _BUILDS[search.build],
        search.space_any,
        max_nodes,
        max_seconds,
        stop=stop,
    )
    moves: list[Move] = [
        transfer(Zone.TABLEAU, src, Zone.FOUNDATION if zone else Zone.TABLEAU, dst, 1)
        for zone, src, dst in raw
    ]
    return code, moves, nodes


def _two_deck_solve(
    entry: Any,
    from_stock: Move,
    state: State,
    waste: bool,
    max_nodes: int,
    max_seconds: float,
    stop: bytearray | None,
    progress: bytearray | None = None,
) -> tuple[int, list[Move], int]:
    """Hand an Emperor (``waste``: with its waste and eight foundation heights) or Spider (the
    count of suits lifted off) position to its search; its primitive moves as engine moves, a
    move out of the stock being ``from_stock`` (Emperor's DRAW, Spider's DEAL). ``progress``
    (the compiled cores only) gets the most progress of a position searched."""
    extra = {} if progress is None else {"progress": progress}
    foundations = FOUNDATIONS.get(state)
    piles, downs = [bytes(p) for p in TABLEAU.get(state)], list(DOWN.get(state))
    if waste:
        cards = WASTE.get(state)
        code, raw, nodes = entry(
            piles,
            downs,
            [len(f) for f in foundations],
            bytes(cards) + bytes(state.stock),
            len(cards),
            max_nodes,
            max_seconds,
            stop=stop,
            **extra,
        )
    else:
        code, raw, nodes = entry(
            piles,
            downs,
            sum(1 for f in foundations if f),
            bytes(state.stock),
            max_nodes,
            max_seconds,
            stop=stop,
            **extra,
        )
    moves: list[Move] = [
        from_stock
        if src_zone == _pyklondike.Z_STOCK
        else transfer(_ZONES[src_zone], src, _ZONES[dst_zone], dst, count)
        for src_zone, src, dst_zone, dst, count in raw
    ]
    return code, moves, nodes


def _finish(rules: Rules, state: State, moves: list[Move], search: Search) -> list[Move]:
    """Play on after a win threshold is met until no move is left, so the game's status is WON.

    Only ``win_piles`` > 1 needs it: fewer piles than the threshold stay fewer.
    """
    if not (isinstance(search, StackSearch) and search.win_piles > 1):
        return moves
    for m in moves:
        state = rules.apply(state, m)
    out = list(moves)
    while True:
        legal = [m for m in rules.legal_moves(state) if not isinstance(m, _CHANCE)]
        if not legal:
            return out
        out.append(legal[0])
        state = rules.apply(state, legal[0])


def _generic_solve(
    rules: Rules, state: State, max_nodes: int, max_seconds: float, stop: bytearray | None = None
) -> tuple[int, list[Move], int]:
    """Depth-first search through the engine's rules, for full-information games with no special search."""
    deadline = time.monotonic() + max_seconds if max_seconds > 0 else 0.0
    dead: set[State] = set()
    path: list[Move] = []
    nodes = 0

    class _Stop(Exception):
        pass

    def dfs(s: State) -> bool:
        nonlocal nodes
        nodes += 1
        if (max_nodes and nodes > max_nodes) or (
            (nodes & 1023) == 0
            and ((stop is not None and stop[0]) or (deadline and time.monotonic() > deadline))
        ):
            raise _Stop
        if s in dead:
            return False
        legal = rules.legal_moves(s)
        if not legal and rules.is_won(s):
            return True
        for m in legal:
            if isinstance(m, _CHANCE):
                continue
            path.append(m)
            if dfs(rules.apply(s, m)):
                return True
            path.pop()
        dead.add(s)
        return False

    try:
        won = dfs(state)
    except _Stop:
        return _pysolver.UNKNOWN, [], nodes
    return (_pysolver.WON, list(path), nodes) if won else (_pysolver.LOST, [], nodes)


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
    options: dict[str, Any] | None = None,
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
