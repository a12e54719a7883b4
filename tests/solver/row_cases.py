"""What the row solver's tests share (test_solver.py, test_solver_calls.py): the implementations
to run and a hand-made deal where no move is ever legal."""

from __future__ import annotations

from accordion.solver import HAVE_C

IMPLS = ["c", "python"] if HAVE_C else ["python"]


def no_match_deal() -> list[int]:
    """An Accordion deal where no two cards 1 or 3 apart match, so no move is ever legal.

    Suits: positions 0..25 alternate ♠ ♥ and positions 26..51 alternate ♦ ♣. Cards 1 or
    3 apart are an odd distance apart, so inside a half they have different suits, and
    across the halves the suits differ by construction.
    Ranks (0-based): in the first half the ♠ at 2k has rank k and the ♥ at 2k+1 has rank
    k+6 (mod 13); the second half repeats this with ♦ and ♣. A ♥ at 2k+1 meets, 1 or 3
    away, the ♠ at 2k-2, 2k, 2k+2, 2k+4 with ranks k-1, k, k+1, k+2, never k+6; two ♠
    (or two ♥) are an even distance apart. Across the boundary the pairs are (25, 26)
    ranks 5/0, (23, 26) 4/0, (24, 27) 12/6, (25, 28) 5/1: all different.
    With no move at the start the game is over and lost: the solver must say LOST.
    """
    cards = []
    for half in (0, 1):
        for i in range(26):
            k = i // 2
            suit = 2 * half + (i % 2)
            rank0 = k if i % 2 == 0 else (k + 6) % 13
            cards.append(suit * 13 + rank0)
    assert sorted(cards) == list(range(52))
    return cards
