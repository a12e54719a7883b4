"""What a caller of the row solver meets: budgets end a search in time and bad ones are refused,
the C and Python paths agree exactly (and Python runs without the extension), hidden stocks and
Cribbage are refused while an emptied stock is solved, hints are the first move of a win and
never depend on the stock's order, and winnable seeds are found. (test_solver.py: the verdicts.)
"""

from __future__ import annotations

import time

import pytest

from accordion.engine import new_game
from accordion.solver import (
    HAVE_C,
    HiddenInformationError,
    Outcome,
    UnsupportedGameError,
    best_move,
    find_winnable_seed,
    hint,
    solve,
)
from accordion.solver import core as solve_module
from accordion.solver.row import adapter as row_family

from .helpers import replay
from .row_cases import IMPLS, no_match_deal

needs_c = pytest.mark.skipif(not HAVE_C, reason="the compiled core is not built")

# --- budgets ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("impl", IMPLS)
def test_tiny_node_budget_returns_unknown(impl: str) -> None:
    for variant in ("accordion", "concertina", "royal-marriage", "bayan"):
        result = solve(new_game(variant, seed=3), max_nodes=1, impl=impl)
        assert result.outcome is Outcome.UNKNOWN and result.moves == () and result.nodes <= 2


@pytest.mark.parametrize("impl", IMPLS)
def test_tiny_time_budget_returns_unknown_in_time(impl: str) -> None:
    # Accordion's Revenge seed 16 takes about 0.2 s (1.2 M positions) to win in C, much longer in
    # Python; a 2 ms budget must come back as UNKNOWN (the bound on the time is generous: a
    # loaded machine must not fail it; the search unbounded takes far longer in Python).
    game = new_game("accordions-revenge", seed=HARD_REVENGE_SEED)
    started = time.perf_counter()
    result = solve(game, max_seconds=0.002, impl=impl)
    elapsed = time.perf_counter() - started
    assert result.outcome is Outcome.UNKNOWN
    assert elapsed < 5.0, elapsed


HARD_REVENGE_SEED = 16


def test_bad_budgets_are_refused() -> None:
    game = new_game("accordion", seed=1)
    with pytest.raises(ValueError):
        solve(game, max_nodes=0)
    with pytest.raises(ValueError):
        solve(game, max_seconds=-1)
    with pytest.raises(ValueError):
        solve(game, impl="fortran")


# --- the two paths agree -------------------------------------------------------------------------------


@needs_c
@pytest.mark.parametrize(
    "variant",
    [
        "accordion",
        "relaxed-accordion",
        "23-skidoo",
        "accordions-revenge",
        "bayan",
        "royal-marriage",
        "push-pin",
        "double-jump",
        "french",
        "concertina",
    ],
)
def test_c_and_python_agree(variant: str) -> None:
    # Same verdict, same moves, same node count, restarts included (4,000 nodes spans several).
    for seed in range(6):
        game = new_game(variant, seed=seed)
        c = solve(game, max_nodes=4000, impl="c")
        py = solve(game, max_nodes=4000, impl="python")
        assert (c.outcome, c.moves, c.nodes) == (py.outcome, py.moves, py.nodes), (variant, seed)
        assert c.implementation == "c" and py.implementation == "python"


def test_python_path_is_chosen_without_the_extension(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(solve_module, "HAVE_C", False)
    monkeypatch.setattr(row_family, "CORE", None)
    result = solve(new_game("accordion", seed=2), max_nodes=50_000)
    assert result.implementation == "python" and result.won
    with pytest.raises(ValueError):
        solve(new_game("accordion", seed=2), impl="c")


# --- refusals --------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["accordion-stock", "compacted", "idle-year", "queen-and-her-lad"])
def test_hidden_stock_is_refused(variant: str) -> None:
    game = new_game(variant, seed=1)
    with pytest.raises(HiddenInformationError) as info:
        solve(game)
    assert isinstance(info.value, ValueError) and "stock" in str(info.value)
    with pytest.raises(HiddenInformationError):
        solve(new_game("bayan", {"dealing": "stock"}, seed=1))


def test_cribbage_is_refused() -> None:
    with pytest.raises(UnsupportedGameError):
        solve(new_game("cribbage-solitaire", seed=1))


def test_emptied_stock_is_solved() -> None:
    # Dealt one by one, but once every card is out the position is face up.
    game = new_game("accordion-stock", seed=4)
    while game.state.stock:
        game.play("deal")
    result = solve(game, max_nodes=400_000)
    assert result.won
    replay(game, result.moves)


def test_queen_and_her_lad_with_an_empty_stock_uses_the_generic_search() -> None:
    verdicts = set()
    for seed in range(6):
        game = new_game("queen-and-her-lad", seed=seed)
        while game.state.stock:  # remove while the row is long, else deal
            removals = [m for m in game.legal_moves() if m.kind.value == "REMOVE"]
            game.play(removals[0] if removals and len(game.state.row) > 25 else "deal")
        result = solve(game, max_nodes=200_000)
        assert result.method == "generic-dfs" and not result.unknown
        verdicts.add(result.outcome)
        if result.won:
            replay(game, result.moves)
    assert verdicts == {Outcome.WON, Outcome.LOST}


# --- hints and winnable deals ----------------------------------------------------------------------


def test_hint_is_the_first_move_of_a_win() -> None:
    game = new_game("accordion", seed=9)
    h = hint(game, max_nodes=400_000)
    assert h.source == "solver" and h.outcome is Outcome.WON
    assert h.move == solve(game, max_nodes=400_000).moves[0]
    assert best_move(game, max_nodes=400_000) == h.move


def test_hint_never_peeks_at_the_stock() -> None:
    # Two games with the same row and different stocks get the same hint.
    a = new_game("accordion-stock", seed=1)
    for _ in range(8):
        a.play("deal")
    row_cards = [p[-1] for p in a.state.row]
    rest = [c for c in range(52) if c not in row_cards]
    b = new_game("accordion-stock", deal=row_cards + rest[::-1])
    for _ in range(8):
        b.play("deal")
    assert a.state.row == b.state.row and a.state.stock != b.state.stock
    ha, hb = hint(a), hint(b)
    assert ha == hb and ha.source == "heuristic" and ha.outcome is None
    assert ha.move in a.legal_moves()


def test_hint_on_a_lost_position_falls_back_and_on_a_finished_game_is_none() -> None:
    cards = no_match_deal()
    game = new_game("accordion", deal=cards)
    assert best_move(game) is None
    lost = new_game("push-pin", seed=0)
    assert solve(lost).lost  # push-pin seed 0 is a proven loss
    h = hint(lost)
    assert h.source == "heuristic" and h.outcome is Outcome.LOST and h.move in lost.legal_moves()


def test_find_winnable_seed() -> None:
    found = find_winnable_seed("double-jump", None, start_seed=0, max_tries=100, budget=1.0)
    assert found is not None
    seed, result = found
    assert result.won
    replay(new_game("double-jump", seed=seed), result.moves)
    for s in range(seed):  # the seeds skipped were not won
        assert not solve(new_game("double-jump", seed=s)).won
    # Dealt from the stock with compel=none: decided on the same cards face up.
    found = find_winnable_seed("accordion-stock", None, start_seed=5, max_tries=5, budget=1.0)
    assert found is not None
    seed, result = found
    replay(new_game("accordion", seed=seed), result.moves)
    with pytest.raises(HiddenInformationError):
        find_winnable_seed("compacted", None, max_tries=1)
    assert find_winnable_seed("french", None, start_seed=0, max_tries=3, budget=1.0) is None
