"""Every game explains every illegal move it can be sent (issue 32), along random seeded play:
no move a player may send gets the generic sentence, none raises, and no game finds a reason
against a move its own rules list as legal (the words and the rules agree)."""

from __future__ import annotations

import random

import pytest

from accordion.engine import Game, all_variants, new_game
from accordion.engine.moves import DEAL, DRAW, REDEAL, Claim, Move, Remove, Stack, Transfer, Zone
from accordion.engine.notation import COMBOS
from accordion.engine.tableau import FOUNDATIONS, TABLEAU, TableauRules
from accordion.engine.words import GENERIC, why_illegal

T, F, W = Zone.TABLEAU, Zone.FOUNDATION, Zone.WASTE


def sendable(game: Game) -> list[Move]:
    """Structured moves of every kind near the current position (some off the layout)."""
    state = game.state
    out: list[Move] = [DEAL, DRAW, REDEAL]
    if isinstance(game.rules, TableauRules):
        n, nf = len(TABLEAU.get(state)), len(FOUNDATIONS.get(state))
        for i in range(n + 1):
            for j in range(n + 1):
                out += [Transfer(T, i, T, j, k) for k in (1, 2, 3, 13)]
                out.append(Remove((i, j)))
            out += [Transfer(T, i, F, f, 1) for f in (-1, 0, nf - 1)]
            out += [Transfer(W, 0, T, i, 1), Transfer(W, 0, T, i, 2)] + [
                Transfer(F, f, T, i, 1) for f in range(nf)
            ]
        out += [Transfer(W, 0, F, -1, 1), Transfer(W, 0, F, 0, 1)]
    else:
        n = len(state.row)
        for i in range(n + 1):
            out += [Stack(i, j) for j in range(max(0, i - 4), min(n + 1, i + 5))]
            out += [Remove(tuple(range(i, i + k))) for k in (1, 2, 3, 4)] + [
                Remove((i, i + 2)),
                Remove((i, i + 3)),
            ]
            out += [Claim(i, i + k, combo, i, i + 1) for k in (1, 2, 3) for combo in COMBOS]
    return out


@pytest.mark.parametrize("variant", [v.id for v in all_variants()])
def test_every_sendable_move_gets_specific_words(variant: str) -> None:
    rng = random.Random(variant)
    checked = 0
    for seed in (5, 21):
        game = new_game(variant, seed=seed)
        for _ in range(40):
            legal = game.legal_moves()
            for move in sendable(game):
                if move in legal:
                    assert game.rules.explain(game.state, move) is None, (game.move_text(move), game.render())
                    continue
                why = why_illegal(game.rules, game.state, move, legal)
                assert why != GENERIC, (move, game.render())
                checked += 1
            if not legal:
                break
            game.play(rng.choice(legal))
    assert checked > 100
