"""Spider (spec: "Spider"): both layouts, 1/2/4 suits, units, spaces, DEAL, lift-off, hiding."""

from __future__ import annotations

from collections import Counter

import pytest

from accordion.engine import (
    Game,
    IllegalMoveError,
    InvalidDealError,
    Status,
    Zone,
    new_game,
    parse_cards,
)
from accordion.engine.cards import card_code
from accordion.engine.rng import SplitMix64

from .tableau_helpers import check_undo_redo_exact, position, texts

RUN_K_TO_2 = "KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S"
# Tops for the piles a test does not look at (no card appears more often than two decks hold it).
FILLERS = ("KD", "KD", "KC", "KC", "KH", "KH", "JD", "JD", "QC")
SPADE_FILLERS = ("KS", "KS", "KS", "QS", "QS", "QS", "JS", "JS")


def at(piles: list[str], **where: object) -> Game:
    """A Spider position (``tableau_helpers.position``) with its eight foundations."""
    where.setdefault("foundations", ("",) * 8)
    return position("spider", piles, **where)  # type: ignore[arg-type]


def piles(*first: str, fillers: tuple[str, ...] = FILLERS) -> list[str]:
    """Ten piles: ``first``, then filler tops."""
    return [*first, *fillers[: 10 - len(first)]]


def tableau(game: Game) -> list[list[str]]:
    return [[card_code(c) for c in pile] for pile in game.state.tableau]  # type: ignore[attr-defined]


def down(game: Game) -> tuple[int, ...]:
    return game.state.down  # type: ignore[attr-defined, no-any-return]


def foundations(game: Game) -> list[list[str]]:
    return [[card_code(c) for c in pile] for pile in game.state.foundations]  # type: ignore[attr-defined]


# --- dealing ----------------------------------------------------------------------------------


def test_seed_layout_deals_ten_piles_of_five_by_rows_four_face_down() -> None:
    order = new_game("spider", seed=3).rules.order_deal(SplitMix64(3))
    game = new_game("spider", deal=order)
    assert game.state == new_game("spider", seed=3).state
    for j, pile in enumerate(game.state.tableau):  # type: ignore[attr-defined]
        assert list(pile) == order[j:50:10]  # card k goes to pile (k mod 10) + 1
    assert down(game) == (4,) * 10
    assert list(game.state.stock) == order[50:] and len(order) == 104


def test_standard_layout_deals_54_cards_piles_one_to_four_hold_six() -> None:
    game = new_game("spider", {"layout": "standard"}, seed=8)
    order = game.rules.order_deal(SplitMix64(8))
    assert [len(p) for p in game.state.tableau] == [6, 6, 6, 6, 5, 5, 5, 5, 5, 5]  # type: ignore[attr-defined]
    assert down(game) == (5, 5, 5, 5, 4, 4, 4, 4, 4, 4)
    assert list(game.state.tableau[3]) == order[3:54:10]  # type: ignore[attr-defined]
    assert list(game.state.stock) == order[54:]
    for _ in range(5):
        game.play("deal")
    assert not game.state.stock and "deal" not in texts(game)


