"""NewGame(winnable_only) for the tableau games, Klondike first, end to end on both stores.

The normal Klondike (``open`` false: face-down cards, a hidden stock) is decided by the server
with every card known and dealt only if the solver wins it. What the player gets is the game
as usual: no face-down card, no seed, no count of seeds tried (with the seed asked for it would
name the deal). That the deal is the one the server decided, and that it is won, is checked
here from outside: by recomputing the pick in this process (the per-deal budget is in
positions, so the pick is a function of the seed) and playing a winning line through
ApplyMove to a won game; and, for a seed the server drew, by reading the stored game in
process and playing its line the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import pytest

from accordion import engine
from accordion.api.solving import Budgets, solution_texts
from accordion.engine import all_variants, card_text, new_game
from accordion.engine.search import NoSearch
from accordion.engine.tableau import DOWN, TABLEAU
from accordion.solver import SolveResult, find_winnable_seed, solve
from accordion.v1 import accordion_pb2 as pb

from .conftest import Running
from .helpers import Client, expect_error

FP = grpc.StatusCode.FAILED_PRECONDITION
KLONDIKES = ["klondike", "klondike-draw-one"]
QUICK = 20_000  # positions: well inside the server's per-deal budget, and its time cap


def shown(variant: str, seed: int) -> engine.Game:
    return new_game(variant, {"open": True}, seed=seed)


def lost_then_won(variant: str) -> tuple[int, SolveResult]:
    """A seed whose deal the solver proves lost, followed by one it wins, each within ``QUICK``
    positions: the server, from the first, must pass over it and deal the second, whatever the
    machine's load."""
    for seed in range(5_000):
        if solve(shown(variant, seed), max_nodes=QUICK).lost:
            won = solve(shown(variant, seed + 1), max_nodes=QUICK)
            if won.won:
                return seed, won
    raise AssertionError("no such pair of seeds")  # pragma: no cover


def tableau_tops(game: pb.Game) -> list[str]:
    (tableau,) = [z for z in game.zones if z.kind == pb.ZONE_KIND_TABLEAU]
    return [p.cards[-1].text for p in tableau.piles]


def expected_tops(game: engine.Game) -> list[str]:
    return [card_text(pile[-1], symbols=True) for pile in TABLEAU.get(game.state)]


def assert_nothing_hidden_shown(game: pb.Game) -> None:
    assert not game.HasField("seed")
    for zone in game.zones:
        for pile in zone.piles:
            assert not pile.face_down_cards
    assert "??" in game.state  # face-down cards written as such


async def play_line(
    client: Client, game_id: str, game: engine.Game, moves: tuple[engine.Move, ...]
) -> pb.Game:
    """Play ``moves`` (a win found for ``game``, the same deal) through ApplyMove; the last game."""
    reply = None
    for text in solution_texts(game, moves):
        reply = await client.apply(game_id, text)
        if reply.game.status != pb.GAME_STATUS_WON:
            for zone in reply.game.zones:
                assert all(not p.face_down_cards for p in zone.piles)
    assert reply is not None
    return reply.game


@pytest.mark.parametrize("variant", KLONDIKES)
async def test_a_hidden_winnable_klondike_from_a_seed_is_the_deal_decided_and_is_won(
    variant: str, spawn_server: Callable[..., Any], connect: Callable[[str], Client], store_url: str
) -> None:
    seed, won = lost_then_won(variant)
    env = {} if store_url == "memory://" else {"REDIS_URL": store_url}
    client = connect(spawn_server(env=env).addr)  # the real server process
    reply = await client.new_game(variant, seed=seed, winnable_only=True)
    assert reply.seeds_tried == 0  # with the seed asked for, a count would name the deal
    game = reply.game
    assert_nothing_hidden_shown(game)
    assert game.status == pb.GAME_STATUS_IN_PROGRESS and game.stock_size == 24
    # The deal after the lost one: its face-up cards, not the lost deal's.
    assert (
        tableau_tops(game) == expected_tops(shown(variant, seed + 1)) != expected_tops(shown(variant, seed))
    )
    # The same pick, recomputed here with the server's budget.
    budgets = Budgets()
    found = find_winnable_seed(
        variant, {}, start_seed=seed, max_tries=5, budget=None, max_nodes=budgets.winnable_deal_nodes
    )
    assert found is not None and found[0] == seed + 1
    # Played through the API, the line wins; then nothing is hidden and the seed shows.
    last = await play_line(client, game.id, new_game(variant, seed=seed + 1), won.moves)
    assert last.status == pb.GAME_STATUS_WON and last.penalty == 0
    assert last.HasField("seed") and last.seed == seed + 1


@pytest.mark.parametrize("variant", KLONDIKES)
async def test_a_hidden_winnable_klondike_from_a_drawn_seed_is_won(
    variant: str, served: Running, connect: Callable[[str], Client]
) -> None:
    client = connect(served.addr)
    reply = await client.new_game(variant, winnable_only=True)  # the server draws the seed
    assert reply.seeds_tried == 0
    assert_nothing_hidden_shown(reply.game)
    assert (await client.get(reply.game.id)).HasField("seed") is False
    await expect_error(client.call("Solve", pb.SolveRequest(game_id=reply.game.id)), FP, "HIDDEN_INFORMATION")
    # In process: the stored game, decided as the server did (same budget in positions), wins.
    opened = await served.server.servicer.sessions.open(reply.game.id, reply.token, None)
    stored = opened.game
    assert stored.hides_anything() and any(DOWN.get(stored.state))
    assert tableau_tops(reply.game) == expected_tops(stored)
    decided = stored.rules.dealt_open(stored.state)
    assert decided is not None
    result = solve(decided[1], decided[0], max_nodes=Budgets().winnable_deal_nodes)
    assert result.won
    last = await play_line(client, reply.game.id, stored, result.moves)
    assert last.status == pb.GAME_STATUS_WON


@pytest.mark.parametrize("variant", KLONDIKES)
async def test_an_open_winnable_klondike_shows_its_seed_and_count(variant: str, client: Client) -> None:
    seed, _ = lost_then_won(variant)
    reply = await client.new_game(variant, options={"open": "true"}, seed=seed, winnable_only=True)
    # Nothing is hidden in an open game: the seed shows, and with it the count.
    assert reply.seeds_tried == 2 and reply.game.HasField("seed") and reply.game.seed == seed + 1
    answer = await client.call("Solve", pb.SolveRequest(game_id=reply.game.id), timeout=30)
    assert answer.outcome == pb.SOLVE_OUTCOME_WON  # Solve may: every card is face up
    for move in answer.moves:
        last = await client.apply(reply.game.id, move.notation)
    assert last.game.status == pb.GAME_STATUS_WON


NO_SEARCH = [
    v.id for v in all_variants() if isinstance((g := new_game(v.id, seed=0)).rules.search(g.state), NoSearch)
]


async def test_a_game_the_solver_does_not_play_is_refused_clearly(client: Client) -> None:
    assert "cribbage-solitaire" in NO_SEARCH  # never empty
    for variant in NO_SEARCH:  # whatever the solver does not search today, hidden or open
        for options in ({}, {"open": "true"}) if variant != "cribbage-solitaire" else ({},):
            if options and not any(o.name == "open" for o in engine.find_variant(variant).options):
                continue
            await expect_error(
                client.new_game(variant, seed=1, winnable_only=True, options=options),
                FP,
                "SOLVER_UNSUPPORTED",
            )
