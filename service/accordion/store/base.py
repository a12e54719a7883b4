"""The storage interface. Both backends implement it with the same semantics and pass one test suite.

The store knows nothing of games or protobuf: a game is an opaque ``data`` blob
with a version and a token hash (the session layer's access record); replies, events and
named values are opaque bytes the session layer encodes (``accordion.sessions``: record.py,
replies.py, tokens.py). What the store guarantees:

* ``compare_and_set`` is atomic: the version check, the new data, the
  idempotency record and the event are written together or not at all.
* A retry with a known ``request_id`` gets the first reply and changes nothing.
* Every key of one game expires together after ``ttl`` seconds without a write.
* A pool (``pool_add``, ``pool_pop``, ``pool_size``) is a set of opaque items under a name, with
  no TTL: ``pool_pop`` removes one item, chosen at random, atomically (two callers never get
  the same item). The service keeps deals proven winnable there (sessions/winnable.py).
* Bounds shared by both backends: a game's event log keeps about its last 1000 events
  (``event_log_len``, a constructor argument of both: the service keeps its own complete log
  in the game's data and asks for a short one, as a wake-up for watchers), and at least the
  last 1000 recorded replies of a game stay answerable.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

# The longest request fingerprint ``compare_and_set`` records: Redis keeps a record as the
# fingerprint's length in one byte, the fingerprint and the reply, and both backends refuse alike.
MAX_FINGERPRINT = 255


class StoreError(Exception):
    """Base of the store's errors."""


class StoreUnavailable(StoreError):
    """The backend cannot be reached (connection refused, timeout). Maps to UNAVAILABLE."""


class GameNotFound(StoreError):
    """No game with that id (never created, deleted, or expired)."""


class GameExists(StoreError):
    """``create`` with an id that is taken."""


class StoreFull(StoreError):
    """``create`` refused: the store is at its cap and holds no game it may evict (the memory
    store evicts only games untouched for its idle time). ``retry_after``: seconds until the
    least recently used game has been idle that long, unless it is used again first. Maps to
    RESOURCE_EXHAUSTED."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class VersionConflict(StoreError):
    """The game moved on: ``expected`` was stale. ``current`` is the stored version."""

    def __init__(self, game_id: str, expected: int, current: int) -> None:
        super().__init__(f"game {game_id}: expected version {expected}, current is {current}")
        self.game_id, self.expected, self.current = game_id, expected, current


@dataclass(frozen=True)
class GameRecord:
    game_id: str
    version: int
    token_hash: bytes  # e.g. sha256 of the game token; the token itself is never stored
    data: bytes  # the game, encoded by the API layer


@dataclass(frozen=True)
class StoredReply:
    """The first reply to a request id, and a fingerprint of the request it answered."""

    fingerprint: bytes
    reply: bytes


@dataclass(frozen=True)
class WatchEvent:
    game_id: str
    version: int
    payload: bytes  # encoded by the API layer


class GameStore(abc.ABC):
    """An async store of game sessions."""

    #: True when the store answers within this process without I/O (the memory store): its
    #: calls cannot hang, so a caller needs no timeout around them.
    in_process: bool = False

    @abc.abstractmethod
    async def create(self, record: GameRecord, *, ttl: float) -> None:
        """Store a new game at ``record.version``. Raises ``GameExists``."""

    @abc.abstractmethod
    async def load(self, game_id: str, *, credential: bytes = b"") -> GameRecord:
        """The stored game. Raises ``GameNotFound``. With a ``credential`` (a presented token's
        hash), also when the game's token hash does not hold it (``credentials.holds``), after
        the same work and with the same answer as for an unknown id: a wrong token must not
        tell that the game exists (issue 28)."""

    @abc.abstractmethod
    async def compare_and_set(
        self,
        game_id: str,
        expected_version: int,
        data: bytes,
        *,
        ttl: float,
        event: bytes,
        request_id: str = "",
        fingerprint: bytes = b"",
        reply: bytes = b"",
    ) -> StoredReply | None:
        """Atomically replace the game's data if its version is ``expected_version``.

        On success the version becomes ``expected_version + 1``, ``event`` is appended
        to the game's event log for watchers, the reply is recorded under
        ``request_id`` (when given), every key's TTL is refreshed, and None is returned.
        If ``request_id`` already has a recorded reply, that ``StoredReply`` is returned
        and nothing changes (the caller compares fingerprints). The request id is checked
        before the version, so a retry of a request that succeeded gets its reply even
        after the game moved on.

        ``StoreUnavailable`` means the outcome is unknown (the write may have landed);
        a retry with the same ``request_id`` finds out safely.

        Raises:
            GameNotFound, VersionConflict, StoreUnavailable; ValueError for a fingerprint
            longer than ``MAX_FINGERPRINT`` bytes (before anything is read or written).
        """

    @abc.abstractmethod
    async def get_reply(self, game_id: str, request_id: str) -> StoredReply | None:
        """The recorded reply to ``request_id`` on this game, if any."""

    @abc.abstractmethod
    async def claim_request(
        self, key: str, fingerprint: bytes, reply: bytes, *, ttl: float
    ) -> StoredReply | None:
        """Record a reply under a request key not tied to an existing game (NewGame).

        Returns None if this call recorded it, or the reply recorded earlier.
        """

    @abc.abstractmethod
    async def replace_token_hash(self, game_id: str, expected: bytes, token_hash: bytes) -> bool:
        """Replace the game's token hash (its access record: a rotated watch token) if it is
        still ``expected``; the version, data and TTL stay as they are. Returns False if the
        stored hash is another (someone replaced it first). Raises ``GameNotFound``."""

    @abc.abstractmethod
    async def put_named(self, name: str, value: bytes, *, ttl: float) -> bool:
        """Store ``value`` under ``name`` for ``ttl`` seconds, unless the name is taken (then
        False, nothing changes). A record of its own, tied to no game (deal codes)."""

    @abc.abstractmethod
    async def get_named(self, name: str) -> bytes | None:
        """The value ``put_named`` stored under ``name``, or None (never stored, or expired)."""

    @abc.abstractmethod
    async def pool_add(self, pool: str, items: Sequence[bytes], *, cap: int) -> int:
        """Add ``items`` to the pool named ``pool`` (a set: an item already there is not added
        twice), while it holds fewer than ``cap``; atomically. Returns the pool's size after."""

    @abc.abstractmethod
    async def pool_pop(self, pool: str) -> bytes | None:
        """Remove one item of the pool, chosen at random, and return it (None: the pool is empty).
        Atomic: an item is popped by one caller only, across every process of the store."""

    @abc.abstractmethod
    async def pool_size(self, pool: str) -> int:
        """How many items the pool holds (0: none, or never filled)."""

    @abc.abstractmethod
    async def delete(self, game_id: str) -> None:
        """Remove a game and all its keys (no error if absent)."""

    @abc.abstractmethod
    def watch(self, game_id: str, after_version: int) -> AsyncIterator[WatchEvent]:
        """Events with version > ``after_version``, oldest first, then new ones as they are written.

        Works across processes for the Redis backend. Ends (StopAsyncIteration) when the
        game is deleted or expires (Redis notices within about a second), at once if the
        game does not exist, and when the store is closed; raises ``StoreUnavailable`` if
        the backend goes away.
        """

    @abc.abstractmethod
    async def ping(self) -> None:
        """Raise ``StoreUnavailable`` unless the backend answers."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Release connections and end every watch. Do not use the store afterwards."""
