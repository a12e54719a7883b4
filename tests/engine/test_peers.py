"""The peer variants: Relaxed Accordion, Accordion's Revenge, 23 Skidoo, Bayan.

Positions are built by hand (``State`` + the variant's rules, or a dealt game) and the
expected moves are worked out from the rules in the spec, not from the engine's output.
"""

from __future__ import annotations

import random

import pytest

from accordion.engine import (
    DEAL,
    Game,
    InvalidOptionError,
    Stack,
    State,
    Status,
    find_variant,
    new_game,
    parse_card,
    parse_cards,
)
from accordion.engine.cards import RANK, SUIT
from accordion.engine.moves import Remove, remove, stack
from accordion.engine.notation import move_text, parse_move
from accordion.engine.rng import SplitMix64

from .helpers import deal_starting_with, row_of


def rules_of(variant: str, **options: object):  # type: ignore[no-untyped-def]
    return find_variant(variant).make_rules(options)


def row(text: str) -> tuple[tuple[int, ...], ...]:
    """One single-card pile per card named."""
    return tuple((c,) for c in parse_cards(text))


def matches(a: int, b: int) -> bool:
    return RANK[a] == RANK[b] or SUIT[a] == SUIT[b]


def reference_stacks(tops: list[int], distances: tuple[int, ...], right: bool, strict: bool) -> set[Stack]:
    """Every STACK by brute force over all pairs of piles (independent of the engine's loops)."""
    near = min(distances)
    out = set()
    for i in range(len(tops)):
        targets = []
        for j in range(len(tops)):
            d = i - j if right is False else abs(i - j)
            if j != i and (i > j or right) and d in distances and matches(tops[i], tops[j]):
                targets.append((abs(i - j), j))
        if strict and any(d == near for d, _ in targets):
            targets = [(d, j) for d, j in targets if d == near]
        out.update(Stack(i, j) for _, j in targets)
    return out


def random_playout_roundtrip(variant: str, seed: int, options: dict[str, object] | None = None) -> Game:
    """Play at random; every legal move's text parses back to the move."""
    game = new_game(variant, options or {}, seed=seed)
    rnd = random.Random(seed)
    while game.legal_moves():
        legal = game.legal_moves()
        for m in legal:
            assert game.parse_move(game.move_text(m)) == m
        game.play(rnd.choice(legal))
    return game


# --- Relaxed Accordion -------------------------------------------------------------------------


def test_relaxed_piles_move_right_as_well_as_left() -> None:
    r = rules_of("relaxed-accordion")
    s = State(row=row("8D 8C 2S 3D"))
    # 8D: right 1 onto 8C (rank), right 3 onto 3D (suit). 8C: left onto 8D. 2S: nothing.
    # 3D: left 3 onto 8D (suit); its neighbour 2S does not match.
    assert r.legal_moves(s) == (Stack(0, 1), Stack(0, 3), Stack(1, 0), Stack(3, 0))
    # Plain Accordion has only the leftward two.
    assert set(rules_of("accordion").legal_moves(s)) == {Stack(1, 0), Stack(3, 0)}


def test_relaxed_rightward_move_puts_the_pile_on_top_and_closes_the_gap() -> None:
    r = rules_of("relaxed-accordion")
    s = State(row=row("8D 8C 2S 3D"))
    after = r.apply(s, Stack(0, 3))
    assert after.row == (row("8C")[0], row("2S")[0], tuple(parse_cards("3D 8D")))
    assert move_text(s, Stack(0, 3)) == "8D>3D"
    assert parse_move(r, s, r.legal_moves(s), "8D>3D") == Stack(0, 3)
    assert parse_move(r, s, r.legal_moves(s), "1 on 2") == Stack(0, 1)


def test_relaxed_strict_forbids_the_leap_when_either_neighbour_matches() -> None:
    r = rules_of("relaxed-accordion", compel="strict")
    s = State(row=row("8D 8C 2S 3D"))
    # 8D can slide right onto 8C, so it may not leap onto 3D; 3D cannot slide, so it may leap.
    assert r.legal_moves(s) == (Stack(0, 1), Stack(1, 0), Stack(3, 0))
    # A pile whose only near match is on its LEFT may not leap to its RIGHT either.
    s2 = State(row=row("9H 9S 2D 3C 4S"))
    legal = set(r.legal_moves(s2))
    assert Stack(1, 0) in legal and Stack(1, 4) not in legal
    assert Stack(1, 4) in set(rules_of("relaxed-accordion").legal_moves(s2))


def test_relaxed_leap_2_reaches_two_either_way() -> None:
    r = rules_of("relaxed-accordion", leap=2)
    s = State(row=row("5C 9H 5S KD"))
    assert set(r.legal_moves(s)) == {Stack(0, 2), Stack(2, 0)}


