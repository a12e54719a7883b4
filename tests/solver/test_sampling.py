"""The sampled Hint on hidden Klondike (solver/sampling.py): it never peeks.

* ``TableauRules.with_hidden`` changes only the hidden places, and what it makes depends on
  the position's hidden cards in nothing; ``unseen_cards`` are exactly the hidden ones;
* twin positions (the same view, the hidden cards permuted) get the same hint, with the same
  scores, over many positions of several deals, turning three and one, before and after a
  REDEAL (where the stock is known: only the face-down cards are permuted then);
* every hint is a legal move; the cheap answers (one move, a safe foundation move) are right;
* the compiled and the Python solvers give the same hint under node budgets;
* ``Solving.hint`` (the Hint RPC's code) answers with the sampled move.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from accordion import engine
from accordion.api.solving import Budgets, Solving
from accordion.engine.moves import DRAW, Transfer, Zone
from accordion.engine.tableau import DOWN, FOUNDATIONS, TABLEAU, WASTE, TableauRules
from accordion.sessions.search_gate import hint_search
from accordion.solver import HAVE_C, can_sample, sampled_hint
from accordion.solver.sampling import WON_SCORE, candidates, safe_move, unseen_cards

from .twins import hidden_cards, twin

PUBLISHED = {"partial_runs": "true", "foundation_return": "true"}
SMALL = {"worlds": 4, "nodes_per_solve": 1500, "max_nodes": 10**9, "max_seconds": None}


def positions(variant: str, seed: int, steps: int, options: dict[str, str]) -> list[engine.Game]:
    """Positions of one deal, played on by a fixed pseudo-random choice of legal move (draws
    favoured, so the stock is gone through and turned over)."""
    game = engine.new_game(variant, options, seed=seed)
    pick = random.Random(seed)
    out = []
    for _ in range(steps):
        legal = game.legal_moves()
        if not legal:
            break
        out.append(
            game.copy()
            if hasattr(game, "copy")
            else engine.Game(game.variant, game.rules, game.seed, game.deal, game.state)
        )
        draws = [m for m in legal if not isinstance(m, Transfer)]
        game.play(pick.choice(draws) if draws and pick.random() < 0.6 else pick.choice(legal))
    return out


def test_with_hidden_changes_only_the_hidden_places() -> None:
    game = engine.new_game("klondike", PUBLISHED, seed=3)
    rules, state = game.rules, game.state
    assert isinstance(rules, TableauRules)
    cards = hidden_cards(state)
    assert sorted(unseen_cards(rules, state)) == sorted(cards) and len(cards) == 21 + 24
    filled = rules.with_hidden(state, list(reversed(cards)))
    assert hidden_cards(filled) == list(reversed(cards))
    assert rules.zones(filled) == rules.zones(state)
    assert sorted(rules.cards_in(filled)) == sorted(rules.cards_in(state))
    # Built from another position with the same view: the same result.
    other = twin(rules, state, 1)
    assert other != state and rules.with_hidden(other, list(reversed(cards))) == filled
    # Without the stock: the stock stays.
    down = hidden_cards(state, stock=False)
    kept = rules.with_hidden(state, down[::-1], stock=False)
    assert kept.stock == state.stock and hidden_cards(kept, stock=False) == down[::-1]
    with pytest.raises(ValueError):
        rules.with_hidden(state, cards[1:])
    assert rules.opened().open and not rules.opened().hides_anything(filled)


def test_the_stock_is_known_once_turned_over() -> None:
    game = engine.new_game("klondike", PUBLISHED, seed=5)
    rules = game.rules
    assert isinstance(rules, TableauRules)
    assert not rules.seen_stock(game.state)
    while game.state.stock:
        game.play(DRAW)
    seen_waste = WASTE.get(game.state)
    legal = [m for m in game.legal_moves() if isinstance(m, Transfer) and m.src_zone is Zone.TABLEAU]
    if not legal:
        pytest.skip("no move to allow a REDEAL")
    game.play(legal[0])
    game.play(next(m for m in game.legal_moves() if not isinstance(m, Transfer)))  # REDEAL
    assert rules.seen_stock(game.state)
    assert game.state.stock == seen_waste[: len(game.state.stock)] or set(game.state.stock) <= set(seen_waste)
    # What the hint may not know is then the face-down cards only.
    assert sorted(unseen_cards(rules, game.state, game.state.stock)) == sorted(
        hidden_cards(game.state, False)
    )


@pytest.mark.parametrize("variant", ["klondike", "klondike-draw-one"])
def test_twins_get_the_same_hint(variant: str) -> None:
    compared = sampled_count = after_redeal = 0
    for seed in range(3):
        for game in positions(variant, seed, 60, PUBLISHED):
            rules, state = game.rules, game.state
            assert isinstance(rules, TableauRules)
            if not can_sample(rules, state):
                continue
            other = twin(rules, state, seed * 1000 + compared)
            if other == state:
                continue
            assert rules.zones(other) == rules.zones(state)
            mine, theirs = sampled_hint(rules, state, **SMALL), sampled_hint(rules, other, **SMALL)
            assert (mine.move, mine.reason, mine.scores, mine.nodes, mine.moves) == (
                theirs.move,
                theirs.reason,
                theirs.scores,
                theirs.nodes,
                theirs.moves,
            )
            assert mine.move in rules.legal_moves(state)
            compared += 1
            sampled_count += mine.reason in ("sampled", "no win seen")
            after_redeal += rules.seen_stock(state)
    assert compared >= 60 and sampled_count >= 8 and after_redeal >= 5, (
        compared,
        sampled_count,
        after_redeal,
    )


def test_without_memory_the_stock_is_sampled_too() -> None:
    """``remember=False``: the view alone, so twins may differ in the stock after a REDEAL too."""
    checked = 0
    for game in positions("klondike", 7, 80, PUBLISHED):
        rules, state = game.rules, game.state
        assert isinstance(rules, TableauRules)
        if not (can_sample(rules, state) and rules.seen_stock(state) and len(state.stock) > 1):
            continue
        cards = hidden_cards(state)
        random.Random(checked).shuffle(cards)
        other = rules.with_hidden(state, cards)
        a = sampled_hint(rules, state, remember=False, **SMALL)
        b = sampled_hint(rules, other, remember=False, **SMALL)
        assert (a.move, a.scores) == (b.move, b.scores)
        checked += 1
    assert checked >= 3


def test_cheap_answers() -> None:
    game = engine.new_game("klondike", PUBLISHED, seed=0)
    rules, state = game.rules, game.state
    # Seed 0 deals an Ace face up: the safe move, without sampling.
    got = sampled_hint(rules, state, **SMALL)
    safe = safe_move(rules.search(state), state, rules.legal_moves(state))
    if safe is not None:
        assert got.move == safe and got.reason == "safe" and got.worlds == 0
        assert isinstance(safe, Transfer) and safe.dst_zone is Zone.FOUNDATION
    # A position with one legal move (DRAW only) answers it at once.
    for g in positions("klondike", 2, 60, PUBLISHED):
        if can_sample(g.rules, g.state) and len(g.legal_moves()) == 1:
            one = sampled_hint(g.rules, g.state, **SMALL)
            assert one.move == g.legal_moves()[0] and one.reason == "only move"
            break
    else:
        pytest.fail("no position with one legal move")


def test_candidates_drop_only_moves_that_turn_nothing() -> None:
    for seed in range(5):
        for game in positions("klondike", seed, 40, PUBLISHED):
            state, legal = game.state, game.legal_moves()
            kept = candidates(game.rules.search(state), state, legal)
            assert set(kept) <= set(legal) and kept
            for move in set(legal) - set(kept):  # dropped: a tableau move that turns no card, or a return
                assert isinstance(move, Transfer) and move.dst_zone is Zone.TABLEAU
                if move.src_zone is Zone.TABLEAU:
                    pile, n = TABLEAU.get(state)[move.src], DOWN.get(state)[move.src]
                    assert not (n > 0 and move.count == len(pile) - n), "a move that turns a card was dropped"
                else:
                    assert move.src_zone is Zone.FOUNDATION and FOUNDATIONS.get(state)[move.src]


@pytest.mark.skipif(not HAVE_C, reason="the compiled solver is not built")
def test_compiled_and_python_solvers_give_the_same_hint() -> None:
    tiny = {"worlds": 2, "nodes_per_solve": 200, "max_nodes": 10**9, "max_seconds": None}
    compared = 0
    for game in positions("klondike", 11, 30, PUBLISHED)[5::6]:
        if not can_sample(game.rules, game.state):
            continue
        c = sampled_hint(game.rules, game.state, impl="c", **tiny)
        py = sampled_hint(game.rules, game.state, impl="python", **tiny)
        assert (c.move, c.scores, c.nodes) == (py.move, py.scores, py.nodes)
        compared += 1
    assert compared >= 3


def test_solving_hint_uses_the_sampled_move() -> None:
    budgets = Budgets(hint_seconds=30.0, hint_worlds=4, hint_world_nodes=1500, hint_nodes=10**9)
    solving = Solving(budgets)
    try:
        checked = 0
        for game in positions("klondike", 4, 30, PUBLISHED)[::3]:
            if not can_sample(game.rules, game.state):
                continue
            move, solved = asyncio.run(solving.hint(game, hint_search(game)))
            expect = sampled_hint(
                game.rules, game.state, worlds=4, nodes_per_solve=1500, max_nodes=10**9, max_seconds=None
            )
            assert move == expect.move and not solved
            checked += 1
        assert checked >= 5
    finally:
        solving.close()


def test_the_twin_check_can_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sampler seeded from the whole position (a peek) gives twins different answers."""
    from accordion.solver import sampling

    monkeypatch.setattr(sampling, "view_seed", lambda rules, state, known=(): hash(state) & (2**64 - 1))
    differ = 0
    for game in positions("klondike", 1, 60, PUBLISHED):
        rules, state = game.rules, game.state
        assert isinstance(rules, TableauRules)
        if not can_sample(rules, state):
            continue
        other = twin(rules, state, differ + 17)
        a, b = sampled_hint(rules, state, **SMALL), sampled_hint(rules, other, **SMALL)
        differ += (a.scores, a.nodes) != (b.scores, b.nodes)
    assert differ >= 3


