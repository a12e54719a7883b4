"""Engine and session results → protobuf: every reply the service sends, in one place.

The hot replies (ApplyMove, Undo, GetGame) are written as bytes from cached serialized pieces
(cards, piles, legal moves; upb parses a few KB in microseconds, building a ``pb.Card`` per card
and a ``pb.Move`` per legal move was most of a reply's cost) and passed to gRPC as they are
(``Serialized``: the service's serializer lets bytes through). ``game_bytes`` writes exactly the
message ``encode_game`` returns (``tests/api/test_codec.py`` holds them to protobuf's own).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import NewType, TypeVar

from accordion import engine, sessions, solver
from accordion.bytecodec import varint  # the protobuf wire varint, as the stored record writes it
from accordion.engine import Game, Status
from accordion.engine.cards import card_text
from accordion.engine.core import option_text
from accordion.engine.moves import Claim, Move, MoveKind, Remove, Stack, Transfer, Zone
from accordion.engine.zones import PileView, ZoneView
from accordion.sessions.seed_gate import shown_seed
from accordion.v1 import accordion_pb2 as pb

Serialized = NewType("Serialized", bytes)  # a reply message already serialized: sent as it is
K = TypeVar("K", bound=Hashable)

SOLVE_OUTCOMES = {
    solver.Outcome.WON: pb.SOLVE_OUTCOME_WON,
    solver.Outcome.LOST: pb.SOLVE_OUTCOME_LOST,
    solver.Outcome.UNKNOWN: pb.SOLVE_OUTCOME_UNKNOWN,
}
# The contract's ZoneKind of each zone, matched by name (Zone.WASTE: ZONE_KIND_WASTE): a zone the
# contract lacks stops the import here, so a new kind of zone is its declaration and its enum value.
ZONE_KINDS = {zone: pb.ZoneKind.Value(f"ZONE_KIND_{zone.name}") for zone in Zone}
STATUS = {
    Status.IN_PROGRESS: pb.GAME_STATUS_IN_PROGRESS,
    Status.WON: pb.GAME_STATUS_WON,
    Status.LOST: pb.GAME_STATUS_LOST,
}


def _int(n: int) -> bytes:
    """A varint field value; a negative int32/int64 is ten bytes of two's complement."""
    return varint(n if n >= 0 else n + (1 << 64))


def _field(tag: bytes, data: bytes) -> bytes:
    return tag + varint(len(data)) + data


# --- messages built the plain way ------------------------------------------------------------


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
    elif isinstance(move, Transfer):
        msg.from_zone, msg.to_zone = ZONE_KINDS[move.src_zone], ZONE_KINDS[move.dst_zone]
        msg.from_pile, msg.to_pile, msg.count = move.src + 1, move.dst + 1, move.count
    return msg


def encode_legal(game: Game) -> list[pb.Move]:
    return [encode_move(m, t) for m, t in zip(game.legal_moves(), game.legal_texts(), strict=True)]


def encode_zone(view: ZoneView) -> pb.Zone:
    """A zone of a tableau game's layout, built the plain way (``zone_fields`` writes the same bytes)."""
    return pb.Zone(
        kind=ZONE_KINDS[view.zone],
        piles=[
            pb.ZonePile(
                face_down=p.face_down,
                cards=[encode_card(c) for c in p.cards],
                face_down_cards=[encode_card(c) for c in p.face_down_cards],
            )
            for p in view.piles
        ],
    )


def tableau_piles(zones: Sequence[ZoneView]) -> tuple[tuple[int, ...], ...]:
    """``Game.piles`` of a tableau game: each tableau pile's face-up cards (the row of a row game)."""
    for view in zones:
        if view.zone is Zone.TABLEAU:
            return tuple(p.cards for p in view.piles)
    return ()


def _tableau_piles_left(zones: Sequence[ZoneView]) -> int:
    """A tableau game's piles that hold cards (face up or down)."""
    return sum(1 for v in zones if v.zone is Zone.TABLEAU for p in v.piles if p.cards or p.face_down)


