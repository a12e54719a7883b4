"""What the solver tests of the tableau games share: an open deal, the brute force over the
engine's own moves, the check that a solver's verdict on a small position is the brute force's
(its line legal move after move), and the check that its budgets and stop flag end a search."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterator, Sequence

from accordion.engine import Game, Move, Status, new_game
from accordion.engine.core import Rules, State
from accordion.solver import Outcome, StopFlag, solve


def open_game(variant: str, options: dict[str, object], seed: int) -> Game:
    return new_game(variant, {**options, "open": True}, seed=seed)


def search_every_move(
    rules: Rules,
    state: State,
    limit: int,
    key: Callable[[State], object] = lambda s: s,
    engine_order: bool = True,
) -> bool | None:
    """Whether the position can be won: depth first through every legal move of the engine (its
    first move first; with ``engine_order=False`` its last), each position seen once, as ``key``
    tells positions apart; None past ``limit`` positions (too large for the brute force: the
    position is not used).

    A move is applied only when the search takes it (a stack of the moves left to try, not of
    the positions they lead to): a search that ends on a win or at ``limit`` leaves most of its
    stack untried (three in four of Spider's small positions' moves), so applying every move
    up front cost most of the brute force. Same order, same positions, same verdicts."""
    seen: set[object] = set()
    pending: list[tuple[State, Iterator[Move]]] = []  # a position and the moves not tried from it
    s = state
    while True:
        k = key(s)
        if k not in seen:
            # a position seen before was not won (the search would have ended there), and every
            # key tells apart what ``is_won`` reads (the cards off the foundations): asked once
            # a position, not once a move (Klondike's small positions: ~8 moves to a new one)
            if rules.is_won(s):
                return True
            seen.add(k)
            if len(seen) > limit:
                return None
            moves = rules.legal_moves(s)
            pending.append((s, iter(moves if engine_order else reversed(moves))))
        while pending:
            parent, untried = pending[-1]
            move = next(untried, None)
            if move is not None:
                s = rules.apply(parent, move)
                break
            pending.pop()
        else:
            return False


def replay(game: Game, moves: Sequence[Move]) -> None:
    """The solver's line played through the engine from the dealt game: every move legal
    (``Game.play`` raises otherwise) and the game won at the end (its status WON too, except
    under Klondike's ``foundation_return``, where the engine may leave it in play)."""
    for move in moves:
        game.play(move)
    assert game.rules.is_won(game.state), game.state_string()
    if not game.rules.values.get("foundation_return"):
        assert game.status is Status.WON, game.state_string()


def check_line(rules: Rules, state: State, moves: Sequence[Move], won: bool = True) -> None:
    """Each move is legal in the position the ones before it lead to, and the last position is
    won (or, ``won=False``, not won)."""
    s = state
    for move in moves:
        assert move in rules.legal_moves(s), move
        s = rules.apply(s, move)
    assert rules.is_won(s) is won


def assert_the_verdict(rules: Rules, state: State, truth: bool, impls: Sequence[str | None]) -> None:
    """Each implementation's ``solve`` (None: the default) gives the brute force's verdict
    ``truth`` on ``state``, and a won line that is legal and wins."""
    for impl in impls:
        result = solve(state, rules, impl=impl)
        assert result.outcome is (Outcome.WON if truth else Outcome.LOST), (impl, state)
        if truth:
            check_line(rules, state, result.moves)


def assert_budgets_and_stop_end_the_search(game: Game, impl: str, timed: Collection[Outcome]) -> None:
    """A budget of 5 positions, and a stop flag set before the start (read every 1,024
    positions), answer UNKNOWN; a budget of 0.05 s answers one of ``timed`` well within 30 s."""
    assert solve(game, max_nodes=5, impl=impl).outcome is Outcome.UNKNOWN
    flag = StopFlag()
    flag.set()
    result = solve(game, stop=flag, impl=impl)
    assert result.outcome is Outcome.UNKNOWN and result.nodes <= 1024
    t0 = time.perf_counter()
    result = solve(game, max_seconds=0.05, impl=impl)
    assert result.outcome in timed
    assert time.perf_counter() - t0 < 30
