"""The Emperor and Spider solvers: wins replay through the engine, verdicts on small positions
match a brute force, and the cores give the results recorded on seeded deals (their Python twins,
dropped in issue 30, gave the same: tests/solver/recorded.py).

The brute force below uses nothing but the engine's own ``legal_moves``/``apply`` (every DRAW,
DEAL and transfer the rules allow, with a table of positions seen), so a bug in a search's
compact position, its macro moves through Emperor's talon, the compelled and safe foundation
moves, Spider's units, DEAL and lift-off, or the pruning of equivalent spaces shows up as a
disagreement on small late-game positions.
"""

from __future__ import annotations

import functools
import random

import pytest

from accordion.engine import new_game
from accordion.engine.core import State
from accordion.solver import HiddenInformationError, Outcome, hint, solve
from accordion.solver.emperor import adapter as emperor_family
from accordion.solver.spider import adapter as spider_family

from .helpers import (
    assert_budgets_and_stop_end_the_search,
    assert_the_verdict,
    check_line,
    open_game,
    replay,
)
from .recorded import check_result
from .two_deck_positions import brute_force, small_emperor, small_spider

HAVE_TWO_DECK_C = emperor_family.CORE is not None and spider_family.CORE is not None
# "python": the generic search through the engine's rules, what runs where the cores are not built.
IMPLS = ["c", "python"] if HAVE_TWO_DECK_C else ["python"]
needs_cores = pytest.mark.skipif(not HAVE_TWO_DECK_C, reason="the compiled cores are not built")

# (variant, options): Emperor; Spider with each suit count, and the Windows layout.
RULES = [
    ("emperor", {}),
    ("spider", {"suits": 1}),
    ("spider", {"suits": 2}),
    ("spider", {"suits": 4}),
    ("spider", {"suits": 1, "layout": "standard"}),
]


@pytest.mark.parametrize("variant,options", RULES)
def test_won_lines_replay_to_a_win(variant: str, options: dict[str, object]) -> None:
    won = 0
    for seed in range(6):
        game = open_game(variant, options, seed)
        result = solve(game, max_nodes=3_000_000 if HAVE_TWO_DECK_C else 20_000)
        assert result.method == (f"{variant}-dfs" if HAVE_TWO_DECK_C else "generic-dfs")
        if result.won:
            won += 1
            replay(game, result.moves)
        else:
            assert result.moves == ()
    if HAVE_TWO_DECK_C and (variant, options.get("suits")) != ("spider", 4):
        assert won >= 1  # a search that never wins fails here


@needs_cores
@pytest.mark.parametrize("variant,options", RULES)
def test_c_gives_the_recorded_results(variant: str, options: dict[str, object]) -> None:
    outcomes = set()
    for seed in range(6):
        game = open_game(variant, options, seed)
        c = solve(game, max_nodes=2_000, impl="c")
        check_result(f"{variant}-{sorted(options.items())}-seed{seed}-2000", c)
        assert c.implementation == "c"
        outcomes.add(c.outcome)
    assert outcomes <= {Outcome.WON, Outcome.UNKNOWN}


# --- small positions: every verdict equals a brute force over the engine's own moves ----------


CASES = [
    ("emperor", {}, None),
    ("spider", {"suits": 1}, 1),
    ("spider", {"suits": 2}, 2),
    ("spider", {"suits": 4}, 4),
]


@functools.cache
def small_cases(variant: str, suits: int | None) -> tuple[tuple[State, bool], ...]:
    """Sixteen small late-game positions of Emperor (``suits`` None) or Spider, drawn from a
    generator seeded by the case, each with the brute force's verdict (those too large for it
    left out): worked out once a test process, for every test that checks verdicts on them."""
    rules = open_game(variant, {} if suits is None else {"suits": suits}, 0).rules
    rng = random.Random(f"{variant}{suits}")
    cases = []
    for _ in range(16):
        state = small_emperor(rules, rng) if suits is None else small_spider(rules, rng, suits)
        rules.check_state(state)
        truth = brute_force(rules, state)
        if truth is not None:
            cases.append((state, truth))
    return tuple(cases)


