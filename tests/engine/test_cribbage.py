"""Cribbage Solitaire: scoring, new windows, the pair exception, the end, notation.

Positions come from explicit deals played one DEAL at a time, so the engine's own DEAL
keeps the marks; the expected claims are worked out by hand from the spec's table. The
random playouts check the engine against a reference written another way: every pile
gets a serial number when it is made, and a window is new when its serials were not
side by side just before the latest DEAL.
"""

from __future__ import annotations

import random
from itertools import permutations

import pytest

from accordion.engine import (
    DEAL,
    Claim,
    Game,
    IllegalMoveError,
    Status,
    find_variant,
    new_game,
    parse_cards,
)

from .helpers import row_of

POINTS = {"pair": 2, "three": 6, "flush": 3, "run": 3, "straight-flush": 6, "fifteen": 2}


def dealt(cards: str) -> Game:
    """A game whose row is exactly ``cards``, each dealt in turn (no claim made)."""
    return row_of(cards, "cribbage-solitaire")


def claims(game: Game) -> set[str]:
    return {t for t in game.legal_texts() if t != "deal"}


def claim_set(first: int, last: int, combo: str) -> set[str]:
    """Every CLAIM text of ``combo`` in window ``first..last`` (1-based), all (src, dst)."""
    return {f"claim {first}-{last} {combo} {s}>{d}" for s, d in permutations(range(first, last + 1), 2)}


# --- every combination scores right ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "expected"),
    [
        # pair: the two fives just met; 9+5+5 = 19, 9+5 = 14.
        ("9S 5H 5D", [(2, 3, "pair")]),
        # three of a kind 5-5-5 is also a fifteen; the pair 5S 5H (new before this deal) stays.
        ("5S 5H 5D", [(1, 2, "pair"), (1, 3, "three"), (1, 3, "fifteen"), (2, 3, "pair")]),
        # three of a suit, no run, 2+9+5 = 16.
        ("2H 9H 5H", [(1, 3, "flush")]),
        # a run in any order: 5 3 4; 5+3+4 = 12.
        ("5C 3D 4S", [(1, 3, "run")]),
        ("JD QS KH", [(1, 3, "run")]),
        # a straight flush is also a flush and a run; 7+5+6 = 18.
        ("7C 5C 6C", [(1, 3, "flush"), (1, 3, "run"), (1, 3, "straight-flush")]),
        # two-card fifteen 7+8; 3+7+8 = 18; 3 7 8 no run.
        ("3S 7H 8D", [(2, 3, "fifteen")]),
        # a king counts 10: K+5; 2+10+5 = 17.
        ("2S KH 5D", [(2, 3, "fifteen")]),
        # three-card fifteen with a face card and a 2: J(10)+3+2.
        ("JS 3H 2D", [(1, 3, "fifteen")]),
        # an ace counts 1: A+4+K = 15.
        ("AS 4H KD", [(1, 3, "fifteen")]),
        # 4-5-6 is a run and a fifteen.
        ("4S 5H 6D", [(1, 3, "run"), (1, 3, "fifteen")]),
    ],
)
def test_each_combination_is_offered(cards: str, expected: list[tuple[int, int, str]]) -> None:
    game = dealt(cards)
    want = set().union(*(claim_set(f, last, c) for f, last, c in expected))
    assert claims(game) == want
    assert game.legal_moves()[-1] is DEAL


@pytest.mark.parametrize(
    "cards",
    [
        "KS AH 2D",  # K-A-2 does not wrap; 10+1+2 = 13
        "QS KH AD",  # Q-K-A does not wrap; 10+10+1 = 21
        "9C JS 4H",  # J counts 10, not 11: J+4 = 14, 9+10+4 = 23
        "6C 4S 7D",  # 7+4 = 11, 6+4+7 = 17, no run (4 6 7)
        "8H 2H 8S",  # the eights are two apart: no pair window; 8+2 = 10, 18
    ],
)
def test_nothing_to_claim(cards: str) -> None:
    assert claims(dealt(cards)) == set()


@pytest.mark.parametrize(
    ("cards", "claim", "points"),
    [
        ("9S 5H 5D", "claim 2-3 pair 3>2", 2),
        ("5S 5H 5D", "claim 1-3 three 3>1", 6),
        ("5S 5H 5D", "claim 1-3 fifteen 1>2", 2),
        ("2H 9H 5H", "claim 1-3 flush 2>1", 3),
        ("5C 3D 4S", "claim 1-3 run 1>3", 3),
        ("7C 5C 6C", "claim 1-3 straight-flush 3>2", 6),
        ("7C 5C 6C", "claim 1-3 flush 3>2", 3),
        ("3S 7H 8D", "claim 2-3 fifteen 2>3", 2),
        ("JS 3H 2D", "claim 1-3 fifteen 2>3", 2),
    ],
)
def test_each_combination_scores_its_points(cards: str, claim: str, points: int) -> None:
    game = dealt(cards)
    game.play(claim)
    assert game.score == points and game.state.score == points
    assert game.penalty == 61 - points
    assert game.rules.summary(game.state) == [f"score {points}"]