def encode_score(game: Game, version: int) -> pb.ScoreResponse:
    zones = game.zones()
    return pb.ScoreResponse(
        version=version,
        status=STATUS[game.status],
        penalty=game.penalty,
        piles_left=_tableau_piles_left(zones) if zones else len(game.state.row),
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
                default_value=option_text(o.default),
                allowed_values=o.allowed_text,
                description=o.description,
            )
            for o in variant.options
        ],
        family=variant.rules.family,
        # RESIGN is every game's (the engine's Game allows it), so every variant lists it last.
        move_kinds=[
            pb.MoveKind.Value(f"MOVE_KIND_{k.value}") for k in (*variant.rules.move_kinds, MoveKind.RESIGN)
        ],
        win_threshold=threshold,
    )


# --- the Game message from cached pieces -------------------------------------------------------

_CACHE_MAX = 200_000
_CARD_FIELDS = tuple(  # Pile.cards (field 1) entries
    b"\x0a" + varint(len(b)) + b for b in (encode_card(c).SerializeToString() for c in range(52))
)


class _PieceCache(dict[K, bytes]):
    """Serialized pieces by key, built on first use by ``make``; emptied when full."""

    def __init__(self, make: Callable[[K], bytes]) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, key: K) -> bytes:
        if len(self) >= _CACHE_MAX:
            self.clear()
        value = self[key] = self.make(key)
        return value


def _make_pile_field(pile: tuple[int, ...]) -> bytes:
    body = b"".join([_CARD_FIELDS[c] for c in pile])
    return b"\x2a" + varint(len(body)) + body


# A legal move's key: (from, to, notation) for a STACK (ints and a str hash fastest), else (move, notation).
MoveKey = tuple[int, int, str] | tuple[Move, str]


def _make_stack_head(piles: tuple[int, int]) -> bytes:
    # kind = STACK (1), from_pile (2), to_pile (3): what upb writes, by hand.
    return b"".join((b"\x08\x01\x10", varint(piles[0] + 1), b"\x18", varint(piles[1] + 1)))


def _make_notation_field(notation: str) -> bytes:
    text = notation.encode()
    return b"\x42" + varint(len(text)) + text  # Move.notation (8)


# A STACK's field is joined from its piles' head and its notation's field, each from a small
# cache (a few thousand entries at most: piles by pairs, notations by card pairs), not cached
# whole: keyed by (piles, cards) Accordion alone has some 80,000, and a fresh deal's ~18 are
# mostly new or cold (issue 17: 28-40 µs a fresh deal's moves, compiled, in a cache of 78,000).
_STACK_HEADS = _PieceCache(_make_stack_head)
_NOTATION_FIELDS = _PieceCache(_make_notation_field)


def _make_move_field(key: tuple[Move, str]) -> bytes:
    move, notation = key
    body = encode_move(move, notation).SerializeToString()
    return b"\x42" + varint(len(body)) + body


_PILE_FIELDS = _PieceCache(_make_pile_field)  # Game.piles (field 5) entries, by pile
# Game.legal_moves (field 8) entries of the moves other than STACK, by (move, notation).
_OTHER_MOVE_FIELDS: _PieceCache[tuple[Move, str]] = _PieceCache(_make_move_field)


def _move_field(key: MoveKey) -> bytes:
    """A legal move's ``Game.legal_moves`` (field 8) entry."""
    if len(key) == 3:
        src, dst, notation = key
        body = _STACK_HEADS[(src, dst)] + _NOTATION_FIELDS[notation]
        return b"\x42" + varint(len(body)) + body
    move, notation = key
    return _OTHER_MOVE_FIELDS[(move, notation)]


# A card as ZonePile.cards (field 2) and ZonePile.face_down_cards (field 3).
_ZONE_CARD_FIELDS = tuple(b"\x12" + f[1:] for f in _CARD_FIELDS)
_ZONE_DOWN_CARD_FIELDS = tuple(b"\x1a" + f[1:] for f in _CARD_FIELDS)


def _make_zone_pile(pile: PileView) -> bytes:
    body = b"".join(
        (
            b"\x08" + varint(pile.face_down) if pile.face_down else b"",
            b"".join([_ZONE_CARD_FIELDS[c] for c in pile.cards]),
            b"".join([_ZONE_DOWN_CARD_FIELDS[c] for c in pile.face_down_cards]),
        )
    )
    return b"\x12" + varint(len(body)) + body  # Zone.piles (field 2)


_ZONE_PILE_FIELDS = _PieceCache(_make_zone_pile)  # Zone.piles entries, by pile view


