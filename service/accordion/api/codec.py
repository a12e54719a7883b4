"""Protobuf ↔ engine, and the stored form of a game. No rules here: only translation.

The stored ``data`` blob is the engine's snapshot (replay record + state string) as compact
JSON bytes: it holds the seed and the stock, so it never leaves the server. A later issue
may replace it with something smaller; ``load_game`` is the one reader.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence

from accordion import engine, solver
from accordion.engine import Game, Status
from accordion.engine.cards import card_text
from accordion.engine.moves import DEAL, REDEAL, Claim, Move, Remove, Stack
from accordion.v1 import accordion_pb2 as pb

from . import errors

SOLVE_OUTCOMES = {
    solver.Outcome.WON: pb.SOLVE_OUTCOME_WON,
    solver.Outcome.LOST: pb.SOLVE_OUTCOME_LOST,
    solver.Outcome.UNKNOWN: pb.SOLVE_OUTCOME_UNKNOWN,
}

_STATUS = {
    Status.IN_PROGRESS: pb.GAME_STATUS_IN_PROGRESS,
    Status.WON: pb.GAME_STATUS_WON,
    Status.LOST: pb.GAME_STATUS_LOST,
}
MAX_NOTATION = 200  # longer text is no move of any game; refuse before the parser sees it


# --- stored form -----------------------------------------------------------------------


def dump_game(game: Game) -> bytes:
    return json.dumps(game.snapshot(), separators=(",", ":"), ensure_ascii=False).encode()


def load_game(game_id: str, data: bytes) -> Game:
    """The engine game from its stored blob. Raises ``ApiError`` (DATA_LOSS) if unreadable."""
    try:
        return Game.from_snapshot(json.loads(data))
    except (ValueError, KeyError, TypeError) as exc:  # EngineError is a ValueError
        raise errors.game_corrupt(game_id) from exc


# --- engine → protobuf -----------------------------------------------------------------


def encode_card(card: int) -> pb.Card:
    suit = pb.Suit.ValueType(card // 13 + 1)  # the engine orders suits ♠ ♥ ♦ ♣, as the enum does from 1
    return pb.Card(rank=card % 13 + 1, suit=suit, text=card_text(card, symbols=True))


def encode_move(move: Move, notation: str) -> pb.Move:
    """A move with both faces: structured (1-based) and its notation."""
    msg = pb.Move(kind=pb.MoveKind.Value(f"MOVE_KIND_{move.kind.value}"), notation=notation)
    if isinstance(move, Stack):
        msg.from_pile, msg.to_pile = move.src + 1, move.dst + 1
    elif isinstance(move, Remove):
        msg.positions.extend(p + 1 for p in move.positions)
    elif isinstance(move, Claim):
        msg.window_first, msg.window_last, msg.combo = move.first + 1, move.last + 1, move.combo
        msg.from_pile, msg.to_pile = move.src + 1, move.dst + 1
    return msg


def encode_legal(game: Game) -> list[pb.Move]:
    return [encode_move(m, t) for m, t in zip(game.legal_moves(), game.legal_texts(), strict=True)]


def seed_is_public(game: Game) -> bool:
    """Whether showing the seed reveals nothing hidden: no stock, no chance to come, or game over."""
    if game.status is not Status.IN_PROGRESS:
        return True
    return not game.state.stock and not game.rules.draws_after_deal


def encode_game(game: Game, game_id: str, version: int) -> pb.Game:
    state = game.state
    msg = pb.Game(
        id=game_id,
        version=version,
        variant=game.variant.id,
        options={k: str(v) for k, v in game.options.items()},
        piles=[pb.Pile(cards=[encode_card(c) for c in pile]) for pile in state.row],
        stock_size=len(state.stock),
        status=_STATUS[game.status],
        legal_moves=encode_legal(game),
        penalty=game.penalty,
        score=game.score,
        threshold_met=game.threshold_met,
        moves_played=game.move_count,
        text=game.render(),
        state=game.state_string(hide_stock=True),
        extras=game.rules.summary(state),
        can_undo=game.move_count > 0,
    )
    if seed_is_public(game):
        msg.seed = game.seed
    return msg


def encode_score(game: Game, version: int) -> pb.ScoreResponse:
    return pb.ScoreResponse(
        version=version,
        status=_STATUS[game.status],
        penalty=game.penalty,
        piles_left=len(game.state.row),
        stock_size=len(game.state.stock),
        cribbage_points=game.score,
        threshold_met=game.threshold_met,
    )


def encode_variant(variant: engine.Variant) -> pb.Variant:
    try:
        threshold = variant.make_rules().win_threshold()
    except NotImplementedError:
        threshold = ""
    return pb.Variant(
        id=variant.id,
        name=variant.name,
        description=variant.description,
        aliases=list(variant.aliases),
        options=[
            pb.VariantOption(
                name=o.name,
                default_value=str(o.default),
                allowed_values=o.allowed_text,
                description=o.description,
            )
            for o in variant.options
        ],
        family=variant.rules.family,
        move_kinds=[pb.MoveKind.Value(f"MOVE_KIND_{k.value}") for k in variant.rules.move_kinds],
        win_threshold=threshold,
    )


# --- protobuf → engine -------------------------------------------------------------------


def move_fields_problems(msg: pb.Move) -> list[tuple[str, str]]:
    """What is wrong with a move's shape, before any rule is consulted (field, description)."""
    if msg.kind == pb.MOVE_KIND_UNSPECIFIED:
        if not msg.notation.strip():
            return [("move", "give a move: its kind and fields, or its notation")]
        if any((msg.from_pile, msg.to_pile, msg.positions, msg.window_first, msg.window_last, msg.combo)):
            return [("move.kind", "structured fields are set but the kind is unspecified")]
        return _notation_problems(msg.notation)
    if msg.kind not in pb.MoveKind.values():
        return [("move.kind", f"unknown move kind {msg.kind}")]
    kind = pb.MoveKind.Name(msg.kind)
    used = _FIELDS[kind]
    out = [(f"move.{f}", f"not used by {kind}") for f in _ALL_FIELDS - used if _is_set(msg, f)]
    for f in ("from_pile", "to_pile", "window_first", "window_last"):
        if f in used and getattr(msg, f) < 1:
            out.append((f"move.{f}", "a 1-based pile number is required"))
    if "positions" in used:
        ps = list(msg.positions)
        if not ps or ps[0] < 1 or any(b <= a for a, b in itertools.pairwise(ps)):
            out.append(("move.positions", "1-based positions in ascending order are required"))
    if "combo" in used and not msg.combo:
        out.append(("move.combo", "a combination is required"))
    if kind == "MOVE_KIND_CLAIM" and msg.window_last < msg.window_first:
        out.append(("move.window_last", "the window runs left to right"))
    return out + (_notation_problems(msg.notation) if msg.notation else [])


