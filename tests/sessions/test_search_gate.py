"""The hidden-information gate in the flow (``sessions.search_gate``): what Solve and Hint may
search of a player's game is decided by the session layer, before the solver sees a position."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest

import accordion
from accordion import engine, sessions
from accordion.api.solving import Budgets, Solving
from accordion.engine.hint import suggest
from accordion.sessions import HintSearch
from accordion.store import GameStore


async def _dealt(flow: sessions.Sessions, variant: str, **options: str) -> sessions.Dealt:
    dealt = await flow.deal(engine.new_game(variant, options, seed=3), None)
    assert isinstance(dealt, sessions.Dealt)
    return dealt


@pytest.mark.parametrize(
    ("variant", "options", "hidden", "search"),
    [
        ("accordion", {}, False, HintSearch.WHOLE),  # every card dealt face up
        ("accordion-stock", {}, True, HintSearch.VIEW),  # a stock: a row game samples nothing
        ("klondike", {}, True, HintSearch.SAMPLED),  # face-down cards: worlds from the view
        ("klondike", {"open": "true"}, False, HintSearch.WHOLE),  # dealt open: nothing hidden
    ],
)
async def test_solve_and_hint_search_only_what_the_player_sees(
    store: GameStore, variant: str, options: dict[str, str], hidden: bool, search: HintSearch
) -> None:
    flow = sessions.Sessions(store, game_ttl=60)
    dealt = await _dealt(flow, variant, **options)
    assert dealt.game.hides_anything() == hidden  # (the deal is what the row says)
    if hidden:
        with pytest.raises(sessions.HiddenCards, match="face down"):
            await flow.open_to_solve(dealt.game_id, dealt.token, None)
    else:
        opened = await flow.open_to_solve(dealt.game_id, dealt.token, None)
        assert opened.version == 1 and opened.game.state == dealt.game.state
    opened, allowed = await flow.open_to_hint(dealt.game_id, dealt.token, None)
    assert allowed is search and opened.version == 1


async def test_a_game_no_search_plays_is_left_to_the_solver_to_refuse(store: GameStore) -> None:
    """Cribbage Solitaire hides its stock, but no search plays it at all: the gate lets it pass,
    and the solver refuses it as a game it does not play (SOLVER_UNSUPPORTED says more)."""
    flow = sessions.Sessions(store, game_ttl=60)
    dealt = await _dealt(flow, "cribbage-solitaire")
    assert dealt.game.hides_anything()
    opened = await flow.open_to_solve(dealt.game_id, dealt.token, None)
    solving = Solving(Budgets())
    try:
        with pytest.raises(engine.EngineError) as refused:
            await solving.solve(opened.game, max_seconds=1.0, max_nodes=100)
        assert refused.value.reason == "SOLVER_UNSUPPORTED"
    finally:
        solving.close()


async def test_the_watch_token_opens_nothing_to_search(store: GameStore) -> None:
    flow = sessions.Sessions(store, game_ttl=60)
    dealt = await _dealt(flow, "accordion")
    with pytest.raises(sessions.WatchOnly):
        await flow.open_to_solve(dealt.game_id, dealt.watch_token, None)
    with pytest.raises(sessions.WatchOnly):
        await flow.open_to_hint(dealt.game_id, dealt.watch_token, None)
    with pytest.raises(sessions.GameNotFound):
        await flow.open_to_hint(dealt.game_id, "not-the-token", None)


def test_a_hint_searches_no_more_than_the_gate_allows() -> None:
    """``Solving.hint`` obeys what it is told: told VIEW, it answers with the heuristic alone,
    even on a position it could search whole (an open deal the search wins)."""
    game = engine.new_game("klondike", {"open": "true"}, seed=3)
    solving = Solving(Budgets(hint_seconds=5.0))
    try:
        searched, from_solver = asyncio.run(solving.hint(game, HintSearch.WHOLE))
        viewed, from_view = asyncio.run(solving.hint(game, HintSearch.VIEW))
    finally:
        solving.close()
    assert (viewed, from_view) == (suggest(game), False)
    assert from_solver and searched in game.legal_moves()


def test_the_api_leaves_the_decision_to_the_gate() -> None:
    """Neither the servicer nor the solver's runner judges what is hidden: no call there of
    ``hides_anything`` or ``solver.can_sample`` (the gate's inputs), read from the source."""
    api = Path(accordion.__file__).parent / "api"
    for name in ("servicer.py", "solving.py"):
        tree = ast.parse((api / name).read_text())
        called = {
            node.func.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        }
        assert "solve" in called or "hint" in called  # (the walk sees the file's calls)
        assert not called & {"hides_anything", "can_sample"}, name
