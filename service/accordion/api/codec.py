"""Protobuf → engine: the moves and deals requests name. No rules here: only translation.

``move_fields_problems`` checks a move's shape before any rule is consulted (validation calls
it); ``decode_move`` names the engine move, letting the engine say whether it is legal.
Every echo of a request's move is bounded (``describe``), so an error stays small.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from accordion import engine
from accordion.engine import Game
from accordion.engine.moves import DEAL, DRAW, REDEAL, RESIGN, Claim, Move, Remove, Stack, Transfer, Zone
from accordion.v1 import accordion_pb2 as pb

from . import errors

MAX_NOTATION = 200  # longer text is no move of any game; refuse before the parser sees it
MAX_POSITIONS = 104  # a REMOVE names at most every pile of the longest row (Push Pin's two decks)
MAX_COUNT = 104  # a MOVE carries at most every card of two decks (also the highest pile number)
MAX_COMBO = 32  # the longest combination name of any game is far shorter
MAX_ECHO = 120  # characters of a request's move repeated in an error message

_FIELDS = {
    "MOVE_KIND_STACK": {"from_pile", "to_pile"},
    "MOVE_KIND_DEAL": set(),
    "MOVE_KIND_REDEAL": set(),
    "MOVE_KIND_REMOVE": {"positions"},
    "MOVE_KIND_CLAIM": {"from_pile", "to_pile", "window_first", "window_last", "combo"},
    "MOVE_KIND_RESIGN": set(),
    "MOVE_KIND_MOVE": {"from_zone", "to_zone", "from_pile", "to_pile", "count"},
    "MOVE_KIND_DRAW": set(),
}
_ALL_FIELDS = (
    "from_pile",
    "to_pile",
    "positions",
    "window_first",
    "window_last",
    "combo",
    "from_zone",
    "to_zone",
    "count",
)
_KIND_NAMES = {number: name for name, number in pb.MoveKind.items()}
_UNUSED = {kind: tuple(f for f in _ALL_FIELDS if f not in used) for kind, used in _FIELDS.items()}
# 1-based pile numbers every move of the kind needs (a MOVE's to_pile may be 0: see _move_problems).
_PILE_NUMBERS = {
    kind: tuple(f for f in ("from_pile", "to_pile", "window_first", "window_last") if f in used)
    for kind, used in _FIELDS.items()
    if kind != "MOVE_KIND_MOVE"
} | {"MOVE_KIND_MOVE": ("from_pile",)}
# The contract's zone kinds → the engine's zones, matched by name (ZONE_KIND_WASTE: Zone.WASTE).
ZONES = {pb.ZoneKind.Value(f"ZONE_KIND_{zone.name}"): zone for zone in Zone}
_ZONE_NAMES = [pb.ZoneKind.Name(kind) for kind in ZONES]
_ZONE_REQUIRED = f"a zone is required: {', '.join(_ZONE_NAMES[:-1])} or {_ZONE_NAMES[-1]}"


def move_fields_problems(msg: pb.Move) -> list[tuple[str, str]]:
    """What is wrong with a move's shape, before any rule is consulted (field, description)."""
    if msg.kind == pb.MOVE_KIND_UNSPECIFIED:
        if not msg.notation.strip():
            return [("move", "give a move: its kind and fields, or its notation")]
        if any(
            (
                msg.from_pile,
                msg.to_pile,
                msg.positions,
                msg.window_first,
                msg.window_last,
                msg.combo,
                msg.from_zone,
                msg.to_zone,
                msg.count,
            )
        ):
            return [("move.kind", "structured fields are set but the kind is unspecified")]
        return _notation_problems(msg.notation)
    kind = _KIND_NAMES.get(msg.kind)
    if kind is None:
        return [("move.kind", f"unknown move kind {msg.kind}")]
    used = _FIELDS[kind]
    # (Every ApplyMove comes through here: the checks read each field once, in a fixed order.)
    out = [(f"move.{f}", f"not used by {kind}") for f in _UNUSED[kind] if _is_set(msg, f)]
    for f in _PILE_NUMBERS[kind]:
        if getattr(msg, f) < 1:
            out.append((f"move.{f}", "a 1-based pile number is required"))
    if "positions" in used:
        ps = msg.positions
        if len(ps) > MAX_POSITIONS:
            out.append(("move.positions", f"at most {MAX_POSITIONS} positions"))
        elif not ps or ps[0] < 1 or any(b <= a for a, b in itertools.pairwise(ps)):
            out.append(("move.positions", "1-based positions in ascending order are required"))
    if "combo" in used:
        if not msg.combo:
            out.append(("move.combo", "a combination is required"))
        elif len(msg.combo) > MAX_COMBO:
            out.append(("move.combo", f"at most {MAX_COMBO} characters"))
    if kind == "MOVE_KIND_CLAIM" and msg.window_last < msg.window_first:
        out.append(("move.window_last", "the window runs left to right"))
    if kind == "MOVE_KIND_MOVE":
        out += _move_problems(msg)
    if msg.notation:
        out += _notation_problems(msg.notation)
    return out


