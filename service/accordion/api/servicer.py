"""The AccordionService: protobuf in, engine and store calls, protobuf out. It knows no rule.

Every mutation takes one path (``_mutate``): load → authorize → check the expected version →
the engine applies → ``compare_and_set`` (new data, event and idempotency record together;
the store checks the request id first, then the version) → reply. The reply is persisted
before it is sent (as the version it made: the game's stored log rebuilds it), so a retry
with the same request id gets exactly it. Errors are raised as ``ApiError`` (or the engine's
and store's own, mapped in ``errors``); ``service.py`` turns them into statuses.

The hot path is one store call: a per-process cache (``GameCache``) keeps each recently used
game decoded, with its version and token hash, and a move on a cached game goes straight to
``compare_and_set``. The cache is never trusted for the truth: the compare-and-set checks the
version atomically, and a stale entry (another process moved the game) costs a conflict, a
load and a second try, as a lost race always did. Authorization uses the cached token hash
(a game's token never changes). Reads (GetGame, LegalMoves, Score, Hint, Solve, WatchGame)
always load from the store, so they see the latest version; the cache only saves decoding.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar

import grpc.aio
import redis.exceptions
from google.api.httpbody_pb2 import HttpBody  # type: ignore[import-untyped]  # googleapis-common-protos: no py.typed
from google.protobuf.message import Message

from accordion import engine, pictures
from accordion.store import (
    GameExists,
    GameNotFound,
    GameRecord,
    GameStore,
    MemoryStore,
    StoredReply,
    StoreUnavailable,
    VersionConflict,
)
from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc

from . import auth, codec, errors, metrics, validation
from .solving import Budgets, Solving, solution_texts

FIRST_VERSION = 1
MAX_ATTEMPTS = 3  # a mutation without expected_version is retried this often on a lost race
Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"
T = TypeVar("T")
R = TypeVar("R", pb.ApplyMoveResponse, pb.UndoResponse)
# A mutation's engine step: (the move played or taken back, its notation, the log's event).
Step = Callable[[codec.Stored, int], tuple[engine.Move, str, codec.Event]]
CACHE_SIZE = 4096  # games kept decoded per process

# What is left of a connection problem below the store's own mapping: all UNAVAILABLE.
_UNREACHABLE = (StoreUnavailable, OSError, redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)


def fingerprint(method: str, request: Message) -> bytes:
    """What a request id is bound to: the method and every field of the request, canonically
    (128 bits of a SHA-256: two requests under one id are told apart; nothing is secret here)."""
    return hashlib.sha256(method.encode() + b"\0" + request.SerializeToString(deterministic=True)).digest()[:16]


@dataclass
class _Cached:
    version: int
    token_hash: bytes
    stored: codec.Stored


class GameCache:
    """Recently used games, decoded, by id: least recently used first out.

    A mutation ``take``s its game (so no other call sees it while it changes) and ``put``s it
    back only once the store accepted the new version. Reads ``peek`` and use the entry only
    when the store's version is the same.
    """

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.size = size
        self._games: dict[str, _Cached] = {}

    def take(self, game_id: str) -> _Cached | None:
        return self._games.pop(game_id, None)

    def peek(self, game_id: str, version: int) -> codec.Stored | None:
        entry = self._games.get(game_id)
        return entry.stored if entry is not None and entry.version == version else None

    def put(self, game_id: str, entry: _Cached) -> None:
        games = self._games
        games.pop(game_id, None)
        games[game_id] = entry
        if len(games) > self.size:
            del games[next(iter(games))]

    def discard(self, game_id: str) -> None:
        self._games.pop(game_id, None)

    def __len__(self) -> int:
        return len(self._games)


class AccordionServicer(pb_grpc.AccordionServiceServicer):
    """Args: the store; ``game_ttl`` idle seconds before a game expires; ``store_timeout`` per store
    call; ``budgets`` for the solver behind Solve, Hint and NewGame(winnable_only)."""

    def __init__(
        self, store: GameStore, *, game_ttl: float, store_timeout: float = 2.0, budgets: Budgets | None = None
    ) -> None:
        self.store, self.game_ttl, self.store_timeout = store, game_ttl, store_timeout
        self.solving = Solving(budgets or Budgets())
        self.cache = GameCache()
        # The memory store answers without waiting: no timeout to arm around its calls.
        self._bounded = not isinstance(store, MemoryStore)

    # --- reads ---------------------------------------------------------------------------
    async def ListVariants(
        self, request: pb.ListVariantsRequest, context: Context
    ) -> pb.ListVariantsResponse:
        validation.raise_if(validation.text("variant", request.variant))
        found = [engine.find_variant(request.variant)] if request.variant else engine.all_variants()
        return pb.ListVariantsResponse(variants=[codec.encode_variant(v) for v in found])

    # GetGame, LegalMoves and Score encode their answer without awaiting after ``_open``, so a
    # cached game (shared: ``cached=True``) cannot change under them.
    async def GetGame(self, request: pb.GetGameRequest, context: Context) -> pb.GetGameResponse:
        record, game = await self._open(request, context, cached=True)
        # GetGameResponse.game is field 1: the serialized reply, passed through by the serializer.
        return codec._field(b"\x0a", codec.game_bytes(game, record.game_id, record.version))  # type: ignore[return-value]

    async def LegalMoves(self, request: pb.LegalMovesRequest, context: Context) -> pb.LegalMovesResponse:
        record, game = await self._open(request, context, cached=True)
        return codec.encode_legal_response(game, record.version)

    async def Score(self, request: pb.ScoreRequest, context: Context) -> pb.ScoreResponse:
        record, game = await self._open(request, context, cached=True)
        return codec.encode_score(game, record.version)

    async def Hint(self, request: pb.HintRequest, context: Context) -> pb.HintResponse:
        record, game = await self._open(request, context)
        # The solver only searches games with every card face up; otherwise the heuristic
        # looks at the row alone. Either way no hint depends on the stock's order.
        move, solved = await self.solving.hint(game)
        reply = pb.HintResponse(version=record.version)
        if move is not None:
            reply.move.CopyFrom(codec.encode_move(move, game.move_text(move)))
            reply.source = pb.HINT_SOURCE_SOLVER if solved else pb.HINT_SOURCE_HEURISTIC
        return reply

    async def Solve(self, request: pb.SolveRequest, context: Context) -> pb.SolveResponse:
        validation.raise_if(validation.solve(request))
        record, game = await self._open(request, context)
        limit = self.solving.budgets.solve_seconds
        seconds = min(limit, request.max_millis / 1000) if request.max_millis else limit
        remaining = context.time_remaining()
        if remaining is not None:  # answer (UNKNOWN at worst) before the caller gives up
            seconds = min(seconds, remaining - 0.05)
            if seconds <= 0:
                raise errors.deadline_exceeded("solve")
        answer = await self.solving.solve(game, max_seconds=seconds, max_nodes=request.max_nodes or None)
        result = answer.result
        moves = [codec.encode_move(m, t) for m, t in zip(result.moves, solution_texts(game, result.moves))]
        return pb.SolveResponse(
            version=record.version,
            outcome=codec.SOLVE_OUTCOMES[result.outcome],
            moves=moves,
            nodes=result.nodes,
            millis=round(result.seconds * 1000, 3),
            without_redeal=result.without_redeal,
            cached=answer.cached,
        )

    async def WatchGame(
        self, request: pb.WatchGameRequest, context: Context
    ) -> AsyncIterator[pb.WatchGameResponse]:
        """The stored log first (events after ``after_version``), then the store's event stream.

        Each stream entry is a compact event (the move, or an undo) applied to this watcher's own
        copy of the game; a gap (the stream is kept short, and a slow watcher may miss entries)
        or an entry it cannot read is filled from the stored log again."""
        validation.raise_if(validation.watch(request))
        game_id = request.game_id
        record = await self._authorized_record(game_id, context)
        follower = _Follower(game_id, request.after_version)
        for item in follower.catch_up(codec.load_stored(game_id, record.data, record.version)):
            yield item
        events = self.store.watch(game_id, max(follower.last, follower.version))
        try:
            async for event in events:
                if event.version <= follower.version:
                    continue
                readable, value = codec.stream_event_value(event.payload)
                if readable and event.version == follower.version + 1 and follower.game is not None:
                    try:
                        item = follower.apply(value)
                    except engine.EngineError:
                        item, follower.game = None, None  # does not apply to our copy: resync
                    if follower.game is not None:
                        if item is not None:
                            yield item
                        continue
                try:  # a gap, or an entry of another format: the stored log has everything
                    record = await self._store(context, "load", self.store.load, game_id)
                except GameNotFound:
                    return
                for item in follower.catch_up(codec.load_stored(game_id, record.data, record.version)):
                    yield item
        except _UNREACHABLE as exc:
            metrics.STORE_ERRORS.labels("watch").inc()
            raise errors.store_unavailable("watch") from exc
        finally:  # the client went away or the stream ended: release the store's watcher now
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                await aclose()

    # --- mutations -------------------------------------------------------------------------
    async def NewGame(self, request: pb.NewGameRequest, context: Context) -> pb.NewGameResponse:
        validation.raise_if(validation.new_game(request))
        start = request.WhichOneof("start")
        # The engine is pure; randomness lives here. With a deal, the seed drives later chance only.
        seed = request.seed if start == "seed" else secrets.randbits(64)
        deal = codec.deal_cards(request.deal.cards) if start == "deal" else None
        game = engine.new_game(request.variant, dict(request.options), seed=seed, deal=deal)
        seeds_tried = 0
        if request.winnable_only:
            remaining = context.time_remaining()
            deadline = None if remaining is None else time.monotonic() + remaining - 0.2
            found = await self.solving.winnable_game(request.variant, dict(request.options), seed, deadline)
            game, seeds_tried = found.game, found.seeds_tried
        token = auth.new_token()
        game_id = await self._create(context, game, token)
        reply = pb.NewGameResponse(
            game=codec.encode_game(game, game_id, FIRST_VERSION), token=token, seeds_tried=seeds_tried
        )
        if not request.request_id:
            return reply
        rid, fp = request.request_id, fingerprint("NewGame", request)
        prior = await self._store(
            context,
            "claim_request",
            self.store.claim_request,
            auth.request_key("newgame", rid),
            fp,
            _seal_new_game(reply, rid),
            ttl=self.game_ttl,
        )
        if prior is None:
            return reply
        # A retry, or a lost race: the first game stands and ours goes.
        await self._store(context, "delete", self.store.delete, game_id)
        self.cache.discard(game_id)
        if not hmac.compare_digest(prior.fingerprint, fp):
            raise errors.request_id_reused()
        return await self._open_new_game(context, prior.reply, rid)

    async def ApplyMove(self, request: pb.ApplyMoveRequest, context: Context) -> pb.ApplyMoveResponse:
        validation.raise_if(validation.apply_move(request))

        def play(stored: codec.Stored, version: int) -> tuple[engine.Move, str, codec.Event]:
            game = stored.game
            try:
                move = codec.decode_move(request.move, game)
            except (engine.InvalidMoveError, engine.IllegalMoveError) as exc:
                raise errors.move_error(exc, codec.encode_legal_response(game, version)) from None
            text = game.move_text(move)  # read in the position before the move
            stored.play(move)
            return move, text, move

        return await self._mutate(context, request, "ApplyMove", play, pb.ApplyMoveResponse)

    async def Undo(self, request: pb.UndoRequest, context: Context) -> pb.UndoResponse:
        validation.raise_if(validation.undo(request))

        def undo(stored: codec.Stored, version: int) -> tuple[engine.Move, str, codec.Event]:
            move = stored.undo()
            return move, stored.game.move_text(move), codec.UNDO

        return await self._mutate(context, request, "Undo", undo, pb.UndoResponse)

    async def _mutate(
        self,
        context: Context,
        request: pb.ApplyMoveRequest | pb.UndoRequest,
        method: str,
        step: Step,
        reply_cls: type[R],
    ) -> R:
        game_id, rid = request.game_id, request.request_id
        fp = fingerprint(method, request) if rid else b""
        key = codec.request_key(rid) if rid else ""
        expected = request.expected_version if request.HasField("expected_version") else None
        token = self._token(context)
        for attempt in range(MAX_ATTEMPTS):
            entry = self.cache.take(game_id)
            if entry is not None and (expected is None or expected == entry.version):
                if not auth.token_matches(token, entry.token_hash):
                    self.cache.put(game_id, entry)
                    raise errors.bad_token(game_id)
            else:  # not cached, or a version the cache does not vouch for: ask the store
                record = await self._store(context, "load", self.store.load, game_id)
                self._authorize(token, record)
                if expected is not None and expected != record.version:
                    # A retry of a request that succeeded gets its reply even though the game moved on.
                    if rid and (prior := await self._get_reply(context, game_id, key)):
                        return await self._replay(context, game_id, prior, fp, reply_cls)
                    raise errors.version_mismatch(game_id, expected, record.version)
                entry = _Cached(record.version, record.token_hash, codec.load_stored(game_id, record.data, record.version))
            version = entry.version
            try:
                move, text, event = step(entry.stored, version)
            except Exception as exc:
                if errors.from_exception(exc) is None:
                    raise  # a bug: the entry may be half changed, so it stays out of the cache
                # The engine refused before changing anything: the entry is still good. With a
                # request id this may be the retry of a move that was applied (and is now illegal).
                self.cache.put(game_id, entry)
                if rid and (prior := await self._get_reply(context, game_id, key)):
                    return await self._replay(context, game_id, prior, fp, reply_cls)
                raise
            # Serialized here (the service's serializer passes bytes through): the reply is never
            # read back as a message on this path, so it is never built as one.
            reply = codec.reply_bytes(move, text, entry.stored.game, game_id, version + 1)
            try:
                prior = await self._store(
                    context,
                    "compare_and_set",
                    self.store.compare_and_set,
                    game_id,
                    version,
                    entry.stored.dump(),
                    ttl=self.game_ttl,
                    event=codec.stream_event(event),
                    request_id=key,
                    fingerprint=fp,
                    reply=codec.compact_reply(version + 1),
                )
            except VersionConflict as exc:
                # Someone moved first (or the cache was stale). The store checked the request id
                # before the version, so this is no retry of a request that won.
                if expected is not None or attempt == MAX_ATTEMPTS - 1:
                    raise errors.version_mismatch(game_id, version, exc.current) from None
                continue  # no version was promised: replay the request on the new position
            if prior is not None:
                return await self._replay(context, game_id, prior, fp, reply_cls)
            entry.version = version + 1
            self.cache.put(game_id, entry)
            return reply  # type: ignore[return-value]  (the serialized R)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _open_new_game(self, context: Context, blob: bytes, request_id: str) -> pb.NewGameResponse:
        """The first NewGame reply for a request id, from its record (see ``_seal_new_game``)."""
        compact = codec.read_new_game_record(blob)
        if compact is None:  # recorded by an earlier version: the reply without its token
            size = blob[0]
            reply = pb.NewGameResponse.FromString(blob[1 + size :])
            reply.token = auth.open_token(blob[1 : 1 + size], request_id)
            return reply
        sealed, seeds_tried, game_id = compact
        record = await self._store(context, "load", self.store.load, game_id)
        first = codec.load_stored(game_id, record.data, record.version).first_game()
        return pb.NewGameResponse(
            game=codec.encode_game(first, game_id, FIRST_VERSION),
            token=auth.open_token(sealed, request_id),
            seeds_tried=seeds_tried,
        )

    async def _get_reply(self, context: Context, game_id: str, key: str) -> StoredReply | None:
        return await self._store(context, "get_reply", self.store.get_reply, game_id, key)

    async def _replay(self, context: Context, game_id: str, prior: StoredReply, fp: bytes, reply_cls: type[R]) -> R:
        """The first reply to a request id: recorded whole (earlier versions), or as the version it
        made, rebuilt from the stored log (rare: only retries come here)."""
        if not hmac.compare_digest(prior.fingerprint, fp):
            raise errors.request_id_reused()
        version = codec.compact_reply_version(prior.reply)
        if version is None:
            return reply_cls.FromString(prior.reply)
        record = await self._store(context, "load", self.store.load, game_id)
        stored = codec.load_stored(game_id, record.data, record.version)
        if not stored.base < version <= stored.version:  # the log no longer reaches back there
            raise errors.version_mismatch(game_id, version - 1, record.version)
        for v, _event, move, text, game in stored.replay(version - 1):
            return reply_cls(move=codec.encode_move(move, text), game=codec.encode_game(game, game_id, v))
        raise errors.game_corrupt(game_id)  # pragma: no cover (the log reaches ``version``)

    # --- helpers ---------------------------------------------------------------------------
    async def _create(self, context: Context, game: engine.Game, token: str) -> str:
        stored = codec.Stored.new(game, FIRST_VERSION)
        data = stored.dump()
        for attempt in range(MAX_ATTEMPTS):
            game_id = auth.new_game_id()
            record = GameRecord(game_id, FIRST_VERSION, auth.hash_token(token), data)
            try:
                await self._store(context, "create", self.store.create, record, ttl=self.game_ttl)
                # The first move will find it decoded. (NewGame encodes its reply from ``game``
                # as soon as this returns, before any other call can take the cached game.)
                self.cache.put(game_id, _Cached(FIRST_VERSION, record.token_hash, stored))
                return game_id
            except GameExists:  # 128 random bits collided: draw again
                if attempt == MAX_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def _open(self, request: Any, context: Context, cached: bool = False) -> tuple[GameRecord, engine.Game]:
        """Validate the game id, load, authorize, decode: the start of every read. ``cached``: the
        caller uses the game before its next await, so the cached game (same version) will do."""
        validation.raise_if(validation.game_request(request))
        record = await self._authorized_record(request.game_id, context)
        if cached and (stored := self.cache.peek(record.game_id, record.version)) is not None:
            return record, stored.game
        return record, codec.load_game(record.game_id, record.data, record.version)

    async def _authorized_record(self, game_id: str, context: Context) -> GameRecord:
        token = self._token(context)
        record = await self._store(context, "load", self.store.load, game_id)
        self._authorize(token, record)
        return record

    @staticmethod
    def _token(context: Context) -> str:
        token = auth.bearer_token(context.invocation_metadata())
        if token is None:
            raise errors.missing_token()
        return token

    @staticmethod
    def _authorize(token: str, record: GameRecord) -> None:
        if not auth.token_matches(token, record.token_hash):
            raise errors.bad_token(record.game_id)

    async def _store(
        self, context: Context, operation: str, fn: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any
    ) -> T:
        """One store call within the RPC's deadline and ``store_timeout``; unreachable → UNAVAILABLE."""
        if not self._bounded:  # the memory store: nothing to wait for (closed: StoreUnavailable)
            try:
                return await fn(*args, **kwargs)
            except StoreUnavailable as exc:
                metrics.STORE_ERRORS.labels(operation).inc()
                raise errors.store_unavailable(operation) from exc
        remaining = context.time_remaining()
        if remaining is not None and remaining <= 0:
            raise errors.deadline_exceeded(operation)
        budget = self.store_timeout if remaining is None else min(self.store_timeout, remaining)
        try:
            async with asyncio.timeout(budget):
                return await fn(*args, **kwargs)
        except TimeoutError as exc:
            metrics.STORE_ERRORS.labels(operation).inc()
            if remaining is not None and remaining <= self.store_timeout:
                raise errors.deadline_exceeded(operation) from exc
            raise errors.store_unavailable(operation) from exc
        except _UNREACHABLE as exc:
            metrics.STORE_ERRORS.labels(operation).inc()
            raise errors.store_unavailable(operation) from exc

    # --- GetGamePicture (issue 15, the web branch): one method, ported onto the session layer by the lead.
    async def GetGamePicture(self, request: pb.GetGamePictureRequest, context: Context) -> HttpBody:
        """The game as its player sees it, drawn as SVG by accordion.pictures from the same Game
        message GetGame answers (so nothing hidden can reach it); REST serves the bytes raw."""
        record, game = await self._open(request, context, cached=True)
        svg = pictures.game_svg(codec.encode_game(game, record.game_id, record.version))
        return HttpBody(content_type=pictures.CONTENT_TYPE, data=svg.encode())
    # --- GetGamePicture: end