@pytest.mark.parametrize("variant,options,suits", CASES)
def test_verdicts_match_brute_force(
    monkeypatch: pytest.MonkeyPatch, variant: str, options: dict[str, object], suits: int | None
) -> None:
    """The core's verdicts on every small position; then, the core taken away (a build without a
    C compiler), the generic search's within 20,000 positions each, until it has decided three: it
    tells positions apart that the brute force takes as one (Spider's piles in another order) and
    tries the engine's moves in their order, so many are out of its reach (one-suit Spider's wins
    above all), but every verdict it gives is the brute force's."""
    rules = open_game(variant, options, 0).rules
    verdicts = {True: 0, False: 0}
    for state, truth in small_cases(variant, suits):
        assert_the_verdict(rules, state, truth, IMPLS[:1])
        verdicts[truth] += 1
    monkeypatch.setattr(emperor_family if variant == "emperor" else spider_family, "CORE", None)
    decided = 0
    for state, truth in small_cases(variant, suits):
        if decided == 3:
            break
        result = solve(state, rules, max_nodes=20_000)
        assert result.method == "generic-dfs"
        if result.outcome is not Outcome.UNKNOWN:
            assert result.outcome is (Outcome.WON if truth else Outcome.LOST), state
            decided += 1
        if result.won:
            check_line(rules, state, result.moves)
    assert decided >= 2, decided
    assert solve(open_game(variant, options, 0), max_nodes=100).outcome is Outcome.UNKNOWN
    assert verdicts[True] >= 3, verdicts
    if suits is not None:
        assert verdicts[False] >= 2, verdicts  # Spider: both verdicts were checked


def test_emperor_deadlock_is_proven_lost() -> None:
    """Emperor's endgames found at random are all won, so a loss is made by hand: spades left
    (foundations at 7 and 6), black on black never builds, both 8s face down under a 9 and a
    10, every pile filled, a 7 to draw from the stock. The brute force agrees: no win."""
    rules = open_game("emperor", {}, 0).rules
    spade = [r - 1 for r in range(14)]  # spade[r]: the card of rank r
    piles = (
        (spade[8], spade[9]),
        (spade[8], spade[10]),
        (spade[9],),
        (spade[10],),
        (spade[11],),
        (spade[11],),
        (spade[12],),
        (spade[12],),
        (spade[13],),
        (spade[13],),
    )
    state = rules.layout(piles, (1, 1, 0, 0, 0, 0, 0, 0, 0, 0), (spade[7],), foundations=8)
    foundations = tuple(
        tuple(f % 4 * 13 + r for r in range(7 if f == 0 else 6 if f == 4 else 13)) for f in range(8)
    )
    state = state._replace(foundations=foundations)
    rules.check_state(state)
    assert rules.legal_moves(state)  # not stuck at once: the DRAW, then the 7 up
    assert brute_force(rules, state) is False
    for impl in IMPLS:
        assert solve(state, rules, impl=impl).outcome is Outcome.LOST


# --- Spider's beams (docs/solver.md, "Spider"): reached with a small quick pass ----------------


@pytest.mark.parametrize("variant", ["emperor", "spider"])
def test_hidden_deal_is_refused_and_hint_does_not_ask_the_solver(variant: str) -> None:
    game = new_game(variant, {}, seed=3)
    with pytest.raises(HiddenInformationError):
        solve(game)
    h = hint(game)
    assert h.source == "heuristic" and h.outcome is None and h.move in game.legal_moves()


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("variant,options", [("emperor", {}), ("spider", {"suits": 4})])
def test_budgets_and_stop_answer_unknown(impl: str, variant: str, options: dict[str, object]) -> None:
    game = open_game(variant, options, 0)
    assert_budgets_and_stop_end_the_search(game, impl, (Outcome.UNKNOWN, Outcome.WON))
