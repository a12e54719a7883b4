"""The six eliminators (spec "The eliminators"; seeds 000 and 002): the registry and REMOVE,
move kind by move kind, The Queen and Her Lad's runs and deal.

Positions are built by hand from card text (helpers in eliminators.py). A small reference
implementation written from the spec's table (``reference_removals``) checks the engine's REMOVE
moves and their order on many random rows. Deals, French's REDEAL, how games end and random
playouts are in test_eliminators_games.py.
"""

from __future__ import annotations

import random

import pytest

from accordion.engine import (
    Game,
    InvalidDealError,
    Remove,
    State,
    Status,
    card_text,
    find_variant,
    new_game,
    parse_card,
    parse_cards,
)
from accordion.engine.moves import DEAL

from .eliminators import (
    ELIMINATORS,
    FACE_UP,
    ONE_BETWEEN,
    TWO_BETWEEN,
    pos,
    reference_removals,
    removes,
    row_text,
    rules_of,
    x,
)

# --- registry ------------------------------------------------------------------


@pytest.mark.parametrize(
    "alias, vid",
    [
        ("royal-marriage", "royal-marriage"),
        ("Royal Marriage", "royal-marriage"),
        ("Push Pin Solitaire", "push-pin"),
        ("push_pin", "push-pin"),
        ("Double Jump", "double-jump"),
        ("French Solitaire", "french"),
        ("french", "french"),
        ("Concertina Solitaire", "concertina"),
        ("The Queen and Her Lad", "queen-and-her-lad"),
        ("Queen and her lad", "queen-and-her-lad"),
    ],
)
def test_aliases(alias: str, vid: str) -> None:
    assert find_variant(alias).id == vid


@pytest.mark.parametrize("vid", ELIMINATORS)
def test_declared_as_eliminators(vid: str) -> None:
    rules = rules_of(vid)
    assert rules.family == "eliminator"
    assert rules.discards is True
    assert rules.win_threshold() == "2 cards"


# --- REMOVE, move kind by move kind ----------------------------------------------


@pytest.mark.parametrize("vid", ["royal-marriage", "push-pin", "french", "queen-and-her-lad"])
def test_one_card_between_a_matching_pair_leaves(vid: str) -> None:
    rules = rules_of(vid)
    state = pos(ONE_BETWEEN)
    assert removes(rules, state) == [x(2)]
    after = rules.apply(state, x(2))
    assert row_text(after) == "5S 5D"


@pytest.mark.parametrize("vid", ["royal-marriage", "push-pin", "double-jump"])
def test_two_adjacent_cards_between_a_matching_pair_leave(vid: str) -> None:
    rules = rules_of(vid)
    state = pos(TWO_BETWEEN)  # 9H and JD do not match each other: it does not matter here
    assert removes(rules, state) == [x(2, 3)]
    assert row_text(rules.apply(state, x(2, 3))) == "5S 5C"


def test_french_never_removes_two() -> None:
    rules = rules_of("french")
    assert removes(rules, pos(TWO_BETWEEN)) == []


def test_double_jump_never_removes_one() -> None:
    rules = rules_of("double-jump")
    assert removes(rules, pos(ONE_BETWEEN)) == []
    # three between a matching pair is not a move either
    assert removes(rules, pos("5S 9H JD 3C 5C")) == []


@pytest.mark.parametrize("vid", ["royal-marriage", "push-pin", "french", "double-jump", "concertina"])
def test_three_between_is_never_a_move(vid: str) -> None:
    assert removes(rules_of(vid), pos("5S 9H JD 3C 5C")) == []


@pytest.mark.parametrize("vid", FACE_UP)
def test_non_matching_surroundings_remove_nothing(vid: str) -> None:
    # 5S..9D, 9H..3C and 5S..3C do not match; the adjacent 9H 9D match is irrelevant
    assert removes(rules_of(vid), pos("5S 9H 9D 3C")) == []


def test_adjacent_match_alone_is_no_move() -> None:
    # 5S 5D match but nothing lies between them
    assert removes(rules_of("royal-marriage"), pos("5S 5D")) == []