def _seal_new_game(reply: pb.NewGameResponse, request_id: str) -> bytes:
    """NewGame's idempotency record: the token sealed (see auth), seeds_tried and the game id;
    the game is rebuilt as dealt from its stored header when a retry comes (``_open_new_game``).
    (A record of the whole reply took ~2.3 KB of Redis per game for the game's lifetime.)"""
    return codec.new_game_record(auth.seal_token(reply.token, request_id), reply.seeds_tried, reply.game.id)


class _Follower:
    """One watcher's view: its own copy of the game at ``version``, and the last version sent."""

    def __init__(self, game_id: str, after_version: int) -> None:
        self.game_id = game_id
        self.last = after_version  # events up to here are not sent
        self.version = 0  # the version of ``game`` (0: none yet)
        self.game: engine.Game | None = None

    def catch_up(self, stored: codec.Stored) -> list[pb.WatchGameResponse]:
        """The events in the stored log after what was sent; the copy follows to its end."""
        out = []
        start = max(self.last, self.version if self.game is not None else 0)
        if start >= stored.version:  # nothing new to send: follow from the stored game itself
            if self.version < stored.version:
                self.game, self.version = stored.fresh_game(), stored.version
            return out
        game = None
        for version, _event, move, text, game in stored.replay(start):
            if version > self.last:
                out.append(self._response(version, _event, move, text, game))
        if game is None:  # nothing replayed (start was the log's end)
            game = stored.fresh_game()
        self.game, self.version = game, stored.version
        self.last = max(self.last, stored.version)
        return out

    def apply(self, event: codec.Event) -> pb.WatchGameResponse | None:
        """One event from the stream, next after ``version``; None if it does not apply (resync)."""
        game = self.game
        assert game is not None
        move, text = codec.play_event(game, event)
        self.version += 1
        if self.version <= self.last:
            return None
        self.last = self.version
        return self._response(self.version, event, move, text, game)

    def _response(
        self, version: int, event: codec.Event, move: engine.Move, text: str, game: engine.Game
    ) -> pb.WatchGameResponse:
        kind = pb.GameEvent.KIND_UNDO if event is None else pb.GameEvent.KIND_MOVE
        return pb.WatchGameResponse(
            event=pb.GameEvent(
                version=version, kind=kind, move=codec.encode_move(move, text),
                game=codec.encode_game(game, self.game_id, version),
            )
        )
