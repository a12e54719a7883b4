"""The application flow: create, open (load + authorize), move and undo, idempotent replay, watch.

Every mutation takes one path (``_mutate``): take the cached game or load it → authorize →
check the expected version → the engine applies → ``compare_and_set`` (new data, event and
idempotency record together; the store checks the request id first, then the version). The
result is returned only once the store accepted it; it is persisted as the version it made
(the game's stored log rebuilds the reply), so a retry with the same request id gets exactly
it. The hot path is one store call: a move on a cached game goes straight to the
compare-and-set (see ``cache``).

No gRPC here: a call gives a token and a deadline (``time.monotonic()`` seconds, or None),
and gets results or this package's exceptions (``errors``), or the engine's.
"""

from __future__ import annotations

import asyncio
import hmac
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import redis.exceptions
from mypy_extensions import mypyc_attr

from accordion import engine
from accordion import store as st
from accordion.engine import Game
from accordion.engine.core import Status
from accordion.engine.moves import Move

from . import replies, tokens
from .binary import UNDO, Event
from .cache import Cached, GameCache
from .errors import (
    BadToken,
    DeadlineExceeded,
    GameCorrupt,
    GameNotFound,
    MoveRefused,
    RequestIdReused,
    StoreUnavailable,
    VersionMismatch,
)
from .follow import WatchItem
from .record import Stored, load_stored

