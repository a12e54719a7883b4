"""The Klondike solver on small positions: every verdict equals a brute force over the engine's own
moves (klondike_positions.py), with the proofs of loss before a search (``never_free``), the full
search's talon dominance and the dead-end test (``stuck``) on and off.
"""

from __future__ import annotations

import random

import pytest

from accordion.engine.core import Rules, State
from accordion.solver import Outcome, solve

from .helpers import assert_the_verdict, open_game
from .klondike_positions import (
    IMPLS,
    RULES,
    _Options,
    assert_the_brute_force_verdict,
    brute_force,
    buried_position,
    full_search_with,
    search_position,
    small_position,
    solver_backends,
    walked_positions,
)

# --- small positions: every verdict equals a brute force over the engine's own moves ----------


@pytest.mark.parametrize("variant,options", RULES)
def test_verdicts_match_brute_force(variant: str, options: dict[str, object]) -> None:
    rules = open_game(variant, options, 0).rules
    rng = random.Random(f"{variant}{sorted(options.items())}")
    verdicts = {True: 0, False: 0}
    for _ in range(30):
        # with foundation_return nearly everything can come back: keep those positions smaller
        state = small_position(rules, rng, 11 if options.get("foundation_return") else 10)
        truth = brute_force(rules, state)
        if truth is None:
            continue
        assert_the_verdict(rules, state, truth, IMPLS)
        verdicts[truth] += 1
    assert verdicts[True] + verdicts[False] >= 5  # enough positions were small enough to check


@pytest.mark.parametrize("variant,options", RULES)
def test_a_card_that_can_never_leave_is_a_loss_the_brute_force_confirms(
    variant: str, options: dict[str, object]
) -> None:
    """The proof before any search (``never_free``: LOST in 0 positions) applies to a card
    buried on both its hosts and a lower card of its suit, in C and Python alike, and the brute
    force confirms every such loss it can decide (not with foundation_return: too many states)."""
    rules = open_game(variant, options, 0).rules
    rng = random.Random(f"never-free {variant}{sorted(options.items())}")
    confirmed = 0
    for _ in range(40):
        # with foundation_return nearly everything can come back: keep those positions smaller
        fret = bool(options.get("foundation_return"))
        state = buried_position(rules, rng, 10 if fret else 8, stock=not fret)
        for impl in IMPLS:
            result = solve(state, rules, impl=impl)
            assert (result.outcome, result.nodes) == (Outcome.LOST, 0), (impl, state)
        if fret:
            continue  # cards coming back from the foundations make the brute force explode
        truth = brute_force(rules, state, limit=5_000)
        assert truth is not True, state  # never a win
        confirmed += truth is False
        if confirmed >= 8:
            break
    # the brute force could decide enough of them (the proof counts foundation cards as
    # available, so foundation_return does not change its argument)
    assert fret or confirmed >= 3


# --- the full search's talon dominance --------------------------------------------------------


def test_a_dominating_cur_reaches_every_talon_card_the_other_reaches() -> None:
    """The lemma the talon dominance rests on, for every talon length and ``cur`` turning two and
    three with passes unlimited: each ``cur`` taken as a dominator reaches (with DRAWs and a
    REDEAL) every talon card the dominated ``cur`` reaches. Taking any other ``cur`` fails here."""
    from accordion.solver.klondike import _pyklondike

    checked = 0
    for draw in (2, 3):
        search = _pyklondike._Search(draw, True, True, True, True, 0, 0.0, None)
        for tlen in range(1, 25):

            def reach(cur: int) -> set[int]:
                # Called only within this iteration (B023 does not apply).
                s = _pyklondike._Pos([[] for _ in range(7)], [0] * 7, [0] * 4, list(range(tlen)), cur, -1)  # noqa: B023
                return {i for i, _ in search.talon_reach(s)}  # noqa: B023

            canonical = [0] + [q for q in range(1, tlen) if q % draw]
            for cur in canonical:
                for better in _pyklondike.dominating_curs(cur, tlen, draw):
                    assert better in canonical and better != cur, (draw, tlen, cur, better)
                    assert reach(better) >= reach(cur), (draw, tlen, cur, better)
                    checked += 1
    assert checked > 500


