"""The application flow (``Sessions``): open (load + authorize), move and undo, idempotent replay,
watch, the player's reads for Solve and Hint behind the hidden-information gate (``search_gate``);
NewGame and ShareGame come from ``dealing.Dealing``, the store calls from ``store_calls``.

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

import hmac
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from accordion import engine
from accordion import store as st
from accordion.engine import Game
from accordion.engine.moves import Move

from . import replies, search_gate, tokens
from .binary import UNDO, Event
from .cache import Cached
from .dealing import (
    FIRST_VERSION,
    MAX_ATTEMPTS,
    CodedDeal,
    Dealing,
    Dealt,
    RecordedNewGame,
    Shared,
)
from .errors import GameCorrupt, MoveRefused, RequestIdReused, VersionMismatch
from .follow import WatchItem
from .observer import STORE_FAILURES, Observer
from .record import Stored, load_stored
from .search_gate import HintSearch
from .store_calls import DEAL_CODE_TTL
from .watching import watch

# Names other modules import from here (the flow was one module until it was split).
__all__ = [
    "DEAL_CODE_TTL",
    "FIRST_VERSION",
    "MAX_ATTEMPTS",
    "STORE_FAILURES",
    "ChooseMove",
    "CodedDeal",
    "Dealt",
    "Observer",
    "Opened",
    "Played",
    "RecordedNewGame",
    "RecordedReply",
    "Sessions",
    "Shared",
]

ChooseMove = Callable[[Game], Move]  # the move a request names, in the game as it is now


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


class Sessions(Dealing):
    """The application flow over games kept in a store (``store_calls.StoreCalls`` holds the
    store, its timers and the cache; ``dealing.Dealing`` deals and shares games): reads, moves,
    undo and idempotent replay here."""

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

    async def open_to_solve(self, game_id: str, token: str, deadline: float | None) -> Opened:
        """The player's game for Solve: ``open`` (the play token only), then the
        hidden-information gate: HiddenCards if the position hides a card, before any search."""
        opened = await self.open(game_id, token, deadline, player=True)
        search_gate.check_solve(opened.game)
        return opened

    async def open_to_hint(
        self, game_id: str, token: str, deadline: float | None
    ) -> tuple[Opened, HintSearch]:
        """The player's game for a Hint (``open``, the play token only), and what the Hint may
        search of it (``search_gate.hint_search``: the position, worlds from the view, or the view)."""
        opened = await self.open(game_id, token, deadline, player=True)
        return opened, search_gate.hint_search(opened.game)

    def watch(
        self, game_id: str, token: str, after_version: int, deadline: float | None
    ) -> AsyncIterator[WatchItem]:
        """The stored log first (events after ``after_version``), then the store's event stream
        (``watching.watch``: an async generator, which mypyc does not compile, so it lives in an
        interpreted module of its own, and reads the game through ``watching.WatchSource``)."""
        return watch(self, game_id, token, after_version, deadline)

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


class _Unchanged(Exception):
    """A mutation's step failed before changing the game; ``cause`` is what to raise."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self.cause = cause
