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
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from mypy_extensions import mypyc_attr

from accordion import engine
from accordion import store as st
from accordion.engine import Game
from accordion.engine.core import Status, option_text
from accordion.engine.moves import Move

from . import replies, tokens
from .binary import UNDO, Event
from .cache import Cached, GameCache
from .errors import (
    BadToken,
    DeadlineExceeded,
    DealCodeNotFound,
    DealCodeOptions,
    GameCorrupt,
    GameNotFound,
    MoveRefused,
    RequestIdReused,
    StoreUnavailable,
    VersionMismatch,
    WatchOnly,
)
from .follow import WatchItem
from .record import Stored, decode_head, load_stored
from .watching import watch

FIRST_VERSION = 1
DEAL_CODE_TTL = 30 * 86400.0  # seconds a deal code answers (--deal-code-ttl)
_DEAL_CODE_FORMAT = b"\x01"  # a deal code's record: this byte, then the game's replay header
MAX_ATTEMPTS = 3  # a mutation without expected_version is retried this often on a lost race
T = TypeVar("T")
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
    """A new game (or, for a retry, the first game of its request id, as dealt), with its watch
    token and its deal code (shown with dashes; "" for a game that has none)."""

    game_id: str
    token: str
    game: Game
    seeds_tried: int
    watch_token: str = ""
    deal_code: str = ""


@dataclass(frozen=True, slots=True)
class Shared:
    """ShareGame's answer: the deal code (shown with dashes) and the current watch token."""

    deal_code: str
    watch_token: str