def test_a_claim_stacks_src_on_dst_and_closes_the_gap() -> None:
    game = dealt("5C 3D 4S")
    move = game.parse_move("claim 1-3 run 1>3")
    assert move == Claim(0, 2, "run", 0, 2)
    game.play(move)
    assert game.state.row == ((parse_cards("3D")[0],), tuple(parse_cards("4S 5C")))
    # Cards name piles too.
    game = dealt("5C 3D 4S")
    assert game.parse_move("claim 1-3 run 4s>3d") == Claim(0, 2, "run", 2, 1)


# --- new windows -----------------------------------------------------------------------------


def test_a_window_present_before_the_latest_deal_is_not_claimable() -> None:
    game = dealt("3C 2H KS")
    assert claims(game) == claim_set(1, 3, "fifteen")  # 3+2+10
    game.play("deal")  # the next card is AS (canonical rest): 10+1, 2+10+1, no pair
    assert game.state.row[-1] == (parse_cards("AS")[0],)
    assert claims(game) == set()
    with pytest.raises(IllegalMoveError):
        game.play("claim 1-3 fifteen 3>2")


def test_a_claimed_pile_is_new_so_old_neighbours_score_again() -> None:
    # 3C 2H KS was a fifteen, then KD was dealt: that window is stale, the kings are a new pair.
    for claim in ("claim 3-4 pair 4>3", "claim 3-4 pair 3>4"):
        game = dealt("3C 2H KS KD")
        assert claims(game) == claim_set(3, 4, "pair")  # 2+10+10 = 22; 3C 2H KS is stale
        game.play(claim)
        # The kings' pile is new (whichever king is on top), so 3C 2H K is a new window.
        assert claims(game) == claim_set(1, 3, "fifteen")
        game.play("claim 1-3 fifteen 3>1")
        assert game.score == 4


# --- the pair exception --------------------------------------------------------------------------


def test_a_pair_may_wait_for_the_next_card_then_only_as_a_pair() -> None:
    game = dealt("9S 5H 5D")
    assert claims(game) == claim_set(2, 3, "pair")
    game.play("deal")  # AS: no three of a kind
    assert game.state.row[-1] == (parse_cards("AS")[0],)
    # 5+5+1 = 11, 5+1 = 6: the only claim left is the waiting pair.
    assert claims(game) == claim_set(2, 3, "pair")
    game.play("deal")  # 2S: A 2 is nothing; 5D AS 2S nothing (8, no run)
    assert claims(game) == set()


def test_the_next_card_may_make_three_of_a_kind_instead() -> None:
    game = dealt("9S 5H 5D 5C")
    # 5D 5C is a new pair, 5H 5D still waits as a pair, 5 5 5 is three and fifteen; 9+5+5 = 19.
    assert claims(game) == (
        claim_set(2, 3, "pair")
        | claim_set(2, 4, "three")
        | claim_set(2, 4, "fifteen")
        | claim_set(3, 4, "pair")
    )
    game.play("claim 2-4 three 4>2")
    assert game.score == 6


def test_the_exception_is_for_pairs_only() -> None:
    # A fifteen (7 8), a flush and a run all go stale at the next deal.
    for cards in ("3S 7H 8D", "2H 9H 5H", "5C 3D 4S"):
        game = dealt(cards)
        assert claims(game)
        game.play("deal")
        assert not any(t.startswith(("claim 1-2", "claim 2-3", "claim 1-3")) for t in claims(game)), cards


def test_a_pair_made_by_a_claim_may_wait_too() -> None:
    # 8S 7H 8D: 7+8 fifteen. Put the 8D on the 7H: the 8D pile is new and pairs the 8S.
    game = dealt("8S 7H 8D")
    game.play("claim 2-3 fifteen 3>2")
    assert claims(game) == claim_set(1, 2, "pair")
    game.play("deal")  # AS: 8+1 = 9, 8+8+1 = 17
    assert claims(game) == claim_set(1, 2, "pair")
    game.play("deal")  # 2S
    assert claims(game) == set()


# --- the end ---------------------------------------------------------------------------------------


def test_61_before_the_stock_runs_out_wins() -> None:
    game = dealt("9S 5H 5D")
    loaded = Game.from_state_string(game.state_string() + " score=59")
    assert loaded.state.score == 59 and loaded.status is Status.IN_PROGRESS
    assert not loaded.threshold_met
    loaded.play("claim 2-3 pair 3>2")
    assert loaded.score == 61 and loaded.state.stock  # cards are left
    assert loaded.status is Status.WON
    assert loaded.legal_moves() == ()
    assert loaded.penalty == 0 and loaded.threshold_met


def test_the_last_card_ends_the_game_lost_under_61() -> None:
    # The deck ends 5H 5D: the pair comes with the last card, too late to score.
    deal = [c for c in range(52) if c not in parse_cards("5H 5D")] + parse_cards("5H 5D")
    game = new_game("cribbage-solitaire", deal=deal)
    for _ in range(50):
        game.play("deal")
    assert len(game.state.stock) == 1 and game.status is Status.IN_PROGRESS
    game.play("deal")
    assert game.state.stock == () and len(game.state.row) == 52
    assert game.legal_moves() == ()
    assert game.status is Status.LOST
    assert game.penalty == 61 and not game.threshold_met