def test_a_known_position_is_one_world() -> None:
    """The stock seen whole and nothing face down: one world, the position itself; a move
    scored as a win there starts a win."""
    from accordion.solver import solve

    checked = 0
    for seed in range(12):
        game = engine.new_game("klondike", PUBLISHED, seed=seed)
        rules = game.rules
        assert isinstance(rules, TableauRules)
        replace: Any = game.state._replace
        state = replace(down=(0,) * 7, redeals=1)  # every tableau card shown, the stock turned over once
        assert rules.seen_stock(state) and can_sample(rules, state)
        got = sampled_hint(rules, state, **SMALL)
        assert got.move in rules.legal_moves(state)
        if got.reason in ("sampled", "no win seen"):
            assert got.worlds == 1
            if max(got.scores) == WON_SCORE:
                assert solve(rules.apply(state, got.move), rules.opened(), max_nodes=200_000).won
            checked += 1
    assert checked >= 3


def test_twins_get_the_same_deepened_hint() -> None:
    """Deepening (no win in the first worlds: the positions left go to a few worlds searched
    deeper) is decided from the worlds' verdicts alone: twins deepen alike and get the same
    hint. A tiny shallow budget makes the first worlds show no win, so it deepens often."""
    tiny = {"worlds": 8, "nodes_per_solve": 60, "max_nodes": 10**9, "max_seconds": None}
    compared = deepened = 0
    for seed in range(3):
        for game in positions("klondike", seed, 60, PUBLISHED)[::2]:
            rules, state = game.rules, game.state
            assert isinstance(rules, TableauRules)
            if not can_sample(rules, state):
                continue
            other = twin(rules, state, seed * 1000 + compared + 5)
            if other == state:
                continue
            mine, theirs = sampled_hint(rules, state, **tiny), sampled_hint(rules, other, **tiny)
            assert (mine.move, mine.scores, mine.nodes, mine.worlds, mine.deepened) == (
                theirs.move,
                theirs.scores,
                theirs.nodes,
                theirs.worlds,
                theirs.deepened,
            )
            if mine.deepened:
                assert mine.worlds <= 4 and mine.nodes > 4 * 60
            compared += 1
            deepened += mine.deepened
    assert compared >= 30 and deepened >= 5, (compared, deepened)


