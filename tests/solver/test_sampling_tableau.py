"""The sampled Hint on hidden Spider and Emperor (solver/sampling.py): it never peeks.

* ``with_hidden`` and ``unseen_cards`` on two decks (equal cards): the unseen cards are exactly
  the hidden ones, and a world keeps everything the player sees;
* twin positions mid-game (the same view, the hidden cards permuted) get the same hint, with
  the same scores and positions searched, in Spider of one, two and four suits, both layouts,
  and in Emperor; a sampler seeded from the whole position (a peek) fails that check;
* the budget is a count of positions: the same hint with and without a time cap, and the
  positions searched stop at the budget;
* the compiled Spider and Emperor searches report how far an undecided search got
  (``SolveResult.progress``), which scores the worlds left undecided;
* the two-deck candidates (one move into a space for each source) and Emperor's safe move;
* ``Solving.hint`` (the Hint RPC's code) answers Spider and Emperor with the sampled move, on
  the two-deck budgets (``Budgets.hint_two_deck_*``), and Klondike on the one-deck ones.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from accordion import engine
from accordion.api.solving import Budgets, Solving
from accordion.engine.moves import Transfer, Zone, transfer
from accordion.engine.tableau import DOWN, FOUNDATIONS, TABLEAU, TableauRules
from accordion.sessions.search_gate import hint_search
from accordion.solver import HAVE_C, can_sample, sampled_hint, solve
from accordion.solver.sampling import candidates, safe_move, unseen_cards, won_score

from .twins import hidden_cards, twin

SMALL = {"worlds": 3, "nodes_per_solve": 400, "max_nodes": 10**9, "max_seconds": None}
VARIANTS = [
    ("spider", {"suits": "1"}),
    ("spider", {"suits": "2"}),
    ("spider", {"suits": "4", "layout": "standard"}),
    ("spider", {"suits": "2", "layout": "standard"}),
    ("emperor", {}),
]
compiled = pytest.mark.skipif(not HAVE_C, reason="the compiled solver is not built")


def positions(variant: str, options: dict[str, str], seed: int, steps: int) -> list[engine.Game]:
    """Positions of one deal played on by a fixed pseudo-random choice among the moves that
    turn a card or go to a foundation when there are some (so play gets on: cards turned up,
    DEALs and DRAWs made), else any legal move."""
    game = engine.new_game(variant, options, seed=seed)
    pick = random.Random(seed)
    out = []
    for _ in range(steps):
        legal = game.legal_moves()
        if not legal:
            break
        out.append(engine.Game(game.variant, game.rules, game.seed, game.deal, game.state))
        down = sum(DOWN.get(game.state))
        onward = [
            m
            for m in legal
            if not isinstance(m, Transfer)
            or m.dst_zone is Zone.FOUNDATION
            or sum(DOWN.get(game.rules.apply(game.state, m))) < down
        ]
        game.play(pick.choice(onward) if onward and pick.random() < 0.8 else pick.choice(legal))
    return out


@pytest.mark.parametrize(("variant", "options"), VARIANTS)
def test_worlds_change_only_the_hidden_places(variant: str, options: dict[str, str]) -> None:
    game = positions(variant, options, 2, 30)[-1]
    rules, state = game.rules, game.state
    assert isinstance(rules, TableauRules) and can_sample(rules, state)
    cards = hidden_cards(state)
    assert unseen_cards(rules, state) == sorted(cards)
    filled = rules.with_hidden(state, sorted(cards))
    assert hidden_cards(filled) == sorted(cards) and rules.zones(filled) == rules.zones(state)
    assert rules.with_hidden(twin(rules, state, 3), sorted(cards)) == filled
    assert not rules.opened().hides_anything(filled)


@pytest.mark.parametrize(("variant", "options"), VARIANTS)
def test_twins_get_the_same_hint(variant: str, options: dict[str, str]) -> None:
    compared = sampled = 0
    for seed in range(3):
        for game in positions(variant, options, seed, 60)[4::8]:
            rules, state = game.rules, game.state
            assert isinstance(rules, TableauRules)
            if not can_sample(rules, state):
                continue
            other = twin(rules, state, seed * 100 + compared)
            assert other != state and rules.zones(other) == rules.zones(state)
            mine, theirs = sampled_hint(rules, state, **SMALL), sampled_hint(rules, other, **SMALL)
            assert (mine.move, mine.reason, mine.scores, mine.nodes, mine.moves, mine.worlds) == (
                theirs.move,
                theirs.reason,
                theirs.scores,
                theirs.nodes,
                theirs.moves,
                theirs.worlds,
            )
            assert mine.move in rules.legal_moves(state)
            compared += 1
            sampled += mine.reason in ("sampled", "no win seen")
    assert compared >= 8 and sampled >= 6, (compared, sampled)


@pytest.mark.parametrize("variant", ["spider", "emperor"])
def test_the_twin_check_can_fail(variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sampler seeded from the whole position (a peek) gives twins different answers."""
    from accordion.solver import sampling

    monkeypatch.setattr(sampling, "view_seed", lambda rules, state, known=(): hash(state) & (2**64 - 1))
    differ = 0
    for game in positions(variant, {"suits": "2"} if variant == "spider" else {}, 1, 50)[4::6]:
        rules, state = game.rules, game.state
        assert isinstance(rules, TableauRules)
        if not can_sample(rules, state):
            continue
        other = twin(rules, state, differ + 17)
        a, b = sampled_hint(rules, state, **SMALL), sampled_hint(rules, other, **SMALL)
        differ += (a.scores, a.nodes) != (b.scores, b.nodes)
    assert differ >= 2


