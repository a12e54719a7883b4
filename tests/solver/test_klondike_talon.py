"""Issue 31's *safe talon cards* (docs/solver.md, "Klondike"), against the brute force over the
engine's own moves: with passes unlimited a safe talon card goes home as the only move (turning
one, any in reach; turning more, the talon's last card when ``cur`` is canonically 0).

On small positions where the rule changes the full search, every verdict is the brute force's, C
and Python alike, move for move. The same rule loosened (``loose_talon``: without its condition on
``cur``, or on the passes) loses the win of a position built for each condition, so the tests
would catch a rule loosened either way.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from accordion.engine.core import Rules, State

from .helpers import check_line, open_game
from .klondike_positions import (
    brute_force,
    card,
    check_a_cut_where_it_acts,
    full_search_with,
    small_position,
    solver_backends,
)

RULES = [
    ("klondike", {}),
    ("klondike", {"partial_runs": True}),
    ("klondike-draw-one", {}),
    ("klondike", {"partial_runs": True, "foundation_return": True}),
    ("klondike-draw-one", {"partial_runs": True, "foundation_return": True}),
]


@pytest.mark.parametrize("variant,options", RULES)
def test_safe_talon_cards_keep_every_verdict_of_the_brute_force(
    variant: str, options: dict[str, object]
) -> None:
    """Where the rule changes the full search (fewer positions with it), the verdict with it and
    without it is the brute force's, and C and Python agree move for move."""
    rules = open_game(variant, options, 0).rules
    rng = random.Random(f"safe talon {variant} {sorted(options.items())}")

    def positions() -> Iterator[State]:
        for _ in range(300):
            state = small_position(rules, rng, 11 if options.get("foundation_return") else 9)
            if state.stock:
                yield state._replace(moved=1)  # a REDEAL allowed from the start, as after any move

    checked = check_a_cut_where_it_acts(rules, positions(), "safe_talon", 3)
    # the rule fired on wins the brute force decided (a forced move can only lose wins: a LOST
    # where the brute force wins is what a wrong rule gives, as the tests below show)
    assert checked[True] >= 3, checked


def late_hearts(rules: Rules, stock: tuple[int, ...], waste: tuple[int, ...]) -> State:
    """Every pile empty; spades and clubs home, diamonds up to the Queen, hearts up to the Ten: the
    King of diamonds (safe: the black suits are home) and the Jack, Queen and King of hearts in the
    talon, as ``waste`` (bottom to top) and ``stock`` (drawing order)."""
    state = rules.layout(((),) * 7, (0,) * 7, stock)
    up_to = {"s": 13, "h": 10, "d": 12, "c": 13}
    foundations = tuple(tuple(card(k, su) for k in range(1, up_to[su] + 1)) for su in "shdc")
    return state._replace(foundations=foundations, waste=waste, moved=1)


def assert_loose_loses_the_win(rules: Rules, state: State) -> None:
    """The brute force wins ``state``; the sound rule wins it (a line that replays), the loosened
    one (``loose_talon``) answers LOST, in C and Python."""
    assert brute_force(rules, state, limit=20_000) is True
    for loose in (True, False):
        full_search = full_search_with(rules, state, 20_000, "loose_talon", dead_ends=False)
        for backend in solver_backends():
            code, moves, _ = full_search(backend, loose)
            assert code == (2 if loose else 1), (backend, loose)  # loose: LOST, wrongly; sound: WON
            if not loose:
                check_line(rules, state, moves, won=True)


@pytest.mark.parametrize("options", [{}, {"partial_runs": True}])
def test_the_last_card_rule_without_its_cur_condition_loses_a_win(options: dict[str, object]) -> None:
    """Turning three, the Jack of hearts on the waste (``cur`` 1: not canonically 0), the King and
    Queen of hearts and the King of diamonds (safe, the talon's last card) in the stock. Sent up at
    once (as ``loose_talon`` does), the King leaves the Jack under the Queen in a waste of three
    that every REDEAL deals back with the Queen on top, which nothing takes (no pile, no black
    King out): lost. The brute force and the sound rule play the Jack first and win. (With
    foundation_return a black King brought back would take the Queen, so the rule sets are the
    two without it.)"""
    rules = open_game("klondike", options, 0).rules
    stock = (card(13, "h"), card(12, "h"), card(13, "d"))
    assert_loose_loses_the_win(rules, late_hearts(rules, stock, (card(11, "h"),)))


def test_safe_talon_cards_turning_one_without_the_passes_condition_lose_a_win() -> None:
    """Turning one with one pass (no REDEAL), a position found by a random search over small ones
    (spades up to 8, hearts 10, diamonds 8, clubs 9). The Nine of spades, safe, lies fifth in the
    stock (drawing order: J♠ K♦ Q♦ K♥ 9♠ 9♦ Q♠ J♦); sent up at once (as ``loose_talon`` does), it
    turns the four cards before it onto the waste for good in an order that loses (LOST: the
    search exhausts). The brute force and the sound rule (passes unlimited only) win it."""
    rules = open_game("klondike-draw-one", {"passes": 1}, 0).rules
    piles = (
        (),
        (card(10, "s"), card(11, "c"), card(13, "s"), card(10, "c"), card(11, "h"), card(12, "c")),
        (),
        (card(10, "d"),),
        (),
        (card(13, "c"),),
        (card(12, "h"),),
    )
    stock = tuple(card(r, su) for r, su in ((11, "s"), (13, "d"), (12, "d"), (13, "h"), (9, "s")))
    stock += tuple(card(r, su) for r, su in ((9, "d"), (12, "s"), (11, "d")))
    state = rules.layout(piles, (0, 5, 0, 0, 0, 0, 0), stock)
    up_to = {"s": 8, "h": 10, "d": 8, "c": 9}
    foundations = tuple(tuple(card(k, su) for k in range(1, up_to[su] + 1)) for su in "shdc")
    assert_loose_loses_the_win(rules, state._replace(foundations=foundations, moved=1))
