"""Spider's own searches (docs/solver.md, "Spider"): the beams and the staged pass, its settings in turn,
and its LOST only after the full search. The shared checks (replays, brute force, recorded
results) are test_emperor_spider.py's."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from accordion.engine.core import State
from accordion.engine.moves import Move
from accordion.solver.spider import adapter as spider_family

from .helpers import (
    open_game,
    replay,
)
from .recorded import check_recorded
from .two_deck_positions import brute_force, small_spider

HAVE_CORE = spider_family.CORE is not None
needs_cores = pytest.mark.skipif(not HAVE_CORE, reason="the compiled core is not built")


def spider_run(state: State, max_nodes: int, **settings: object) -> tuple[int, list[Move], int]:
    """One Spider search by the core with the given settings: (outcome code, engine moves, nodes),
    as the family's adapter hands the position over and reads the line back."""
    code, raw, nodes = spider_family._cspider.spider_solve(
        *spider_family.core_args(state), max_nodes, 0.0, None, **settings
    )
    return code, spider_family.spider_moves(raw), nodes


def spider_with_quick_pass(
    state: State, quick_nodes: int, max_nodes: int
) -> tuple[int, Sequence[object], int]:
    """One Spider search with a quick pass of ``quick_nodes`` (1,000,000 in play) and no staged
    pass (two and four suits run it first), so that a small budget reaches the beams: (outcome
    code, engine moves, nodes)."""
    return spider_run(state, max_nodes, quick_nodes=quick_nodes, stages=())


@needs_cores
def test_spider_beam_wins_and_replays() -> None:
    """Two suits, seed 6: a narrow beam (before the quick pass) wins at 24,959 positions; the
    core gives the recorded line and node count, and the line replays through the engine to a
    WON game."""
    game = open_game("spider", {"suits": 2}, 6)
    code, moves, nodes = spider_with_quick_pass(game.state, 100, 30_000)
    check_recorded("spider-2suits-seed6-beam", code, moves, nodes)
    assert code == 1 and 100 < nodes < 30_000
    replay(game, tuple(moves))


@needs_cores
@pytest.mark.parametrize("suits", [1, 2, 4])
def test_spider_beams_give_the_recorded_results(suits: int) -> None:
    for seed in range(3):
        state = open_game("spider", {"suits": suits}, seed).state
        check_recorded(f"spider-{suits}suits-seed{seed}-beams", *spider_with_quick_pass(state, 200, 5_000))


@needs_cores
def test_spider_staged_pass_wins_four_suits_and_replays() -> None:
    """Four suits, seed 35: the staged pass (stages of 5,000 positions here, 20,000 in play) wins
    at 89,988 positions with runs moved through spaces (told as their unit moves), its last stage
    over every legal move; the core gives the recorded line and node count, and the line replays
    through the engine to a WON game. Without the staged pass nothing wins four suits within such
    a budget (0 of 100 deals at 3 M)."""
    game = open_game("spider", {"suits": 4}, 35)
    code, moves, nodes = spider_run(game.state, 100_000, stages=((5_000, 2, 0, 0),))
    check_recorded("spider-4suits-seed35-staged", code, moves, nodes)
    assert code == 1 and nodes == 89_988
    replay(game, tuple(moves))


def spider_with_stages(
    seed: int, stages: tuple[tuple[int, int, int, int], ...], max_nodes: int, suits: int = 4
) -> tuple[int, Sequence[object], int]:
    """One Spider search with the staged pass's settings ``stages`` (first stage size, positions
    a stage DEALs from, piles they must differ in, share of the budget): (outcome code, engine
    moves, nodes)."""
    state = open_game("spider", {"suits": suits}, seed).state
    return spider_run(state, max_nodes, stages=stages)


@needs_cores
def test_spider_stage_settings_in_turn_each_from_scratch() -> None:
    """The portfolio: a first setting (stages of 2,000 positions) that does not win seed 35
    within its share of 5,000 positions, then one (stages of 3,000) that wins it alone at 85,357:
    the second starts from scratch, so it wins at 5,001 + 85,357 with the line it finds alone;
    the core gives the recorded result and the line replays."""
    alone = spider_with_stages(35, ((3_000, 2, 0, 0),), 100_000)
    assert alone[0] == 1 and alone[2] == 85_357
    assert spider_with_stages(35, ((2_000, 2, 0, 0),), 5_000)[0] == 0
    portfolio = ((2_000, 2, 0, 5_000), (3_000, 2, 0, 0))
    result = spider_with_stages(35, portfolio, 100_000)
    check_recorded("spider-4suits-seed35-portfolio", *result)
    assert result == (1, alone[1], 5_001 + 85_357)
    replay(open_game("spider", {"suits": 4}, 35), tuple(alone[1]))


@needs_cores
def test_spider_stage_deals_from_positions_apart() -> None:
    """Diverse DEAL positions: seed 591 with stages of 2,000 positions is won at 54,876 when the
    second position a stage DEALs from differs from the first in at least 3 piles, not within
    55,000 from the two best; the core gives the recorded result and the line replays."""
    assert spider_with_stages(591, ((2_000, 2, 0, 0),), 55_000)[0] == 0
    result = spider_with_stages(591, ((2_000, 2, 3, 0),), 55_000)
    check_recorded("spider-4suits-seed591-apart", *result)
    assert result[0] == 1 and result[2] == 54_876
    replay(open_game("spider", {"suits": 4}, 591), tuple(result[1]))


@needs_cores
def test_spider_two_suits_run_the_staged_pass() -> None:
    """Two suits run the staged pass first too: seed 24 with stages of 1,000 positions is won at
    58,685 (the other passes need about 150,000); the core gives the recorded result and the line replays."""
    assert spider_with_stages(24, (), 60_000, suits=2)[0] == 0
    result = spider_with_stages(24, ((1_000, 2, 0, 0),), 60_000, suits=2)
    check_recorded("spider-2suits-seed24-staged", *result)
    assert result[0] == 1 and result[2] == 58_685
    replay(open_game("spider", {"suits": 2}, 24), tuple(result[1]))


@needs_cores
def test_spider_lost_only_after_the_full_search() -> None:
    """A lost late-game position (a stock that can never be dealt) proven LOST in n positions is
    LOST with a budget of n and UNKNOWN with n - 1 and with budgets below it (the quick pass and
    the beams prove nothing, even when one of them ends exactly at the budget)."""
    rules = open_game("spider", {"suits": 1}, 0).rules
    rng = random.Random("spider-lost")
    for _ in range(50):
        state = small_spider(rules, rng, 1)
        if brute_force(rules, state) is False:
            break
    else:
        raise AssertionError("no lost position found")
    code, _, nodes = spider_with_quick_pass(state, 1_000_000, 0)
    assert code == 2  # LOST
    assert spider_with_quick_pass(state, 1_000_000, nodes)[0] == 2
    budgets = [nodes - 1, *sorted(random.Random(0).sample(range(1, nodes), 40))]
    assert [spider_with_quick_pass(state, 1_000_000, b)[0] for b in budgets] == [0] * len(budgets)


# --- what is refused, and budgets --------------------------------------------------------------