@pytest.mark.parametrize("variant", ["spider", "emperor"])
def test_the_budget_is_a_count_of_positions(variant: str) -> None:
    """The same hint with a generous time cap as with none (the node budget decides), and no
    world begun once the positions budget is spent."""
    checked = 0
    for game in positions(variant, {"suits": "2"} if variant == "spider" else {}, 3, 40)[2::3]:
        rules, state = game.rules, game.state
        if not can_sample(rules, state):
            continue
        budget = {"worlds": 6, "nodes_per_solve": 300, "max_nodes": 2500}
        timed = sampled_hint(rules, state, max_seconds=60.0, **budget)
        untimed = sampled_hint(rules, state, max_seconds=None, **budget)
        assert timed.complete and (timed.move, timed.scores, timed.nodes) == (
            untimed.move,
            untimed.scores,
            untimed.nodes,
        )
        if timed.reason == "sampled" and not timed.deepened:
            # each world stops its searches at their budget; none starts past the total
            per_world = 300 * (1 + len(timed.moves)) + len(timed.moves) + 1
            assert timed.nodes < 2500 + per_world and timed.worlds < 6
            checked += 1
    assert checked >= 2


@compiled
@pytest.mark.parametrize(("variant", "options"), [("spider", {"suits": "2"}), ("emperor", {})])
def test_an_undecided_search_reports_its_progress(variant: str, options: dict[str, str]) -> None:
    """The compiled searches keep the most progress of a position searched: cards home (Spider:
    13 a suit lifted off) plus cards turned up since the position solved. A small budget leaves
    a deal undecided, with progress made; a bigger one gets at least as far; a world won gets there."""
    game = engine.new_game(variant, options, seed=5)
    rules = game.rules
    assert isinstance(rules, TableauRules)
    world = rules.with_hidden(game.state, hidden_cards(game.state))
    small = solve(world, rules.opened(), max_nodes=300, impl="c")
    assert small.unknown and small.progress > 0
    bigger = solve(world, rules.opened(), max_nodes=3000, impl="c")
    assert bigger.won or bigger.progress >= small.progress
    # Its ceiling: every card home and every face-down card turned up, under a won world's score.
    assert small.progress <= len(rules.deck()) + sum(DOWN.get(world)) < won_score(rules)


@compiled
def test_spider_progress_counts_suits_lifted_off() -> None:
    """One suit: a position whose search lifts suits off reports 13 for each (above the
    cards it could turn alone)."""
    for seed in range(6):
        game = engine.new_game("spider", {"suits": "1"}, seed=seed)
        rules = game.rules
        assert isinstance(rules, TableauRules)
        result = solve(game.state, rules.opened(), max_nodes=2000, impl="c")
        if result.unknown and result.progress > sum(DOWN.get(game.state)):
            return  # more than every card turned: a suit (13) was lifted off in the search
    pytest.fail("no undecided search lifted a suit off")


