"""Why a move is not legal, in the player's words (issue 32).

``why_illegal`` is the one generic function: the game over, a kind of move the game does not
have, else the game's own ``Rules.explain`` (each game module declares its explanations; the
tableau games share theirs in ``tableau.py``, each with its building rule), else a generic
sentence that is still the player's words. The small helpers here name cards and ranks the same
way in every game.

Hidden information: an explanation is made only from what the player sees (face-up cards, pile
and stock sizes, the rules), so two deals that differ only in hidden cards get the same words;
a face-down card is "a face-down card", never named.
"""

from __future__ import annotations

from collections.abc import Sequence

from .cards import RANK, SUIT, SUIT_SYMBOLS, card_text
from .core import Rules, State
from .moves import Move, MoveKind, Remove

GENERIC = "the rules do not allow that move now"
GAME_OVER = "the game is over"
RANK_NAMES = ("Ace", "2", "3", "4", "5", "6", "7", "8", "9", "10", "Jack", "Queen", "King")
_KIND_WORDS = {
    MoveKind.STACK: "stacking one pile onto another",
    MoveKind.DEAL: "dealing",
    MoveKind.REMOVE: "removing cards",
    MoveKind.REDEAL: "redealing",
    MoveKind.CLAIM: "claiming",
    MoveKind.MOVE: "moving cards from pile to pile",
    MoveKind.DRAW: "drawing",
}


def why_illegal(rules: Rules, state: State, move: Move, legal: Sequence[Move]) -> str:
    """Why ``move`` (not among ``legal``) is not legal in ``state``, in the player's words."""
    if not legal or move.kind is MoveKind.RESIGN:  # (RESIGN is refused only once the game is over)
        return GAME_OVER
    if move.kind not in rules.move_kinds:
        return f"{_KIND_WORDS.get(move.kind, 'that')} is not a move in this game"
    if isinstance(move, Remove) and list(move.positions) != sorted(move.positions):
        return "name the positions left to right"  # (the notation sorts them; a structured move may not)
    return rules.explain(state, move) or GENERIC


def said(text: str) -> str:
    """What the player typed, as an error repeats it: spaces collapsed, at most 40 characters."""
    words = " ".join(text.split())
    return words if len(words) <= 40 else words[:39] + "…"


def card(c: int) -> str:
    """``8♦``: a card as players write it."""
    return card_text(c, True)


def rank_name(rank: int) -> str:
    """``Queen`` for 12, ``10`` for 10."""
    return RANK_NAMES[rank - 1]


def colour(c: int) -> str:
    return "red" if SUIT[c] in (1, 2) else "black"


def other_colour(c: int) -> str:
    return "black" if SUIT[c] in (1, 2) else "red"


def suit_symbol(c: int) -> str:
    return SUIT_SYMBOLS[SUIT[c]]


def a_rank(rank: int) -> str:
    """``an Ace``, ``an 8``, ``a Queen``."""
    name = rank_name(rank)
    return ("an " if name[0] in "A8" else "a ") + name


def no_pile(number: int, count: int, what: str = "pile") -> str:
    """``there is no pile 9; there are 7`` (``number`` 1-based)."""
    return f"there is no {what} {number}; there {'is' if count == 1 else 'are'} {count}"


def cards_count(n: int) -> str:
    return f"{n} card" if n == 1 else f"{n} cards"


def is_king(c: int) -> bool:
    return RANK[c] == 13
