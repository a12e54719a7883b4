"""The session layer: the stored form of a game and the application flow, with no gRPC in it.

* ``record``, ``replies``, ``binary``: the stored form (the game's binary
  record with its event log, the idempotency and NewGame records, watch-stream entries) and
  every reader of earlier forms.
* ``flow.Sessions``: create, open (load + authorize), play, undo, idempotent replay, expected
  version, compare-and-set, the per-process cache (``cache``), the watch follower (``follow``);
  ``watching``: WatchGame's stream, which reads through ``watching.WatchSource`` (no cycle);
  ``starts.start_game``: the game a NewGame names (a seed, drawn if none; cards; a deal code).
* ``errors``: what it raises; ``tokens``: game ids, tokens and request-id keys.

A call takes a token and a deadline (``time.monotonic()`` seconds, or None) and returns plain
results (``Opened``, ``Played``, ``Dealt``, ...); ``accordion.api`` turns them into protobuf.
"""

from .binary import UNDO, Event
from .cache import GameCache
from .errors import (
    BadToken,
    DeadlineExceeded,
    DealCodeNotFound,
    DealCodeOptions,
    GameCorrupt,
    GameNotFound,
    MoveRefused,
    RequestIdReused,
    SessionError,
    StoreUnavailable,
    VersionMismatch,
    WatchOnly,
)
from .flow import (
    FIRST_VERSION,
    ChooseMove,
    CodedDeal,
    Dealt,
    Opened,
    Played,
    RecordedNewGame,
    RecordedReply,
    Sessions,
    Shared,
)
from .follow import WatchItem
from .record import EVENTS_KEPT, Stored, load_stored
from .starts import Start, start_game

__all__ = [
    "UNDO",
    "Event",
    "GameCache",
    "BadToken",
    "DeadlineExceeded",
    "GameCorrupt",
    "GameNotFound",
    "MoveRefused",
    "RequestIdReused",
    "SessionError",
    "StoreUnavailable",
    "VersionMismatch",
    "FIRST_VERSION",
    "ChooseMove",
    "DealCodeNotFound",
    "DealCodeOptions",
    "WatchOnly",
    "CodedDeal",
    "Shared",
    "Dealt",
    "Opened",
    "Played",
    "RecordedNewGame",
    "RecordedReply",
    "Sessions",
    "WatchItem",
    "EVENTS_KEPT",
    "Stored",
    "load_stored",
    "Start",
    "start_game",
]