def test_two_deck_candidates_keep_one_move_into_a_space() -> None:
    """Spider and Emperor: moves of the same cards into different spaces are one candidate;
    a whole pile never goes from a space into a space; nothing else is dropped. (Positions
    with two piles emptied by hand: the candidates read only the tableau and the moves.)"""
    for variant, options in VARIANTS:
        game = positions(variant, options, 4, 20)[-1]
        replace: Any = game.state._replace
        tableau, down = list(TABLEAU.get(game.state)), list(DOWN.get(game.state))
        tableau[2] = tableau[5] = ()
        down[2] = down[5] = 0
        state = replace(tableau=tuple(tableau), down=tuple(down))
        legal = game.rules.legal_moves(state)
        kept = candidates(game.rules.search(state), state, legal)
        assert kept and set(kept) <= set(legal)
        into_spaces = [
            m for m in legal if isinstance(m, Transfer) and m.dst_zone is Zone.TABLEAU and m.dst in (2, 5)
        ]
        assert into_spaces and len(set(legal) - set(kept)) == len(into_spaces) // 2
        for move in set(legal) - set(kept):
            assert isinstance(move, Transfer) and move.dst == 5  # the same cards went to space 2
            assert transfer(move.src_zone, move.src, Zone.TABLEAU, 2, move.count) in kept
        # A lone card moved into a space leaves its pile a space: it does not go on to another.
        lone = [k for k in kept if isinstance(k, Transfer) and k.dst == 2 and k.src_zone is Zone.TABLEAU]
        moved = game.rules.apply(state, lone[0])
        if not TABLEAU.get(moved)[lone[0].src]:
            back = candidates(game.rules.search(moved), moved, game.rules.legal_moves(moved))
            assert not any(isinstance(m, Transfer) and m.src == 2 and m.dst in (5, lone[0].src) for m in back)


def test_emperor_safe_move() -> None:
    """A 2 (nothing goes onto it: Aces are compelled) goes home without sampling; a higher card
    only once both copies of the other colour's rank below are home."""
    found = 0
    for seed in range(10):
        for game in positions("emperor", {}, seed, 80):
            state, legal = game.state, game.legal_moves()
            safe = safe_move(game.rules.search(state), state, legal)
            if safe is None:
                continue
            assert isinstance(safe, Transfer) and safe.dst_zone is Zone.FOUNDATION and safe in legal
            heights = [len(f) for f in FOUNDATIONS.get(state)]
            rank = heights[safe.dst] + 1
            if rank > 2:
                red = safe.dst % 4 in (1, 2)
                other = [s for s in range(4) if (s in (1, 2)) != red]
                assert all(min(heights[s], heights[s + 4]) >= rank - 1 for s in other)
            if len(legal) == 1:
                continue  # (answered as the only move)
            got = sampled_hint(game.rules, state, **SMALL)
            assert got.reason == "safe" and got.move == safe and got.worlds == 0
            found += 1
    assert found >= 3


@pytest.mark.parametrize(("variant", "options"), [("spider", {"suits": "2"}), ("emperor", {})])
def test_solving_hint_uses_the_sampled_move(variant: str, options: dict[str, str]) -> None:
    budgets = Budgets(
        hint_seconds=30.0, hint_two_deck_worlds=3, hint_world_nodes=400, hint_two_deck_nodes=10**9
    )
    solving = Solving(budgets)
    try:
        checked = 0
        for game in positions(variant, options, 6, 40)[3::6]:
            if not can_sample(game.rules, game.state):
                continue
            move, solved = asyncio.run(solving.hint(game, hint_search(game)))
            expect = sampled_hint(
                game.rules,
                game.state,
                worlds=3,
                nodes_per_solve=400,
                max_nodes=10**9,
                max_seconds=None,
                seen=frozenset(),
            )
            if expect.reason == "sampled":
                checked += 1
            assert move == expect.move and not solved
        assert checked >= 2
    finally:
        solving.close()


@pytest.mark.parametrize(
    ("variant", "options", "worlds", "nodes"),
    [("spider", {"suits": "1"}, 5, 7000), ("emperor", {}, 5, 7000), ("klondike", {}, 9, 9000)],
)
def test_two_deck_games_sample_on_their_own_budgets(
    variant: str, options: dict[str, str], worlds: int, nodes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """104-card games cost each search about twice a 52-card one's: the Hint gives them their
    own worlds and positions in all (docs/solver/hints.md, issue 31). Fails if one budget
    serves both."""
    asked: list[dict[str, Any]] = []
    real = sampled_hint

    def spy(*args: Any, **kwargs: Any) -> Any:
        asked.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr("accordion.api.solving.solver.sampled_hint", spy)
    budgets = Budgets(
        hint_seconds=30.0,
        hint_worlds=9,
        hint_nodes=9000,
        hint_world_nodes=300,
        hint_two_deck_worlds=5,
        hint_two_deck_nodes=7000,
    )
    solving = Solving(budgets)
    try:
        for game in positions(variant, options, 4, 12)[2::3]:
            if can_sample(game.rules, game.state):
                asyncio.run(solving.hint(game, hint_search(game)))
    finally:
        solving.close()
    assert asked
    assert all(a["worlds"] == worlds and a["max_nodes"] == nodes for a in asked)