def test_tied_moves_follow_the_worlds_lines() -> None:
    """Where the scores tie (here one world, the position known whole, won after several
    moves), the hint is the first move of the win the world's search found, when it is a
    candidate: a plan, where the visible heuristic alone drifted (draws, a run moved back and
    forth) in positions the solver wins at once. Without ``follow_lines`` some hints differ
    (the check can fail)."""
    from accordion.solver import solve
    from accordion.solver.sampling import candidates

    followed = differ = 0
    for game in [g for seed in range(6) for g in positions("klondike", seed, 40, PUBLISHED)[::2]]:
        rules = game.rules
        assert isinstance(rules, TableauRules)
        replace: Any = game.state._replace
        state = replace(down=(0,) * 7, redeals=1)  # every card known: one world, the position itself
        if not can_sample(rules, state):  # (the stock gone: nothing hidden)
            continue
        won = solve(
            state, rules.opened(), max_nodes=1500, equivalent_runs=False
        )  # as the worlds are searched
        legal = candidates(rules.search(state), state, rules.legal_moves(state))
        if not (won.won and won.moves and won.moves[0] in legal):
            continue
        got = sampled_hint(rules, state, **SMALL)
        if got.reason != "sampled":
            continue
        assert got.move == won.moves[0]
        followed += 1
        differ += sampled_hint(rules, state, follow_lines=False, **SMALL).move != got.move
    assert followed >= 4 and differ >= 1, (followed, differ)


def test_the_worlds_are_searched_without_equivalent_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every search of the Hint's worlds keeps Klondike's runs on twins apart (with equivalent runs
    a move that only swaps a run between twins scores as the best move, and the hint went round in
    circles more often: ``sampling._world_scores``)."""
    from accordion.solver import sampling

    asked: list[bool] = []
    real = sampling.solve

    def recording(*args: Any, **kwargs: Any) -> Any:
        asked.append(kwargs.get("equivalent_runs", True))
        return real(*args, **kwargs)

    monkeypatch.setattr(sampling, "solve", recording)
    for game in positions("klondike", 3, 12, PUBLISHED):
        sampled_hint(game.rules, game.state, **SMALL)
    assert len(asked) >= 10 and not any(asked), asked
