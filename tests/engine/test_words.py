"""Illegal moves explained in the player's words (issue 32), for every variant.

Each row is a real seeded deal (the moves listed first are played from it), a move that is not
legal there (as notation, or as a structured value where notation cannot say it), and the words
the engine must give: ``<move in notation> is not legal: <why>; legal now: …``. The words were
checked by hand against the layout each seed deals (the comments show the part that matters).
Hand-built positions, Klondike's options and a finished game: test_words_positions.py.
"""

from __future__ import annotations

import pytest

from accordion.engine import all_variants, new_game
from accordion.engine.moves import Claim, Move, Remove, Stack, Transfer, Zone
from accordion.engine.words import GENERIC

from .helpers import refusal

T, F, W = Zone.TABLEAU, Zone.FOUNDATION, Zone.WASTE


# (variant, seed, moves played first, the move, its notation, why)
CASES: list[tuple[str, int, list[str], str | Move, str, str]] = [
    # seed 1: 1:7♥ 2:9♠ 3:4♥ 4:8♦ 5:8♥ … (52 piles)
    (
        "accordion",
        1,
        [],
        "8d>9s",
        "8D>9S",
        "8♦ can go only onto the pile 1 or 3 to its left; 9♠ is 2 to its left",
    ),
    (
        "accordion",
        1,
        [],
        "9S>4H",
        "9S>4H",
        "9♠ can go only onto the pile 1 or 3 to its left; 4♥ is 1 to its right",
    ),
    (
        "accordion",
        1,
        [],
        "3>2",
        "4H>9S",
        "4♥ can go onto the pile 1 or 3 to its left when they match in suit or rank: 9♠ does not match",
    ),
    ("accordion", 1, [], "deal", "deal", "there is no stock: every card was dealt at the start"),
    ("accordion", 1, [], Stack(60, 1), "61>2", "there is no pile 61; there are 52"),
    ("accordion", 1, [], Stack(3, 3), "8D>8D", "a pile cannot go onto itself"),
    ("accordion", 1, [], "x5", "x5", "removing cards is not a move in this game"),
    # Text that names a pile or card that is not there answers in the same shape, quoting it.
    ("accordion", 1, [], "99>1", "99>1", "there is no pile 99; there are 52"),
    ("accordion", 1, [], "9s", "9s", "that pile cannot move now"),
    # 7♥ 9♠ 4♥ 8♦ 8♥ | stock 47
    (
        "accordion-stock",
        1,
        ["deal"] * 4,
        "8H>9S",
        "8H>9S",
        "8♥ can go onto the pile 1 or 3 to its left when they match in suit or rank: 9♠ does not match",
    ),
    ("accordion-stock", 1, ["deal"] * 51, "deal", "deal", "the stock is empty"),
    (
        "compacted",
        1,
        ["deal"] * 4,
        "deal",
        "deal",
        "while a pile can be stacked, it must be before the next card is dealt",
    ),
    # 7♥ 9♠ 4♥ 8♥×2: 8♥ can slide onto 4♥, so it may not leap onto 7♥
    (
        "idle-year",
        1,
        ["deal"] * 4 + ["8H>8D"],
        "8H>7H",
        "8H>7H",
        "8♥ can go onto its neighbour, so it must go there (a pile that can move 1 must not leap 3)",
    ),
    (
        "relaxed-accordion",
        1,
        [],
        "7H>9S",
        "7H>9S",
        "7♥ can go onto the pile 1 or 3 to its left or right when they match in suit or rank: 9♠ does not "
        "match",
    ),
    (
        "relaxed-accordion",
        1,
        [],
        "8D>9S",
        "8D>9S",
        "8♦ can go only onto the pile 1 or 3 to its left or right; 9♠ is 2 to its left",
    ),
    (
        "accordions-revenge",
        1,
        [],
        "4H>9S",
        "4H>9S",
        "4♥ can go onto the pile 1 or 3 to its left when they match in suit or rank: 9♠ does not match",
    ),
    (
        "23-skidoo",
        1,
        [],
        "9S>7H",
        "9S>7H",
        "9♠ can go only onto the pile 2 or 3 to its left; 7♥ is 1 to its left",
    ),
    ("bayan", 1, [], "x1,2", "x1-2", "7♥ and 9♠ do not match in suit or rank"),
    ("bayan", 1, [], "x1,3", "x1,3", "two matching cards 1 or 3 apart go together: name those two"),
    ("bayan", 1, [], "deal", "deal", "there is no stock: every card was dealt at the start"),
    # Q♥ A♠ 4♣ 6♣ J♦ …
    ("royal-marriage", 1, [], "x2", "x2", "Q♥ and 4♣ around it do not match in suit or rank"),
    (
        "royal-marriage",
        1,
        [],
        "x1",
        "x1",
        "cards go only from between a matching pair: it needs a card on each side",
    ),
    ("royal-marriage", 1, [], "x2-4", "x2-4", "only 1 or 2 cards between a matching pair can go"),
    ("royal-marriage", 1, [], "x2,4", "x2,4", "the cards that go must lie side by side"),
    # 6♦ 7♦ J♠ … (104 cards)
    ("push-pin", 1, [], "x2", "x2", "6♦ and J♠ around it do not match in suit or rank"),
    ("push-pin", 1, [], Remove((104,)), "x105", "there is no card 105; there are 104"),
    # 7♥ 9♠ 4♥ 8♦ …
    ("double-jump", 1, [], "x2", "x2", "exactly 2 cards between a matching pair can go"),
    ("double-jump", 1, [], "x2-3", "x2-3", "7♥ and 8♦ around them do not match in suit or rank"),
    ("french", 1, [], "redeal", "redeal", "you may redeal only when no card can be removed"),
    ("french", 1, [], "x3", "x3", "9♠ and 8♦ around it do not match in suit or rank"),
    ("concertina", 1, [], "x1,2", "x1-2", "name the two matching cards with 1 or 2 cards between them"),
    ("concertina", 1, [], "x2,4", "x2,4", "9♠ and 8♦ do not match in suit or rank"),
    # Q♥ A♠ 4♣ 6♣ J♦ 3♦ 3♣ 6♥ 7♥ | stock 43
    (
        "queen-and-her-lad",
        1,
        ["deal"] * 8,
        "x3-4",
        "x3-4",
        "A♠ and J♦ around them do not match in suit or rank",
    ),
    (
        "queen-and-her-lad",
        1,
        ["deal"] * 8,
        "x4-5",
        "x4-5",
        "cards between a matching pair go in pairs that match: 6♣ and J♦ do not",
    ),
    (
        "queen-and-her-lad",
        1,
        ["deal"] * 8,
        "x2-4",
        "x2-4",
        "one card can go, or pairs of cards that match each other, between a matching pair",
    ),
    # 7♥ 9♠ 4♥ 8♦ 8♥ | stock 47
    (
        "cribbage-solitaire",
        1,
        ["deal"] * 4,
        "claim 1-2 pair 2>1",
        "claim 1-2 pair 2>1",
        "7♥ 9♠ is not a pair",
    ),
    (
        "cribbage-solitaire",
        1,
        ["deal"] * 4,
        "claim 1-3 run 3>1",
        "claim 1-3 run 3>1",
        "7♥ 9♠ 4♥ are not a run of three",
    ),
    (
        "cribbage-solitaire",
        1,
        ["deal"] * 4,
        "claim 1-2 flush 2>1",
        "claim 1-2 flush 2>1",
        "three of a suit needs a window of 3 piles",
    ),
    (
        "cribbage-solitaire",
        1,
        ["deal"] * 4,
        Claim(0, 3, "pair", 1, 0),
        "claim 1-4 pair 2>1",
        "a window is 2 or 3 piles side by side",
    ),
    (
        "cribbage-solitaire",
        1,
        ["deal"] * 4,
        Claim(3, 4, "pair", 2, 3),
        "claim 4-5 pair 3>4",
        "the pile that moves and the pile it goes on must be two piles of the window 4-5",
    ),
    # 1:Q♦ 2:3♣ 3:4♠ 4:5♦ 5:7♦: the run 3♣ 4♠ 5♦ was there before 7♦ was dealt
    (
        "cribbage-solitaire",
        2,
        ["deal"] * 4,
        "claim 2-4 run 3>2",
        "claim 2-4 run 3>2",
        "the window 3♣ 4♠ 5♦ was there before the latest deal: only a new window scores",
    ),
    # the pair 8♦ 8♥ (piles 4-5) came with the 4th deal: claimable until the 6th
    (
        "cribbage-solitaire",
        1,
        ["deal"] * 6,
        "claim 4-5 pair 5>4",
        "claim 4-5 pair 5>4",
        "the pair 8♦ 8♥ is old: a pair scores only until the second deal after it appeared",
    ),
    # 1: 7♥ 2: ## 6♥ … 7: ## ×6 8♣ | waste Q♠ 4♣ 6♠
    ("klondike", 1, ["draw"], "w>7", "w>7", "6♠ cannot go on 8♣: it needs a red 7"),
    (
        "klondike",
        1,
        ["draw"],
        "w>f",
        "w>f",
        "6♠ cannot go to the foundations yet: a ♠ foundation must be up to 5 first",
    ),
    ("klondike", 1, ["draw"], "6H>7H", "2>1", "6♥ cannot go on 7♥: it needs a black 7"),
    (
        "klondike",
        1,
        ["draw"],
        Transfer(T, 4, T, 0, 2),
        "5>1 x2",
        "a face-down card cannot move: pile 5 has only 1 card face up",
    ),
    ("klondike", 1, ["draw"], Transfer(W, 0, T, 0, 2), "w>1", "you can only take the top card of the waste"),
    ("klondike", 1, ["draw"], "redeal", "redeal", "you can turn the waste over only when the stock is empty"),
    (
        "klondike",
        1,
        ["draw"],
        Transfer(F, 0, T, 2, 1),
        "f1>3",
        "cards do not come back off the foundations in this game",
    ),
    ("klondike", 1, [], "w>1", "w>1", "the waste is empty"),
    ("klondike", 1, [], "QS>1", "QS>1", "Q♠ is not a face-up card that can move"),  # (in the stock)
    ("klondike", 1, [], "9>1", "9>1", "there is no tableau pile 9; there are 7"),
    (
        "klondike-draw-one",
        1,
        ["draw"] * 24,
        "draw",
        "draw",
        "the stock is empty: turn the waste over with redeal",
    ),
    (
        "klondike-draw-one",
        1,
        ["draw"] * 24,
        "redeal",
        "redeal",
        "turn the waste over again only after a move other than a draw",
    ),
    # outer cards 3♦ 2♣ 9♦ 7♣ 4♠ 2♦ 8♠ 10♠
    ("streets-and-alleys", 1, [], "1>2", "1>2", "3♦ cannot go on 2♣: it needs a 4 of any suit"),
    (
        "streets-and-alleys",
        1,
        [],
        "1>f",
        "1>f",
        "3♦ cannot go to the foundations yet: a ♦ foundation must be up to 2 first",
    ),
    ("streets-and-alleys", 1, [], Transfer(T, 0, T, 4, 2), "1>5 x2", "cards move one at a time"),
    ("streets-and-alleys", 1, [], Transfer(W, 0, T, 4, 1), "w>5", "this game has no waste"),
    ("streets-and-alleys", 1, [], "draw", "draw", "drawing is not a move in this game"),
    # tops 10♥ J♦ Q♦ 9♠ 10♠ J♣ J♠ 7♠
    ("wish", 1, [], "x1,2", "x1,2", "10♥ and J♦ are not the same rank"),
    (
        "wish",
        1,
        [],
        Remove((0, 0)),
        "x1,1",
        "two top cards of the same rank, on two different piles, go together: name those two piles",
    ),
    ("wish", 1, [], "1>5", "1>5", "moving cards from pile to pile is not a move in this game"),
    # tops 8♥ 9♥ Q♥ 3♥ 6♠ 7♥ A♣ A♥ A♣ 6♥: the Aces first
    (
        "emperor",
        1,
        [],
        "5>6",
        "5>6",
        "A♣ must go to the foundations first: Aces go there as soon as they can",
    ),
    (
        "emperor",
        1,
        [],
        "draw",
        "draw",
        "A♣ must go to the foundations first: Aces go there as soon as they can",
    ),
    ("emperor", 1, ["7>f", "8>f", "9>f", "8>f"], "1>2", "1>2", "8♥ cannot go on 9♥: it needs a black 9"),
    (
        "emperor",
        1,
        ["7>f", "8>f", "9>f", "8>f"],
        "3>f",
        "3>f",
        "Q♥ cannot go to the foundations yet: a ♥ foundation must be up to Jack first",
    ),
    (
        "emperor",
        1,
        ["7>f", "8>f", "9>f", "8>f"],
        Transfer(T, 3, F, 0, 1),
        "4>f",
        "foundation 1 is for ♠, not ♥",
    ),
    (
        "emperor",
        1,
        ["7>f", "8>f", "9>f", "8>f"],
        Transfer(T, 3, T, 3, 1),
        "4>4",
        "a pile cannot move onto itself",
    ),
    # tops 6♦ K♦ 3♦ K♠ J♣ 10♥ 5♣ 5♥ 2♥ 3♣
    ("spider", 1, [], "1>2", "1>2", "6♦ cannot go on K♦: it needs a 7 of any suit"),
    (
        "spider",
        1,
        [],
        "1>f",
        "1>f",
        "cards leave for the foundations only as a full suit, King to Ace, lifted off by itself",
    ),
    (
        "spider",
        1,
        ["7>1"],
        Transfer(T, 0, T, 1, 2),
        "1>2 x2",
        "only cards of one suit in sequence move together: pile 1's top card moves alone",
    ),
    ("spider", 1, [], "draw", "draw", "drawing is not a move in this game"),
]


@pytest.mark.parametrize(
    ("variant", "seed", "before", "move", "notation", "why"), CASES, ids=[f"{c[0]}-{c[4]}" for c in CASES]
)
def test_an_illegal_move_is_explained_in_the_players_words(
    variant: str, seed: int, before: list[str], move: str | Move, notation: str, why: str
) -> None:
    game = new_game(variant, seed=seed)
    for text in before:
        game.play(text)
    state = game.state
    listing = ", ".join(game.legal_texts())
    assert refusal(game, move) == f"{notation} is not legal: {why}; legal now: {listing}"
    assert game.state == state, "nothing changed"


def test_every_variant_has_a_row() -> None:
    assert {v.id for v in all_variants()} <= {c[0] for c in CASES}


def test_no_row_gets_the_generic_sentence() -> None:
    """The table's words are all specific (the generic sentence is for what no game explains)."""
    assert all(GENERIC not in c[5] for c in CASES)
