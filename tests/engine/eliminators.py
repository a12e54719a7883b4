"""Helpers of the eliminator tests (test_eliminators.py, test_eliminators_games.py).

Positions are built by hand from card text. ``reference_removals`` is a small reference
implementation written from the spec's table ("The eliminators"), independent of the engine.
"""

from __future__ import annotations

from accordion.engine import Remove, State, card_text, find_variant, parse_cards
from accordion.engine.core import Rules
from accordion.engine.moves import Move

ELIMINATORS = ("royal-marriage", "push-pin", "double-jump", "french", "concertina", "queen-and-her-lad")
FACE_UP = ("royal-marriage", "push-pin", "double-jump", "french", "concertina")


# 5S and 5D match (rank); 9H and JD match neither of them nor each other's neighbours here.
ONE_BETWEEN = "5S 9H 5D"
TWO_BETWEEN = "5S 9H JD 5C"


def rules_of(variant: str, **options: object) -> Rules:
    return find_variant(variant).make_rules(options)


def pos(text: str, stock: str = "") -> State:
    """A position whose row is the named cards, one per pile."""
    return State(row=tuple((c,) for c in parse_cards(text)), stock=tuple(parse_cards(stock)) if stock else ())


def x(*positions: int) -> Remove:
    """REMOVE by 1-based positions, as a player writes them."""
    return Remove(tuple(p - 1 for p in positions))


def row_text(state: State) -> str:
    return " ".join(card_text(p[0]) for p in state.row)


def removes(rules: Rules, state: State) -> list[Move]:
    return [m for m in rules.legal_moves(state) if isinstance(m, Remove)]


def match(a: int, b: int) -> bool:
    """Same rank or same suit, read from the card text (independent of ``cards.MATCH``)."""
    ta, tb = card_text(a), card_text(b)
    return ta[:-1] == tb[:-1] or ta[-1] == tb[-1]


def reference_removals(variant: str, cards: list[int]) -> list[tuple[int, ...]]:
    """The spec's table, by brute force over every matching pair (i, j) of the row."""
    found = []
    for i in range(len(cards)):
        for j in range(i + 2, len(cards)):
            if not match(cards[i], cards[j]):
                continue
            between = list(range(i + 1, j))
            k = len(between)
            if variant in ("royal-marriage", "push-pin") and k in (1, 2):
                found.append(tuple(between))
            elif variant == "double-jump" and k == 2:
                found.append(tuple(between))
            elif variant == "french" and k == 1:
                found.append(tuple(between))
            elif variant == "concertina" and k in (1, 2):
                found.append((i, j))  # the outer pair leaves
            elif variant == "queen-and-her-lad":
                if k == 1 or (k % 2 == 0 and all(match(cards[p], cards[p + 1]) for p in between[::2])):
                    found.append(tuple(between))
    # Leftmost removed position first, then shorter (for Concertina: the nearer right card).
    return sorted(found, key=lambda ps: (ps[0], len(ps), ps[-1]))
