"""The game store: one async interface (``GameStore``), an in-memory and a Redis backend."""

from .base import (
    GameExists,
    GameNotFound,
    GameRecord,
    GameStore,
    StoredReply,
    StoreError,
    StoreFull,
    StoreUnavailable,
    VersionConflict,
    WatchEvent,
)
from .factory import is_memory_url, open_store
from .memory import DEFAULT_EVICT_IDLE, DEFAULT_MAX_GAMES, MemoryStats, MemoryStore

__all__ = [
    "GameExists",
    "GameNotFound",
    "GameRecord",
    "GameStore",
    "StoreError",
    "StoreFull",
    "StoreUnavailable",
    "StoredReply",
    "VersionConflict",
    "WatchEvent",
    "MemoryStore",
    "MemoryStats",
    "DEFAULT_MAX_GAMES",
    "DEFAULT_EVICT_IDLE",
    "is_memory_url",
    "open_store",
]
