"""Cards as small integers, their text forms, and the match relation.

A card is ``suit * 13 + (rank - 1)`` with suits in the order ♠ ♥ ♦ ♣ and ranks
A=1 … K=13, so a 52-card deck in canonical order is ``range(52)``. Two decks
(Push Pin) simply hold every value twice: a card's identity is its value.
"""

from __future__ import annotations

import re

from .errors import InvalidCardError

SUIT_LETTERS = "SHDC"
SUIT_SYMBOLS = "♠♥♦♣"
RANK_TEXT = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
# One character per rank, for fixed-width forms such as the state string.
RANK_CHARS = "A23456789TJQK"
DECK_SIZE = 52

RANK = tuple(c % 13 + 1 for c in range(DECK_SIZE))
SUIT = tuple(c // 13 for c in range(DECK_SIZE))

# MATCH[a][b]: same rank or same suit. A list of lists is the fastest lookup
# CPython offers for the legal-move loops, which run thousands of times a request.
MATCH: tuple[tuple[bool, ...], ...] = tuple(
    tuple(RANK[a] == RANK[b] or SUIT[a] == SUIT[b] for b in range(DECK_SIZE)) for a in range(DECK_SIZE)
)

_SUIT_ALIASES = {
    "s": 0,
    "♠": 0,
    "♤": 0,
    "h": 1,
    "♥": 1,
    "♡": 1,
    "d": 2,
    "♦": 2,
    "♢": 2,
    "c": 3,
    "♣": 3,
    "♧": 3,
}
_RANK_ALIASES = {text.lower(): i + 1 for i, text in enumerate(RANK_TEXT)}
_RANK_ALIASES.update({"t": 10, "1": 1})
_CARD_RE = re.compile(r"^(10|[2-9]|[atjqk1])([shdc♠♤♥♡♦♢♣♧])$")


def make_card(rank: int, suit: int) -> int:
    """The card of ``rank`` (1..13) and ``suit`` (0..3: ♠ ♥ ♦ ♣)."""
    return suit * 13 + rank - 1


def card_text(card: int, symbols: bool = False) -> str:
    """``8D`` (or ``8♦`` with ``symbols``); ten is ``10``."""
    suits = SUIT_SYMBOLS if symbols else SUIT_LETTERS
    return RANK_TEXT[card % 13] + suits[card // 13]


def card_code(card: int) -> str:
    """The fixed two-character form used in state strings: ``TD`` for ten."""
    return RANK_CHARS[card % 13] + SUIT_LETTERS[card // 13]


def parse_card(text: str) -> int:
    """Read ``8♦``, ``8D``, ``8d``, ``10D`` or ``TD`` (emoji variation selectors allowed).

    Raises:
        InvalidCardError: the text names no card.
    """
    cleaned = text.strip().replace("\ufe0f", "").lower()
    m = _CARD_RE.match(cleaned)
    if not m:
        raise InvalidCardError(f"{text!r} is not a card; write rank then suit, e.g. 8D, 8♦, 10H or TH")
    return make_card(_RANK_ALIASES[m.group(1)], _SUIT_ALIASES[m.group(2)])


def parse_cards(text: str) -> list[int]:
    """Cards separated by spaces or commas, or packed two characters each (``8DKCTS``)."""
    words = [w for w in re.split(r"[\s,]+", text.strip()) if w]
    if len(words) == 1 and len(words[0]) > 3 and "10" not in words[0]:
        word = words[0]
        if len(word) % 2:
            raise InvalidCardError(f"{text!r} is not a list of two-character cards")
        words = [word[i : i + 2] for i in range(0, len(word), 2)]
    return [parse_card(w) for w in words]
