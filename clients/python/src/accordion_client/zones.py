"""Text for a tableau game (Klondike, Spider, …) from its ``Game.zones``: one line for the
foundations, stock and waste, then one line per tableau pile, bottom card first.

    foundations A♠ 2♥ -- --  ·  stock 21  ·  waste …4♦ 9♣ K♠
    1: K♠ Q♥
    2: ▒▒ 9♦
    3: ▒▒ ▒▒ 4♣

A face-down card the player may not see is a back, ``▒▒``: its identity never reaches the
client. In a game dealt open the server sends the face-down cards themselves; they are shown
in brackets (``[7♣]``), so the player still sees which cards are face down for the rules.
Row games have no zones (``is_tableau`` is False): render.py draws their row.
"""

from __future__ import annotations

from .style import BOLD, DIM, RED, RED_SUITS, RESET
from .v1 import accordion_pb2 as pb

BACK = "▒▒"  # a face-down card whose identity is hidden
EMPTY = "--"  # an empty foundation (or pile)
WASTE_SHOWN = 3  # the waste's top cards shown (Klondike turns three)
STOCK_SHOWN = 8  # in an open game, the stock's next cards shown


def is_tableau(game: pb.Game) -> bool:
    """Whether the game is laid out in zones (a tableau game) rather than one row."""
    return len(game.zones) > 0


def zone(game: pb.Game, kind: pb.ZoneKind.ValueType) -> pb.Zone | None:
    """The game's zone of that kind, or None when the game has none (Wish has no stock)."""
    return next((z for z in game.zones if z.kind == kind), None)


def _card(card: pb.Card, colour: bool, face_down: bool = False) -> tuple[str, int]:
    """A card's text (``[7♣]`` when face down in an open game) and its visible width."""
    plain = f"[{card.text}]" if face_down else card.text
    if not colour:
        return plain, len(plain)
    style = DIM if face_down else (RED if card.suit in RED_SUITS else BOLD)
    return f"{style}{plain}{RESET}", len(plain)


def _back(colour: bool) -> tuple[str, int]:
    return (f"{DIM}{BACK}{RESET}" if colour else BACK), len(BACK)


def pile_cards(pile: pb.ZonePile, colour: bool = False) -> list[tuple[str, int]]:
    """A pile's cards bottom to top as (text, width): the face-down ones first (backs, or
    bracketed in an open game), then the face-up ones."""
    shown = list(pile.face_down_cards)
    down = [_card(c, colour, face_down=True) for c in shown]
    down += [_back(colour)] * max(pile.face_down - len(shown), 0)
    return down + [_card(c, colour) for c in pile.cards]


def pile_text(pile: pb.ZonePile, colour: bool = False) -> str:
    """``▒▒ ▒▒ 9♦ 8♣``; ``-`` for an empty pile."""
    return " ".join(text for text, _ in pile_cards(pile, colour)) or "-"


def top_text(pile: pb.ZonePile, colour: bool = False) -> str:
    """A pile's top card (a back when it is face down), ``--`` when empty."""
    cards = pile_cards(pile, colour)
    return cards[-1][0] if cards else EMPTY


def foundations_text(game: pb.Game, colour: bool = False) -> str | None:
    """``foundations A♠ 2♥ -- --``: each foundation's top card; None when the game has none."""
    found = zone(game, pb.ZONE_KIND_FOUNDATION)
    if found is None:
        return None
    return "foundations " + " ".join(top_text(p, colour) for p in found.piles)


def stock_text(game: pb.Game, colour: bool = False) -> str | None:
    """``stock 21`` (face down: only its size); in an open game also the next cards, bracketed."""
    stock = zone(game, pb.ZONE_KIND_STOCK)
    if stock is None:
        return None
    pile = stock.piles[0] if stock.piles else pb.ZonePile()
    size = pile.face_down + len(pile.cards)
    if not pile.face_down_cards:
        return f"stock {size}"
    nxt = [_card(c, colour, face_down=True)[0] for c in pile.face_down_cards[:STOCK_SHOWN]]
    more = " …" if len(pile.face_down_cards) > STOCK_SHOWN else ""
    return f"stock {size}: next {' '.join(nxt)}{more}"


def waste_text(game: pb.Game, colour: bool = False) -> str | None:
    """``waste 7: …4♦ 9♣ K♠`` (the top card last); ``waste 0`` when empty; None without a waste."""
    waste = zone(game, pb.ZONE_KIND_WASTE)
    if waste is None:
        return None
    cards = list(waste.piles[0].cards) if waste.piles else []
    if not cards:
        return "waste 0"
    shown = " ".join(_card(c, colour)[0] for c in cards[-WASTE_SHOWN:])
    return f"waste {len(cards)}: {'…' if len(cards) > WASTE_SHOWN else ''}{shown}"


def header_line(game: pb.Game, colour: bool = False) -> str:
    """The foundations, stock and waste on one line (what is there of them)."""
    parts = (foundations_text(game, colour), stock_text(game, colour), waste_text(game, colour))
    return "  ·  ".join(p for p in parts if p is not None)


def tableau_lines(game: pb.Game, *, colour: bool = False) -> list[str]:
    """The layout: the header line, then ``n: cards`` for each tableau pile (numbers as in ``3>7``)."""
    lines = [header_line(game, colour)]
    tableau = zone(game, pb.ZONE_KIND_TABLEAU)
    piles = tableau.piles if tableau is not None else []
    width = len(str(len(piles)))
    for i, pile in enumerate(piles, start=1):
        label = f"{i:>{width}}:"
        lines.append(
            f"{DIM}{label}{RESET} {pile_text(pile, colour)}" if colour else f"{label} {pile_text(pile)}"
        )
    return [line for line in lines if line]


def face_down_count(game: pb.Game) -> int:
    """How many tableau cards are face down (the stock is counted apart)."""
    tableau = zone(game, pb.ZONE_KIND_TABLEAU)
    return sum(p.face_down for p in tableau.piles) if tableau is not None else 0


def tableau_status(game: pb.Game, status: str) -> str:
    """``in progress · 12 face down · penalty 48`` and the game's extras (the stock is in the
    header line)."""
    parts = [status]
    down = face_down_count(game)
    if down:
        parts.append(f"{down} face down")
    parts.extend(game.extras)
    parts.append(f"penalty {game.penalty}")
    return " · ".join(parts)
