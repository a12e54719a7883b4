"""Illegal moves explained in the player's words (issue 32) where a seeded deal cannot show the
case: hand-built Klondike and Spider positions, Klondike's options, and a game that is over.

The table of seeded deals, one or more rows per variant, is test_words.py.
"""

from __future__ import annotations

import pytest

from accordion.engine import new_game
from accordion.engine.moves import DEAL, DRAW, Move, Transfer, Zone

from .helpers import refusal
from .tableau_helpers import position

T, F = Zone.TABLEAU, Zone.FOUNDATION


@pytest.mark.parametrize(
    ("piles", "down", "move", "why"),
    [
        # A space takes only a King (or a run a King heads).
        (["9C", "", "KD"], [0, 0, 0], "1>2", "only a King can go into an empty pile, not 9♣"),
        # The seed's Klondike moves a face-up run as a unit.
        (
            ["AH 10S 9H 8S", "9D", "10C", ""],
            [1, 0, 0, 0],
            Transfer(T, 0, T, 2, 2),
            "a face-up run moves as a whole: pile 1's 3 face-up cards go together",
        ),
        # The top card of a run goes to the foundations alone: the run rule is not the reason.
        (
            ["AH 10S 9H 8S", "9D", "10C", ""],
            [1, 0, 0, 0],
            "1>f",
            "8♠ cannot go to the foundations yet: a ♠ foundation must be up to 7 first",
        ),
    ],
)
def test_klondike_spaces_and_runs(piles: list[str], down: list[int], move: str | Move, why: str) -> None:
    game = position("klondike", piles, down=down)
    assert f" is not legal: {why}; legal now: " in refusal(game, move)


@pytest.mark.parametrize(
    ("options", "before", "move", "why"),
    [
        ({"passes": 1}, ["draw"] * 8, "redeal", "no pass is left: this game allows 1 pass through the stock"),
        ({"foundation_return": True}, [], Transfer(F, 0, T, 2, 1), "foundation 1 is empty"),
    ],
)
def test_klondike_options_have_their_words(
    options: dict[str, object], before: list[str], move: str | Move, why: str
) -> None:
    game = new_game("klondike", options, seed=1)
    for text in before:
        game.play(text)
    assert f" is not legal: {why}; legal now: " in refusal(game, move)


def test_spider_deals_only_when_no_pile_is_empty() -> None:
    game = position(
        "spider",
        ["KS QS", "", "AH", "2H", "3H", "4H", "5H", "6H", "7H", "8H"],
        down=[0] * 10,
        foundations=[""] * 8,
    )
    assert refusal(game, DEAL).startswith(
        "deal is not legal: you can deal only when no pile is empty; legal now: "
    )


def test_the_game_over_is_said_once_for_any_move() -> None:
    game = new_game("klondike", seed=1)
    game.play("resign")
    for move in ("draw", DRAW, "w>1", "resign"):
        assert refusal(game, move).endswith(
            " is not legal: the game is over; legal now: nothing (the game is over)"
        )
