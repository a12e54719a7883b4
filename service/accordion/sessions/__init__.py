"""The session layer: the stored form of a game and the application flow, with no gRPC in it.

* ``record``, ``replies``, ``binary``: the stored form (the game's binary
  record with its event log, the idempotency and NewGame records, watch-stream entries) and
  every reader of earlier forms.
* ``flow.Sessions``: open (load + authorize), play, undo, idempotent replay, expected
  version, compare-and-set, the per-process cache (``cache``), the watch follower (``follow``);
  built on ``dealing`` (NewGame, deal codes, ShareGame) and ``store_calls`` (what it holds, each
  store call under its timer, authorize and load); ``observer``: what it tells metrics;
  ``search_gate``: the hidden-information gate (what Solve and Hint may search);
  ``seed_gate``: when a reply shows the seed (and NewGame's seeds_tried, which names it);
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
    HiddenCards,
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
from .search_gate import HintSearch
from .starts import Start, start_game

__all__ = [
    "UNDO",
    "Event",
    "GameCache",
    "BadToken",
    "DeadlineExceeded",
    "GameCorrupt",
    "GameNotFound",
    "HiddenCards",
    "HintSearch",
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
