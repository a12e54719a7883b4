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
from accordion.engine.moves import DEAL, REDEAL, RESIGN, Claim, Move, Remove, Stack
from accordion.v1 import accordion_pb2 as pb

from . import errors

MAX_NOTATION = 200  # longer text is no move of any game; refuse before the parser sees it
MAX_POSITIONS = 104  # a REMOVE names at most every pile of the longest row (Push Pin's two decks)
MAX_COMBO = 32  # the longest combination name of any game is far shorter
MAX_ECHO = 120  # characters of a request's move repeated in an error message

_FIELDS = {
    "MOVE_KIND_STACK": {"from_pile", "to_pile"},
    "MOVE_KIND_DEAL": set(),
    "MOVE_KIND_REDEAL": set(),
    "MOVE_KIND_REMOVE": {"positions"},
    "MOVE_KIND_CLAIM": {"from_pile", "to_pile", "window_first", "window_last", "combo"},
    "MOVE_KIND_RESIGN": set(),
}
_ALL_FIELDS = ("from_pile", "to_pile", "positions", "window_first", "window_last", "combo")
_KIND_NAMES = {number: name for name, number in pb.MoveKind.items()}
_UNUSED = {kind: tuple(f for f in _ALL_FIELDS if f not in used) for kind, used in _FIELDS.items()}
_PILE_NUMBERS = {
    kind: tuple(f for f in ("from_pile", "to_pile", "window_first", "window_last") if f in used)
    for kind, used in _FIELDS.items()
}


def move_fields_problems(msg: pb.Move) -> list[tuple[str, str]]:
    """What is wrong with a move's shape, before any rule is consulted (field, description)."""
    if msg.kind == pb.MOVE_KIND_UNSPECIFIED:
        if not msg.notation.strip():
            return [("move", "give a move: its kind and fields, or its notation")]
        if any((msg.from_pile, msg.to_pile, msg.positions, msg.window_first, msg.window_last, msg.combo)):
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
    if msg.notation:
        out += _notation_problems(msg.notation)
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
    move = _structured(msg)
    if not game.is_legal(move):
        legal = game.legal_texts()
        listing = ", ".join(legal) or "nothing (the game is over)"
        raise engine.IllegalMoveError(f"{describe(msg)} is not legal now; legal now: {listing}", legal)
    # Clients mostly send back a move as listed, notation included: the canonical text needs no parse.
    if msg.notation and msg.notation != game.move_text(move) and game.parse_move(msg.notation) != move:
        raise errors.invalid_request([("move.notation", "names a different move than the structured fields")])
    return move


def describe(msg: pb.Move) -> str:
    """A structured move in words, for messages (its notation may not exist: piles may be
    missing), cut to ``MAX_ECHO`` characters."""
    kind = pb.MoveKind.Name(msg.kind).removeprefix("MOVE_KIND_")
    fields = ", ".join(
        f"{f}={getattr(msg, f) if f != 'positions' else list(msg.positions)}"
        for f in sorted(_FIELDS[pb.MoveKind.Name(msg.kind)])
    )
    text = f"{kind}({fields})"
    return text if len(text) <= MAX_ECHO else text[: MAX_ECHO - 1] + "…"


def _structured(msg: pb.Move) -> Move:
    kind = msg.kind
    if kind == pb.MOVE_KIND_STACK:
        return Stack(msg.from_pile - 1, msg.to_pile - 1)
    if kind == pb.MOVE_KIND_DEAL:
        return DEAL
    if kind == pb.MOVE_KIND_REDEAL:
        return REDEAL
    if kind == pb.MOVE_KIND_REMOVE:
        return Remove(tuple(p - 1 for p in msg.positions))
    if kind == pb.MOVE_KIND_RESIGN:
        return RESIGN
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
