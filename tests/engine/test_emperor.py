"""Emperor (spec: "Emperor"): the deal, DRAW, compelled Aces, interchangeable foundations, builds."""

from __future__ import annotations

import pytest

from accordion.engine import RESIGN, Game, IllegalMoveError, Status, Transfer, Zone, new_game
from accordion.engine.cards import card_code
from accordion.engine.rng import SplitMix64

from .tableau_helpers import check_undo_redo_exact, position, texts

# Tops for the piles a test does not look at: black court cards build on none of each other.
FILLERS = ("KS", "KS", "KC", "KC", "QS", "QS", "QC", "QC", "JS", "JS")
SUIT_CARDS = "A23456789TJQK"


def at(piles: list[str], **where: object) -> Game:
    """A Emperor position (``tableau_helpers.position``) with its eight foundations."""
    where.setdefault("foundations", ("",) * 8)
    return position("emperor", piles, **where)  # type: ignore[arg-type]


def piles(*first: str) -> list[str]:
    return [*first, *FILLERS[: 10 - len(first)]]


def tableau(game: Game) -> list[list[str]]:
    return [[card_code(c) for c in pile] for pile in game.state.tableau]  # type: ignore[attr-defined]


def foundations(game: Game) -> list[list[str]]:
    return [[card_code(c) for c in pile] for pile in game.state.foundations]  # type: ignore[attr-defined]


def test_ten_piles_of_four_by_rows_three_face_down_and_64_in_the_stock() -> None:
    order = new_game("emperor", seed=4).rules.order_deal(SplitMix64(4))
    game = new_game("emperor", deal=order)
    assert game.state == new_game("emperor", seed=4).state and len(order) == 104
    for j, pile in enumerate(game.state.tableau):  # type: ignore[attr-defined]
        assert list(pile) == order[j:40:10]
    assert game.state.down == (3,) * 10  # type: ignore[attr-defined]
    assert list(game.state.stock) == order[40:] and len(game.state.stock) == 64


def test_an_ace_on_top_compels_aces_to_the_foundations_and_nothing_else() -> None:
    game = at(piles("9D AS", "6H", "7C", ""), down=[1] + [0] * 9, stock="5D", rest_under=9)
    assert texts(game) == {"1>f"}  # not 2>3 (6H on 7C), not into the space, not draw
    for text in ("2>3", "draw", "2>4"):
        with pytest.raises(IllegalMoveError):
            game.play(text)
    assert game.is_legal(RESIGN)
    game.play("1>f")
    assert foundations(game)[0] == ["AS"] and tableau(game)[0] == ["9D"]
    assert {"2>3", "2>4", "draw"} <= texts(game)


def test_an_ace_on_the_waste_is_compelled_too_and_resigning_stays_allowed() -> None:
    game = at(piles("6H", "7C"), waste="AH", rest_under=9)
    assert texts(game) == {"w>f"}
    game.play("resign")
    assert game.status is Status.LOST and game.legal_moves() == ()


def test_the_two_foundations_of_a_suit_are_one_move() -> None:
    game = at(piles("AS", "AS"), rest_under=9)
    assert texts(game) == {"1>f", "2>f"}
    game.play("1>f")
    game.play("2>f")
    assert foundations(game)[0] == ["AS"] and foundations(game)[4] == ["AS"]  # ♠ uses foundations 1 and 5

    game = at(piles("2S", "2S"), foundations=["AS", "", "", "", "AS", "", "", ""], rest_under=9)
    to_foundations = [
        m for m in game.legal_moves() if isinstance(m, Transfer) and m.dst_zone is Zone.FOUNDATION
    ]
    assert [(m.src, m.dst) for m in to_foundations] == [(0, 0), (1, 0)]  # either 2S: one move each
    game.play("1>f")
    assert [
        (m.src, m.dst)
        for m in game.legal_moves()
        if isinstance(m, Transfer) and m.dst_zone is Zone.FOUNDATION
    ] == [(1, 4)]
    game.play("2>f")
    assert foundations(game)[0] == ["AS", "2S"] and foundations(game)[4] == ["AS", "2S"]


