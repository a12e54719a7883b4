"""Hints for tableau games, from what the player sees only.

The judge reads the zones a player is shown (``Rules.zones``: face-up cards, and how many
cards lie face down under each pile or in the stock) and the legal moves; it never sees the
position itself, so two deals that differ only in hidden cards get the same hint. Each move
gets a value from common patience sense: cards to the foundations first, then moves that turn
up a face-down card (the deeper the pile, the better), moves off the waste, and moves that
empty a pile; a King that only changes spaces, or a card taken back off a foundation, last;
DRAW before REDEAL when nothing else helps.
"""

from __future__ import annotations

from .cards import RANK, SUIT
from .moves import Draw, Move, Redeal, Remove, Transfer, Zone
from .zones import PileView, ZoneView


def tableau_move(zones: tuple[ZoneView, ...], legal: tuple[Move, ...]) -> Move:
    """The legal move of most value (the first of equals: deterministic)."""
    values = tableau_values(zones, legal)
    return legal[values.index(max(values))]


def tableau_values(zones: tuple[ZoneView, ...], legal: tuple[Move, ...]) -> tuple[int, ...]:
    """Each legal move's value, from the view alone (the sampled Hint breaks its ties with it)."""
    tableau: tuple[PileView, ...] = ()
    foundations: tuple[PileView, ...] = ()
    for zone in zones:
        if zone.zone is Zone.TABLEAU:
            tableau = zone.piles
        elif zone.zone is Zone.FOUNDATION:
            foundations = zone.piles
    return tuple(_value(move, tableau, foundations) for move in legal)


def _goes_home(card: int, foundations: tuple[PileView, ...]) -> bool:
    """Whether a face-up card could go to a foundation as the foundations stand."""
    for pile in foundations:
        top = pile.cards[-1] if pile.cards else -1
        if (top < 0 and RANK[card] == 1) or (
            top >= 0 and SUIT[top] == SUIT[card] and RANK[top] + 1 == RANK[card]
        ):
            return True
    return False


def _value(move: Move, tableau: tuple[PileView, ...], foundations: tuple[PileView, ...]) -> int:
    if isinstance(move, Remove):  # Wish: uncover the deeper piles first
        return 30 + sum(tableau[p].face_down for p in move.positions if p < len(tableau))
    if isinstance(move, Draw):
        return 0
    if isinstance(move, Redeal):
        return -5
    if not isinstance(move, Transfer):  # Spider's DEAL and the like: after any useful move
        return 1
    if move.src_zone is Zone.FOUNDATION:
        return -10
    if move.src_zone is Zone.WASTE:
        return 45 if move.dst_zone is Zone.FOUNDATION else 30
    pile = tableau[move.src]
    whole = move.count == len(pile.cards)
    uncovers = whole and pile.face_down > 0
    value = 50 if move.dst_zone is Zone.FOUNDATION else 10
    if uncovers:
        value += 30 + pile.face_down
    elif whole and move.dst_zone is Zone.TABLEAU:
        # Emptying a pile helps, unless the cards only go from one space into another.
        value += -30 if not tableau[move.dst].cards else 10
    elif move.count < len(pile.cards) and _goes_home(pile.cards[-move.count - 1], foundations):
        value += 15  # the card it leaves on top can go to the foundations next
    return value
