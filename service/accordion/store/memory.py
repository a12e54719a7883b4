"""The embedded store: everything in one process's memory, for one event loop.

Why it is safe without locks: every method runs to completion without awaiting, so on
one event loop no two calls interleave; the check-and-write of ``compare_and_set`` is
atomic for free. Watchers are the only coroutines that wait.

Bounded two ways (docs/redis.md, "The embedded memory store"):

* **Expiry frees.** Expiry follows a monotonic ``clock`` (injectable, so tests move time by
  hand). An expired game is absent on every access, and it is *removed* (its record, events,
  replies; an expired NewGame claim too) by a sweep that every call makes: a heap of
  deadlines, soonest first, so a sweep costs a peek when nothing is due. ``ping`` sweeps too,
  and the server pings every second for its health, so an idle server frees expired games.
* **A cap on games** (``max_games``): creating a game when the store is full first drops the
  expired ones, then evicts the *least recently used* game (the one loaded or written
  longest ago) with everything it holds; its watchers end as for a deleted game. Only a game
  untouched (neither loaded nor written) for ``evict_idle`` seconds may be evicted: NewGame
  needs no credential, so a flood of new games must not push out the games people are
  playing (issue 28). When even the least recently used game was touched within that time,
  ``create`` raises ``StoreFull`` (RESOURCE_EXHAUSTED ``STORE_FULL``) and nothing is dropped.
  With a 24 h TTL most stored games are finished or abandoned, so at the cap there is almost
  always a stale one to drop. NewGame claims (``claim_request``) are capped by the same
  number, oldest dropped (they are only idempotency records).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass

from .base import (
    MAX_FINGERPRINT,
    GameExists,
    GameNotFound,
    GameRecord,
    GameStore,
    StoredReply,
    StoreUnavailable,
    VersionConflict,
    WatchEvent,
)
from .credentials import NO_ACCESS, holds
from .expiring import ExpiringTable
from .memory_pools import MemoryPools

# Same bounds as the Redis backend, so both behave alike: the event log keeps about the
# last EVENT_LOG_LEN events; at least the last REPLIES_KEPT replies of a game are kept.
EVENT_LOG_LEN = 1000
REPLIES_KEPT = 1000
# Games kept at most unless the URL says otherwise (memory://?max_games=N): at the ~2.5 KB a
# served game takes, about 250 MB.
DEFAULT_MAX_GAMES = 100_000
# Seconds a game must go untouched (not loaded, not written) before the cap may evict it: a
# player thinking over a move for a few minutes keeps the game (``--evict-idle``).
DEFAULT_EVICT_IDLE = 300.0


@dataclass(eq=False)
class _Game:
    record: GameRecord
    deadline: float
    # Both made at the first write that needs them (None until then): a game dealt and not yet
    # moved holds neither (one moved without request ids, no reply table), two fewer objects for the garbage
    # collector's full passes to walk per game (a NewGame's share of them: bench/handler.py --gc)
    # and ~890 bytes fewer a game (tracemalloc: 1,388 → 500 bytes a dealt game with a 200-byte blob;
    # an empty deque alone takes 760).
    events: deque[tuple[int, bytes]] | None = None  # (version, payload), the last event_log_len
    # request id → (fingerprint, reply): plain tuples of bytes, which the garbage collector
    # stops tracking (a dataclass per record kept full collections long with many games).
    replies: OrderedDict[str, tuple[bytes, bytes]] | None = None
    watchers: int = 0
    serial: int = 0  # set by ExpiringTable.add: which item of its heap is this entry's
    touched: float = 0.0  # the clock when it was last added, loaded or written (set by ExpiringTable)
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


@dataclass(eq=False)
class _Named:
    value: bytes
    deadline: float
    serial: int = 0
    touched: float = 0.0


@dataclass(eq=False)
class _Claim:
    reply: StoredReply
    deadline: float
    serial: int = 0
    touched: float = 0.0


@dataclass(frozen=True)
class MemoryStats:
    """What the memory store holds (for metrics): ``games`` and ``claims`` now, ``expired`` and
    ``evicted`` games since it was made, and its cap (None: unbounded)."""

    games: int
    claims: int
    expired: int
    evicted: int
    max_games: int | None


class MemoryStore(GameStore):
    """A ``GameStore`` in a dict. Not shared between processes; ``watch`` sees this process only.

    Args:
        clock: monotonic seconds; ``time.monotonic`` unless a test injects its own.
        poll_interval: how often (real seconds) an idle watcher rechecks expiry and close.
        event_log_len: events kept per game for ``watch`` (see ``GameStore``).
        watched_only: keep events only while someone watches the game (as ``RedisStore``'s
            option: ``watch`` then sees the events from when it began).
        max_games: games kept at most (and NewGame claims); creating one more evicts the least
            recently used game. None: no cap.
        evict_idle: seconds a game must go unloaded and unwritten before the cap may evict it;
            when the least recently used game is more recent, ``create`` raises ``StoreFull``.
            0: evict the least recently used game however recent.
    """

    in_process = True

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        poll_interval: float = 0.5,
        event_log_len: int = EVENT_LOG_LEN,
        watched_only: bool = False,
        max_games: int | None = DEFAULT_MAX_GAMES,
        evict_idle: float = DEFAULT_EVICT_IDLE,
    ) -> None:
        if event_log_len < 1:
            raise ValueError(f"event_log_len must be at least 1, not {event_log_len!r}")
        if max_games is not None and max_games < 1:
            raise ValueError(f"max_games must be at least 1, not {max_games!r}")
        if not evict_idle >= 0:
            raise ValueError(f"evict_idle must be >= 0, not {evict_idle!r}")
        self._event_log_len = event_log_len
        self._watched_only = watched_only
        self._max_games = max_games
        self._clock = clock
        self._poll = poll_interval
        self._table: ExpiringTable[_Game] = ExpiringTable(max_games, clock, _Game.notify, evict_idle)
        self._claims: ExpiringTable[_Claim] = ExpiringTable(max_games, clock, lambda claim: None)
        # Named records (deal codes): capped by the same number, least recently used dropped.
        self._named: ExpiringTable[_Named] = ExpiringTable(max_games, clock, lambda named: None)
        # Pools of deals proven winnable (memory_pools.py): this process's only, no TTL.
        self._pools = MemoryPools()
        self._closed = False

    @property
    def _games(self) -> OrderedDict[str, _Game]:
        """The games held, least recently used first (for white-box tests)."""
        return self._table.entries

    @property
    def games(self) -> int:
        """How many games the store holds now (expired ones are gone within a call or a ping)."""
        return len(self._table)

    def stats(self) -> MemoryStats:
        return MemoryStats(
            len(self._table), len(self._claims), self._table.expired, self._table.evicted, self._max_games
        )

    def _check_open(self) -> None:
        if self._closed:
            raise StoreUnavailable("memory store is closed")

    def _live(self, game_id: str) -> _Game | None:
        return self._table.get(game_id)

    # --- the verbs

    async def create(self, record: GameRecord, *, ttl: float) -> None:
        """Raises ``GameExists``, or ``StoreFull`` at the cap with no game idle enough to evict."""
        self._check_open()
        if self._table.get(record.game_id) is not None:
            raise GameExists(record.game_id)
        self._table.add(record.game_id, _Game(record, self._clock() + ttl))

    async def load(self, game_id: str, *, credential: bytes = b"") -> GameRecord:
        self._check_open()
        now = self._table.sweep()
        game = self._table.get(game_id, now)
        # A wrong credential: as an unknown id, after the same compares (and not a use of the game).
        held = not credential or holds(game.record.token_hash if game is not None else NO_ACCESS, credential)
        if game is None or not held:
            raise GameNotFound(game_id)
        self._table.use(game_id, game, now)
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
        if len(fingerprint) > MAX_FINGERPRINT:
            raise ValueError(f"a fingerprint is at most {MAX_FINGERPRINT} bytes")
        now = self._table.sweep()
        game = self._table.get(game_id, now)
        if game is None:
            raise GameNotFound(game_id)
        # Same order as the Redis script: a known request id wins over the version check,
        # so a retry of a request that did succeed gets its reply, not a conflict.
        replies = game.replies
        if request_id and replies is not None and (stored := replies.get(request_id)) is not None:
            return StoredReply(*stored)
        current = game.record.version
        if current != expected_version:
            raise VersionConflict(game_id, expected_version, current)
        version = current + 1
        game.record = GameRecord(game_id, version, game.record.token_hash, data)
        game.deadline = now + ttl
        self._table.use(game_id, game, now)
        if game.watchers or not self._watched_only:
            if game.events is None:
                game.events = deque(maxlen=self._event_log_len)
            game.events.append((version, event))
        if request_id:
            if replies is None:
                replies = game.replies = OrderedDict()
            replies[request_id] = (fingerprint, reply)
            if len(replies) > REPLIES_KEPT:
                replies.popitem(last=False)
        game.notify()
        return None

    async def get_reply(self, game_id: str, request_id: str) -> StoredReply | None:
        self._check_open()
        game = self._table.get(game_id)
        stored = None if game is None or game.replies is None else game.replies.get(request_id)
        return None if stored is None else StoredReply(*stored)

    async def claim_request(
        self, key: str, fingerprint: bytes, reply: bytes, *, ttl: float
    ) -> StoredReply | None:
        self._check_open()
        self._claims.sweep()
        held = self._claims.get(key)
        if held is not None:
            return held.reply
        self._claims.add(key, _Claim(StoredReply(fingerprint, reply), self._clock() + ttl))
        return None

    async def replace_token_hash(self, game_id: str, expected: bytes, token_hash: bytes) -> bool:
        self._check_open()
        game = self._table.get(game_id)
        if game is None:
            raise GameNotFound(game_id)
        record = game.record
        if record.token_hash != expected:
            return False
        game.record = GameRecord(game_id, record.version, token_hash, record.data)
        return True

    async def put_named(self, name: str, value: bytes, *, ttl: float) -> bool:
        self._check_open()
        self._named.sweep()
        if self._named.get(name) is not None:
            return False
        self._named.add(name, _Named(value, self._clock() + ttl))
        return True

    async def get_named(self, name: str) -> bytes | None:
        self._check_open()
        named = self._named.get(name)
        if named is None:
            return None
        self._named.use(name, named, self._clock())
        return named.value

    async def pool_add(self, pool: str, items: Sequence[bytes], *, cap: int) -> int:
        self._check_open()
        return self._pools.add(pool, items, cap)

    async def pool_pop(self, pool: str) -> bytes | None:
        self._check_open()
        return self._pools.pop(pool)

    async def pool_size(self, pool: str) -> int:
        self._check_open()
        return self._pools.size(pool)

    async def delete(self, game_id: str) -> None:
        self._check_open()
        self._table.remove(game_id)

    def watch(self, game_id: str, after_version: int) -> AsyncIterator[WatchEvent]:
        return self._watch(game_id, after_version)

    async def _watch(self, game_id: str, after_version: int) -> AsyncIterator[WatchEvent]:
        self._check_open()
        last = after_version
        first = self._table.entries.get(game_id)
        if first is not None:
            first.watchers += 1
        try:
            while not self._closed:
                game = self._table.get(game_id)
                # `is not first`: a game deleted (or evicted) and created again under the same id
                # is another game.
                if game is None or game is not first:
                    return
                pending = [(v, p) for v, p in game.events or () if v > last]
                if pending:
                    for version, payload in pending:
                        yield WatchEvent(game_id, version, payload)
                        last = version
                    continue  # the consumer may have let writes happen while we were suspended
                changed = game.waiter()
                # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a
                # cancellation that comes as the wait ends (CPython gh-86296), and the watcher,
                # its client gone, would poll on for ever.
                try:
                    async with asyncio.timeout(self._poll):
                        await changed.wait()
                except TimeoutError:
                    pass  # recheck expiry and close
        finally:
            if first is not None:
                first.watchers -= 1

    async def ping(self) -> None:
        """Also frees what has expired: the server's health loop pings every second."""
        self._check_open()
        self._table.sweep()
        self._claims.sweep()
        self._named.sweep()

    async def close(self) -> None:
        """Ends every watch; further calls raise ``StoreUnavailable``."""
        self._closed = True
        for game in self._table.entries.values():
            game.notify()