def test_relaxed_must_and_stock_deal() -> None:
    game = row_of("KH 2C 3S", "relaxed-accordion", dealing="stock", compel="must")
    assert game.legal_moves() == (DEAL,)
    game.play("deal")  # the fourth card of the canonical rest: AS (matches 3S by suit)
    assert game.state.row[-1] == (parse_card("AS"),)
    assert "3S>AS" in game.legal_texts() and "deal" not in game.legal_texts()


@pytest.mark.parametrize("options", [{}, {"compel": "strict"}, {"leap": 2}, {"leap": 2, "compel": "strict"}])
def test_relaxed_matches_a_brute_force_reference(options: dict[str, object]) -> None:
    r = rules_of("relaxed-accordion", **options)
    distances = (1, int(options.get("leap", 3)))  # type: ignore[call-overload]
    rnd = random.Random(7)
    for _ in range(200):
        cards = rnd.sample(range(52), rnd.randint(1, 52))
        s = State(row=tuple((c,) for c in cards))
        legal = r.legal_moves(s)
        assert len(set(legal)) == len(legal)
        assert set(legal) == reference_stacks(cards, distances, True, options.get("compel") == "strict")


def test_relaxed_legal_moves_are_interned() -> None:
    r = rules_of("relaxed-accordion")
    s = State(row=row("8D 8C 2S 3D"))
    assert r.legal_moves(s)[0] is stack(0, 1)


# --- Accordion's Revenge -----------------------------------------------------------------------


def test_revenge_goal_follows_the_documented_draw_and_is_never_first_or_second() -> None:
    positions = set()
    for seed in range(300):
        game = new_game("accordions-revenge", seed=seed)
        gen = SplitMix64(seed)
        cards = list(range(52))
        gen.shuffle(cards)
        expected = cards[2 + gen.below(50)]
        assert game.state.goal == expected
        dealt = [p[0] for p in game.state.row]
        assert dealt == cards
        assert game.state.goal not in dealt[:2]
        positions.add(dealt.index(game.state.goal))
    assert min(positions) >= 2 and len(positions) > 30  # spread over the row, not a fixed place


def test_revenge_goal_with_stock_dealing_and_with_an_explicit_deal() -> None:
    seeded = new_game("accordions-revenge", seed=11)
    stocked = new_game("accordions-revenge", {"dealing": "stock"}, seed=11)
    assert stocked.state.goal == seeded.state.goal
    assert len(stocked.state.row) == 1 and len(stocked.state.stock) == 51
    deal = deal_starting_with("7H 7S")
    explicit = new_game("accordions-revenge", deal=deal, seed=3)
    assert explicit.state.goal == deal[2 + SplitMix64(3).below(50)]
    assert explicit.state.goal not in parse_cards("7H 7S")


def _two_piles(top_left: str, right: str) -> tuple[tuple[int, ...], ...]:
    """Every card but ``right`` in one pile topped by ``top_left``; ``right`` alone after it."""
    a, b = parse_card(top_left), parse_card(right)
    big = tuple(c for c in range(52) if c not in (a, b)) + (a,)
    return (big, (b,))


def test_revenge_is_won_only_with_the_goal_on_top() -> None:
    r = rules_of("accordions-revenge")
    for goal, won in (("7H", True), ("7S", False), ("2C", False)):
        s = r.state(_two_piles("7S", "7H"), goal=parse_card(goal))
        assert r.legal_moves(s) == (Stack(1, 0),)
        assert r.status(s, r.legal_moves(s)) is Status.IN_PROGRESS
        end = r.apply(s, Stack(1, 0))
        assert len(end.row) == 1 and end.row[0][-1] == parse_card("7H")
        assert r.legal_moves(end) == ()
        assert r.status(end, ()) is (Status.WON if won else Status.LOST)
        assert r.threshold_met(end) is won
        assert (r.penalty(end) == 0) is won  # a lost single pile is never scored like a win
        assert not r.threshold_met(s)


def test_revenge_through_a_state_string() -> None:
    big, single = _two_piles("7S", "7H")
    from accordion.engine.cards import card_code

    text = "accordions-revenge " + "".join(card_code(c) for c in big) + "/7H - goal=7H"
    game = Game.from_state_string(text)
    assert game.state.goal == parse_card("7H")
    assert "goal 7♥" in game.render()
    assert game.rules.summary(game.state) == ["goal 7♥"]
    game.play("7H>7S")
    assert game.status is Status.WON
    assert game.state_string().endswith("goal=7H")


def test_revenge_options_have_no_win_piles() -> None:
    v = find_variant("Accordion's Revenge")
    assert v.id == "accordions-revenge"
    assert [o.name for o in v.options] == ["dealing", "compel", "leap", "undo"]  # undo: every game's
    with pytest.raises(InvalidOptionError, match="win_piles"):
        v.make_rules({"win_piles": 5})


# --- 23 Skidoo -----------------------------------------------------------------------------------


def test_skidoo_moves_two_or_three_never_one() -> None:
    r = rules_of("23-skidoo")
    s = State(row=row("5H 5S 9C 5D"))
    # 5S matches its neighbour 5H, but one is not a distance here. 5D reaches 5S (2) and 5H (3).
    assert r.legal_moves(s) == (Stack(3, 1), Stack(3, 0))
    strict = rules_of("23-skidoo", compel="strict")
    assert strict.legal_moves(s) == (Stack(3, 1),)


