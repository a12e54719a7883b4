"""Game sessions: one async interface (``GameStore``), an in-memory and a Redis backend."""

from .base import (
    GameExists,
    GameNotFound,
    GameRecord,
    GameStore,
    StoredReply,
    StoreError,
    StoreUnavailable,
    VersionConflict,
    WatchEvent,
)
from .factory import open_store
from .memory import MemoryStore

__all__ = [
    "GameExists", "GameNotFound", "GameRecord", "GameStore", "StoreError", "StoreUnavailable",
    "StoredReply", "VersionConflict", "WatchEvent", "MemoryStore", "open_store",
]