def zone_fields(zones: Sequence[ZoneView]) -> bytes:
    """``Game.zones`` (field 18) entries: what ``encode_zone`` builds, written from cached piles."""
    out = []
    for view in zones:
        body = (
            b"\x08" + varint(ZONE_KINDS[view.zone]) + b"".join(map(_ZONE_PILE_FIELDS.__getitem__, view.piles))
        )
        out.append(b"\x92\x01" + varint(len(body)) + body)
    return b"".join(out)


def _move_key(move: Move, notation: str) -> MoveKey:
    return (move.src, move.dst, notation) if isinstance(move, Stack) else (move, notation)


def _move_keys(moves: Sequence[Move], texts: Sequence[str]) -> list[MoveKey]:
    # (``_move_key`` inlined: this runs for every legal move of every reply.)
    return [(m.src, m.dst, t) if type(m) is Stack else (m, t) for m, t in zip(moves, texts, strict=True)]


def legal_response(moves: Sequence[Move], texts: Sequence[str], version: int) -> pb.LegalMovesResponse:
    """``LegalMovesResponse(version, moves)`` from the cached move pieces (field 8 → field 2)."""
    msg = pb.LegalMovesResponse(version=version)
    msg.MergeFromString(b"".join([b"\x12" + _move_field(k)[1:] for k in _move_keys(moves, texts)]))
    return msg


def encode_legal_response(game: Game, version: int) -> pb.LegalMovesResponse:
    return legal_response(game.legal_moves(), game.legal_texts(), version)


_STATUS_FIELDS = {status: b"\x38" + varint(value) for status, value in STATUS.items()}  # Game.status (7)
_HEAD_FIELDS: dict[tuple[str, tuple[tuple[str, object], ...]], bytes] = {}  # variant (3) and options (4)


def _head_fields(game: Game) -> bytes:
    values = game.rules.values
    key = (game.variant.id, tuple(values.items()))
    found = _HEAD_FIELDS.get(key)
    if found is None:
        entries = [
            _field(b"\x22", _field(b"\x0a", k.encode()) + _field(b"\x12", option_text(v).encode()))
            for k, v in values.items()
        ]
        if len(_HEAD_FIELDS) >= 10_000:
            _HEAD_FIELDS.clear()
        found = _HEAD_FIELDS[key] = _field(b"\x1a", game.variant.id.encode()) + b"".join(entries)
    return found


def game_bytes(game: Game, game_id: str, version: int) -> bytes:
    """The serialized ``Game`` message, written field by field from cached pieces."""
    state = game.state
    status = game.status
    rules = game.rules
    moves = game.move_count
    zones = game.zones()  # the engine's view: face-down cards counted, never named unless open
    parts = [
        _field(b"\x0a", game_id.encode()),
        b"\x10" + _int(version),
        _head_fields(game),
        b"".join(map(_PILE_FIELDS.__getitem__, tableau_piles(zones) if zones else state.row)),
        b"\x30" + varint(len(state.stock)) if state.stock else b"",
        _STATUS_FIELDS[status],
        b"".join(map(_move_field, _move_keys(game.legal_moves(), game.legal_texts()))),
    ]
    penalty, score = game.penalty, game.score
    if penalty:
        parts.append(b"\x48" + _int(penalty))
    if score:
        parts.append(b"\x50" + _int(score))
    if game.threshold_met:
        parts.append(b"\x58\x01")
    if moves:
        parts.append(b"\x60" + varint(moves))
    parts.append(_field(b"\x6a", game.render().encode()))
    parts.append(_field(b"\x72", game.state_string(hide_stock=True).encode()))
    parts.extend(_field(b"\x7a", extra.encode()) for extra in rules.summary(state))
    seed = shown_seed(game)  # the session layer's rule (sessions/seed_gate.py), not the wire's
    if seed is not None:
        parts.append(b"\x80\x01" + varint(seed))  # optional: sent even if 0
    if moves:
        parts.append(b"\x88\x01\x01")  # can_undo
    if zones:
        parts.append(zone_fields(zones))
    return b"".join(parts)


def encode_game(game: Game, game_id: str, version: int) -> pb.Game:
    return pb.Game.FromString(game_bytes(game, game_id, version))


def get_game_reply(opened: sessions.Opened) -> Serialized:
    """A serialized ``GetGameResponse`` (game = field 1)."""
    return Serialized(_field(b"\x0a", game_bytes(opened.game, opened.game_id, opened.version)))