@pytest.mark.parametrize(
    ("suits", "kinds"), [(4, {"S": 26, "H": 26, "D": 26, "C": 26}), (2, {"S": 52, "H": 52}), (1, {"S": 104})]
)
def test_suits_option_makes_104_cards_of_that_many_suits(suits: int, kinds: dict[str, int]) -> None:
    game = new_game("spider", {"suits": suits}, seed=1)
    cards = game.rules.deck()
    assert len(cards) == 104
    assert Counter(card_code(c)[1] for c in cards) == kinds
    assert set(Counter(cards).values()) == {8 // suits}  # each card 8 / suits times


def test_an_explicit_deal_with_a_card_outside_the_suits_is_refused() -> None:
    cards = parse_cards("AH") + [c for c in range(13)] * 8
    with pytest.raises(InvalidDealError):
        new_game("spider", {"suits": 1}, deal=cards[:104])


def test_seed_layout_ends_with_a_deal_of_four_onto_piles_one_to_four() -> None:
    game = new_game("spider", seed=11)
    for _ in range(5):
        game.play("deal")
    last = list(game.state.stock)
    assert len(last) == 4
    before = tableau(game)
    game.play("deal")
    after = tableau(game)
    assert [a[-1] for a in after[:4]] == [card_code(c) for c in last]
    assert after[4:] == before[4:] and not game.state.stock
    assert "deal" not in texts(game)


# --- moves --------------------------------------------------------------------------------------


def test_any_top_part_of_a_unit_moves_onto_one_rank_higher_of_any_suit() -> None:
    game = at(piles("8S 7S 6S", "7H", "9D", "8C", "5S"), rest_under=9)
    legal = texts(game)
    assert {"1>2 x1", "1>3", "1>4 x2"} <= legal  # 6S onto 7H, the whole unit onto 9D, 7S 6S onto 8C
    assert not {"1>2", "1>3 x1", "1>4 x1", "1>5"} & legal  # only where the deepest card fits
    game.play("1>4 x2")
    assert tableau(game)[0] == ["8S"] and tableau(game)[3] == ["8C", "7S", "6S"]


def test_a_unit_stops_at_a_suit_change_and_at_a_face_down_card() -> None:
    game = at(piles("7S 6H 5H", "6S 5S", "8D", "7C"), down=[0, 1, 0, 0, 0, 0, 0, 0, 0, 0], rest_under=9)
    legal = texts(game)
    assert "1>4" in legal  # 6H 5H onto 7C (a unit of two: 7S is another suit)
    assert "1>3 x3" not in legal and not any(t.startswith("1>3") for t in legal)
    assert not any(t.startswith("2>3") for t in legal)  # 6S is face down: the unit is 5S only
    with pytest.raises(IllegalMoveError):
        game.play("1>3 x3")


def test_moves_onto_a_card_not_one_higher_are_refused_and_change_nothing() -> None:
    game = at(piles("5S", "7H"), rest_under=9)
    before = game.state_string()
    for text in ("1>2", "2>1", "1>3"):
        with pytest.raises(IllegalMoveError):
            game.play(text)
    assert game.state_string() == before


def test_any_part_of_a_unit_goes_into_a_space_and_deal_is_refused_then() -> None:
    game = at(piles("9H 8H 7H", ""), stock="2C", rest_under=9)
    assert {"1>2", "1>2 x1", "1>2 x2"} <= texts(game)
    assert game.state.stock and "deal" not in texts(game)
    with pytest.raises(IllegalMoveError):
        game.play("deal")
    game.play("1>2 x2")
    assert tableau(game)[:2] == [["9H"], ["8H", "7H"]]
    assert "deal" in texts(game)


def test_the_last_deal_of_four_is_refused_with_an_empty_pile_too() -> None:
    game = at(piles("9H 8H", ""), stock="2C 3C 4C 5C", rest_under=9)
    assert "deal" not in texts(game)
    with pytest.raises(IllegalMoveError):
        game.play("deal")
    game.play("1>2 x1")
    game.play("deal")
    assert [p[-1] for p in tableau(game)[:4]] == ["2C", "3C", "4C", "5C"] and not game.state.stock
    assert tableau(game)[4][-1] == FILLERS[2]  # pile 5 got nothing


def test_deal_puts_one_card_face_up_on_each_pile_left_to_right() -> None:
    game = new_game("spider", seed=21)
    stock = list(game.state.stock)
    before = tableau(game)
    game.play("deal")
    assert [p[-1] for p in tableau(game)] == [card_code(c) for c in stock[:10]]
    assert [p[:-1] for p in tableau(game)] == before and down(game) == (4,) * 10
    assert list(game.state.stock) == stock[10:]


def test_a_move_turns_up_the_face_down_card_it_uncovers() -> None:
    game = at(piles("3D 5S", "6H"), down=[1, 0, 0, 0, 0, 0, 0, 0, 0, 0], rest_under=9)
    game.play("1>2")
    assert tableau(game)[0] == ["3D"] and down(game)[0] == 0


# --- lift-off and the end -----------------------------------------------------------------------


def test_a_full_suit_lifts_off_as_part_of_the_move_that_completes_it() -> None:
    game = at(piles("9C " + RUN_K_TO_2, "4D AS"), down=[1, 1, 0, 0, 0, 0, 0, 0, 0, 0], rest_under=9)
    penalty = game.penalty
    game.play("2>1")
    assert tableau(game)[0] == ["9C"] and down(game)[0] == 0  # lifted, and 9C turned up
    assert tableau(game)[1] == ["4D"] and down(game)[1] == 0
    assert foundations(game)[0] == "AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS".split()
    assert game.penalty == penalty - 13
    game.undo()
    assert tableau(game)[0][-1] == "2S" and foundations(game)[0] == [] and game.penalty == penalty


def test_a_deal_that_completes_a_suit_lifts_it_off() -> None:
    game = at(piles(RUN_K_TO_2), stock="AS", rest_under=9)
    game.play("deal")
    assert tableau(game)[0] == [] and len(foundations(game)[0]) == 13


def test_a_suit_with_a_face_down_king_does_not_lift_off() -> None:
    game = at(piles(RUN_K_TO_2, "AS"), down=[1, 0, 0, 0, 0, 0, 0, 0, 0, 0], rest_under=9)
    game.play("2>1")
    assert len(tableau(game)[0]) == 13 and foundations(game)[0] == []


def test_the_last_suit_lifted_off_wins() -> None:
    done = [" ".join(f"{r}{s}" for r in "A23456789TJQK") for s in "HHDDCCS"]
    game = at([RUN_K_TO_2, "AS", "", "", "", "", "", "", "", ""], foundations=done + [""])
    assert game.status is Status.IN_PROGRESS and game.penalty == 13
    game.play("2>1")
    assert game.status is Status.WON and game.penalty == 0 and game.legal_moves() == ()


def test_one_suit_and_two_suit_games_lift_off_their_suits() -> None:
    for suits in (1, 2):
        game = at(piles(RUN_K_TO_2, "AS", fillers=SPADE_FILLERS), rest_under=9, options=f"suits={suits}")
        game.play("2>1")
        assert len(foundations(game)[0]) == 13 and game.penalty == 104 - 13


# --- what the player sees, and records ----------------------------------------------------------


def test_the_player_never_sees_a_face_down_card_or_the_stock_unless_open() -> None:
    game = new_game("spider", seed=5)
    hidden = [c for pile in game.state.tableau for c in pile[:4]] + list(game.state.stock)  # type: ignore[attr-defined]
    shown = game.state_string(hide_stock=True)
    tableau_text = shown.split("tableau=")[1].split()[0]
    assert all(p.startswith("??" * 4) for p in tableau_text.split("/"))
    assert "#54" in shown
    zones = game.zones()
    assert [z.zone for z in zones] == [Zone.TABLEAU, Zone.FOUNDATION, Zone.STOCK]  # no waste in Spider
    assert all(p.face_down == 4 and not p.face_down_cards and len(p.cards) == 1 for p in zones[0].piles)
    assert zones[2].piles[0].face_down == 54 and not zones[2].piles[0].face_down_cards
    assert game.hides_anything()
    visible_codes = {card_code(c) for z in zones for p in z.piles for c in p.cards}
    assert visible_codes == {card_code(p[-1]) for p in game.state.tableau}  # type: ignore[attr-defined]
    assert hidden  # (cards exist that it must not name: they appear only in the full string)

    opened = new_game("spider", {"open": True}, seed=5)
    zones = opened.zones()
    assert [list(p.face_down_cards) for p in zones[0].piles] == [list(p[:4]) for p in opened.state.tableau]  # type: ignore[attr-defined]
    assert list(zones[2].piles[0].face_down_cards) == list(opened.state.stock)
    assert not opened.hides_anything() and "??" not in opened.state_string(hide_stock=True)


def test_undo_redo_and_the_record_restore_every_position_exactly() -> None:
    game = new_game("spider", {"suits": 2}, seed=9)
    positions = check_undo_redo_exact(game, moves=40, stride=7)
    loaded = Game.from_state_string(positions[-1])
    assert loaded.state == game.state and loaded.legal_moves() == game.legal_moves()
