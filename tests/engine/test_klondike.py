"""Klondike and Klondike draw one (spec: "The other games of seed 004", Klondike), rule by rule."""

from __future__ import annotations

import pytest

from accordion.engine import IllegalMoveError, Status, find_variant, new_game, parse_cards
from accordion.engine.tableau import DOWN, FOUNDATIONS, TABLEAU, WASTE

from .tableau_helpers import position, texts

ORDER = list(range(52))  # the deal in canonical order: AS 2S ... KC


def test_aliases_name_the_draw_one_variant() -> None:
    for name in ("Solitaire", "Klondike draw one", "Klondike (draw one)", "klondike-draw-one"):
        assert find_variant(name).id == "klondike-draw-one"
    assert new_game("solitaire", seed=1).rules.values["draw"] == 1
    assert new_game("klondike", seed=1).rules.values["draw"] == 3


def test_dealt_by_rows_top_cards_face_up_and_24_in_the_stock() -> None:
    game = new_game("klondike", deal=ORDER)
    tableau = TABLEAU.get(game.state)
    # Row 0 puts cards 0..6 on piles 1..7, row 1 cards 7..12 on piles 2..7, and so on.
    assert tableau[0] == (0,)
    assert tableau[1] == (1, 7)
    assert tableau[2] == (2, 8, 13)
    assert tableau[6] == (6, 12, 17, 21, 24, 26, 27)
    assert DOWN.get(game.state) == (0, 1, 2, 3, 4, 5, 6)
    assert game.state.stock == tuple(range(28, 52))
    assert WASTE.get(game.state) == () and FOUNDATIONS.get(game.state) == ((),) * 4


def test_draw_turns_three_and_the_last_turned_is_the_waste_top() -> None:
    game = new_game("klondike", deal=ORDER)
    stock = game.state.stock
    game.play("draw")
    assert WASTE.get(game.state) == stock[:3] and game.state.stock == stock[3:]
    one = new_game("klondike-draw-one", deal=ORDER)
    one.play("draw")
    assert WASTE.get(one.state) == stock[:1]


def test_draw_turns_fewer_when_fewer_are_left() -> None:
    game = position("klondike", ["KS"], stock="2H 3H", options="passes=1", rest_under=0)
    game.play("draw")
    assert WASTE.get(game.state) == tuple(parse_cards("2H 3H")) and game.state.stock == ()
    assert "draw" not in texts(game)


def test_redeal_needs_an_empty_stock_a_move_since_and_passes_left() -> None:
    # The waste holds 2H 3H; pile 2's 4S can go on pile 1's 5H (a move other than DRAW).
    game = position("klondike-draw-one", ["5H", "4S", "KC"], waste="2H 3H", stock="", moved=1, rest_under=2)
    assert "redeal" in texts(game)
    game.play("redeal")
    assert game.state.stock == tuple(parse_cards("2H 3H")) and WASTE.get(game.state) == ()
    # Drawing through again is no reason to redeal: a move other than DRAW is needed.
    game.play("draw")
    game.play("draw")
    assert "redeal" not in texts(game)
    game.play("2>1")
    assert "redeal" in texts(game)


def test_no_redeal_at_the_start_before_any_move() -> None:
    game = position("klondike-draw-one", ["5H", "4S", "KC"], waste="2H 3H", stock="", rest_under=2)
    assert "redeal" not in texts(game)


@pytest.mark.parametrize(("passes", "redeals_allowed"), [(1, 0), (2, 1), (3, 2)])
def test_passes_limit_the_redeals(passes: int, redeals_allowed: int) -> None:
    game = position(
        "klondike-draw-one", ["2C", "KS", ""], waste="2H", stock="", options=f"passes={passes}", rest_under=0
    )
    done = 0
    while True:
        game.play("2>3" if TABLEAU.get(game.state)[1] else "3>2")  # a non-DRAW move: K to and fro
        if "redeal" not in texts(game):
            break
        game.play("redeal")
        game.play("draw")
        done += 1
    assert done == redeals_allowed


def test_unlimited_passes_still_end_when_nothing_but_the_stock_moves() -> None:
    game = position("klondike", ["2C"], stock="2H 3H 4H", moved=1, rest_under=0)
    for _ in range(10):
        legal = texts(game)
        if not legal:
            break
        game.play("draw" if "draw" in legal else "redeal")
    assert game.status is Status.LOST and game.legal_moves() == ()


def test_builds_down_in_alternating_colours_only() -> None:
    game = position("klondike", ["9C", "8H", "8S", "8D", "9H"])
    legal = texts(game)
    assert {"2>1", "4>1", "3>5"} <= legal
    assert "3>1" not in legal  # black on black
    assert "2>5" not in legal and "4>5" not in legal  # red on red


def test_only_a_king_or_a_king_run_goes_into_a_space() -> None:
    game = position("klondike", ["QH", "KS", "", "KD QC"], down=[0, 0, 0, 0])
    legal = texts(game)
    assert "1>3" not in legal
    assert "2>3" in legal and "4>3" in legal
    game.play("4>3")
    assert TABLEAU.get(game.state)[2] == tuple(parse_cards("KD QC"))


