"""The small records beside a game: idempotency replies, watch-stream events, NewGame records.

Each has a compact form, told apart from the forms of earlier versions by its first byte:

* a move's or an undo's idempotency record: ``0x00`` then the version it made (the reply is
  the game's log replayed to there); earlier versions stored the serialized reply, which never
  starts with 0x00;
* a watch-stream entry: ``0xff`` then the event in the log's form (the version is the entry's
  id); earlier versions streamed a serialized ``GameEvent``, which never starts with 0xff;
* NewGame's record: ``0x00``, the sealed token's length and bytes, seeds_tried, the game id (the
  reply's game is the game as dealt, rebuilt from its stored header). Earlier versions stored
  the sealed token's length (never 0), the sealed token and the serialized reply without its
  token: ``LegacyNewGameRecord``.
"""

from __future__ import annotations

from dataclasses import dataclass

from accordion.bytecodec import Reader, varint

from .binary import Event, encode_event, read_events

_COMPACT = b"\x00"
_EVENT = b"\xff"


def compact_reply(version: int) -> bytes:
    """What an idempotency record holds for a move or an undo: the version it made."""
    return _COMPACT + varint(version)


def compact_reply_version(blob: bytes) -> int | None:
    """The version of a compact reply; None for a serialized reply (recorded by earlier versions)."""
    return Reader(blob, 1).varint() if blob[:1] == _COMPACT else None


def stream_event(event: Event) -> bytes:
    """What the watch stream carries for an event: its log form."""
    return _EVENT + encode_event(event)


def stream_event_value(payload: bytes) -> tuple[bool, Event]:
    """(readable, event) of a stream payload; (False, None) for a payload of an earlier version."""
    if payload[:1] != _EVENT or len(payload) < 2:
        return False, None
    try:
        return True, read_events(Reader(payload, 1), 1)[0]
    except (ValueError, IndexError):
        return False, None


@dataclass(frozen=True)
class NewGameRecord:
    sealed_token: bytes
    seeds_tried: int
    game_id: str


@dataclass(frozen=True)
class LegacyNewGameRecord:
    """A record of an earlier version: the sealed token and the serialized ``NewGameResponse``
    (without its token), passed up as bytes: this layer knows no protobuf."""

    sealed_token: bytes
    reply: bytes


def new_game_record(sealed_token: bytes, seeds_tried: int, game_id: str) -> bytes:
    return _COMPACT + varint(len(sealed_token)) + sealed_token + varint(seeds_tried) + game_id.encode()


def read_new_game_record(blob: bytes) -> NewGameRecord | LegacyNewGameRecord:
    """Either form. Raises ValueError/IndexError if the blob is neither."""
    if blob[:1] != _COMPACT:
        size = blob[0]
        return LegacyNewGameRecord(blob[1 : 1 + size], blob[1 + size :])
    r = Reader(blob, 1)
    sealed = r.take(r.byte())
    seeds_tried = r.varint()
    return NewGameRecord(sealed, seeds_tried, blob[r.pos :].decode())
