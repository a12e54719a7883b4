"""The embedded store: everything in one process's memory, for one event loop.

Why it is safe without locks: every method runs to completion without awaiting, so on
one event loop no two calls interleave; the check-and-write of ``compare_and_set`` is
atomic for free. Watchers are the only coroutines that wait.

Expiry follows a monotonic ``clock`` (injectable, so tests move time by hand): a game
whose deadline has passed is treated as absent on every access and purged lazily, plus
an occasional sweep so abandoned games do not pile up.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from .base import (
    GameExists,
    GameNotFound,
    GameRecord,
    GameStore,
    StoredReply,
    StoreUnavailable,
    VersionConflict,
    WatchEvent,
)

# Same bounds as the Redis backend, so both behave alike: the event log keeps about the
# last EVENT_LOG_LEN events; at least the last REPLIES_KEPT replies of a game are kept.
EVENT_LOG_LEN = 1000
REPLIES_KEPT = 1000


@dataclass
class _Game:
    record: GameRecord
    deadline: float
    events: deque[tuple[int, bytes]] = field(default_factory=deque)  # (version, payload)
    # request id → (fingerprint, reply): plain tuples of bytes, which the garbage collector
    # stops tracking (a dataclass per record kept full collections long with many games).
    replies: OrderedDict[str, tuple[bytes, bytes]] = field(default_factory=OrderedDict)
    watchers: int = 0
    # Made by a watcher that waits; set (and dropped) on the next write and on removal: each
    # watcher waits on the one it saw. None while nobody waits (no Event per game or per write).
    changed: asyncio.Event | None = None

    def notify(self) -> None:
        if self.changed is not None:
            self.changed.set()
            self.changed = None

    def waiter(self) -> asyncio.Event:
        if self.changed is None:
            self.changed = asyncio.Event()
        return self.changed


class MemoryStore(GameStore):
    """A ``GameStore`` in a dict. Not shared between processes; ``watch`` sees this process only.

    Args:
        clock: monotonic seconds; ``time.monotonic`` unless a test injects its own.
        poll_interval: how often (real seconds) an idle watcher rechecks expiry and close.
        event_log_len: events kept per game for ``watch`` (see ``GameStore``).
        watched_only: keep events only while someone watches the game (as ``RedisStore``'s
            option: ``watch`` then sees the events from when it began).
    """

    calls_wait = False  # every method but watch runs to completion without awaiting

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        poll_interval: float = 0.5,
        event_log_len: int = EVENT_LOG_LEN,
        watched_only: bool = False,
    ) -> None:
        if event_log_len < 1:
            raise ValueError(f"event_log_len must be at least 1, not {event_log_len!r}")
        self._event_log_len = event_log_len
        self._watched_only = watched_only
        self._clock = clock
        self._poll = poll_interval
        self._games: dict[str, _Game] = {}
        self._claims: dict[str, tuple[StoredReply, float]] = {}
        self._next_sweep = clock()
        self._closed = False

    # --- internals

    def _live(self, game_id: str) -> _Game | None:
        """The game if present and not expired; an expired one is dropped (and its watchers woken)."""
        game = self._games.get(game_id)
        if game is not None and game.deadline <= self._clock():
            self._remove(game_id)
            return None
        return game

    def _remove(self, game_id: str) -> None:
        game = self._games.pop(game_id, None)
        if game is not None:
            game.notify()

    def _sweep(self) -> None:
        """Drop expired games and claims, at most once per second of clock time (amortized O(1))."""
        now = self._clock()
        if now < self._next_sweep:
            return
        self._next_sweep = now + 1.0
        for gid in [g for g, game in self._games.items() if game.deadline <= now]:
            self._remove(gid)
        for key in [k for k, (_, deadline) in self._claims.items() if deadline <= now]:
            del self._claims[key]

    def _check_open(self) -> None:
        if self._closed:
            raise StoreUnavailable("memory store is closed")

    # --- the verbs

    async def create(self, record: GameRecord, *, ttl: float) -> None:
        self._check_open()
        self._sweep()
        if self._live(record.game_id) is not None:
            raise GameExists(record.game_id)
        self._games[record.game_id] = _Game(record, self._clock() + ttl, deque(maxlen=self._event_log_len))

    async def load(self, game_id: str) -> GameRecord:
        self._check_open()
        game = self._live(game_id)
        if game is None:
            raise GameNotFound(game_id)
        return game.record

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
        self._check_open()
        game = self._live(game_id)
        if game is None:
            raise GameNotFound(game_id)
        # Same order as the Redis script: a known request id wins over the version check,
        # so a retry of a request that did succeed gets its reply, not a conflict.
        if request_id and (stored := game.replies.get(request_id)) is not None:
            return StoredReply(*stored)
        current = game.record.version
        if current != expected_version:
            raise VersionConflict(game_id, expected_version, current)
        version = current + 1
        game.record = GameRecord(game_id, version, game.record.token_hash, data)
        game.deadline = self._clock() + ttl
        if game.watchers or not self._watched_only:
            game.events.append((version, event))
        if request_id:
            game.replies[request_id] = (fingerprint, reply)
            if len(game.replies) > REPLIES_KEPT:
                game.replies.popitem(last=False)
        game.notify()
        return None

    async def get_reply(self, game_id: str, request_id: str) -> StoredReply | None:
        self._check_open()
        game = self._live(game_id)
        stored = None if game is None else game.replies.get(request_id)
        return None if stored is None else StoredReply(*stored)

    async def claim_request(self, key: str, fingerprint: bytes, reply: bytes, *, ttl: float) -> StoredReply | None:
        self._check_open()
        self._sweep()
        now = self._clock()
        held = self._claims.get(key)
        if held is not None and held[1] > now:
            return held[0]
        self._claims[key] = (StoredReply(fingerprint, reply), now + ttl)
        return None

    async def delete(self, game_id: str) -> None:
        self._check_open()
        self._remove(game_id)

    def watch(self, game_id: str, after_version: int) -> AsyncIterator[WatchEvent]:
        return self._watch(game_id, after_version)

    async def _watch(self, game_id: str, after_version: int) -> AsyncIterator[WatchEvent]:
        self._check_open()
        last = after_version
        first = self._games.get(game_id)
        if first is not None:
            first.watchers += 1
        try:
            while not self._closed:
                game = self._live(game_id)
                # `is not first`: a game deleted and created again under the same id is another game.
                if game is None or game is not first:
                    return
                pending = [(v, p) for v, p in game.events if v > last]
                if pending:
                    for version, payload in pending:
                        yield WatchEvent(game_id, version, payload)
                        last = version
                    continue  # the consumer may have let writes happen while we were suspended
                changed = game.waiter()
                try:
                    await asyncio.wait_for(changed.wait(), timeout=self._poll)
                except TimeoutError:
                    pass  # recheck expiry and close
        finally:
            if first is not None:
                first.watchers -= 1

    async def ping(self) -> None:
        self._check_open()

    async def close(self) -> None:
        """Ends every watch; further calls raise ``StoreUnavailable``."""
        self._closed = True
        for game in self._games.values():
            game.notify()