def test_the_whole_run_moves_as_a_unit_unless_partial_runs() -> None:
    piles = ["10S 9H 8S", "9D", "10C"]
    game = position("klondike", piles)
    legal = texts(game)
    assert "1>3" not in legal  # the run's head 10S goes on a jack only
    assert "1>2" not in legal  # 8S alone may not leave the run
    partial = position("klondike", piles, options="partial_runs=true")
    legal = texts(partial)
    assert "1>2 x1" in legal and "1>3 x2" in legal
    partial.play("1>3 x2")
    assert TABLEAU.get(partial.state)[0] == tuple(parse_cards("10S"))
    assert TABLEAU.get(partial.state)[2] == tuple(parse_cards("10C 9H 8S"))


def test_a_run_moves_whole_and_the_card_under_it_turns_up() -> None:
    game = position("klondike", ["4C 5D 9H 8S", "10C"], down=[2, 0])
    game.play("1>2")
    assert TABLEAU.get(game.state)[0] == tuple(parse_cards("4C 5D"))
    assert DOWN.get(game.state)[0] == 1  # 5D turned face up as part of the move
    assert TABLEAU.get(game.state)[1] == tuple(parse_cards("10C 9H 8S"))


def test_foundations_build_up_in_suit_from_the_ace() -> None:
    game = position("klondike", ["2S", "AS", "3S"], waste="AH")
    legal = texts(game)
    assert "2>f" in legal and "w>f" in legal and "1>f" not in legal and "3>f" not in legal
    game.play("2>f")
    game.play("1>f")
    assert FOUNDATIONS.get(game.state)[0] == tuple(parse_cards("AS 2S"))
    assert "3>f" in texts(game)


def test_the_waste_top_goes_onto_the_tableau() -> None:
    game = position("klondike", ["9C", ""], waste="KD 8H")
    assert "w>1" in texts(game)
    assert "w>2" not in texts(game)  # 8H is no King
    game.play("w>1")
    assert WASTE.get(game.state) == tuple(parse_cards("KD"))
    assert "w>2" in texts(game)


def test_foundation_return_only_with_the_option() -> None:
    kwargs = {"foundations": ("AS 2S 3S", "", "", "")}
    plain = position("klondike", ["4H"], **kwargs)  # type: ignore[arg-type]
    assert not any(t.startswith("f") for t in texts(plain))
    back = position("klondike", ["4H"], options="foundation_return=true", **kwargs)  # type: ignore[arg-type]
    assert "f1>1" in texts(back)
    back.play("f1>1")
    assert TABLEAU.get(back.state)[0] == tuple(parse_cards("4H 3S"))


def test_won_with_all_52_on_the_foundations() -> None:
    suits = ("S", "H", "D", "C")
    ranks = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q")
    found = tuple(" ".join(r + s for r in ranks) for s in suits)
    game = position("klondike", ["KS", "KH", "KD", "KC"], foundations=found)
    assert game.penalty == 4
    for pile in "1234":
        game.play(f"{pile}>f")
    assert game.status is Status.WON and game.penalty == 0


def test_won_with_foundation_return_ends_the_game() -> None:
    # With foundation_return a card could come back off a full foundation, but all 52 home is a win.
    suits = ("S", "H", "D", "C")
    ranks = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q")
    found = tuple(" ".join(r + s for r in ranks) for s in suits)
    game = position("klondike", ["KS", "KH", "KD", "KC"], foundations=found, options="foundation_return=true")
    assert any(t.startswith("f") for t in texts(game))
    for pile in "1234":
        game.play(f"{pile}>f")
    assert game.status is Status.WON and game.legal_moves() == ()


def test_notation_forms() -> None:
    game = position("klondike", ["10S 9H 8S", "9D", "JD", "KC"], waste="7H", options="partial_runs=true")
    assert game.parse_move("1>3") == game.parse_move("10S>JD")
    assert game.parse_move("8S>9D") == game.parse_move("1>2 x1")
    assert game.parse_move("w>1") == game.parse_move("7H>8S")
    with pytest.raises(IllegalMoveError):
        game.parse_move("1>4")
    with pytest.raises(IllegalMoveError, match="no tableau pile 9"):
        game.parse_move("9>1")


def test_plain_text_takes_the_whole_run_else_the_longest_legal_part() -> None:
    game = position("klondike", ["10S 9H 8S", "9D", "10C", "", "KD"], waste="AS", options="partial_runs=true")
    assert set(game.legal_texts()) == {"w>f", "1>3 x2", "1>2 x1", "2>3", "5>4", "draw"}
    assert game.move_text(game.parse_move("1>3")) == "1>3 x2"  # 10S cannot move: the longest legal part
    assert game.move_text(game.parse_move("w")) == "w>f"  # a lone source that can go one place only
    assert game.parse_move("AS>f") == game.parse_move("w>f1") == game.parse_move("w>f")
    assert game.move_text(game.parse_move("KD>4")) == "5>4"  # a whole pile into a space: legal, if idle
    with pytest.raises(
        IllegalMoveError, match="^deal is not legal: dealing is not a move in this game; legal now: "
    ):
        game.parse_move("d")  # DEAL, not DRAW