def _move_body(key: MoveKey) -> bytes:
    """The serialized ``Move`` of a ``_move_field`` key (its field without tag and length)."""
    field = _move_field(key)
    i = 1
    while field[i] & 0x80:
        i += 1
    return field[i + 1 :]


def reply_bytes(move: Move, notation: str, game: Game, game_id: str, version: int) -> bytes:
    """A serialized ``ApplyMoveResponse`` or ``UndoResponse`` (both: move = 1, game = 2)."""
    return _field(b"\x0a", _move_body(_move_key(move, notation))) + _field(
        b"\x12", game_bytes(game, game_id, version)
    )


def played_reply(result: sessions.Played | sessions.RecordedReply) -> Serialized:
    """ApplyMove's or Undo's reply: the move and the game after it, or the recorded first reply."""
    if isinstance(result, sessions.RecordedReply):
        return Serialized(result.reply)
    return Serialized(reply_bytes(result.move, result.notation, result.game, result.game_id, result.version))


def new_game_reply(result: sessions.Dealt | sessions.RecordedNewGame) -> pb.NewGameResponse | Serialized:
    """NewGame's reply: a serialized ``NewGameResponse`` (game = 1, token = 2, seeds_tried = 3)
    written from ``game_bytes``, as ApplyMove's is (not parsed into a ``Game`` and copied into
    the reply to be serialized again); a legacy record's stored reply with its token."""
    if isinstance(result, sessions.RecordedNewGame):
        reply = pb.NewGameResponse.FromString(result.reply)
        reply.token = result.token
        return reply
    game = game_bytes(result.game, result.game_id, sessions.FIRST_VERSION)
    seeds_tried = b"\x18" + _int(result.seeds_tried) if result.seeds_tried else b""
    # watch_token = 4, deal_code = 5 (issue 29); absent where the game has none
    watch = _field(b"\x22", result.watch_token.encode()) if result.watch_token else b""
    code = _field(b"\x2a", result.deal_code.encode()) if result.deal_code else b""
    return Serialized(
        _field(b"\x0a", game) + _field(b"\x12", result.token.encode()) + seeds_tried + watch + code
    )


def watch_reply(game_id: str, item: sessions.WatchItem) -> pb.WatchGameResponse:
    kind = pb.GameEvent.KIND_UNDO if item.undo else pb.GameEvent.KIND_MOVE
    return pb.WatchGameResponse(
        event=pb.GameEvent(
            version=item.version,
            kind=kind,
            move=encode_move(item.move, item.notation),
            game=encode_game(item.game, game_id, item.version),
        )
    )


def hint_reply(version: int, move: Move | None, notation: str, solved: bool) -> pb.HintResponse:
    reply = pb.HintResponse(version=version)
    if move is not None:
        reply.move.CopyFrom(encode_move(move, notation))
        reply.source = pb.HINT_SOURCE_SOLVER if solved else pb.HINT_SOURCE_HEURISTIC
    return reply


# SolveResponse: ``version`` is field 1 and ``cached`` field 7, the first and the last, so a reply
# is the version's field, then the body (fields 2 to 6: the same on every call for a position),
# then the cached flag's field: the bytes protobuf itself writes for the whole message.
_SOLVE_VERSION_TAG = b"\x08"  # field 1, varint
_SOLVE_CACHED_FIELD = b"\x38\x01"  # field 7, varint, true


def solve_body(result: solver.SolveResult, texts: Sequence[str]) -> bytes:
    """A Solve reply's fields but the version and the cached flag: written once per solved
    position and kept (``solving.Solved``), since the line's notation costs milliseconds."""
    return pb.SolveResponse(
        outcome=SOLVE_OUTCOMES[result.outcome],
        moves=[encode_move(m, t) for m, t in zip(result.moves, texts, strict=True)],
        nodes=result.nodes,
        millis=round(result.seconds * 1000, 3),
        without_redeal=result.without_redeal,
    ).SerializeToString()


def solve_reply(version: int, body: bytes, cached: bool) -> Serialized:
    """A Solve reply from its ``solve_body``: what ``pb.SolveResponse(version=…, …, cached=…)``
    serializes to, byte for byte (tests/api/test_solve_bytes.py)."""
    head = _SOLVE_VERSION_TAG + _int(version) if version else b""
    return Serialized(head + body + (_SOLVE_CACHED_FIELD if cached else b""))
