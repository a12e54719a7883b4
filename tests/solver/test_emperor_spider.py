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
from collections.abc import Sequence

import pytest

from accordion.engine import Game, new_game
from accordion.engine.core import Rules, State
from accordion.engine.moves import DRAW, Move, Zone, transfer
from accordion.engine.tableau import DOWN, FOUNDATIONS, TABLEAU, WASTE
from accordion.solver import HiddenInformationError, Outcome, hint, solve
from accordion.solver.emperor import adapter as emperor_family
from accordion.solver.spider import adapter as spider_family

from .helpers import (
    assert_budgets_and_stop_end_the_search,
    assert_the_verdict,
    check_line,
    open_game,
    replay,
    search_every_move,
)
from .recorded import check_recorded, check_result

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


def brute_force(rules: Rules, state: State, limit: int = 4_000) -> bool | None:
    """Whether the position can be won: depth-first through every legal move, positions seen once.
    With no stock left the piles' order is left out of the position seen (no rule then names a
    pile: only a DEAL puts card j on pile j), which keeps Spider's many spaces small enough."""

    def key(s: State) -> object:
        if s.stock:
            return s
        return tuple(sorted(zip(DOWN.get(s), TABLEAU.get(s)))), FOUNDATIONS.get(s), WASTE.get(s)

    return search_every_move(rules, state, limit, key)


def small_emperor(rules: Rules, rng: random.Random) -> State:
    """A late-game Emperor position: two suits open (both their foundations up to a random rank
    7..12), the others complete; the cards left over the ten piles (one each first, the ones
    under the top face down), the waste and the stock."""
    open_suits = rng.sample(range(4), 2)
    heights = [rng.randint(7, 12) if f % 4 in open_suits else 13 for f in range(8)]
    out = [f % 4 * 13 + r for f in range(8) for r in range(heights[f], 13)]
    rng.shuffle(out)
    piles: list[list[int]] = [[] for _ in range(10)]
    waste: list[int] = []
    stock: list[int] = []
    for j, card in enumerate(out):
        where = rng.random()
        (
            piles[j]
            if j < 10
            else waste
            if where < 0.2
            else stock
            if where < 0.5
            else piles[rng.randrange(10)]
        ).append(card)
    state = rules.layout(
        tuple(map(tuple, piles)), tuple(max(0, len(p) - 1) for p in piles), tuple(stock), foundations=8
    )
    foundations = tuple(tuple(f % 4 * 13 + r for r in range(heights[f])) for f in range(8))
    return state._replace(foundations=foundations, waste=tuple(waste))


def small_spider(rules: Rules, rng: random.Random, suits: int) -> State:
    """A late-game Spider position: seven suits lifted off, the eighth's cards over a few piles
    (some face down) and a stock of 0, 4 or 10 (with fewer than ten cards on the tableau no DEAL
    can ever be made: lost, which the search must prove by exhausting every move)."""
    kinds = [k % suits for k in range(8)]
    rng.shuffle(kinds)
    out = [kinds[7] * 13 + r for r in range(13)]
    rng.shuffle(out)
    stock_size = rng.choice((0, 0, 4, 10))
    stock, rest = out[:stock_size], out[stock_size:]
    piles: list[list[int]] = [[] for _ in range(10)]
    for card in rest:
        piles[rng.randrange(4)].append(card)
    down = tuple(rng.randint(max(0, len(p) - 3), max(0, len(p) - 1)) for p in piles)
    state = rules.layout(tuple(map(tuple, piles)), down, tuple(stock), foundations=8)
    foundations = tuple(
        tuple(kinds[k] * 13 + r for r in reversed(range(13))) if k < 7 else () for k in range(8)
    )
    return state._replace(foundations=foundations)


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
    at 20,995 positions with runs moved through spaces (told as their unit moves); the core
    gives the recorded line and node count, and the line replays through the engine to a WON game.
    Without the staged pass nothing wins four suits within such a budget (0 of 100 deals at 3 M)."""
    game = open_game("spider", {"suits": 4}, 35)
    code, moves, nodes = spider_run(game.state, 25_000, stages=((5_000, 2, 0, 0),))
    check_recorded("spider-4suits-seed35-staged", code, moves, nodes)
    assert code == 1 and nodes == 20_995
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
    within its share of 5,000 positions, then one (stages of 3,000) that wins it alone at 12,995:
    the second starts from scratch, so it wins at 5,001 + 12,995 with the line it finds alone;
    the core gives the recorded result and the line replays."""
    alone = spider_with_stages(35, ((3_000, 2, 0, 0),), 30_000)
    assert alone[0] == 1 and alone[2] == 12_995
    assert spider_with_stages(35, ((2_000, 2, 0, 0),), 5_000)[0] == 0
    portfolio = ((2_000, 2, 0, 5_000), (3_000, 2, 0, 0))
    result = spider_with_stages(35, portfolio, 30_000)
    check_recorded("spider-4suits-seed35-portfolio", *result)
    assert result == (1, alone[1], 5_001 + 12_995)
    replay(open_game("spider", {"suits": 4}, 35), tuple(alone[1]))


