"""The AccordionService: protobuf in, engine and store calls, protobuf out. It knows no rule.

Every mutation takes one path (``_mutate``): load → authorize → replay a known request id →
check the expected version → the engine applies → ``compare_and_set`` (new data, event and
idempotency record together) → reply. The reply is persisted before it is sent, so a retry
with the same request id gets exactly it. Errors are raised as ``ApiError`` (or the engine's
and store's own, mapped in ``errors``); ``service.py`` turns them into statuses.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeAlias, TypeVar

import grpc.aio
import redis.exceptions
from google.protobuf.message import Message

from accordion import engine
from accordion.store import GameExists, GameRecord, GameStore, StoredReply, StoreUnavailable, VersionConflict
from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc

from . import auth, codec, errors, metrics, validation
from .solving import Budgets, Solving, solution_texts

FIRST_VERSION = 1
MAX_ATTEMPTS = 3  # a mutation without expected_version is retried this often on a lost race
Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"
T = TypeVar("T")
R = TypeVar("R", pb.ApplyMoveResponse, pb.UndoResponse)
Step = Callable[[engine.Game, int], tuple[pb.Move, "pb.GameEvent.Kind.ValueType"]]

# What is left of a connection problem below the store's own mapping: all UNAVAILABLE.
_UNREACHABLE = (StoreUnavailable, OSError, redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)


def fingerprint(method: str, request: Message) -> bytes:
    """What a request id is bound to: the method and every field of the request, canonically."""
    return hashlib.sha256(method.encode() + b"\0" + request.SerializeToString(deterministic=True)).digest()


class AccordionServicer(pb_grpc.AccordionServiceServicer):
    """Args: the store; ``game_ttl`` idle seconds before a game expires; ``store_timeout`` per store
    call; ``budgets`` for the solver behind Solve, Hint and NewGame(winnable_only)."""

    def __init__(
        self, store: GameStore, *, game_ttl: float, store_timeout: float = 2.0, budgets: Budgets | None = None
    ) -> None:
        self.store, self.game_ttl, self.store_timeout = store, game_ttl, store_timeout
        self.solving = Solving(budgets or Budgets())

    # --- reads ---------------------------------------------------------------------------
    async def ListVariants(
        self, request: pb.ListVariantsRequest, context: Context
    ) -> pb.ListVariantsResponse:
        validation.raise_if(validation.text("variant", request.variant))
        found = [engine.find_variant(request.variant)] if request.variant else engine.all_variants()
        return pb.ListVariantsResponse(variants=[codec.encode_variant(v) for v in found])

    async def GetGame(self, request: pb.GetGameRequest, context: Context) -> pb.GetGameResponse:
        record, game = await self._open(request, context)
        return pb.GetGameResponse(game=codec.encode_game(game, record.game_id, record.version))

    async def LegalMoves(self, request: pb.LegalMovesRequest, context: Context) -> pb.LegalMovesResponse:
        record, game = await self._open(request, context)
        return pb.LegalMovesResponse(version=record.version, moves=codec.encode_legal(game))

    async def Score(self, request: pb.ScoreRequest, context: Context) -> pb.ScoreResponse:
        record, game = await self._open(request, context)
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
        validation.raise_if(validation.watch(request))
        await self._authorized_record(request.game_id, context)
        events = self.store.watch(request.game_id, request.after_version)
        try:
            async for event in events:
                yield pb.WatchGameResponse(event=pb.GameEvent.FromString(event.payload))
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
        if not hmac.compare_digest(prior.fingerprint, fp):
            raise errors.request_id_reused()
        return _open_new_game(prior.reply, rid)

    async def ApplyMove(self, request: pb.ApplyMoveRequest, context: Context) -> pb.ApplyMoveResponse:
        validation.raise_if(validation.apply_move(request))

        def play(game: engine.Game, version: int) -> tuple[pb.Move, pb.GameEvent.Kind.ValueType]:
            try:
                move = codec.decode_move(request.move, game)
            except (engine.InvalidMoveError, engine.IllegalMoveError) as exc:
                legal = pb.LegalMovesResponse(version=version, moves=codec.encode_legal(game))
                raise errors.move_error(exc, legal) from None
            text = game.move_text(move)  # read in the position before the move
            game.play(move)
            return codec.encode_move(move, text), pb.GameEvent.KIND_MOVE

        return await self._mutate(context, request, "ApplyMove", play, pb.ApplyMoveResponse)

    async def Undo(self, request: pb.UndoRequest, context: Context) -> pb.UndoResponse:
        validation.raise_if(validation.undo(request))

        def undo(game: engine.Game, version: int) -> tuple[pb.Move, pb.GameEvent.Kind.ValueType]:
            move = game.undo()
            return codec.encode_move(move, game.move_text(move)), pb.GameEvent.KIND_UNDO

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
        expected = request.expected_version if request.HasField("expected_version") else None
        token = self._token(context)
        for attempt in range(MAX_ATTEMPTS):
            record = await self._store(context, "load", self.store.load, game_id)
            self._authorize(token, record)
            if rid and (prior := await self._store(context, "get_reply", self.store.get_reply, game_id, rid)):
                return _replay(prior, fp, reply_cls)
            if expected is not None and expected != record.version:
                raise errors.version_mismatch(game_id, expected, record.version)
            game = codec.load_game(game_id, record.data)
            move, kind = step(game, record.version)
            version = record.version + 1
            reply = reply_cls(move=move, game=codec.encode_game(game, game_id, version))
            event = pb.GameEvent(version=version, kind=kind, move=move, game=reply.game)
            try:
                prior = await self._store(
                    context,
                    "compare_and_set",
                    self.store.compare_and_set,
                    game_id,
                    record.version,
                    codec.dump_game(game),
                    ttl=self.game_ttl,
                    event=event.SerializeToString(),
                    request_id=rid,
                    fingerprint=fp,
                    reply=reply.SerializeToString(),
                )
            except VersionConflict as exc:
                # Someone moved first. A retry of a request that won meanwhile still gets its reply.
                if rid and (
                    prior := await self._store(context, "get_reply", self.store.get_reply, game_id, rid)
                ):
                    return _replay(prior, fp, reply_cls)
                if expected is not None or attempt == MAX_ATTEMPTS - 1:
                    raise errors.version_mismatch(game_id, record.version, exc.current) from None
                continue  # no version was promised: replay the request on the new position
            return reply if prior is None else _replay(prior, fp, reply_cls)
        raise AssertionError("unreachable")  # pragma: no cover

    # --- helpers ---------------------------------------------------------------------------
    async def _create(self, context: Context, game: engine.Game, token: str) -> str:
        data = codec.dump_game(game)
        for attempt in range(MAX_ATTEMPTS):
            game_id = auth.new_game_id()
            record = GameRecord(game_id, FIRST_VERSION, auth.hash_token(token), data)
            try:
                await self._store(context, "create", self.store.create, record, ttl=self.game_ttl)
                return game_id
            except GameExists:  # 128 random bits collided: draw again
                if attempt == MAX_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def _open(self, request: Any, context: Context) -> tuple[GameRecord, engine.Game]:
        """Validate the game id, load, authorize, decode: the start of every read."""
        validation.raise_if(validation.game_request(request))
        record = await self._authorized_record(request.game_id, context)
        return record, codec.load_game(record.game_id, record.data)

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


def _replay(prior: StoredReply, fp: bytes, reply_cls: type[R]) -> R:
    if not hmac.compare_digest(prior.fingerprint, fp):
        raise errors.request_id_reused()
    return reply_cls.FromString(prior.reply)


def _seal_new_game(reply: pb.NewGameResponse, request_id: str) -> bytes:
    """NewGame's idempotency record: the reply without its token, and the token sealed (see auth)."""
    sealed = auth.seal_token(reply.token, request_id)
    body = pb.NewGameResponse(game=reply.game).SerializeToString()
    return bytes([len(sealed)]) + sealed + body


def _open_new_game(blob: bytes, request_id: str) -> pb.NewGameResponse:
    size = blob[0]
    reply = pb.NewGameResponse.FromString(blob[1 + size :])
    reply.token = auth.open_token(blob[1 : 1 + size], request_id)
    return reply