def _notation_problems(text: str) -> list[tuple[str, str]]:
    if len(text) > MAX_NOTATION:
        return [("move.notation", f"longer than {MAX_NOTATION} characters")]
    return []


_FIELDS = {
    "MOVE_KIND_STACK": {"from_pile", "to_pile"},
    "MOVE_KIND_DEAL": set(),
    "MOVE_KIND_REDEAL": set(),
    "MOVE_KIND_REMOVE": {"positions"},
    "MOVE_KIND_CLAIM": {"from_pile", "to_pile", "window_first", "window_last", "combo"},
}
_ALL_FIELDS = {"from_pile", "to_pile", "positions", "window_first", "window_last", "combo"}


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
    if move not in game.legal_moves():
        legal = game.legal_texts()
        listing = ", ".join(legal) or "nothing (the game is over)"
        raise engine.IllegalMoveError(f"{_describe(msg)} is not legal now; legal now: {listing}", legal)
    if msg.notation and game.parse_move(msg.notation) != move:
        raise errors.invalid_request([("move.notation", "names a different move than the structured fields")])
    return move


def _describe(msg: pb.Move) -> str:
    """A structured move in words, for messages (its notation may not exist: piles may be missing)."""
    kind = pb.MoveKind.Name(msg.kind).removeprefix("MOVE_KIND_")
    fields = ", ".join(
        f"{f}={getattr(msg, f) if f != 'positions' else list(msg.positions)}"
        for f in sorted(_FIELDS[pb.MoveKind.Name(msg.kind)])
    )
    return f"{kind}({fields})"


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
