"""The six eliminators (spec "The eliminators"; seeds 000 and 002), move kind by move kind.

Positions are built by hand from card text. A small reference implementation written
from the spec's table (``reference_removals``) checks the engine's REMOVE moves and
their order on many random rows; random playouts check notation round-trips, card
conservation, state strings, and how games end.
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
    State,
    Status,
    card_text,
    find_variant,
    new_game,
    parse_card,
    parse_cards,
)
from accordion.engine.core import Rules
from accordion.engine.games.french import RNG
from accordion.engine.moves import DEAL, REDEAL, Deal, Move, Redeal

ELIMINATORS = ("royal-marriage", "push-pin", "double-jump", "french", "concertina", "queen-and-her-lad")
FACE_UP = ("royal-marriage", "push-pin", "double-jump", "french", "concertina")


# --- helpers -------------------------------------------------------------------


def rules_of(variant: str, **options: object) -> Rules:
    return find_variant(variant).make_rules(options)


def pos(text: str, stock: str = "") -> State:
    """A position whose row is the named cards, one per pile."""
    return State(row=tuple((c,) for c in parse_cards(text)), stock=tuple(parse_cards(stock)) if stock else ())


def x(*positions: int) -> Remove:
    """REMOVE by 1-based positions, as a player writes them."""
    return Remove(tuple(p - 1 for p in positions))


def row_text(state: State) -> str:
    return " ".join(card_text(p[0]) for p in state.row)


def removes(rules: Rules, state: State) -> list[Move]:
    return [m for m in rules.legal_moves(state) if isinstance(m, Remove)]


def match(a: int, b: int) -> bool:
    """Same rank or same suit, read from the card text (independent of ``cards.MATCH``)."""
    ta, tb = card_text(a), card_text(b)
    return ta[:-1] == tb[:-1] or ta[-1] == tb[-1]


def reference_removals(variant: str, cards: list[int]) -> list[tuple[int, ...]]:
    """The spec's table, by brute force over every matching pair (i, j) of the row."""
    found = []
    for i in range(len(cards)):
        for j in range(i + 2, len(cards)):
            if not match(cards[i], cards[j]):
                continue
            between = list(range(i + 1, j))
            k = len(between)
            if variant in ("royal-marriage", "push-pin") and k in (1, 2):
                found.append(tuple(between))
            elif variant == "double-jump" and k == 2:
                found.append(tuple(between))
            elif variant == "french" and k == 1:
                found.append(tuple(between))
            elif variant == "concertina" and k in (1, 2):
                found.append((i, j))  # the outer pair leaves
            elif variant == "queen-and-her-lad":
                if k == 1 or (k % 2 == 0 and all(match(cards[p], cards[p + 1]) for p in between[::2])):
                    found.append(tuple(between))
    # Leftmost removed position first, then shorter (for Concertina: the nearer right card).
    return sorted(found, key=lambda ps: (ps[0], len(ps), ps[-1]))


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

# 5S and 5D match (rank); 9H and JD match neither of them nor each other's neighbours here.
ONE_BETWEEN = "5S 9H 5D"
TWO_BETWEEN = "5S 9H JD 5C"


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
