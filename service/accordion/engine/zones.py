"""What a player sees of a layout, zone by zone: the view every front end draws.

Row games have one zone, the row (``Rules.zones`` returns none for them: their row and
stock size say it all). Tableau games return their tableau, foundations, stock and waste
here, with each face-down card counted and, unless the game was dealt ``open``, never named:
this is the one place the engine decides what of a position a player may see.
"""

from __future__ import annotations

from dataclasses import dataclass

from .moves import Zone


@dataclass(frozen=True, slots=True)
class PileView:
    """One pile as the player sees it: ``face_down`` cards under the face-up ``cards``
    (bottom to top). ``face_down_cards`` names the face-down ones only in a game dealt open
    (bottom to top; the stock's in the order they will be drawn), else it is empty."""

    cards: tuple[int, ...] = ()
    face_down: int = 0
    face_down_cards: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class ZoneView:
    """One zone of the layout: its kind and its piles, left to right."""

    zone: Zone
    piles: tuple[PileView, ...]


def render_zones(zones: tuple[ZoneView, ...], texts: tuple[str, ...], extras: list[str]) -> str:
    """A tableau layout as lines of text, from what the player sees only (``texts``: each card's
    text by value). A face-down card is ``##``, or its text in brackets in a game dealt open::

        1: ## ## 7♥ 6♠
        2: -
        foundations: A♠ - 3♦ -
        stock 21 | waste (3) 8♦ 9♠ 2♥
    """
    lines: list[str] = []
    for zone in zones:
        if zone.zone is Zone.TABLEAU:
            for i, pile in enumerate(zone.piles, 1):
                lines.append(f"{i}: {_pile_text(pile, texts)}")
        elif zone.zone is Zone.FOUNDATION:
            tops = [
                texts[p.cards[-1]] + (f"×{len(p.cards)}" if len(p.cards) > 1 else "") if p.cards else "-"
                for p in zone.piles
            ]
            lines.append("foundations: " + (" ".join(tops) or "-"))
        elif zone.zone is Zone.STOCK:
            stock = zone.piles[0]
            known = (
                " " + " ".join(f"({texts[c]})" for c in stock.face_down_cards)
                if stock.face_down_cards
                else ""
            )
            lines.append(f"stock {stock.face_down}{known}")
        else:
            waste = zone.piles[0].cards
            shown = " ".join(texts[c] for c in waste[-3:]) or "-"
            lines.append(f"waste ({len(waste)}) {shown}")
    if len(lines) >= 2 and lines[-1].startswith("waste") and lines[-2].startswith("stock"):
        lines[-2:] = [lines[-2] + " | " + lines[-1]]
    return "\n".join(lines + extras)


def _pile_text(pile: PileView, texts: tuple[str, ...]) -> str:
    if pile.face_down_cards:
        down = [f"({texts[c]})" for c in pile.face_down_cards]
    else:
        down = ["##"] * pile.face_down
    return " ".join(down + [texts[c] for c in pile.cards]) or "-"
