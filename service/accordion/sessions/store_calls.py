"""The flow's side of the store: what a ``Sessions`` holds (the store, its timeouts, the
per-process cache, the observer) and every store call, each one typed call awaited under the
flow's timer (``_timed``), with ``authorize`` and ``load`` (what ``watching.WatchSource`` reads).

``dealing.Dealing`` (NewGame, deal codes, ShareGame) and ``flow.Sessions`` (reads, moves, undo)
build on it; no gRPC here, and no store library: the store raises store/base.py's exceptions.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from accordion import store as st

from . import tokens
from .cache import GameCache
from .errors import BadToken, DeadlineExceeded, GameNotFound, StoreUnavailable, VersionMismatch, WatchOnly
from .observer import Observer

DEAL_CODE_TTL = 30 * 86400.0  # seconds a deal code answers (--deal-code-ttl)
T = TypeVar("T")


class StoreCalls:
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
