"""What the "every front end plays every game" tests share: the variants, a seed per variant,
a move chooser, and the checks of a tableau game's layout as the player receives and reads it."""

from __future__ import annotations

import random
import re
import zlib

from accordion import engine
from accordion.engine.tableau import DOWN, TABLEAU
from accordion_client import pb
from accordion_client.render import board_lines
from accordion_client.zones import BACK, is_tableau

TABLEAU_GAMES = ("wish", "streets-and-alleys", "klondike", "klondike-draw-one", "emperor", "spider")
MOVES_PER_GAME = 20
# A few deals with options beside each variant's defaults: open play, draw one, Spider's other layouts.
WITH_OPTIONS = (
    ("klondike", {"open": "true"}),
    ("klondike", {"draw": "1", "partial_runs": "true", "foundation_return": "true"}),
    ("spider", {"suits": "1", "layout": "standard"}),
    ("emperor", {"open": "true"}),
)


def variant_ids() -> list[str]:
    """Every registered variant (the engine's registry: what the server deals)."""
    return sorted(v.id for v in engine.all_variants())


def seed_of(variant: str) -> int:
    """A fixed seed per variant, so a failure replays."""
    return zlib.crc32(variant.encode()) % 10_000


def chooser(variant: str) -> random.Random:
    return random.Random(seed_of(variant))


def pick(game: pb.Game, rng: random.Random) -> pb.Move | None:
    """A legal move (RESIGN aside), the moves between piles twice as likely as DRAW/DEAL/REDEAL,
    so a game gets somewhere; None when there is none."""
    legal = [m for m in game.legal_moves if m.kind != pb.MOVE_KIND_RESIGN]
    if not legal:
        return None
    weights = [
        1 if m.kind in (pb.MOVE_KIND_DRAW, pb.MOVE_KIND_DEAL, pb.MOVE_KIND_REDEAL) else 2 for m in legal
    ]
    return rng.choices(legal, weights)[0]


def is_open(game: pb.Game) -> bool:
    return game.options.get("open") == "true"


def check_layout(game: pb.Game) -> list[str]:
    """The checks of what the player gets of a tableau game, and the text the clients draw of it:
    ``piles`` are the tableau's face-up cards; face-down cards are counted, named only in an open
    game; the text shows one back per hidden face-down card (none in an open game). Returns the text."""
    lines = board_lines(game)
    if not is_tableau(game):
        return lines
    text = "\n".join(lines)
    kinds = [z.kind for z in game.zones]
    assert pb.ZONE_KIND_TABLEAU in kinds, kinds
    tableau = next(z for z in game.zones if z.kind == pb.ZONE_KIND_TABLEAU)
    assert [list(p.cards) for p in game.piles] == [list(p.cards) for p in tableau.piles]
    assert lines[-len(tableau.piles) :] == [line for line in lines if line.split(":")[0].strip().isdigit()], (
        "one line per tableau pile"
    )
    down = sum(p.face_down for p in tableau.piles)
    for z in game.zones:
        for p in z.piles:
            if is_open(game):
                assert len(p.face_down_cards) == p.face_down, (z.kind, p)
            else:
                assert not p.face_down_cards, f"a face-down card was sent in a game not dealt open: {p}"
    assert text.count(BACK) == (0 if is_open(game) else down), text
    return lines


def hidden_cards(variant: str, options: dict[str, str], seed: int, notations: list[str]) -> set[str]:
    """The texts (``8♦``) of the cards the player may not see after these moves: the face-down
    tableau cards and the stock, from the engine's own full position of the same deal. Empty
    for a game dealt open, and for a deck with twins (two decks: a hidden card's twin may show)."""
    game = engine.new_game(variant, options, seed=seed)
    for notation in notations:
        game.play(notation)
    state = game.state
    everything = game.rules.cards_in(state)
    if is_open_options(options) or len(set(everything)) != len(everything):
        return set()
    down = [c for pile, n in zip(TABLEAU.get(state), DOWN.get(state), strict=True) for c in pile[:n]]
    return {engine.card_text(c, symbols=True) for c in [*down, *state.stock]}


def is_open_options(options: dict[str, str]) -> bool:
    return options.get("open") == "true"


def assert_hides(text: str, hidden: set[str]) -> None:
    """No hidden card is named in what a front end wrote (card texts are whole tokens)."""
    named = set(re.findall(r"(?<![0-9AJQK])(?:10|[2-9AJQK])[♠♥♦♣]", text))
    assert not named & hidden, f"hidden cards shown: {sorted(named & hidden)}\n{text}"