@dataclass(frozen=True, slots=True)
class CodedDeal:
    """What a deal code names: the variant, its option values, the seed and the explicit deal
    (None: dealt from the seed), and the code (canonical)."""

    variant: engine.Variant
    options: dict[str, Any]
    seed: int
    deal: tuple[int, ...] | None
    code: str

    def game(self, variant: str, options: dict[str, str]) -> tuple[Game, bool]:
        """The game the code deals, with ``options`` asked for over the code's, and whether it
        is the code's game exactly (then it keeps the code). Raises DealCodeOptions for a
        variant other than the code's, or an option other than the code's value (``open``
        would show what the code's deal hides; any other changes the game), except an ``undo``
        at least as strict; InvalidOptionError for an option the variant does not have."""
        if variant and engine.find_variant(variant).id != self.variant.id:
            raise DealCodeOptions(f"this deal code deals {self.variant.id}, not {variant}")
        asked = self.variant.resolve(options)
        values = dict(self.options)
        for name in sorted(options):
            value, coded = asked[name], self.options.get(name)
            if value == coded:
                continue
            if name == "undo" and engine.undo_is_stricter(value, str(coded)):
                values[name] = value
                continue
            raise DealCodeOptions(
                f"option {name}: a deal code deals its game with its own options "
                f"(here {name}={option_text(coded)}); only a stricter undo may be asked for"
            )
        game = engine.new_game(self.variant, values, seed=self.seed, deal=self.deal)
        return game, values == self.options


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
        deal_code_ttl: float = DEAL_CODE_TTL,
    ) -> None:
        self.store, self.game_ttl, self.store_timeout = store, game_ttl, store_timeout
        self.deal_code_ttl = deal_code_ttl
        self.on_store_error = on_store_error
        self.observer = observer if observer is not None else Observer()
        self.cache = cache if cache is not None else GameCache()

    # --- reads ---------------------------------------------------------------------------
    async def open(
        self, game_id: str, token: str, deadline: float | None, *, shared: bool = False, player: bool = False
    ) -> Opened:
        """Load, authorize, decode. Raises GameNotFound (also for a wrong token), GameCorrupt,
        StoreUnavailable, DeadlineExceeded; with ``player``, WatchOnly for the watch token."""
        record = await self.authorize(game_id, token, deadline, player=player)
        if shared and (stored := self.cache.peek(game_id, record.version)) is not None:
            return Opened(game_id, record.version, stored.game)
        return Opened(game_id, record.version, load_stored(game_id, record.data, record.version).game)

    def watch(
        self, game_id: str, token: str, after_version: int, deadline: float | None
    ) -> AsyncIterator[WatchItem]:
        """The stored log first (events after ``after_version``), then the store's event stream
        (``watching.watch``: an async generator, which mypyc does not compile, so it lives in an
        interpreted module of its own, and reads the game through ``watching.WatchSource``)."""
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
        deal_code: str = "",
    ) -> Dealt | RecordedNewGame:
        """Store a new game under a fresh id and token, with its watch token and a deal code
        (``deal_code``: the game is that code's game exactly, so it keeps it; else a new code).
        With a request id, a retry (same id, same ``fingerprint``, same ``caller``) gets the
        first game and token; the same id for another request is RequestIdReused; under another
        caller it is another id."""
        token = tokens.new_token()
        stored = Stored.new(game, FIRST_VERSION)
        # The code's record is written first: a game never names a code that does not answer
        # (if the game is not created after all, the code deals a game nobody played: harmless).
        code = deal_code or await self._new_deal_code(stored.head, deadline)
        access = tokens.Access.for_token(token, 0, code)
        token_hash = access.dump()
        game_id = await self._create(stored.dump(), token_hash, deadline)
        if request_id:
            record = replies.new_game_record(tokens.seal_token(token, request_id), seeds_tried, game_id)
            key = tokens.new_game_key(request_id, caller)
            claim = self.store.claim_request(key, fingerprint, record, ttl=self.game_ttl)
            prior = await self._timed("claim_request", "", deadline, claim)
            if prior is not None:  # a retry, or a lost race: the first game stands and ours goes
                await self._timed("delete", game_id, deadline, self.store.delete(game_id))
                if not hmac.compare_digest(prior.fingerprint, fingerprint):
                    raise RequestIdReused()
                return await self._first_deal(prior.reply, request_id, deadline)
        # The first move will find it decoded (cached only now: no await until the caller reads ``game``).
        self.cache.put(game_id, Cached(FIRST_VERSION, token_hash, stored))
        self.observer.dealt(game.variant.id)
        return Dealt(
            game_id, token, game, seeds_tried, tokens.watch_token(token, 0), tokens.show_deal_code(code)
        )

    async def _new_deal_code(self, head: bytes, deadline: float | None) -> str:
        """A fresh deal code, its record (the game's replay header) stored for ``deal_code_ttl``."""
        for _attempt in range(MAX_ATTEMPTS):
            code = tokens.new_deal_code()
            put = self.store.put_named(
                tokens.deal_code_key(code), _DEAL_CODE_FORMAT + head, ttl=self.deal_code_ttl
            )
            if await self._timed("put_named", "", deadline, put):
                return code
        raise StoreUnavailable("put_named")  # 80 random bits taken three times: not by chance

    async def find_deal(self, text: str, deadline: float | None) -> CodedDeal:
        """What a deal code (as a person typed it) deals. Raises DealCodeNotFound."""
        code = tokens.read_deal_code(text)
        if code is None:
            raise DealCodeNotFound()
        blob = await self._timed("get_named", "", deadline, self.store.get_named(tokens.deal_code_key(code)))
        if blob is None or blob[:1] != _DEAL_CODE_FORMAT:
            raise DealCodeNotFound()
        try:
            variant, rules, seed, deal = decode_head(blob[1:])
        except (ValueError, KeyError, IndexError) as exc:  # EngineError is a ValueError
            raise DealCodeNotFound() from exc
        return CodedDeal(variant, dict(rules.values), seed, deal, code)

    # --- ShareGame -------------------------------------------------------------------------
    async def share(
        self, game_id: str, token: str, deadline: float | None, *, rotate: bool = False
    ) -> Shared:
        """The game's deal code and watch token, for the player (the play token; the watch token
        is WatchOnly). ``rotate``: a new watch token (the next generation); the old one stops
        opening the game, and streams watching with it end. A game stored before watch tokens
        and deal codes existed gets both here."""
        for _attempt in range(MAX_ATTEMPTS):
            record = await self.authorize(game_id, token, deadline, player=True)
            try:
                access = tokens.Access.load(record.token_hash)
            except (ValueError, IndexError) as exc:
                raise GameCorrupt(game_id) from exc
            generation = access.generation + 1 if rotate else access.generation
            code = access.deal_code or await self._new_deal_code(
                load_stored(game_id, record.data, record.version).head, deadline
            )
            if rotate or not access.watch_hash:
                updated = tokens.Access.for_token(token, generation, code)
            else:
                updated = tokens.Access(access.play_hash, access.watch_hash, generation, code)
            blob = updated.dump()
            if blob != record.token_hash:
                replace = self.store.replace_token_hash(game_id, record.token_hash, blob)
                if not await self._timed("replace_token_hash", game_id, deadline, replace):
                    continue  # rotated (or shared) by another call meanwhile: again, from its record
            return Shared(tokens.show_deal_code(code), tokens.watch_token(token, generation))
        raise StoreUnavailable("replace_token_hash")

    async def _create(self, data: bytes, token_hash: bytes, deadline: float | None) -> str:
        for attempt in range(MAX_ATTEMPTS):
            game_id = tokens.new_game_id()
            record = st.GameRecord(game_id, FIRST_VERSION, token_hash, data)
            try:
                await self._timed("create", game_id, deadline, self.store.create(record, ttl=self.game_ttl))
                return game_id
            except st.GameExists:  # 128 random bits collided: draw again
                if attempt == MAX_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def _first_deal(
        self, blob: bytes, request_id: str, deadline: float | None
    ) -> Dealt | RecordedNewGame:
        """The first NewGame answer for a request id, from its record."""
        record = replies.read_new_game_record(blob)
        token = tokens.open_token(record.sealed_token, request_id)
        if isinstance(record, replies.LegacyNewGameRecord):
            return RecordedNewGame(record.reply, token)
        game_id = record.game_id
        stored = await self.load(game_id, deadline)
        first = load_stored(game_id, stored.data, stored.version).first_game()
        try:
            access = tokens.Access.load(stored.token_hash)
        except (ValueError, IndexError) as exc:
            raise GameCorrupt(game_id) from exc
        watch = tokens.watch_token(token, access.generation) if access.watch_hash else ""
        code = tokens.show_deal_code(access.deal_code) if access.deal_code else ""
        return Dealt(game_id, token, first, record.seeds_tried, watch, code)

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
        presented = tokens.hash_token(token)
        for attempt in range(MAX_ATTEMPTS):
            # The cache vouches for the play token only (its hash never changes); any other
            # token (a watch token, a wrong one) is judged by the store, which answers a wrong
            # one as an unknown id (issue 28; bench/oracle.py measures it).
            entry = self.cache.take_for(game_id, presented, expected)
            if entry is None:  # not cached, another version, or not its play token: ask the store
                record = await self.authorize(game_id, token, deadline, player=True)
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
                written = self.store.compare_and_set(
                    game_id,
                    version,
                    entry.stored.dump(),
                    ttl=self.game_ttl,
                    event=replies.stream_event(event),
                    request_id=key,
                    fingerprint=fingerprint,
                    reply=replies.compact_reply(version + 1),
                )
                prior = await self._timed("compare_and_set", game_id, deadline, written)
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
        return await self._timed("get_reply", game_id, deadline, self.store.get_reply(game_id, key))

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
        record = await self.load(game_id, deadline)
        stored = load_stored(game_id, record.data, record.version)
        if not stored.base < version <= stored.version:  # the log no longer reaches back there
            raise VersionMismatch(game_id, version - 1, record.version)
        for v, _event, move, text, game in stored.replay(version - 1):
            return Played(game_id, v, move, text, game)
        raise GameCorrupt(game_id)  # pragma: no cover (the log reaches ``version``)

    # --- the store (``authorize``, ``load``, ``events``, ``watch_failed``: ``watching.WatchSource``) ---
    async def authorize(
        self, game_id: str, token: str, deadline: float | None, *, player: bool = False
    ) -> st.GameRecord:
        """The stored game, if ``token`` opens it: the play token, or the watch token unless the
        call is the ``player``'s (then WatchOnly). Any other token: the store answers as for an
        unknown id (GameNotFound: ``load``'s credential), after the same work. (The play token of
        a game this process holds is checked here alone: a plain read, cheaper for Redis.)"""
        presented = tokens.hash_token(token)
        credential = b"" if self.cache.vouches(game_id, presented) else presented
        record = await self._timed("load", game_id, deadline, self.store.load(game_id, credential=credential))
        role = tokens.role(presented, record.token_hash)
        if role is None:
            raise BadToken(game_id)
        if player and role != tokens.PLAY:
            raise WatchOnly(game_id)
        return record

    async def load(self, game_id: str, deadline: float | None) -> st.GameRecord:
        """The stored game, whoever asks (no token checked: ``authorize`` is for callers).
        Raises GameNotFound, StoreUnavailable, DeadlineExceeded."""
        return await self._timed("load", game_id, deadline, self.store.load(game_id))

    def events(self, game_id: str, after_version: int) -> AsyncIterator[st.WatchEvent]:
        """The store's event stream of the game (``GameStore.watch``): raises the store's
        StoreUnavailable, which ``watch_failed`` turns into this layer's."""
        return self.store.watch(game_id, after_version)

    def watch_failed(self, unreachable: st.StoreUnavailable) -> StoreUnavailable:
        """What a watch raises (from ``unreachable``) when the store's event stream failed, counted."""
        self.on_store_error("watch")
        self.observer.store_failed("watch", "unavailable")
        return StoreUnavailable("watch")

    async def _timed(
        self, operation: str, game_id: str, deadline: float | None, call: Coroutine[Any, Any, T]
    ) -> T:
        """``await call`` (one store call, made by the caller: mypy checks its arguments) within
        the deadline and ``store_timeout``, its errors as this layer's: the store's GameNotFound
        and VersionConflict, a connection problem (StoreUnavailable), time out (DeadlineExceeded
        if the deadline was the nearer bound, else StoreUnavailable). A store answered within
        this process (``in_process``) is awaited without a timer."""
        by_deadline, started = False, 0.0
        try:
            if self.store.in_process:  # the memory store: nothing to wait for, no timer to arm
                return await call
            budget = self.store_timeout
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    call.close()  # never started: nothing was sent
                    self.observer.store_failed(operation, "deadline")
                    raise DeadlineExceeded(operation)
                budget, by_deadline = min(budget, remaining), remaining <= budget
            started = time.perf_counter()
            return await _within(budget, call)
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
        except st.StoreUnavailable as unreachable:  # the store's own (it translates its library's)
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
