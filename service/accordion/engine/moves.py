"""Moves: small immutable values. Positions are 0-based here; notation shows them 1-based.

Equal moves are equal values, so ``move in legal_moves`` works, and the common
ones are interned: legal-move generation hands out shared instances instead
of allocating.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Final


class MoveKind(str, Enum):
    STACK = "STACK"
    DEAL = "DEAL"
    REMOVE = "REMOVE"
    REDEAL = "REDEAL"
    CLAIM = "CLAIM"
    RESIGN = "RESIGN"
    MOVE = "MOVE"  # tableau games: cards from one zone's pile to another's (``Transfer``)
    DRAW = "DRAW"  # Klondike, Emperor: stock → waste


class Zone(str, Enum):
    """Where cards lie in a tableau game (spec: "The other games of seed 004"). A new kind of
    zone is one member here and its row in ``ZONE_CODES`` (and, for the wire, its ZoneKind)."""

    TABLEAU = "tableau"
    FOUNDATION = "foundation"
    STOCK = "stock"
    WASTE = "waste"


# Each zone kind's stable code: the one place zones are numbered. The stored log writes it in
# every transfer (sessions/binary.py), the solver's cores answer in it (solver/core.py; their C
# copies are checked against it by tests/engine/test_zones_declared.py), and the wire's ZoneKind is
# matched by name (api/wire.py, api/codec.py). A code never changes and is never reused once a
# record holds it: a new kind takes the next free one.
ZONE_CODES: Final[dict[Zone, int]] = {Zone.TABLEAU: 0, Zone.FOUNDATION: 1, Zone.STOCK: 2, Zone.WASTE: 3}
ZONE_OF_CODE: Final[dict[int, Zone]] = {code: zone for zone, code in ZONE_CODES.items()}


@dataclass(frozen=True, slots=True)
class Stack:
    """The pile at ``src`` goes on top of the pile at ``dst``."""

    src: int
    dst: int
    kind = MoveKind.STACK


@dataclass(frozen=True, slots=True)
class Deal:
    """The next stock card goes to the right end of the row."""

    kind = MoveKind.DEAL


@dataclass(frozen=True, slots=True)
class Remove:
    """The cards at ``positions`` (ascending) leave the row."""

    positions: tuple[int, ...]
    kind = MoveKind.REMOVE


@dataclass(frozen=True, slots=True)
class Redeal:
    """French: gather the row, shuffle it with the game's generator, deal again."""

    kind = MoveKind.REDEAL


@dataclass(frozen=True, slots=True)
class Claim:
    """Cribbage: score ``combo`` in the window of piles ``first..last``; ``src`` goes on ``dst``."""

    first: int
    last: int
    combo: str
    src: int
    dst: int
    kind = MoveKind.CLAIM


@dataclass(frozen=True, slots=True)
class Resign:
    """Every game: the player gives up; the game ends LOST and its penalty stands.

    It never changes the position and is never among a position's legal moves: ``Game``
    allows it while the game is in progress and answers LOST while it is the last move in play.
    """

    kind = MoveKind.RESIGN


@dataclass(frozen=True, slots=True)
class Transfer:
    """Tableau games: the top ``count`` cards of pile ``src`` of zone ``src_zone`` go onto pile
    ``dst`` of ``dst_zone`` (0-based within each zone; the waste is pile 0 of its zone). A move
    to the foundations names the foundation the card goes to. Turning up a face-down card
    left on top, and Spider's lift-off of a full suit, are part of the move."""

    src_zone: Zone
    src: int
    dst_zone: Zone
    dst: int
    count: int = 1
    kind = MoveKind.MOVE


@dataclass(frozen=True, slots=True)
class Draw:
    """Klondike, Emperor: turn the game's ``draw`` cards (fewer if fewer are left) from the stock
    onto the waste."""

    kind = MoveKind.DRAW


Move = Stack | Deal | Remove | Redeal | Claim | Resign | Transfer | Draw

DEAL = Deal()
DRAW = Draw()
REDEAL = Redeal()
RESIGN = Resign()


@cache
def stack(src: int, dst: int) -> Stack:
    """The shared ``Stack(src, dst)``."""
    return Stack(src, dst)


@cache
def remove(*positions: int) -> Remove:
    """The shared ``Remove(positions)``."""
    return Remove(tuple(positions))


@cache
def transfer(src_zone: Zone, src: int, dst_zone: Zone, dst: int, count: int = 1) -> Transfer:
    """The shared ``Transfer``."""
    return Transfer(src_zone, src, dst_zone, dst, count)
