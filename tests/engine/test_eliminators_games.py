"""The six eliminators (spec "The eliminators"; seeds 000 and 002): French's REDEAL, the deals,
win, loss and penalty, and random playouts (notation round-trips, card conservation, state
strings, how games end).

The REMOVE moves themselves, and the reference they are checked against, are in
test_eliminators.py; the helpers in eliminators.py.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from accordion.engine import (
    Game,
    IllegalMoveError,
    InvalidDealError,
    InvalidOptionError,
    InvalidStateError,
    Remove,
    SplitMix64,
    Status,
    card_text,
    new_game,
    parse_card,
    parse_cards,
)
from accordion.engine.games.french import RNG
from accordion.engine.moves import REDEAL, Deal, Redeal

from .eliminators import ELIMINATORS, ONE_BETWEEN, pos, row_text, rules_of

# --- French: REDEAL -----------------------------------------------------------------

STUCK = "5S 9H JD 3C 7S"  # no card lies between a matching pair


def test_french_redeal_only_when_stuck() -> None:
    rules = rules_of("french")
    assert rules.legal_moves(pos(STUCK)) == (REDEAL,)
    assert REDEAL not in rules.legal_moves(pos(ONE_BETWEEN))
    assert rules.legal_moves(pos("5S 9H")) == ()  # two cards left: a win, no redeal
    used = rules.state(pos(STUCK).row, redeals=1)
    assert rules.legal_moves(used) == ()


def test_french_redeal_shuffles_with_the_continued_generator() -> None:
    rules = rules_of("french")
    state = rules.state(pos(STUCK).row, rng=0x1234_5678_9ABC_DEF0)
    after = rules.apply(state, REDEAL)
    gen = SplitMix64(0x1234_5678_9ABC_DEF0)
    expected = parse_cards(STUCK)
    gen.shuffle(expected)
    assert [p[0] for p in after.row] == expected
    assert after.rng == gen.state != state.rng
    assert after.redeals == 1
    assert Counter(p[0] for p in after.row) == Counter(parse_cards(STUCK))
    assert all(len(p) == 1 for p in after.row)
    assert rules.apply(state, REDEAL) == after  # pure and deterministic
    other = rules.apply(state._replace(rng=99), REDEAL)
    assert other.rng != after.rng


def stuck_french(seed: int) -> Game:
    """A seeded French game played by first legal removal until REDEAL is offered (or it ends)."""
    game = new_game("french", seed=seed)
    while game.legal_moves() and game.legal_moves() != (REDEAL,):
        game.play(game.legal_moves()[0])
    return game


def test_french_redeal_in_play_is_deterministic_per_seed() -> None:
    redealt = 0
    for seed in range(10):
        a, b = stuck_french(seed), stuck_french(seed)
        if a.legal_moves() != (REDEAL,):
            continue
        redealt += 1
        before = Counter(p[0] for p in a.state.row)
        assert "redeal available" in a.view().extras
        assert a.legal_texts() == ["redeal"]
        a.play("redeal")
        b.play(REDEAL)
        assert a.state == b.state
        assert Counter(p[0] for p in a.state.row) == before
        assert a.state.redeals == 1
        assert "redeal used" in a.view().extras
        assert "redeal used" in a.render()
        # the state string keeps the generator and the redeal count, and round-trips
        text = a.state_string()
        assert "redeals=1" in text and "rng=" in text
        assert Game.from_state_string(text).state == a.state
        # play on: never a second redeal
        while a.legal_moves():
            assert REDEAL not in a.legal_moves()
            a.play(a.legal_moves()[0])
        assert a.status in (Status.WON, Status.LOST)
        a.undo()  # undo works across the redeal too
    assert redealt >= 5


def test_french_redeal_differs_between_seeds_with_the_same_row() -> None:
    rules = rules_of("french")
    rows = {
        tuple(p[0] for p in rules.apply(rules.state(pos(STUCK).row, rng=s), REDEAL).row) for s in range(20)
    }
    assert len(rows) > 5


def test_french_stuck_after_redeal_is_lost() -> None:
    game = Game.from_state_string("french 5S/9H/JD/3C/7S - rng=0000000000000001 redeals=1")
    assert game.status is Status.LOST
    assert game.penalty == 3


# --- dealing -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "suit, q, k",
    [
        ("hearts", "QH", "KH"),
        ("spades", "QS", "KS"),
        ("diamonds", "QD", "KD"),
        ("clubs", "QC", "KC"),
    ],
)
def test_royal_marriage_deal_has_the_couple_at_the_ends(suit: str, q: str, k: str) -> None:
    middles = set()
    for seed in range(6):
        game = new_game("royal-marriage", {"suit": suit}, seed=seed)
        cards = [p[0] for p in game.state.row]
        assert card_text(cards[0]) == q and card_text(cards[-1]) == k
        assert sorted(cards) == list(range(52))
        middles.add(tuple(cards[1:-1]))
    assert len(middles) == 6  # the 50 between are shuffled


def test_royal_marriage_default_suit_is_hearts() -> None:
    game = new_game("royal-marriage", seed=3)
    assert card_text(game.state.row[0][0]) == "QH" and card_text(game.state.row[-1][0]) == "KH"


def test_royal_marriage_explicit_deals() -> None:
    middle = [c for c in range(52) if c not in parse_cards("QH KH")]
    good = [parse_card("QH"), *middle, parse_card("KH")]
    assert [p[0] for p in new_game("royal-marriage", deal=good).state.row] == good
    with pytest.raises(InvalidDealError, match="starts with 'AS'"):
        new_game("royal-marriage", deal=list(range(52)))
    with pytest.raises(InvalidDealError):
        new_game("royal-marriage", deal=[parse_card("KH"), *middle, parse_card("QH")])
    with pytest.raises(InvalidDealError, match="starts with 'AS'"):  # the King is right, the Queen is not
        new_game("royal-marriage", deal=[*middle, parse_card("QH"), parse_card("KH")])
    with pytest.raises(InvalidDealError, match="ends with 'KC'"):  # the Queen is right, the King is not
        new_game("royal-marriage", deal=[parse_card("QH"), parse_card("KH"), *middle])
    with pytest.raises(InvalidDealError):  # right for hearts, wrong for spades
        new_game("royal-marriage", {"suit": "spades"}, deal=good)
    with pytest.raises(InvalidDealError):
        new_game("royal-marriage", deal=good[:-1])


def test_royal_marriage_rejects_an_unknown_suit() -> None:
    with pytest.raises(InvalidOptionError, match="stars"):
        new_game("royal-marriage", {"suit": "stars"}, seed=1)


def test_push_pin_deal_has_two_decks() -> None:
    game = new_game("push-pin", seed=11)
    cards = [p[0] for p in game.state.row]
    assert len(cards) == 104
    assert Counter(cards) == Counter({c: 2 for c in range(52)})
    assert game.state.stock == ()
    assert game.penalty == 102
    with pytest.raises(InvalidDealError):
        new_game("push-pin", deal=list(range(52)))
    with pytest.raises(InvalidDealError):
        new_game("push-pin", deal=[0, 0, 0, *range(1, 52), *range(2, 52)])  # AS thrice, 2S once
    new_game("push-pin", deal=list(range(52)) * 2)  # any order of the two decks is fine


@pytest.mark.parametrize("vid", ["double-jump", "french", "concertina"])
def test_one_deck_face_up(vid: str) -> None:
    game = new_game(vid, seed=5)
    assert sorted(p[0] for p in game.state.row) == list(range(52))
    assert game.state.stock == ()
    assert game.penalty == 50
    assert new_game(vid, seed=5).state == game.state
    assert new_game(vid, seed=6).state != game.state


def test_french_keeps_its_generator_state_only() -> None:
    assert new_game("french", seed=5).state.rng != 0
    # A game that declares no generator field reads it as its default, 0.
    assert RNG.get(new_game("double-jump", seed=5).state) == 0


# --- win, loss, penalty ----------------------------------------------------------------


@pytest.mark.parametrize(
    "text, status, penalty",
    [
        ("royal-marriage QH/KH -", Status.WON, 0),
        ("royal-marriage QH/5S/9C/2D/KH -", Status.LOST, 3),
        ("royal-marriage QH/5S/9C/KH -", Status.IN_PROGRESS, 2),  # the couple always match
        ("royal-marriage QH/5H/KH -", Status.IN_PROGRESS, 1),
        ("push-pin 5S/5S -", Status.WON, 0),
        ("push-pin 5S/9H/JD/3C -", Status.LOST, 2),
        ("double-jump 5S/9H/5D -", Status.LOST, 1),
        ("double-jump 5S/9H/JD/5C -", Status.IN_PROGRESS, 2),
        ("concertina 9H/JD -", Status.WON, 0),
        ("concertina 5S/9H/JD/3C -", Status.LOST, 2),
        ("french 5S/5D - rng=0000000000000007", Status.WON, 0),
    ],
)
def test_status_and_penalty(text: str, status: Status, penalty: int) -> None:
    game = Game.from_state_string(text)
    assert game.status is status
    assert game.penalty == penalty
    assert game.threshold_met == (status is Status.WON)


def test_playing_to_a_win() -> None:
    game = Game.from_state_string("royal-marriage QH/5S/9H/5D/JC/KH -")
    # QH~9H around 5S, 5S~5D around 9H, 9H~KH around 5D JC
    assert game.legal_texts() == ["x2", "x3", "x4-5"]
    game.play("x4-5")  # 9H~KH (hearts) around 5D JC
    assert row_text(game.state) == "QH 5S 9H KH"
    game.play("x2-3")  # QH~KH around 5S 9H
    assert row_text(game.state) == "QH KH"
    assert game.status is Status.WON and game.penalty == 0


def test_state_string_rejects_too_many_copies() -> None:
    with pytest.raises(InvalidStateError):
        Game.from_state_string("royal-marriage QH/QH/KH -")
    Game.from_state_string("push-pin QH/QH/KH -")


def test_illegal_removal_is_refused_with_the_legal_list() -> None:
    game = Game.from_state_string("french 5S/9H/5D/JC - rng=0000000000000001")
    with pytest.raises(IllegalMoveError) as info:
        game.play("x3")
    assert info.value.legal == ("x2",)


# --- random playouts ---------------------------------------------------------------------


def cards_in_play(game: Game) -> Counter[int]:
    return Counter([p[0] for p in game.state.row] + list(game.state.stock))


@pytest.mark.parametrize("vid", ELIMINATORS)
def test_random_playouts(vid: str) -> None:
    rng = random.Random(f"playout-{vid}")
    ends: Counter[Status] = Counter()
    for _seed in range(12):
        game = new_game(vid, seed=rng.getrandbits(64))
        first, last = game.state.row[0][0], game.state.row[-1][0]
        steps = 0
        while game.legal_moves():
            legal = game.legal_moves()
            assert len(set(legal)) == len(legal)
            keys = [m.positions for m in legal if isinstance(m, Remove)]
            assert keys == sorted(keys, key=lambda ps: (ps[0], len(ps), ps[-1]))
            for m in legal:
                assert game.parse_move(game.move_text(m)) == m
            assert game.status is Status.IN_PROGRESS
            move = rng.choice(legal)
            before = cards_in_play(game)
            row_before = [p[0] for p in game.state.row]
            game.play(move)
            after = cards_in_play(game)
            if isinstance(move, Remove):
                gone = Counter(row_before[p] for p in move.positions)
                assert before - after == gone and after + gone == before
                assert len(game.state.row) == len(row_before) - len(move.positions)
            elif isinstance(move, (Deal, Redeal)):
                assert after == before
            steps += 1
            if steps % 7 == 0:
                assert Game.from_state_string(game.state_string()).state == game.state
        ends[game.status] += 1
        assert game.status in (Status.WON, Status.LOST)
        assert (game.status is Status.WON) == (game.penalty == 0)
        n_left = len(game.state.row) + len(game.state.stock)
        assert game.penalty == max(0, n_left - 2)
        if vid in ("royal-marriage", "queen-and-her-lad"):
            # the fixed ends never leave
            assert game.state.row[0][0] == first
            if vid == "royal-marriage":
                assert game.state.row[-1][0] == last
            else:
                assert not game.state.stock and game.state.row[-1][0] == parse_card("JH")
        if vid == "concertina":
            assert n_left % 2 == 0  # every move takes two cards
        # undo back to the start restores the deal exactly
        fresh = new_game(vid, seed=game.seed)
        while game.can_undo():
            game.undo()
        assert game.state == fresh.state
    assert sum(ends.values()) == 12
