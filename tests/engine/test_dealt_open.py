"""``Rules.dealt_open``: the position a NewGame(winnable_only) decides, for a game with face-down cards.

The server decides a hidden deal "as if dealt open": that is sound only if ``open`` changes what
the player is shown and nothing else. Checked for every registered variant with the option (so
a game added later is checked too): the same seed with ``open=true`` deals the very same position,
``dealt_open`` gives exactly that game's rules and the position unchanged, and nothing is hidden
in it; a variant without the option answers None.
"""

from __future__ import annotations

import pytest

from accordion.engine import all_variants, new_game

SEEDS = range(40)
WITH_OPEN = [v.id for v in all_variants() if any(o.name == "open" for o in v.options)]
WITHOUT_OPEN = [v.id for v in all_variants() if v.id not in WITH_OPEN]


def test_the_games_with_face_down_cards_have_the_option() -> None:
    assert {"klondike", "klondike-draw-one"} <= set(WITH_OPEN)  # a list that is never empty
    for variant in WITHOUT_OPEN:  # a game without the option hides nothing once dealt, or only a stock
        game = new_game(variant, seed=1)
        assert not game.rules.zones(game.state) or not game.hides_anything()


@pytest.mark.parametrize("variant", WITH_OPEN)
def test_the_same_seed_dealt_open_is_the_same_deal(variant: str) -> None:
    hidden_somewhere = 0
    for seed in SEEDS:
        hidden, shown = new_game(variant, seed=seed), new_game(variant, {"open": True}, seed=seed)
        assert shown.state == hidden.state, seed  # every card where it was, face down counts included
        assert hidden.rules.cards_in(hidden.state) == shown.rules.cards_in(shown.state)
        hidden_somewhere += hidden.hides_anything()
        found = hidden.rules.dealt_open(hidden.state)
        assert found is not None
        rules, state = found
        assert type(rules) is type(shown.rules) and rules.values == shown.rules.values
        assert state == hidden.state and not rules.hides_anything(state)
        assert rules.zones(state) == shown.rules.zones(shown.state)  # the open view names every card
        assert rules.legal_moves(state) == hidden.legal_moves()  # the same game: the same moves
    assert hidden_somewhere == len(SEEDS)  # each deal had something to reveal


@pytest.mark.parametrize("variant", WITHOUT_OPEN)
def test_a_game_without_the_option_has_no_open_deal(variant: str) -> None:
    game = new_game(variant, seed=3)
    assert game.rules.dealt_open(game.state) is None