def test_concertina_removes_the_outer_pair_and_keeps_the_middle() -> None:
    rules = rules_of("concertina")
    state = pos("2C " + ONE_BETWEEN)  # 2C 5S 9H 5D: 5S~5D around 9H
    assert removes(rules, state) == [x(2, 4)]
    assert row_text(rules.apply(state, x(2, 4))) == "2C 9H"
    state = pos(TWO_BETWEEN)  # 5S~5C around 9H JD
    assert removes(rules, state) == [x(1, 4)]
    assert row_text(rules.apply(state, x(1, 4))) == "9H JD"


def test_concertina_notation_names_the_outer_cards() -> None:
    game = Game.from_state_string("concertina AH/2D/3C/4H/6C/5S/9H/5D/7D/8C -")
    # 5S (position 6) and 5D (position 8) around 9H (7): 0-based (5, 7) reads x6,8
    assert game.move_text(Remove((5, 7))) == "x6,8"
    assert game.move_text(Remove((5, 8))) == "x6,9"
    assert game.parse_move("x6,8") == Remove((5, 7))
    game.play("x6,8")
    assert card_text(game.state.row[5][0]) == "9H"  # the middle card stayed, now at position 6


def test_two_copies_of_one_card_match_in_push_pin() -> None:
    game = Game.from_state_string("push-pin 5S/9H/5S/KD -")
    assert game.legal_texts() == ["x2"]


@pytest.mark.parametrize("vid", ["royal-marriage", "push-pin"])
def test_one_before_two_at_the_same_place(vid: str) -> None:
    # 5S~5D around 9H, 5S~5H around 9H 5D, 9H~5H around 5D
    assert removes(rules_of(vid), pos("5S 9H 5D 5H")) == [x(2), x(2, 3), x(3)]


# --- The Queen and Her Lad --------------------------------------------------------


def test_qhl_two_between_must_match_each_other() -> None:
    rules = rules_of("queen-and-her-lad")
    assert removes(rules, pos("2S 7C 7H 2D")) == [x(2, 3)]  # 7C~7H
    assert removes(rules, pos("2S 7C 8H 2D")) == []  # 7C, 8H do not match
    # the same unmatched pair does go in Royal Marriage
    assert removes(rules_of("royal-marriage"), pos("2S 7C 8H 2D")) == [x(2, 3)]


@pytest.mark.parametrize(
    "k, middle",
    [
        (1, "7C 7H"),
        (2, "7C 7H 9D 9C"),
        (3, "7C 7H 9D 9C KS KH"),
        (4, "7C 7H 9D 9C KS KH 3H 3C"),
    ],
)
def test_qhl_runs_of_k_matching_pairs(k: int, middle: str) -> None:
    rules = rules_of("queen-and-her-lad")
    state = pos(f"2S {middle} 2D")
    run = x(*range(2, 2 + 2 * k))
    assert run in removes(rules, state)
    assert row_text(rules.apply(state, run)) == "2S 2D"


def test_qhl_run_notation() -> None:
    game = Game.from_state_string("queen-and-her-lad QH/4S/2S/7C/7H/9D/9C/KS/KH/2D/6C JH")
    # 2S (3) and 2D (10) around three matching pairs 7C 7H | 9D 9C | KS KH (4-9)
    assert "x4-9" in game.legal_texts()
    assert game.parse_move("x4-9") == Remove((3, 4, 5, 6, 7, 8))
    game.play("x4-9")
    assert row_text(game.state) == "QH 4S 2S 2D 6C"


def test_qhl_runs_split_from_the_left_only() -> None:
    rules = rules_of("queen-and-her-lad")
    # 4H 7C | 7S 4D: the first pair does not match, though 7C~7S in the middle
    state = pos("2S 4H 7C 7S 4D 2D")
    legal = removes(rules, state)
    assert x(2, 3, 4, 5) not in legal
    assert x(3, 4) in legal  # 4H~4D around the matching 7C 7S: k=1 is fine
    # a broken second pair stops the run: 9D 8C do not match
    state = pos("2S 7C 7H 9D 8C 2D")
    assert x(2, 3, 4, 5) not in removes(rules, state)


def test_qhl_odd_runs_never_go() -> None:
    rules = rules_of("queen-and-her-lad")
    state = pos("2S 7C 7H 7D 2D")
    assert x(2, 3, 4) not in removes(rules, state)


