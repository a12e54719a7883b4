"""The words of an illegal move reveal no hidden card (issue 32): twin positions that differ only
in their face-down cards and their stock's order get identical answers, byte for byte, to every
move a player may send, structured or as notation, naming any card of the deck (a face-down
card answers as a card that is not there).

The positions are real seeded games at several points of random play; the twin keeps what the
player sees and puts the hidden cards back in another (seeded) order.
"""

from __future__ import annotations

import random

import pytest

from accordion.engine import EngineError, Game, new_game
from accordion.engine.cards import card_text
from accordion.engine.moves import DEAL, DRAW, REDEAL, Claim, Move, Remove, Stack, Transfer, Zone
from accordion.engine.tableau import FOUNDATIONS, TABLEAU, TableauRules

T, F, W = Zone.TABLEAU, Zone.FOUNDATION, Zone.WASTE
HIDING = [
    "klondike",
    "klondike-draw-one",
    "emperor",
    "spider",
    "wish",
    "accordion-stock",
    "compacted",
    "queen-and-her-lad",
    "cribbage-solitaire",
]


def twin(game: Game, rng: random.Random) -> Game:
    """The same visible position with the hidden cards in another order."""
    rules, state = game.rules, game.state
    if isinstance(rules, TableauRules):
        hidden = [
            c for pile, n in zip(TABLEAU.get(state), rules.zones(state)[0].piles) for c in pile[: n.face_down]
        ]
        hidden += state.stock
        other = list(hidden)
        while len(set(other)) > 1 and other == hidden:
            rng.shuffle(other)
        changed = rules.with_hidden(state, other)
    else:
        stock = list(state.stock)
        while len(set(stock)) > 1 and stock == list(state.stock):
            rng.shuffle(stock)
        changed = state._replace(stock=tuple(stock))
    return Game(game.variant, rules, game.seed, None, changed)


def asks(game: Game) -> list[str | Move]:
    """Moves a player may send: structured (the face-down parts of piles included) and notation
    naming every card of the deck."""
    state = game.state
    out: list[str | Move] = [DEAL, DRAW, REDEAL, "deal", "draw", "redeal"]
    names = [card_text(c) for c in range(52)]
    if isinstance(game.rules, TableauRules):
        n, nf = len(TABLEAU.get(state)), len(FOUNDATIONS.get(state))
        for i in range(n):
            for j in range(n):
                out += [Transfer(T, i, T, j, k) for k in (1, 2, 4, 7)]
            out += [Transfer(T, i, F, 0, 1), Transfer(W, 0, T, i, 1), Remove((i, (i + 1) % n))]
        out += [Transfer(F, f, T, 0, 1) for f in range(nf)]
        for name in names:
            out += [f"{name}>1", f"{name}>f", f"1>{name}", f"{name}", f"x{name},1", f"{name}>{name} x2"]
    else:
        n = len(state.row)
        for i in range(n):
            out += [
                Stack(i, max(i - 1, 0)),
                Stack(i, max(i - 3, 0)),
                Remove((i,)),
                Claim(max(i - 1, 0), i, "pair", i, max(i - 1, 0)),
            ]
        for name in names:
            out += [f"{name}>1", f"x{name}", f"{name}", f"claim 1-2 pair {name}>1"]
    return out


def answer(game: Game, move: str | Move) -> str:
    """What the engine says to ``move``, without playing it."""
    try:
        if isinstance(move, str):
            return "legal " + game.move_text(game.parse_move(move))
        return "legal" if game.is_legal(move) else str(game.illegal(move))
    except EngineError as exc:
        return f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize("variant", HIDING)
def test_twins_that_differ_only_in_hidden_cards_get_the_same_words(variant: str) -> None:
    rng = random.Random(variant)
    compared = 0
    for seed in (3, 11):
        game = new_game(variant, seed=seed)
        for step in range(40):
            if step % 8 == 0 and game.hides_anything():
                other = twin(game, rng)
                assert other.state != game.state and other.render() == game.render()
                for move in asks(game):
                    assert answer(game, move) == answer(other, move), move
                    compared += 1
            legal = game.legal_moves()
            if not legal:
                break
            game.play(rng.choice(legal))
    assert compared > 0
