"""Building tableau positions for tests: named piles, the rest of the deck in the stock."""

from __future__ import annotations

from collections.abc import Sequence

from accordion.engine import Game, find_variant, parse_cards, replay
from accordion.engine.cards import card_code


def _codes(cards: Sequence[int]) -> str:
    return "".join(map(card_code, cards)) or "-"


def position(
    variant: str,
    piles: Sequence[str],
    down: Sequence[int] | None = None,
    foundations: Sequence[str] = ("", "", "", ""),
    waste: str = "",
    stock: str | None = None,
    options: str = "",
    rest_under: int | None = None,
    rest_face_down: bool = True,
    **extras: object,
) -> Game:
    """The game at a position: tableau ``piles`` (cards bottom to top, ``down`` face down at the
    bottom of each, default none), ``foundations``, ``waste``, ``stock``; the cards of the deck
    not named go to the stock (canonical order) or, with ``rest_under`` (a 0-based pile), face
    down under that pile (face up with ``rest_face_down`` false). ``extras`` are further state fields."""
    tableau = [parse_cards(p) if p else [] for p in piles]
    founds = [parse_cards(f) if f else [] for f in foundations]
    waste_cards = parse_cards(waste) if waste else []
    rules = find_variant(variant).make_rules(dict(kv.split("=") for kv in options.split(",") if kv))
    named = [c for p in tableau for c in p] + [c for f in founds for c in f] + waste_cards
    stock_cards = parse_cards(stock) if stock else []
    rest = list(rules.deck())
    for c in named + stock_cards:
        rest.remove(c)
    downs = list(down) if down is not None else [0] * len(tableau)
    if rest_under is not None:
        tableau[rest_under] = rest + tableau[rest_under]
        downs[rest_under] += len(rest) if rest_face_down else 0
    elif stock is None:
        stock_cards = rest
    head = f"{variant}({options})" if options else variant
    parts = [
        head,
        "-",
        _codes(stock_cards),
        "tableau=" + "/".join(map(_codes, tableau)),
        "down=" + ".".join(map(str, downs)),
        "foundations=" + "/".join(map(_codes, founds)),
    ]
    if waste_cards:
        parts.append("waste=" + _codes(waste_cards))
    parts += [f"{k}={v}" for k, v in extras.items()]
    return Game.from_state_string(" ".join(parts))


def texts(game: Game) -> set[str]:
    """The legal moves as text."""
    return set(game.legal_texts())


def check_undo_redo_exact(game: Game, moves: int, stride: int) -> list[str]:
    """Play up to ``moves`` moves (the legal move at ``len(positions) * stride`` round the list),
    then check that the replay record, undo all the way back and redo all the way forward give
    every position exactly. Returns the state strings, first to last."""
    positions = [game.state_string()]
    for _ in range(moves):
        legal = game.legal_moves()
        if not legal:
            break
        game.play(legal[len(positions) * stride % len(legal)])
        positions.append(game.state_string())
    again = replay(game.record().to_dict())
    assert again.state_string() == positions[-1] and again.move_texts == game.move_texts
    for expected in reversed(positions[:-1]):
        game.undo()
        assert game.state_string() == expected
    for expected in positions[1:]:
        game.redo()
        assert game.state_string() == expected
    return positions