@needs_cores
def test_spider_stage_deals_from_positions_apart() -> None:
    """Diverse DEAL positions: seed 591 with stages of 2,000 positions is won at 32,358 when the
    second position a stage DEALs from differs from the first in at least 3 piles, not within
    33,000 from the two best; the core gives the recorded result and the line replays."""
    assert spider_with_stages(591, ((2_000, 2, 0, 0),), 33_000)[0] == 0
    result = spider_with_stages(591, ((2_000, 2, 3, 0),), 33_000)
    check_recorded("spider-4suits-seed591-apart", *result)
    assert result[0] == 1 and result[2] == 32_358
    replay(open_game("spider", {"suits": 4}, 591), tuple(result[1]))


@needs_cores
def test_spider_two_suits_run_the_staged_pass() -> None:
    """Two suits run the staged pass first too: seed 24 with stages of 1,000 positions is won at
    5,115 (the other passes need about 150,000); the core gives the recorded result and the line replays."""
    assert spider_with_stages(24, (), 6_000, suits=2)[0] == 0
    result = spider_with_stages(24, ((1_000, 2, 0, 0),), 6_000, suits=2)
    check_recorded("spider-2suits-seed24-staged", *result)
    assert result[0] == 1 and result[2] == 5_115
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


# --- Emperor's restarts (docs/solver.md, "Emperor") ------------------------------------------


def emperor_args(game: Game) -> tuple[list[bytes], list[int], list[int], bytes, int]:
    """The position as the Emperor cores take it (as ``solver.core`` hands it over)."""
    state = game.state
    waste = WASTE.get(state)
    return (
        [bytes(p) for p in TABLEAU.get(state)],
        list(DOWN.get(state)),
        [len(f) for f in FOUNDATIONS.get(state)],
        bytes(waste) + bytes(state.stock),
        len(waste),
    )


# Small passes, so that the restarts, the noise and the full-move restarts all run within a budget
# that keeps these tests quick (no beams: they would take the quick passes' share).
SMALL_PASSES = {"quick_nodes": 3_000, "restart_nodes": 1_000, "quick_total": 25_000, "beam_first": 0}


@needs_cores
def test_emperor_restart_wins_what_one_pass_does_not() -> None:
    """Seed 103: no win in 60,000 positions without restarts (the first pass, then the full
    search), a win found by a restart with its move order shaken; the core gives the
    recorded line and node count, and the line replays through the engine."""
    from accordion.solver.emperor import _cemperor

    game = open_game("emperor", {}, 103)
    plain = _cemperor.emperor_solve(
        *emperor_args(game), max_nodes=60_000, **{**SMALL_PASSES, "quick_total": 0}
    )
    assert plain[0] == 0  # UNKNOWN
    c = _cemperor.emperor_solve(*emperor_args(game), max_nodes=60_000, **SMALL_PASSES)
    check_recorded("emperor-seed103-restart", *c)
    assert c[0] == 1
    assert SMALL_PASSES["quick_nodes"] < c[2] < SMALL_PASSES["quick_total"]  # in a restart
    replay_core_line(game, c[1])