def test_qhl_deal_is_legal_at_any_time_and_deals_to_the_right() -> None:
    rules = rules_of("queen-and-her-lad")
    state = pos(ONE_BETWEEN, stock="8C JH")
    legal = rules.legal_moves(state)
    assert x(2) in legal and DEAL in legal
    assert legal[-1] == DEAL
    after = rules.apply(state, DEAL)
    assert row_text(after) == "5S 9H 5D 8C"
    assert after.stock == (parse_card("JH"),)
    assert DEAL not in rules.legal_moves(rules.apply(after, DEAL))


def test_qhl_seeded_deal_starts_with_the_queen_alone() -> None:
    for seed in range(5):
        game = new_game("queen-and-her-lad", seed=seed)
        assert game.state.row == ((parse_card("QH"),),)
        assert len(game.state.stock) == 51
        assert game.state.stock[-1] == parse_card("JH")
        assert sorted([game.state.row[0][0], *game.state.stock]) == list(range(52))
        assert game.legal_moves() == (DEAL,)
        assert game.penalty == 50


def test_qhl_explicit_deals() -> None:
    middle = [c for c in range(52) if c not in parse_cards("QH JH")]
    good = [parse_card("QH"), *middle, parse_card("JH")]
    assert new_game("queen-and-her-lad", deal=good).state.stock == tuple(good[1:])
    with pytest.raises(InvalidDealError, match="starts with 'JH'"):
        new_game("queen-and-her-lad", deal=[parse_card("JH"), *middle, parse_card("QH")])
    with pytest.raises(InvalidDealError):
        new_game("queen-and-her-lad", deal=list(range(52)))
    with pytest.raises(InvalidDealError, match="starts with 'AS'"):
        new_game("queen-and-her-lad", deal=[*middle, parse_card("QH"), parse_card("JH")])


def test_qhl_win_and_loss() -> None:
    won = Game.from_state_string("queen-and-her-lad QH/JH -")
    assert won.status is Status.WON and won.penalty == 0
    # the couple alone with cards still in the stock is not a win
    assert not rules_of("queen-and-her-lad").is_won(pos("QH JH", stock="5S"))
    # stock not empty: DEAL remains, and it would not be a win yet
    going = Game.from_state_string("queen-and-her-lad QH/5S 6C")
    assert going.status is Status.IN_PROGRESS and going.penalty == 1
    # QH 5S 6C JH: QH~JH around 5S 6C, which do not match each other
    lost = Game.from_state_string("queen-and-her-lad QH/5S/6C/JH -")
    assert lost.legal_moves() == ()
    assert lost.status is Status.LOST and lost.penalty == 2
    # QH 5H JH: one card between the couple goes, and then the game is won
    last = Game.from_state_string("queen-and-her-lad QH/5H/JH -")
    last.play("x2")
    assert last.status is Status.WON


# --- the reference, on random rows ---------------------------------------------------------


@pytest.mark.parametrize("vid", ELIMINATORS)
def test_removals_agree_with_the_reference_on_random_rows(vid: str) -> None:
    rng = random.Random(f"eliminators-{vid}")
    rules = rules_of(vid)
    deck = list(range(52)) * (2 if vid == "push-pin" else 1)
    for _ in range(400):
        n = rng.randrange(0, 16)
        cards = rng.sample(deck, n)
        state = State(row=tuple((c,) for c in cards))
        got = [m.positions for m in removes(rules, state)]
        assert got == reference_removals(vid, cards), " ".join(card_text(c) for c in cards)


def test_qhl_reference_on_rows_rich_in_pairs() -> None:
    """Rows of few ranks and suits, so that long runs of matching pairs occur."""
    rng = random.Random("qhl-pairs")
    rules = rules_of("queen-and-her-lad")
    small = parse_cards("AS 2S AH 2H AD 2D")
    longest = 0
    for _ in range(400):
        cards = [rng.choice(small) for _ in range(rng.randrange(3, 14))]
        got = [m.positions for m in removes(rules, State(row=tuple((c,) for c in cards)))]
        assert got == reference_removals("queen-and-her-lad", cards)
        longest = max([longest, *map(len, got)])
    assert longest >= 6