FIRST_VERSION = 1
MAX_ATTEMPTS = 3  # a mutation without expected_version is retried this often on a lost race
T = TypeVar("T")
# What is left of a connection problem below the store's own mapping: all StoreUnavailable.
_UNREACHABLE = (st.StoreUnavailable, OSError, redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
ChooseMove = Callable[[Game], Move]  # the move a request names, in the game as it is now


# The metrics' implementation (api/metrics.py, interpreted) subclasses it.
@mypyc_attr(allow_interpreted_subclasses=True)
class Observer:
    """What the flow tells of itself, for metrics (``accordion.api.metrics.SessionMetrics``
    records it in Prometheus; this one ignores it). Called on the hot path, once per game dealt,
    per move or undo the store accepted (never for a retry's replayed answer) and per store
    call: an implementation must be cheap and must not raise."""

    def dealt(self, variant: str) -> None:
        """A new game of ``variant`` is stored (not the first game given back to a retry)."""

    def moved(self, variant: str, undo: bool, before: Status, after: Status) -> None:
        """A move (or an undo) was stored; the game's status before and after it."""

    def store_call(self, operation: str, seconds: float) -> None:
        """One call to a store out of this process (Redis) took ``seconds``, whatever its outcome.
        (Not called for a store that answers in this process: timing it would cost more than it does.)"""

    def store_failed(self, operation: str, kind: str) -> None:
        """One store call ended without a result: ``kind`` is one of ``STORE_FAILURES``."""


# The kinds of ``Observer.store_failed``: the store's own answers (no such game, a version
# conflict, an id that exists) and its failures to answer (a connection problem, our
# --store-timeout, the request's deadline), and anything else.
STORE_FAILURES = ("not_found", "conflict", "exists", "unavailable", "timeout", "deadline", "other")


@dataclass(slots=True)  # (not frozen: made on every call, and a frozen init costs more)
class Opened:
    """A game opened for reading, at ``version``. With ``shared`` it may be the cached game:
    use it before the caller's next await."""

    game_id: str
    version: int
    game: Game


@dataclass(slots=True)  # (not frozen: made on every call, and a frozen init costs more)
class Played:
    """A move or an undo that the store accepted (or its first answer, for a retry): the move
    played or taken back, its notation in the position it was played from, and the game after it
    at ``version``. ``game`` may be the cached one: use it before the caller's next await."""

    game_id: str
    version: int
    move: Move
    notation: str
    game: Game


@dataclass(frozen=True, slots=True)
class RecordedReply:
    """The first answer to a request id as an earlier version recorded it: a serialized reply."""

    reply: bytes


@dataclass(frozen=True, slots=True)
class Dealt:
    """A new game (or, for a retry, the first game of its request id, as dealt)."""

    game_id: str
    token: str
    game: Game
    seeds_tried: int


@dataclass(frozen=True, slots=True)
class RecordedNewGame:
    """The first NewGame answer to a request id as an earlier version recorded it: the
    serialized reply without its token, and the token."""

    reply: bytes
    token: str


class Sessions:
    """Games kept in ``store``. ``game_ttl``: idle seconds before a game expires;
    ``store_timeout``: the longest one store call may take; ``on_store_error(operation)`` is
    called for each store call that failed or timed out (for metrics); ``observer`` is told of
    games dealt, moves, undos and store calls (for metrics)."""

    def __init__(
        self,
        store: st.GameStore,
        *,
        game_ttl: float,
        store_timeout: float = 2.0,
        on_store_error: Callable[[str], None] = lambda operation: None,
        cache: GameCache | None = None,
        observer: Observer | None = None,
    ) -> None:
        self.store, self.game_ttl, self.store_timeout = store, game_ttl, store_timeout
        self.on_store_error = on_store_error
        self.observer = observer if observer is not None else Observer()
        self.cache = cache if cache is not None else GameCache()

    # --- reads ---------------------------------------------------------------------------
    async def open(self, game_id: str, token: str, deadline: float | None, *, shared: bool = False) -> Opened:
        """Load, authorize, decode. Raises GameNotFound (also for a wrong token), GameCorrupt,
        StoreUnavailable, DeadlineExceeded."""
        record = await self._authorized(game_id, token, deadline)
        if shared and (stored := self.cache.peek(game_id, record.version)) is not None:
            return Opened(game_id, record.version, stored.game)
        return Opened(game_id, record.version, load_stored(game_id, record.data, record.version).game)

    def watch(self, game_id: str, token: str, after_version: int, deadline: float | None) -> AsyncIterator[WatchItem]:
        """The stored log first (events after ``after_version``), then the store's event stream
        (``watching.watch``: an async generator, which mypyc does not compile, so it lives in an
        interpreted module of its own)."""
        from .watching import watch  # (imports this module)

        return watch(self, game_id, token, after_version, deadline)

    # --- NewGame -----------------------------------------------------------------------------
    async def deal(
        self,
        game: Game,
        deadline: float | None,
        *,
        seeds_tried: int = 0,
        request_id: str = "",
        fingerprint: bytes = b"",
        caller: str = "",
    ) -> Dealt | RecordedNewGame:
        """Store a new game under a fresh id and token. With a request id, a retry (same id, same
        ``fingerprint``, same ``caller``) gets the first game and token; the same id for another
        request is RequestIdReused; under another caller it is another id."""
        token = tokens.new_token()
        stored = Stored.new(game, FIRST_VERSION)
        token_hash = tokens.hash_token(token)
        game_id = await self._create(stored.dump(), token_hash, deadline)
        if request_id:
            record = replies.new_game_record(tokens.seal_token(token, request_id), seeds_tried, game_id)
            key = tokens.new_game_key(request_id, caller)
            claim = self.store.claim_request
            prior = await self._call("claim_request", "", deadline, claim, key, fingerprint, record, ttl=self.game_ttl)
            if prior is not None:  # a retry, or a lost race: the first game stands and ours goes
                await self._call("delete", game_id, deadline, self.store.delete, game_id)
                if not hmac.compare_digest(prior.fingerprint, fingerprint):
                    raise RequestIdReused()
                return await self._first_deal(prior.reply, request_id, deadline)
        # The first move will find it decoded (cached only now: no await until the caller reads ``game``).
        self.cache.put(game_id, Cached(FIRST_VERSION, token_hash, stored))
        self.observer.dealt(game.variant.id)
        return Dealt(game_id, token, game, seeds_tried)

    async def _create(self, data: bytes, token_hash: bytes, deadline: float | None) -> str:
        for attempt in range(MAX_ATTEMPTS):
            game_id = tokens.new_game_id()
            record = st.GameRecord(game_id, FIRST_VERSION, token_hash, data)
            try:
                await self._call("create", game_id, deadline, self.store.create, record, ttl=self.game_ttl)
                return game_id
            except st.GameExists:  # 128 random bits collided: draw again
                if attempt == MAX_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def _first_deal(self, blob: bytes, request_id: str, deadline: float | None) -> Dealt | RecordedNewGame:
        """The first NewGame answer for a request id, from its record."""
        record = replies.read_new_game_record(blob)
        token = tokens.open_token(record.sealed_token, request_id)
        if isinstance(record, replies.LegacyNewGameRecord):
            return RecordedNewGame(record.reply, token)
        game_id = record.game_id
        stored = await self._call("load", game_id, deadline, self.store.load, game_id)
        first = load_stored(game_id, stored.data, stored.version).first_game()
        return Dealt(game_id, token, first, record.seeds_tried)

    # --- moves -------------------------------------------------------------------------------
    async def play(
        self,
        game_id: str,
        token: str,
        choose: ChooseMove,
        deadline: float | None,
        *,
        expected: int | None = None,
        request_id: str = "",
        fingerprint: bytes = b"",
    ) -> Played | RecordedReply:
        """Play the move ``choose`` picks in the game as it is (it must not change the game).

        Raises MoveRefused (the engine's refusal, with the legal moves), VersionMismatch,
        RequestIdReused, GameNotFound, StoreUnavailable, DeadlineExceeded, GameCorrupt, or
        whatever ``choose`` raises; nothing changes then."""

        def step(stored: Stored, version: int) -> tuple[Move, str, Event]:
            game = stored.game
            try:
                move = choose(game)
            except (engine.InvalidMoveError, engine.IllegalMoveError) as exc:
                refused = MoveRefused(exc, version, game.legal_moves(), game.legal_texts())
                raise _Unchanged(refused) from None
            except Exception as failed:  # choosers only read: the game is as it was
                raise _Unchanged(failed) from None
            text = game.move_text(move)  # read in the position before the move
            stored.play(move)
            return move, text, move

        return await self._mutate(game_id, token, step, deadline, expected, request_id, fingerprint)

    async def undo(
        self,
        game_id: str,
        token: str,
        deadline: float | None,
        *,
        expected: int | None = None,
        request_id: str = "",
        fingerprint: bytes = b"",
    ) -> Played | RecordedReply:
        """Take back the last move. Raises as ``play`` does, and the engine's NothingToUndoError."""

        def step(stored: Stored, version: int) -> tuple[Move, str, Event]:
            try:
                move = stored.undo()
            except engine.NothingToUndoError as nothing:
                raise _Unchanged(nothing) from None
            return move, stored.game.move_text(move), UNDO

        return await self._mutate(game_id, token, step, deadline, expected, request_id, fingerprint)

    async def _mutate(
        self,
        game_id: str,
        token: str,
        step: Callable[[Stored, int], tuple[Move, str, Event]],
        deadline: float | None,
        expected: int | None,
        request_id: str,
        fingerprint: bytes,
    ) -> Played | RecordedReply:
        key = tokens.move_request_key(request_id) if request_id else ""
        for attempt in range(MAX_ATTEMPTS):
            entry = self.cache.take(game_id)
            if entry is not None and (expected is None or expected == entry.version):
                if not tokens.token_matches(token, entry.token_hash):
                    self.cache.put(game_id, entry)
                    # Refused only after the store work an unknown id costs (a load), not from
                    # the cache at once: answered faster, a wrong token would tell by its
                    # latency that the game exists (issue 28; bench/oracle.py measures it).
                    await self._authorized(game_id, token, deadline)
                    raise BadToken(game_id)  # (the load found the same token hash)
            else:  # not cached, or a version the cache does not vouch for: ask the store
                record = await self._authorized(game_id, token, deadline)
                if expected is not None and expected != record.version:
                    # A retry of a request that succeeded gets its reply even though the game moved on.
                    if key and (prior := await self._get_reply(game_id, key, deadline)):
                        return await self._replay(game_id, prior, fingerprint, deadline)
                    raise VersionMismatch(game_id, expected, record.version)
                stored = load_stored(game_id, record.data, record.version)
                entry = Cached(record.version, record.token_hash, stored)
            version = entry.version
            # (The legal moves behind a status are the ones the last reply listed: cached.)
            before = entry.stored.game.status
            try:
                move, text, event = step(entry.stored, version)
            except _Unchanged as refused:
                # Refused before anything changed: the entry is still good. With a request id
                # this may be the retry of a move that was applied (and is now illegal). (Any
                # other exception is a bug: the entry may be half changed, so it stays out.)
                self.cache.put(game_id, entry)
                if key and (prior := await self._get_reply(game_id, key, deadline)):
                    return await self._replay(game_id, prior, fingerprint, deadline)
                raise refused.cause from None
            try:
                prior = await self._call(
                    "compare_and_set", game_id, deadline, self.store.compare_and_set,
                    game_id, version, entry.stored.dump(), ttl=self.game_ttl, event=replies.stream_event(event),
                    request_id=key, fingerprint=fingerprint, reply=replies.compact_reply(version + 1),
                )
            except VersionMismatch as exc:
                # Someone moved first (or the cache was stale). The store checked the request id
                # before the version, so this is no retry of a request that won.
                if expected is not None or attempt == MAX_ATTEMPTS - 1:
                    raise VersionMismatch(game_id, version, exc.current) from None
                continue  # no version was promised: replay the request on the new position
            if prior is not None:
                return await self._replay(game_id, prior, fingerprint, deadline)
            entry.version = version + 1
            self.cache.put(game_id, entry)
            game = entry.stored.game
            self.observer.moved(game.variant.id, event is UNDO, before, game.status)
            return Played(game_id, version + 1, move, text, game)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _get_reply(self, game_id: str, key: str, deadline: float | None) -> st.StoredReply | None:
        return await self._call("get_reply", game_id, deadline, self.store.get_reply, game_id, key)

    async def _replay(
        self, game_id: str, prior: st.StoredReply, fingerprint: bytes, deadline: float | None
    ) -> Played | RecordedReply:
        """The first answer to a request id: recorded whole (earlier versions), or as the version
        it made, rebuilt from the stored log (rare: only retries come here)."""
        if not hmac.compare_digest(prior.fingerprint, fingerprint):
            raise RequestIdReused()
        version = replies.compact_reply_version(prior.reply)
        if version is None:
            return RecordedReply(prior.reply)
        record = await self._call("load", game_id, deadline, self.store.load, game_id)
        stored = load_stored(game_id, record.data, record.version)
        if not stored.base < version <= stored.version:  # the log no longer reaches back there
            raise VersionMismatch(game_id, version - 1, record.version)
        for v, _event, move, text, game in stored.replay(version - 1):
            return Played(game_id, v, move, text, game)
        raise GameCorrupt(game_id)  # pragma: no cover (the log reaches ``version``)

    # --- the store ---------------------------------------------------------------------------
    async def _authorized(self, game_id: str, token: str, deadline: float | None) -> st.GameRecord:
        """The game's record, once ``token`` opens it. The presented token is hashed before the
        load, so an unknown id (the load raises) costs the same hashing as a wrong token."""
        presented = tokens.hash_token(token)
        record = await self._call("load", game_id, deadline, self.store.load, game_id)
        if not hmac.compare_digest(presented, record.token_hash):
            raise BadToken(game_id)
        return record

    async def _call(
        self, operation: str, game_id: str, deadline: float | None, fn: Callable[..., Awaitable[T]],
        *args: Any, **kwargs: Any,
    ) -> T:
        """One store call within the deadline and ``store_timeout``, its errors as this layer's:
        the store's GameNotFound and VersionConflict, a connection problem (StoreUnavailable),
        time out (DeadlineExceeded if the deadline was the nearer bound, else StoreUnavailable).
        A store answered within this process (``in_process``) is called without a timer."""
        by_deadline, started = False, 0.0
        try:
            if self.store.in_process:  # the memory store: nothing to wait for, no timer to arm
                return await fn(*args, **kwargs)
            budget = self.store_timeout
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self.observer.store_failed(operation, "deadline")
                    raise DeadlineExceeded(operation)
                budget, by_deadline = min(budget, remaining), remaining <= budget
            started = time.perf_counter()
            return await _within(budget, fn(*args, **kwargs))
        except st.GameNotFound:
            self.observer.store_failed(operation, "not_found")
            raise GameNotFound(game_id) from None
        except st.VersionConflict as exc:
            self.observer.store_failed(operation, "conflict")
            raise VersionMismatch(game_id, exc.expected, exc.current) from None
        except st.GameExists:
            self.observer.store_failed(operation, "exists")
            raise
        except TimeoutError as timeout:
            self.on_store_error(operation)
            self.observer.store_failed(operation, "deadline" if by_deadline else "timeout")
            if by_deadline:
                raise DeadlineExceeded(operation) from timeout
            raise StoreUnavailable(operation) from timeout
        except _UNREACHABLE as unreachable:
            self.on_store_error(operation)
            self.observer.store_failed(operation, "unavailable")
            raise StoreUnavailable(operation) from unreachable
        except DeadlineExceeded:
            raise  # ours, from above (counted there)
        except Exception:
            self.observer.store_failed(operation, "other")
            raise
        finally:
            if started:  # a call to a store that waits was made: its time, whatever came of it
                self.observer.store_call(operation, time.perf_counter() - started)


class _Expiry:
    """The timer of ``_within``: cancels ``task`` and remembers that it did."""

    def __init__(self, task: asyncio.Task[Any]) -> None:
        self.task = task
        self.fired = False

    def fire(self) -> None:
        self.fired = True
        self.task.cancel()


async def _within(seconds: float, call: Awaitable[T]) -> T:
    """``await call``, or TimeoutError once ``seconds`` have passed: what ``asyncio.timeout``
    does for one awaitable, with its rules for cancellation (the task is cancelled when the time
    is up; only that cancellation becomes TimeoutError, one from elsewhere, also at the same
    moment, goes out as CancelledError), without its state machine and context-manager protocol
    (~1.5 µs a store call on uvloop). ``tests/api/test_sessions.py`` holds it to that."""
    task = asyncio.current_task()
    if task is None:  # pragma: no cover (the server runs every call in a task)
        async with asyncio.timeout(seconds):
            return await call
    expiry = _Expiry(task)
    cancelling = task.cancelling()
    timer = asyncio.get_running_loop().call_later(seconds, expiry.fire)
    try:
        result = await call
    except BaseException as failed:
        timer.cancel()
        # As asyncio.timeout: once fired, its cancellation is taken back whatever the outcome.
        if expiry.fired and task.uncancel() <= cancelling and isinstance(failed, asyncio.CancelledError):
            raise TimeoutError() from failed
        raise
    timer.cancel()
    if expiry.fired:
        task.uncancel()
    return result


class _Unchanged(Exception):
    """A mutation's step failed before changing the game; ``cause`` is what to raise."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self.cause = cause