def _move_problems(msg: pb.Move) -> list[tuple[str, str]]:
    """A MOVE's zones, pile numbers (to_pile 0: whichever foundation takes it) and count."""
    out = []
    for f in ("from_zone", "to_zone"):
        if getattr(msg, f) not in ZONES:
            out.append((f"move.{f}", _ZONE_REQUIRED))
    if msg.from_pile > MAX_COUNT:
        out.append(("move.from_pile", f"at most {MAX_COUNT}"))
    if msg.to_pile > MAX_COUNT:
        out.append(("move.to_pile", f"at most {MAX_COUNT}"))
    elif msg.to_pile < 1 and not (msg.to_pile == 0 and msg.to_zone == pb.ZONE_KIND_FOUNDATION):
        out.append(("move.to_pile", "a 1-based pile number is required (0 only to the foundations)"))
    if not 0 <= msg.count <= MAX_COUNT:
        out.append(("move.count", f"the number of cards that move, 1..{MAX_COUNT} (0 means 1)"))
    return out


def _notation_problems(text: str) -> list[tuple[str, str]]:
    if len(text) > MAX_NOTATION:
        return [("move.notation", f"longer than {MAX_NOTATION} characters")]
    return []


def _is_set(msg: pb.Move, name: str) -> bool:
    value = getattr(msg, name)
    return bool(len(value)) if name == "positions" else bool(value)


def decode_move(msg: pb.Move, game: Game) -> Move:
    """The engine move a well-shaped request move names (``move_fields_problems`` was empty).

    Raises:
        engine.InvalidMoveError, engine.IllegalMoveError: unreadable notation, or not legal now.
        errors.ApiError: structured fields and notation that name different moves.
    """
    if msg.kind == pb.MOVE_KIND_UNSPECIFIED:
        return game.parse_move(msg.notation)
    if msg.kind == pb.MOVE_KIND_STACK:
        move: Move = _listed_stack(msg.from_pile - 1, msg.to_pile - 1, game)
    else:
        move = _transfer(msg, game) if msg.kind == pb.MOVE_KIND_MOVE else _structured(msg)
    if not game.is_legal(move):
        raise game.illegal(move)  # (the engine says why, in the player's words)
    # Clients mostly send back a move as listed, notation included: the canonical text needs no parse.
    if msg.notation and msg.notation != game.move_text(move) and game.parse_move(msg.notation) != move:
        raise errors.invalid_request([("move.notation", "names a different move than the structured fields")])
    return move


def describe(msg: pb.Move) -> str:
    """A structured move in words, for messages (its notation may not exist: piles may be
    missing), cut to ``MAX_ECHO`` characters."""
    kind = pb.MoveKind.Name(msg.kind).removeprefix("MOVE_KIND_")
    fields = ", ".join(f"{f}={_field_text(msg, f)}" for f in sorted(_FIELDS[pb.MoveKind.Name(msg.kind)]))
    text = f"{kind}({fields})"
    return text if len(text) <= MAX_ECHO else text[: MAX_ECHO - 1] + "…"


def _field_text(msg: pb.Move, name: str) -> str:
    if name == "positions":
        return str(list(msg.positions))
    if name in ("from_zone", "to_zone"):
        zone = ZONES.get(getattr(msg, name))
        return zone.value if zone is not None else str(getattr(msg, name))
    return str(getattr(msg, name))


def _transfer(msg: pb.Move, game: Game) -> Transfer:
    """The transfer a well-shaped MOVE names (not interned: a request's numbers are anyone's).
    To the foundations with to_pile 0: the legal move that takes the cards to one, if any; to a
    foundation the rules count as another (``Rules.listed_foundation``): the move listed."""
    src_zone, dst_zone = ZONES[msg.from_zone], ZONES[msg.to_zone]
    src, count = msg.from_pile - 1, msg.count or 1
    if dst_zone is Zone.FOUNDATION and msg.to_pile == 0:
        for m in game.legal_moves():
            if (
                type(m) is Transfer
                and m.dst_zone is Zone.FOUNDATION
                and m.src_zone is src_zone
                and m.src == src
                and m.count == count
            ):
                return m
    dst = msg.to_pile - 1
    if dst_zone is Zone.FOUNDATION:  # (Emperor: either foundation of a suit names the one move)
        dst = game.rules.listed_foundation(game.state, dst)
    return Transfer(src_zone, src, dst_zone, dst, count)


def _listed_stack(src: int, dst: int, game: Game) -> Stack:
    """The legal move's own (interned) ``Stack(src, dst)`` when it is listed, else a new one: the
    legality check then finds it by identity, without a dataclass ``__eq__`` (interpreted even
    in the compiled build) per move listed before it. (Not ``moves.stack``: its cache would
    grow with whatever numbers clients send.)"""
    for listed in game.legal_moves():
        if isinstance(listed, Stack) and listed.src == src and listed.dst == dst:
            return listed
    return Stack(src, dst)


def _structured(msg: pb.Move) -> Move:
    kind = msg.kind  # (STACK: ``_listed_stack``)
    if kind == pb.MOVE_KIND_DEAL:
        return DEAL
    if kind == pb.MOVE_KIND_REDEAL:
        return REDEAL
    if kind == pb.MOVE_KIND_REMOVE:
        return Remove(tuple(p - 1 for p in msg.positions))
    if kind == pb.MOVE_KIND_RESIGN:
        return RESIGN
    if kind == pb.MOVE_KIND_DRAW:
        return DRAW
    return Claim(
        msg.window_first - 1,
        msg.window_last - 1,
        msg.combo.strip().lower(),
        msg.from_pile - 1,
        msg.to_pile - 1,
    )


def deal_cards(texts: Sequence[str]) -> list[int]:
    """An explicit deal's cards. Raises ``engine.InvalidCardError`` quoting the bad one."""
    return [engine.parse_card(t) for t in texts]
