"""Structured moves, for programs that would rather not write notation (docs/notation.md).

    from accordion_client.moves import move, draw
    game.play(move("tableau", 3, "tableau", 7, count=2))   # as "3>7 x2"
    game.play(move("waste", 1, "foundation"))              # as "w>f": whichever foundation takes it
    game.play(draw())                                      # as "draw"

Piles are 1-based within their zone; the waste (one pile) is pile 1; a move to the foundations
may name foundation 0: whichever takes the card. The server answers with the move as played,
its canonical notation included. ``GameHandle.move`` / ``.draw`` (and the async handle's) play
these directly.
"""

from __future__ import annotations

from typing import TypeAlias

from .v1 import accordion_pb2 as pb

ZoneLike: TypeAlias = "str | pb.ZoneKind.ValueType"
ZONE_NAMES: dict[str, pb.ZoneKind.ValueType] = {
    "tableau": pb.ZONE_KIND_TABLEAU,
    "t": pb.ZONE_KIND_TABLEAU,
    "foundation": pb.ZONE_KIND_FOUNDATION,
    "foundations": pb.ZONE_KIND_FOUNDATION,
    "f": pb.ZONE_KIND_FOUNDATION,
    "stock": pb.ZONE_KIND_STOCK,
    "waste": pb.ZONE_KIND_WASTE,
    "w": pb.ZONE_KIND_WASTE,
}


def zone_kind(zone: ZoneLike) -> pb.ZoneKind.ValueType:
    """A zone from its name (``tableau``/``t``, ``foundation``/``f``, ``waste``/``w``, ``stock``)
    or a ``pb.ZONE_KIND_*`` value; anything else is a ValueError naming the choices."""
    if isinstance(zone, str):
        kind = ZONE_NAMES.get(zone.strip().lower())
        if kind is None:
            raise ValueError(f"no zone {zone!r}: say tableau, foundation, waste or stock")
        return kind
    if zone not in pb.ZoneKind.values() or zone == pb.ZONE_KIND_UNSPECIFIED:
        raise ValueError(f"no zone {zone!r}: give a pb.ZONE_KIND_* value")
    return zone


def move(from_zone: ZoneLike, from_pile: int, to_zone: ZoneLike, to_pile: int = 0, count: int = 1) -> pb.Move:
    """``count`` cards from the top of ``from_pile`` of ``from_zone`` onto ``to_pile`` of ``to_zone``.

    ``to_pile`` 0 is only for the foundations (whichever takes the card). Raises ValueError for
    a pile below 1 or a count below 1, before anything is sent.
    """
    source, target = zone_kind(from_zone), zone_kind(to_zone)
    if from_pile < 1:
        raise ValueError(f"from_pile is 1-based, not {from_pile}")
    if to_pile < 0 or (to_pile == 0 and target != pb.ZONE_KIND_FOUNDATION):
        raise ValueError(f"to_pile is 1-based (0 only for whichever foundation), not {to_pile}")
    if count < 1:
        raise ValueError(f"count is at least 1, not {count}")
    return pb.Move(
        kind=pb.MOVE_KIND_MOVE,
        from_zone=source,
        from_pile=from_pile,
        to_zone=target,
        to_pile=to_pile,
        count=count,
    )


def draw() -> pb.Move:
    """Turn cards from the stock onto the waste (Klondike: ``draw`` of them; Emperor: one)."""
    return pb.Move(kind=pb.MOVE_KIND_DRAW)


def deal() -> pb.Move:
    """Spider: one card onto each tableau pile (row games: their own DEAL)."""
    return pb.Move(kind=pb.MOVE_KIND_DEAL)


def redeal() -> pb.Move:
    """Klondike: turn the waste over as the new stock."""
    return pb.Move(kind=pb.MOVE_KIND_REDEAL)


def pair(first: int, second: int) -> pb.Move:
    """Wish: remove the top cards of two tableau piles (1-based) of the same rank."""
    if first < 1 or second < 1 or first == second:
        raise ValueError(f"a pair is two different piles, 1-based, not {first} and {second}")
    return pb.Move(kind=pb.MOVE_KIND_REMOVE, positions=sorted((first, second)))


def resign() -> pb.Move:
    """Give the game up (it ends lost)."""
    return pb.Move(kind=pb.MOVE_KIND_RESIGN)


__all__ = ["ZONE_NAMES", "deal", "draw", "move", "pair", "redeal", "resign", "zone_kind"]