@pytest.mark.parametrize("options", [{}, {"partial_runs": True}])
def test_talon_dominance_keeps_every_verdict_of_the_brute_force(options: dict[str, object]) -> None:
    """Turning three with passes unlimited, the full search does not expand a position whose piles
    and talon it saw with a ``cur`` that reaches every talon card this one reaches. On small
    positions with a long stock where the cut changes the search (fewer positions with it than
    without), every verdict equals the brute force's, with the cut and without it, and C and
    Python agree (same moves, same node counts)."""
    backends = solver_backends()
    rules = open_game("klondike", options, 0).rules
    rng = random.Random(f"talon dominance {sorted(options.items())}")
    checked = {True: 0, False: 0}
    for _ in range(400):
        # with partial runs, foundations from rank 7 up: positions small enough for the brute force
        # (from rank 6, most of this test's two minutes went to brute forces of 300,000 states, half
        # of them given up)
        state = small_position(rules, rng, 7 if options else 6)
        if len(state.stock) < 6:
            continue  # a short talon: few values of cur
        # the full search alone, where the cut applies; the dead-end test and the safe talon cards
        # off, so that the cut is seen alone (they decide most of these losses)
        full_search = full_search_with(rules, state, 6_000, "dominance", dead_ends=False, safe_talon=False)
        with_cut, without = full_search(backends[0], True), full_search(backends[0], False)
        if with_cut[0] == 0 or with_cut[2] == without[2] or (with_cut[0] == 2 and without[2] > 3_000):
            continue  # too large, or the cut did not fire here
        if checked[with_cut[0] == 1] >= 2:
            continue  # enough of this verdict
        truth = brute_force(rules, state, limit=150_000)  # the engine's states, DRAWs included
        if truth is None:
            continue
        assert_the_brute_force_verdict(
            rules, state, truth, full_search, backends, {True: with_cut, False: without}
        )
        checked[truth] += 1
        if min(checked.values()) >= 2:
            break
    assert checked[False] >= 1 and checked[True] >= 2, (
        checked
    )  # the cut fired on losses and wins the brute force decided


# --- the dead-end test (``stuck``): a card that can never depart ------------------------------


@pytest.mark.parametrize("variant,options", [r for r in RULES if not r[1].get("foundation_return")])
def test_a_dead_end_is_a_loss_the_brute_force_confirms(variant: str, options: dict[str, object]) -> None:
    """Whenever ``stuck`` says some card can never depart, the brute force finds no win, and the
    search answers LOST in 0 positions in C and Python; it decides positions ``never_free`` does
    not. (Without foundation_return, where the brute force stays small; the next test has a
    dead end with it.)"""
    from accordion.solver.klondike import _pyklondike

    rules = open_game(variant, options, 0).rules
    rng = random.Random(f"dead ends {variant}{sorted(options.items())}")
    confirmed = beyond_never_free = 0
    for state in walked_positions(rules, rng, 150, 12):
        pos = search_position(state)
        if not _pyklondike.stuck(pos, False):
            continue
        for impl in IMPLS:
            result = solve(state, rules, impl=impl)
            assert (result.outcome, result.nodes) == (Outcome.LOST, 0), (impl, state)
        truth = brute_force(rules, state, limit=20_000)
        assert truth is not True, state  # never a win
        confirmed += truth is False
        beyond_never_free += truth is False and not _pyklondike.never_free(pos)
    assert confirmed >= 3 and beyond_never_free >= 2, (confirmed, beyond_never_free)