def replay_core_line(game: Game, line: list[tuple[int, int, int, int, int]]) -> None:
    """Plays a core's primitive moves (src_zone, src, dst_zone, dst, count) through the engine."""
    zones = (Zone.TABLEAU, Zone.FOUNDATION, Zone.STOCK, Zone.WASTE)  # the cores' zone numbers
    replay(
        game,
        tuple(
            DRAW if src_zone == 2 else transfer(zones[src_zone], src, zones[dst_zone], dst, count)
            for src_zone, src, dst_zone, dst, count in line
        ),
    )


@needs_cores
@pytest.mark.parametrize("seed", [0, 39, 224])
def test_emperor_restarts_give_the_recorded_results(seed: int) -> None:
    """The core through the whole schedule (first pass, shaken restarts with and without the
    cut, the full search): the recorded outcome, line and nodes."""
    from accordion.solver.emperor import _cemperor

    game = open_game("emperor", {}, seed)
    c = _cemperor.emperor_solve(*emperor_args(game), max_nodes=30_000, **SMALL_PASSES)
    check_recorded(f"emperor-seed{seed}-restarts", *c)


@needs_cores
@pytest.mark.parametrize("seed", [1, 100004])
def test_emperor_beam_wins_what_the_passes_do_not(seed: int) -> None:
    """Seeds 1 and 100004: no win in 60,000 positions without the beams (the quick passes and the
    full search), a win by a beam (16, then 32, ... wide) in the same budget, under 30,000
    positions; the core gives the recorded line and
    node count, and the line replays."""
    from accordion.solver.emperor import _cemperor

    game = open_game("emperor", {}, seed)
    passes = _cemperor.emperor_solve(*emperor_args(game), max_nodes=60_000, beam_first=0)
    assert passes[0] == 0  # UNKNOWN
    c = _cemperor.emperor_solve(*emperor_args(game), max_nodes=60_000)
    check_recorded(f"emperor-seed{seed}-beam", *c)
    assert c[0] == 1
    assert c[2] < 30_000
    replay_core_line(game, c[1])


@needs_cores
def test_emperor_full_move_beam_wins() -> None:
    """Seed 26: the beams over the cut's moves alone do not win it (nor did that search in 4 M
    positions), the beam over the full search's moves that follows the first does, at 37,041
    positions; the core gives the recorded result and the line replays."""
    from accordion.solver.emperor import _cemperor

    game = open_game("emperor", {}, 26)
    c = _cemperor.emperor_solve(*emperor_args(game), max_nodes=60_000)
    check_recorded("emperor-seed26-full-move-beam", *c)
    assert c[0] == 1
    assert c[2] == 37_041
    replay_core_line(game, c[1])


@needs_cores
@pytest.mark.parametrize("seed", [0, 39, 224])
def test_emperor_beams_then_restarts_give_the_recorded_results(seed: int) -> None:
    """The core through the whole schedule with beams (16, 32, 64 wide, each over the cut's
    moves then the full ones; then the first pass, the restarts and the full search): the
    recorded outcome, line and nodes."""
    from accordion.solver.emperor import _cemperor

    game = open_game("emperor", {}, seed)
    passes = {**SMALL_PASSES, "beam_first": 16, "beam_last": 64}
    c = _cemperor.emperor_solve(*emperor_args(game), max_nodes=30_000, **passes)
    check_recorded(f"emperor-seed{seed}-beams-restarts", *c)