def test_skidoo_wins_with_two_piles_by_default() -> None:
    v = find_variant("23 Skidoo")
    assert v.id == "23-skidoo"
    assert {o.name: o.default for o in v.options} == {
        "dealing": "all",
        "compel": "none",
        "win_piles": 2,
        "undo": "all",
    }
    r = v.make_rules({})
    assert r.win_piles == 2 and r.win_threshold() == "2 piles or fewer"
    cards = list(range(52))
    end = State(row=(tuple(cards[:30]), tuple(cards[30:])))
    assert r.legal_moves(end) == ()
    assert r.status(end, ()) is Status.WON
    assert v.make_rules({"win_piles": 1}).status(end, ()) is Status.LOST
    with pytest.raises(InvalidOptionError, match="leap"):
        v.make_rules({"leap": 2})


def test_skidoo_matches_a_brute_force_reference() -> None:
    for strict in (False, True):
        r = rules_of("23-skidoo", compel="strict" if strict else "none")
        rnd = random.Random(23)
        for _ in range(200):
            cards = rnd.sample(range(52), rnd.randint(1, 52))
            s = State(row=tuple((c,) for c in cards))
            assert set(r.legal_moves(s)) == reference_stacks(cards, (2, 3), False, strict)


# --- Bayan ---------------------------------------------------------------------------------------


def test_bayan_discards_matching_pairs_one_or_three_apart() -> None:
    r = rules_of("bayan")
    s = State(row=row("8D 8C 2S 3H 8H"))
    # 8D-8C neighbours (rank); 8C-8H three apart (rank); 3H-8H neighbours (suit).
    # 8D-3H three apart do not match; 8D-2S two apart is no distance.
    legal = r.legal_moves(s)
    assert legal == (remove(0, 1), remove(1, 4), remove(3, 4))
    assert [move_text(s, m) for m in legal] == ["x1-2", "x2,5", "x4-5"]
    assert parse_move(r, s, legal, "x2,5") == Remove((1, 4))
    after = r.apply(s, remove(1, 4))
    assert after.row == row("8D 2S 3H")
    assert r.penalty(after) == 3


def test_bayan_two_apart_is_not_a_move() -> None:
    r = rules_of("bayan")
    s = State(row=row("8D 2S 8C"))
    assert r.legal_moves(s) == ()
    assert r.status(s, ()) is Status.LOST
    assert r.penalty(s) == 3


def test_bayan_is_won_when_the_row_empties() -> None:
    r = rules_of("bayan")
    s = State(row=row("8D 2S 3S 8C"))
    # x2-3 (2S 3S, suit) leaves 8D 8C, then x1-2 empties the row.
    assert remove(1, 2) in r.legal_moves(s)
    s = r.apply(s, remove(1, 2))
    assert s.row == row("8D 8C") and r.legal_moves(s) == (remove(0, 1),)
    s = r.apply(s, remove(0, 1))
    assert s.row == () and r.legal_moves(s) == ()
    assert r.status(s, ()) is Status.WON and r.penalty(s) == 0 and r.threshold_met(s)
    game = Game.from_state_string("bayan - -")
    assert game.status is Status.WON


def test_bayan_stock_deal_is_always_legal_while_cards_remain() -> None:
    game = new_game("bayan", {"dealing": "stock"}, deal=deal_starting_with("8D 8C"))
    assert len(game.state.row) == 1 and game.legal_moves() == (DEAL,)
    game.play("deal")
    assert game.legal_texts() == ["x1-2", "deal"]  # no compel: DEAL stays legal beside the discard
    assert game.penalty == 52
    game.play("x1-2")
    assert game.state.row == () and game.status is Status.IN_PROGRESS  # the stock still holds 50
    assert game.penalty == 50
    assert game.legal_moves() == (DEAL,)


def test_bayan_has_only_the_dealing_option() -> None:
    v = find_variant("bayan")
    assert [o.name for o in v.options] == ["dealing", "undo"]  # undo: every game's
    assert v.rules.discards


# --- every peer: random play --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variant", "options"),
    [
        ("relaxed-accordion", {}),
        ("relaxed-accordion", {"dealing": "stock", "compel": "strict"}),
        ("accordions-revenge", {}),
        ("accordions-revenge", {"dealing": "stock", "compel": "must"}),
        ("23-skidoo", {}),
        ("23-skidoo", {"dealing": "stock"}),
        ("bayan", {}),
        ("bayan", {"dealing": "stock"}),
    ],
)
def test_random_playouts_round_trip_every_legal_move(variant: str, options: dict[str, object]) -> None:
    for seed in range(6):
        game = random_playout_roundtrip(variant, seed, options)
        assert game.status in (Status.WON, Status.LOST)
        assert (game.status is Status.WON) == (game.penalty == 0) or variant == "23-skidoo"