def test_naming_the_other_foundation_of_a_suit_is_the_same_move() -> None:
    """A player may name either of a suit's two foundations when both take the card (spec: "the two
    foundations of a suit are interchangeable"): it is the one move listed, to the first."""
    game = at(piles("2S", "3S"), foundations=["AS", "", "", "", "AS", "", "", ""], rest_under=9)
    listed = game.parse_move("1>f")
    assert game.parse_move("1>f5") == game.parse_move("1>f1") == listed and listed.dst == 0
    game.play("1>f5")
    assert foundations(game)[0] == ["AS", "2S"] and foundations(game)[4] == ["AS"]
    # Now the two differ: 3S goes onto foundation 1 only, and naming foundation 5 is refused.
    assert game.parse_move("2>f").dst == 0
    with pytest.raises(IllegalMoveError):
        game.parse_move("2>f5")
    with pytest.raises(IllegalMoveError):
        game.play("2>f5")


def test_builds_go_down_one_rank_in_the_other_colour_one_card_at_a_time() -> None:
    game = at(piles("8D 7C 6H", "7C", "7D", "8C", "5D", ""), rest_under=9)
    legal = texts(game)
    assert "1>2" in legal  # 6H on 7C
    assert "1>3" not in legal and "1>4" not in legal  # not on a red 7, not on an 8
    assert "5>6" in legal and "1>6" in legal  # any card into a space
    for text in ("1>3", "1>4", "1>2 x2", "2>1"):
        with pytest.raises(IllegalMoveError):
            game.play(text)
    game.play("1>2")
    assert tableau(game)[1] == ["7C", "6H"] and tableau(game)[0] == ["8D", "7C"]


def test_a_move_turns_up_the_face_down_card_it_uncovers() -> None:
    game = at(piles("3D 6H", "7C"), down=[1] + [0] * 9, rest_under=9)
    game.play("1>2")
    assert tableau(game)[0] == ["3D"] and game.state.down[0] == 0  # type: ignore[attr-defined]


def test_draw_turns_one_card_once_through_the_stock_and_the_waste_top_plays() -> None:
    game = at(piles("8S", "9H"), stock="7D 5S", rest_under=9)
    game.play("draw")
    assert [card_code(c) for c in game.state.waste] == ["7D"]  # type: ignore[attr-defined]
    assert "w>1" in texts(game)
    game.play("draw")
    assert not game.state.stock and "draw" not in texts(game) and "redeal" not in texts(game)
    with pytest.raises(IllegalMoveError):
        game.play("redeal")
    assert not any(t.startswith("w>1") for t in texts(game))  # 5S is the waste's top now
    game.undo()
    game.play("w>1")
    assert tableau(game)[0] == ["8S", "7D"]


def test_all_104_on_the_foundations_wins_and_no_move_left_loses() -> None:
    full = [" ".join(r + s for r in SUIT_CARDS) for s in "SHDC"]
    homes = [" ".join(r + "S" for r in SUIT_CARDS[:-1]), *full[1:], *full]
    game = at(["KS"] + [""] * 9, foundations=homes)
    assert game.status is Status.IN_PROGRESS
    game.play("1>f")
    assert game.status is Status.WON and game.penalty == 0

    stuck = at(list(FILLERS), rest_under=9)
    assert stuck.legal_moves() == () and stuck.status is Status.LOST and stuck.penalty == 104


def test_the_player_never_sees_a_face_down_card_or_the_stock_unless_open() -> None:
    game = new_game("emperor", seed=7)
    shown = game.state_string(hide_stock=True)
    assert all(p.startswith("??" * 3) for p in shown.split("tableau=")[1].split()[0].split("/"))
    assert "#64" in shown
    zones = game.zones()
    assert all(p.face_down == 3 and not p.face_down_cards for p in zones[0].piles)
    stock = next(z for z in zones if z.zone is Zone.STOCK).piles[0]
    assert stock.face_down == 64 and not stock.face_down_cards and not stock.cards
    opened = new_game("emperor", {"open": True}, seed=7)
    assert [list(p.face_down_cards) for p in opened.zones()[0].piles] == [
        list(p[:3]) for p in opened.state.tableau
    ]  # type: ignore[attr-defined]
    assert "??" not in opened.state_string(hide_stock=True)


def test_undo_redo_and_the_record_restore_every_position_exactly() -> None:
    check_undo_redo_exact(new_game("emperor", seed=12), moves=60, stride=5)
