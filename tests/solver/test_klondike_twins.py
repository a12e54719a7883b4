"""The Klondike solver's equivalent runs (a run hung on either of two twins is one position): the
covered twin's way home, every verdict the brute force's, the loss proofs they shrink, and where
they apply.
"""

from __future__ import annotations

import random

import pytest

from accordion.engine.core import Rules, State
from accordion.solver import HAVE_C, solve

from .helpers import check_line, open_game
from .klondike_positions import (
    IMPLS,
    assert_the_brute_force_verdict,
    brute_force,
    card,
    full_search_with,
    solver_backends,
    walked_positions,
)

# --- equivalent runs: a run hung on either of two twins is one position -----------------------


def twin_home_position(rules: Rules) -> State:
    """The Ten of diamonds on the Jack of clubs, the Jack of spades (its twin) a top; the Jack of
    clubs is the next card of its foundation and covers the Nine of diamonds and Ten of spades, face
    down, on which the rest waits; its hosts (the red Queens) are home or under the Jack of spades.
    The one way on is the Ten of diamonds onto the Jack of spades, then the Jack of clubs home; but
    that first move only swaps the run between the twins (the same position under equivalent runs),
    so the search must make both as one move (M_TWIN_HOME). After a move (``moved``), so that the
    root's key carries no mark and the swapped position is the root's own."""
    piles = [
        [card(10, "s"), card(9, "d"), card(11, "c"), card(10, "d")],
        [card(12, "d"), card(11, "s")],
        [card(13, "d")],
        [card(13, "s")],
        [card(12, "c")],
        [card(12, "s"), card(11, "d")],
        [card(13, "c")],
    ]
    state = rules.layout(tuple(map(tuple, piles)), (2, 1, 0, 0, 0, 0, 0), ())
    base = [9, 13, 8, 10]  # spades, hearts, diamonds, clubs (the engine's order) home up to these ranks
    return state._replace(
        foundations=tuple(tuple(s * 13 + r for r in range(base[s])) for s in range(4)), moved=1
    )


@pytest.mark.parametrize("variant", ["klondike", "klondike-draw-one"])
def test_equivalent_runs_send_a_covered_twin_home(variant: str) -> None:
    """The position above is won (the brute force says so); with equivalent runs C and Python win
    it with the same line, which replays and sends the Ten of hearts onto the Jack of clubs and
    then the Jack of spades home; without the twin-home move the same search would answer LOST
    (the swapped position is found in the table), which is why the move exists."""
    from accordion.solver.klondike import _pyklondike
    from accordion.solver.klondike.adapter import klondike_solve as _klondike_solve

    rules = open_game(variant, {"partial_runs": True}, 0).rules
    state = twin_home_position(rules)
    assert brute_force(rules, state, limit=50_000) is True
    results = {impl: solve(state, rules, impl=impl) for impl in IMPLS}
    for impl, result in results.items():
        assert result.won, impl
        check_line(rules, state, result.moves)
        assert result.moves[:2] == results[IMPLS[0]].moves[:2]
        first, second = result.moves[0], result.moves[1]
        assert (first.src, first.dst, first.count, second.src) == (0, 1, 1, 0), result.moves[:2]

    class WithoutTwinHome(_pyklondike._Search):
        def twin_home(self, s: object, su: int, where: dict, tops: bool, safe_only: bool, m: list) -> bool:
            made = super().twin_home(s, su, where, tops, safe_only, m)
            if made and m[-1][0] == _pyklondike.M_TWIN_HOME:
                m.pop()
                return False
            return made

    real = _pyklondike._Search
    _pyklondike._Search = WithoutTwinHome
    try:
        code, _, _ = _klondike_solve(_pyklondike, rules.search(state), state, 10_000, 0.0, None)
    finally:
        _pyklondike._Search = real
    assert code == 2  # LOST: the run moved onto the twin is the position already seen


@pytest.mark.parametrize(
    "variant,options", [("klondike", {"partial_runs": True}), ("klondike-draw-one", {"partial_runs": True})]
)
def test_equivalent_runs_keep_every_verdict_of_the_brute_force(
    variant: str, options: dict[str, object]
) -> None:
    """On small positions (and a few random moves on) where equivalent runs change the full
    search (another count of positions), every verdict equals the brute force's, with them and
    without, and C and Python agree (same moves, same node counts); every win replays. Without
    foundation_return: with it, the positions small enough for the brute force were all won."""
    backends = solver_backends()
    rules = open_game(variant, options, 0).rules
    rng = random.Random(f"equivalent runs {variant}{sorted(options.items())}")
    checked = {True: 0, False: 0}
    for state in walked_positions(rules, rng, 300, 4):
        # without the dead-end test (which decides many of these losses at once)
        full_search = full_search_with(rules, state, 20_000, "equivalent_runs", dead_ends=False)
        with_them, without = full_search(backends[0], True), full_search(backends[0], False)
        if with_them[0] == 0 or without[0] == 0 or with_them[2] == without[2]:
            continue  # too large, or equivalent runs did not change the search
        if checked[with_them[0] == 1] >= 3:
            continue  # enough of this verdict
        truth = brute_force(rules, state, limit=20_000)
        if truth is None:
            continue
        assert_the_brute_force_verdict(
            rules, state, truth, full_search, backends, {True: with_them, False: without}
        )
        checked[truth] += 1
        if min(checked.values()) >= 3:
            break
    assert checked[True] >= 2 and checked[False] >= 1, checked  # changed searches the brute force decided


def test_equivalent_runs_shrink_a_loss_proof() -> None:
    """Seed 156 turning three (the published rules): the full search alone proves the loss in under
    a third of the positions it takes without equivalent runs (C: 38,285 against 145,527), and the
    Python twin counts the same."""
    from accordion.solver.klondike import _pyklondike

    game = open_game("klondike", {"partial_runs": True, "foundation_return": True}, 156)
    full_search = full_search_with(game.rules, game.state, 1_000_000, "equivalent_runs")
    fast = _cklondike_or_python()
    answers = {equivalent: full_search(fast, equivalent) for equivalent in (True, False)}
    assert answers[True][0] == answers[False][0] == 2
    assert answers[True][2] * 3 < answers[False][2], (answers[True][2], answers[False][2])
    if fast is not _pyklondike:
        assert full_search(_pyklondike, True)[2] == answers[True][2]


def _cklondike_or_python() -> object:
    if HAVE_C:
        from accordion.solver.klondike import _cklondike  # type: ignore[attr-defined]

        return _cklondike
    from accordion.solver.klondike import _pyklondike

    return _pyklondike


def test_equivalent_runs_only_where_face_up_cards_are_runs() -> None:
    """A position made up with every card face up (not runs, as no play makes them) is searched
    as without equivalent runs (their key reads the face-up cards above a pile's lowest as runs on
    hosts); the same deal as dealt, with runs only, is searched otherwise."""
    backend = _cklondike_or_python()
    game = open_game("klondike", {"partial_runs": True, "foundation_return": True}, 156)
    made_up = game.state._replace(down=(0,) * 7)
    for state, alike in ((made_up, True), (game.state, False)):
        full_search = full_search_with(game.rules, state, 200_000, "equivalent_runs")
        answers = [full_search(backend, on) for on in (True, False)]
        assert (answers[0] == answers[1]) is alike, state
