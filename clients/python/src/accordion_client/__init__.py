"""Python client for the Accordion service (``accordion.v1.AccordionService``).

* ``AccordionClient`` / ``AsyncAccordionClient``: connect, deal, play by notation; deadlines,
  request ids and retries on every call; typed exceptions (``accordion_client.errors``).
  Sharing: ``new_game_from_code`` (a deal code), ``GameHandle.share``, ``spectate`` (a
  read-only ``WatchHandle`` from a watch token).
* ``accordion_client.v1``: the generated stubs (``accordion_pb2``, ``accordion_pb2_grpc``), typed.
* ``accordion_client.moves``: structured moves (``move("tableau", 3, "tableau", 7)``, ``draw()``).
* ``accordion_client.zones``: text for a tableau game's zones (face-down cards as backs).
* ``accordion_client.chat.ChatSession``: text in, short text out, for chat bots.
* console scripts ``accordion`` (``accordion play``: a terminal game) and ``accordion-load``.
"""

from . import errors, moves, zones
from .client import (
    AccordionClient,
    AsyncAccordionClient,
    AsyncGameHandle,
    AsyncWatchHandle,
    GameHandle,
    WatchHandle,
    new_request_id,
    parse_watch_key,
    to_move,
    watch_key,
)
from .errors import (
    AccordionError,
    Cancelled,
    DeadlineExceeded,
    DealCodeNotFound,
    DealCodeOptions,
    GameNotFound,
    IllegalMove,
    InvalidArgument,
    InvalidMove,
    MoveRejected,
    NothingToUndo,
    PermissionDenied,
    RateLimited,
    ResourceExhausted,
    Unauthenticated,
    Unavailable,
    UndoNotAllowed,
    UnknownVariant,
    VersionMismatch,
    WatchOnly,
)
from .tracecontext import new_traceparent, trace_context
from .v1 import accordion_pb2 as pb

__version__ = "0.1.0"

__all__ = [
    "AccordionClient",
    "AccordionError",
    "AsyncAccordionClient",
    "AsyncGameHandle",
    "AsyncWatchHandle",
    "Cancelled",
    "DealCodeNotFound",
    "DealCodeOptions",
    "DeadlineExceeded",
    "GameHandle",
    "GameNotFound",
    "IllegalMove",
    "InvalidArgument",
    "InvalidMove",
    "MoveRejected",
    "NothingToUndo",
    "PermissionDenied",
    "RateLimited",
    "ResourceExhausted",
    "Unauthenticated",
    "Unavailable",
    "UndoNotAllowed",
    "UnknownVariant",
    "VersionMismatch",
    "WatchHandle",
    "WatchOnly",
    "errors",
    "moves",
    "new_request_id",
    "new_traceparent",
    "parse_watch_key",
    "pb",
    "to_move",
    "trace_context",
    "watch_key",
    "zones",
]
