"""Wish and Streets and Alleys (spec: "The other games of seed 004"), rule by rule."""

from __future__ import annotations

import pytest

from accordion.engine import InvalidDealError, Status, new_game, parse_cards
from accordion.engine.games.wish import DECK
from accordion.engine.tableau import DOWN, FOUNDATIONS, TABLEAU

from .tableau_helpers import position, texts

# --- Wish ------------------------------------------------------------------------------------


def test_wish_deals_32_cards_a_pile_at_a_time_tops_face_up() -> None:
    game = new_game("wish", deal=list(DECK))
    tableau = TABLEAU.get(game.state)
    assert len(DECK) == 32 and {c % 13 + 1 for c in DECK} == {1, 7, 8, 9, 10, 11, 12, 13}
    assert tableau == tuple(tuple(DECK[i : i + 4]) for i in range(0, 32, 4))
    assert DOWN.get(game.state) == (3,) * 8 and game.state.stock == ()
    assert game.penalty == 32


def test_wish_refuses_cards_outside_its_deck() -> None:
    deal = list(DECK)
    deal[0] = parse_cards("2H")[0]
    with pytest.raises(InvalidDealError, match="2H is not in this game's deck"):
        new_game("wish", deal=deal)
    with pytest.raises(InvalidDealError, match="32 cards"):
        new_game("wish", deal=list(range(52)))


def test_wish_removes_two_tops_of_one_rank_on_different_piles_and_turns_up() -> None:
    game = position("wish", ["7S 7H", "8S 7D", "8H 9S"], down=[1, 1, 1], foundations=("",), rest_under=2)
    legal = texts(game)
    assert legal == {"x1,2"}  # 7H and 7D; 9S pairs with nothing; 7S under 7H does not count
    game.play("x1,2")
    assert TABLEAU.get(game.state)[:2] == ((parse_cards("7S")[0],), (parse_cards("8S")[0],))
    assert DOWN.get(game.state)[:2] == (0, 0)  # both cards under turned up
    assert FOUNDATIONS.get(game.state) == (tuple(parse_cards("7H 7D")),)
    assert game.penalty == 30
    assert not {"x1,2"} & texts(game)


def test_wish_pair_by_cards_and_by_piles() -> None:
    game = position("wish", ["7H", "8S", "7D"], foundations=("",), rest_under=1)
    assert game.parse_move("x7H,7D") == game.parse_move("x 1 3") == game.parse_move("x3,1")


def test_wish_won_when_every_card_is_removed() -> None:
    removed = " ".join(
        card
        for card in (
            "AS AH AD AC 7S 7H 7D 7C 8S 8H 8D 8C 9S 9H 9D 9C 10S 10H 10D 10C JS JH JD JC QS QH QD QC"
        ).split()
    )
    game = position("wish", ["KS", "KH", "KD KC"], down=[0, 0, 1], foundations=(removed,))
    game.play("x1,2")
    assert game.status is Status.LOST  # K♦ K♣ on one pile: no pair on two piles
    won = position("wish", ["KS", "KH", "KD", "KC"], foundations=(removed,))
    won.play("x1,2")
    won.play("x3,4")
    assert won.status is Status.WON and won.penalty == 0


# --- Streets and Alleys -------------------------------------------------------------------------


def test_streets_deals_columns_of_four_alternately_left_and_right() -> None:
    game = new_game("streets-and-alleys", deal=list(range(52)))
    tableau = TABLEAU.get(game.state)
    assert [len(p) for p in tableau] == [7, 7, 7, 7, 6, 6, 6, 6]
    assert tableau[0] == (0, 8, 16, 24, 32, 40, 48)  # k mod 4 = 0 in the even columns
    assert tableau[4] == (4, 12, 20, 28, 36, 44)  # k mod 4 = 0 in the odd columns
    assert tableau[7] == (7, 15, 23, 31, 39, 47)
    assert DOWN.get(game.state) == (0,) * 8 and game.state.stock == ()
    assert not game.hides_anything()


def test_streets_moves_the_outer_card_onto_one_rank_higher_of_any_suit() -> None:
    game = position(
        "streets-and-alleys",
        ["9S 5D", "6D", "6C", "4H", "9C", "5C", "AS", "8H 2C"],
        rest_under=0,
        rest_face_down=False,
    )
    legal = texts(game)
    assert {"1>2", "1>3", "4>1", "4>6", "7>f"} <= legal  # 5D on 6D (same suit), on 6C; 4H on 5D or 5C
    assert "2>1" not in legal and "8>1" not in legal  # not one rank lower
    assert not any(t.startswith("9") or "x" in t for t in legal)


def test_streets_any_card_into_an_empty_row_and_nothing_back_off_a_foundation() -> None:
    game = position(
        "streets-and-alleys",
        ["", "7D", "2S"],
        foundations=("AS", "", "", ""),
        rest_under=1,
        rest_face_down=False,
    )
    legal = texts(game)
    assert "2>1" in legal and "3>1" in legal and "3>f" in legal
    game.play("3>f")
    assert not any(t.startswith("f") for t in texts(game))
    assert FOUNDATIONS.get(game.state)[0] == tuple(parse_cards("AS 2S"))


def test_streets_may_cycle_for_ever_until_resigned() -> None:
    game = position("streets-and-alleys", ["", "3C 2D"], rest_under=1, rest_face_down=False)
    for _ in range(6):
        game.play("2D>1" if TABLEAU.get(game.state)[1][-1:] == tuple(parse_cards("2D")) else "2D>2")
    assert game.status is Status.IN_PROGRESS
    game.play("resign")
    assert game.status is Status.LOST and game.penalty == 52