def test_deal_is_always_legal_while_the_stock_has_cards() -> None:
    game = new_game("cribbage-solitaire", seed=4)
    assert len(game.state.row) == 1 and len(game.state.stock) == 51
    assert game.legal_moves() == (DEAL,)
    rules = game.rules
    assert rules.win_threshold() == "61 points"
    assert [o.name for o in find_variant("Cribbage Solitaire").options] == ["undo"]  # every game's
    assert "score 0" in game.render()


# --- reference playouts and notation ------------------------------------------------------------


def holds(cards: list[int]) -> set[str]:
    """The combinations ``cards`` hold, straight from the spec's table."""
    ranks = [c % 13 + 1 for c in cards]
    suits = {c // 13 for c in cards}
    values = sum(r if r < 10 else 10 for r in ranks)
    out = set()
    if values == 15:
        out.add("fifteen")
    if len(cards) == 2:
        if ranks[0] == ranks[1]:
            out.add("pair")
        return out
    low = min(ranks)
    run = sorted(ranks) == [low, low + 1, low + 2]
    if len(set(ranks)) == 1:
        out.add("three")
    if len(suits) == 1:
        out.add("flush")
    if run:
        out.add("run")
    if run and len(suits) == 1:
        out.add("straight-flush")
    return out


class Reference:
    """Cribbage windows tracked by pile serial numbers instead of (top, height)."""

    def __init__(self) -> None:
        self.serials = [0]
        self.next = 1
        self.before_last: set[tuple[int, ...]] = set()
        self.before_that: set[tuple[int, ...]] = set()

    def windows(self) -> set[tuple[int, ...]]:
        s = self.serials
        return {tuple(s[i : i + k]) for k in (2, 3) for i in range(len(s) - k + 1)}

    def claims(self, tops: list[int]) -> set[Claim]:
        out = set()
        for k in (2, 3):
            for i in range(len(tops) - k + 1):
                w = tuple(self.serials[i : i + k])
                held = holds(tops[i : i + k])
                if w in self.before_last:
                    held = {"pair"} & held if k == 2 and w not in self.before_that else set()
                for combo in held:
                    for s, d in permutations(range(i, i + k), 2):
                        out.add(Claim(i, i + k - 1, combo, s, d))
        return out

    def deal(self) -> None:
        self.before_last, self.before_that = self.windows(), self.before_last
        self.serials.append(self.next)
        self.next += 1

    def claim(self, m: Claim) -> None:
        self.serials[m.dst] = self.next
        self.next += 1
        del self.serials[m.src]


def play_against_reference(seed: int, greedy: bool) -> Game:
    """Play a seeded game to its end, checking every position against ``Reference``.

    ``greedy`` takes the highest-scoring claim (the first listed among equals) whenever
    there is one; otherwise claims and deals are chosen at random.
    """
    rnd = random.Random(seed)
    game = new_game("cribbage-solitaire", seed=seed)
    ref = Reference()
    while True:
        legal = game.legal_moves()
        state = game.state
        if state.score >= 61:
            assert legal == () and game.status is Status.WON and state.stock
            return game
        if not state.stock:
            assert legal == () and game.status is Status.LOST
            return game
        assert game.status is Status.IN_PROGRESS
        assert legal[-1] is DEAL
        tops = [p[-1] for p in state.row]
        assert set(legal) - {DEAL} == ref.claims(tops)
        assert len(set(legal)) == len(legal)
        for m in legal:
            assert game.parse_move(game.move_text(m)) == m
        claim_moves = [m for m in legal if isinstance(m, Claim)]
        if claim_moves and (greedy or rnd.random() < 0.7):
            move = max(claim_moves, key=lambda m: POINTS[m.combo]) if greedy else rnd.choice(claim_moves)
        else:
            move = DEAL
        before = state.score
        game.play(move)
        if isinstance(move, Claim):
            ref.claim(move)
            assert game.score == before + POINTS[move.combo]
        else:
            ref.deal()
        # The position survives its state string (marks included).
        loaded = Game.from_state_string(game.state_string())
        assert loaded.state == game.state and loaded.legal_moves() == game.legal_moves()


@pytest.mark.parametrize("seed", range(40))
def test_random_playouts_match_the_reference_and_round_trip(seed: int) -> None:
    game = play_against_reference(seed, greedy=seed % 2 == 0)
    assert game.status in (Status.WON, Status.LOST)
    assert (game.status is Status.WON) == (game.score >= 61)


def test_a_greedy_game_reaches_61_with_cards_left() -> None:
    # Greedy play wins about one deal in 300; seed 280 is one, found by searching seeds.
    # Every step of it is checked against the reference, so the win is not taken on trust.
    game = play_against_reference(280, greedy=True)
    assert game.status is Status.WON
    assert game.score >= 61 and game.state.stock and game.penalty == 0
