"""The sampled Hint over real gRPC reveals nothing: twin Klondike deals (explicit deals that differ
only in two face-down cards) get the same Hint reply, byte for byte, at every position played,
the moves being the Hint's own, until one of the two cards is turned up. The positions include
sampled ones (checked against the engine-side ``sampled_hint`` with the server's budgets), so
the replies compared are the sampling's, not only the cheap answers.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from accordion import engine
from accordion.api.solving import Budgets
from accordion.engine.cards import card_text
from accordion.engine.tableau import DOWN, TABLEAU
from accordion.solver import can_sample, sampled_hint
from accordion.v1 import accordion_pb2 as pb
from tests.api.helpers import Client

OPTIONS = {"partial_runs": "true", "foundation_return": "true"}
STEPS = 40


def twin_deals(seed: int) -> tuple[list[int], list[int], set[int]]:
    """A shuffled deck, the same with the bottom cards of piles 6 and 7 swapped, and those two."""
    cards = list(range(52))
    random.Random(seed).shuffle(cards)
    state = engine.new_game("klondike", OPTIONS, deal=cards).state
    a, b = TABLEAU.get(state)[5][0], TABLEAU.get(state)[6][0]
    other = [b if c == a else a if c == b else c for c in cards]
    return cards, other, {a, b}


def face_down(state: engine.State) -> set[int]:
    return {c for pile, n in zip(TABLEAU.get(state), DOWN.get(state)) for c in pile[:n]}


async def test_twin_deals_get_the_same_sampled_hints(
    start_server: Callable[..., Any], connect: Callable[[str], Client]
) -> None:
    # A generous time cap: the node budget, not the clock of a busy test machine, decides.
    running = await start_server(hint_max_seconds=10.0)
    budgets = Budgets()
    compared = sampled = 0
    for seed in range(3):
        cards, other, secret = twin_deals(seed)
        truth = engine.new_game("klondike", OPTIONS, deal=cards)
        clients, ids = [], []
        for deal in (cards, other):
            client = connect(running.addr)
            reply = await client.new_game(
                "klondike", options=OPTIONS, deal=pb.CardList(cards=[card_text(c) for c in deal])
            )
            clients.append(client)
            ids.append(reply.game.id)
        for _ in range(STEPS):
            if not secret <= face_down(truth.state) or not truth.legal_moves():
                break
            hints = [await c.call("Hint", pb.HintRequest(game_id=i)) for c, i in zip(clients, ids)]
            assert hints[0].SerializeToString(deterministic=True) == hints[1].SerializeToString(
                deterministic=True
            )
            compared += 1
            if can_sample(truth.rules, truth.state):
                local = sampled_hint(
                    truth.rules,
                    truth.state,
                    worlds=budgets.hint_worlds,
                    nodes_per_solve=budgets.hint_world_nodes,
                    max_nodes=budgets.hint_nodes,
                    max_seconds=None,
                )
                assert local.move is not None and truth.move_text(local.move) == hints[0].move.notation
                sampled += local.reason in ("sampled", "no win seen")
            notation = hints[0].move.notation
            for c, i in zip(clients, ids):
                await c.apply(i, notation)
            truth.play(truth.parse_move(notation))
    assert compared >= 30 and sampled >= 5, (compared, sampled)


def test_the_sampled_worlds_do_not_depend_on_the_undo_option() -> None:
    """The worlds are seeded from the player's view; the undo option (issue 29) is no part of
    it, so a Hint never differs by undo policy."""
    from accordion.solver.sampling import view_seed

    for seed in range(5):
        seeds = set()
        for undo in ("all", "visible", "none"):
            game = engine.new_game("klondike", {"undo": undo}, seed=seed)
            seeds.add(view_seed(game.rules, game.state))
        assert len(seeds) == 1, seed
