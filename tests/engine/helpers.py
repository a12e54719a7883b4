"""Building positions for tests: a deal that starts with the cards a test names; and the words a
move is refused with."""

from __future__ import annotations

import pytest

from accordion.engine import Game, IllegalMoveError, new_game, parse_cards
from accordion.engine.moves import Move


def deal_starting_with(first: str, copies: int = 1) -> list[int]:
    """The named cards, then the rest of the deck in canonical order."""
    head = parse_cards(first)
    rest = [c for c in list(range(52)) * copies if c not in head]
    return head + rest


def row_of(first: str, variant: str = "accordion-stock", **options: object) -> Game:
    """A stock-dealt game whose row is exactly ``first`` (dealt one card at a time)."""
    cards = parse_cards(first)
    game = new_game(variant, options, deal=deal_starting_with(first))
    while len(game.state.row) < len(cards):
        game.play("deal")
    return game


def stacks(game: Game) -> set[str]:
    """The legal STACK moves, as text."""
    return {t for t in game.legal_texts() if ">" in t}


def all_dealt_ending_with(last: str, variant: str = "accordion", **options: object) -> Game:
    """A face-up game whose row ends with ``last`` (the rest of the deck before it)."""
    tail = parse_cards(last)
    return new_game(variant, options, deal=[c for c in range(52) if c not in tail] + tail)


def stacks_from(game: Game, card: str) -> set[str]:
    """The legal STACK moves of the pile topped by ``card``."""
    return {t for t in stacks(game) if t.split(">")[0] == card}


def refusal(game: Game, move: str | Move) -> str:
    """The words a move is refused with; the refusal lists exactly the legal moves."""
    with pytest.raises(IllegalMoveError) as caught:
        game.play(move)
    assert caught.value.legal == tuple(game.legal_texts())
    return str(caught.value)