def talon_cycle_position(rules: Rules, rng: random.Random) -> State:
    """A dead end that ``never_free`` does not see, with foundation_return: the Queen of spades in
    the talon, a red Jack Z face up on the first pile, and under Z (face down, in a random order)
    both hosts of the Queen (the red Kings), the Jack of spades, Z's other host (the Queen of
    clubs) and the Ten of Z's suit. The Queen can leave the talon only once Z has left (its hosts
    and its foundation wait under Z), Z only onto the Queen (its other host is under it, and so is
    its suit's next card down): neither ever moves. The three other cards out at random."""
    z_suit = rng.choice((1, 2))  # diamonds or hearts
    base = [11, 9 if z_suit == 1 else 12, 9 if z_suit == 2 else 12, 10]  # clubs, diamonds, hearts, spades
    out = [s * 13 + r for s in range(4) for r in range(base[s], 13)]
    queen_spades, z = 3 * 13 + 11, z_suit * 13 + 10
    under = [1 * 13 + 12, 2 * 13 + 12, 3 * 13 + 10, 0 * 13 + 11, z_suit * 13 + 9]  # K♦ K♥ J♠ Q♣, Z's Ten
    rng.shuffle(under)
    rest = [c for c in out if c not in under and c not in (z, queen_spades)]
    rng.shuffle(rest)
    piles: list[list[int]] = [under + [z]] + [[] for _ in range(6)]
    cut = rng.randint(0, len(rest))
    for card in rest[:cut]:
        piles[rng.randrange(1, 7)].append(card)
    stock = rest[cut:] + [queen_spades]
    rng.shuffle(stock)
    state = rules.layout(tuple(map(tuple, piles)), tuple(max(0, len(p) - 1) for p in piles), tuple(stock))
    foundations = tuple(tuple(s * 13 + r for r in range(base[s])) for s in range(4))
    return state._replace(foundations=foundations)


@pytest.mark.parametrize("variant", ["klondike", "klondike-draw-one"])
def test_a_hand_made_dead_end_with_foundation_return(variant: str) -> None:
    """The published rules (foundation_return): the talon cycle above is LOST in 0 positions in C
    and Python; without the dead-end test it takes a search (``never_free`` misses it, since it
    counts every talon card as free); the brute force confirms the losses it can decide."""
    from accordion.solver.klondike import _pyklondike
    from accordion.solver.klondike.adapter import klondike_solve as _klondike_solve

    options = {"partial_runs": True, "foundation_return": True}
    rules = open_game(variant, options, 0).rules
    rng = random.Random(f"talon cycle {variant}")
    confirmed = 0
    for _ in range(6):
        state = talon_cycle_position(rules, rng)
        pos = search_position(state)
        assert _pyklondike.stuck(pos, True) and not _pyklondike.never_free(pos)
        for impl in IMPLS:
            result = solve(state, rules, impl=impl)
            assert (result.outcome, result.nodes) == (Outcome.LOST, 0), (impl, state)
        without_test = _Options(_pyklondike, dead_ends=False)
        code, _, nodes = _klondike_solve(without_test, rules.search(state), state, 50_000, 0.0, None)
        assert code == 2 and nodes > 0, state  # a search without the test proves it too
        truth = brute_force(rules, state, limit=20_000)
        assert truth is not True, state
        confirmed += truth is False
    assert confirmed >= 3


@pytest.mark.parametrize("variant,options", [r for r in RULES if not r[1].get("foundation_return")])
def test_dead_ends_keep_every_verdict_of_the_brute_force(variant: str, options: dict[str, object]) -> None:
    """The full search does not expand a position with a card that can never depart. On small
    positions where that changes the search (fewer positions with the test than without), every
    verdict equals the brute force's, with the test and without it, and C and Python agree (same
    moves, same node counts). Without foundation_return: with it, the small positions the brute
    force can decide have their foundations so high that no dead end appears in them (the test
    above has one, decided at the root)."""
    backends = solver_backends()
    rules = open_game(variant, options, 0).rules
    rng = random.Random(f"dead ends in the search {variant}{sorted(options.items())}")
    checked = 0
    for state in walked_positions(rules, rng, 200, 3):
        full_search = full_search_with(rules, state, 20_000, "dead_ends")
        with_test, without = full_search(backends[0], True), full_search(backends[0], False)
        if with_test[0] == 0 or without[0] == 0 or with_test[2] == without[2]:
            continue  # too large, or the test did not change the search
        truth = brute_force(rules, state, limit=20_000)
        if truth is None:
            continue
        assert_the_brute_force_verdict(
            rules, state, truth, full_search, backends, {True: with_test, False: without}
        )
        checked += 1
        if checked >= 4:
            break
    assert checked >= 2, checked  # the test changed searches the brute force could decide
