"""The AccordionService: validate, call the session layer, encode. It knows no rule and no record.

Each RPC checks the request's shape (``validation``), reads the call's token, caller and
deadline, calls ``accordion.sessions.Sessions`` and encodes what it returns (``wire``). The
flow (load, authorize, expected version, engine, compare-and-set, idempotent replay, the game
cache, watching) is the session layer's; its exceptions, the engine's and the store's become
statuses in ``errors`` (``service.py`` reports them). ApplyMove, Undo and GetGame answer with
bytes written from cached pieces (``wire.Serialized``), which the service passes through; so
does Solve, from the bytes kept with a solved position. The solver's searches are queued under
the call's client (``limits.current_client``), for the solver's fair share.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import AsyncIterator
from typing import Any, TypeAlias

import grpc.aio
from google.api.httpbody_pb2 import HttpBody
from google.protobuf.message import Message

from accordion import engine, pictures, sessions
from accordion.sessions.winnable import PoolSettings, WinnableDeals
from accordion.store import GameStore
from accordion.v1 import accordion_pb2 as pb

from . import auth, codec, errors, limits, metrics, validation, wire
from .solving import Budgets, Solving, solution_texts

Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"
GameRequest: TypeAlias = (
    pb.GetGameRequest
    | pb.LegalMovesRequest
    | pb.ScoreRequest
    | pb.HintRequest
    | pb.SolveRequest
    | pb.GetGamePictureRequest
)


def fingerprint(method: str, request: Message) -> bytes:
    """What a request id is bound to: the method and every field of the request, canonically
    (128 bits of a SHA-256: two requests under one id are told apart; nothing is secret here)."""
    return hashlib.sha256(method.encode() + b"\0" + request.SerializeToString(deterministic=True)).digest()[
        :16
    ]


def _count_store_error(operation: str) -> None:
    metrics.STORE_ERRORS.labels(operation).inc()


class AccordionServicer:
    """Args: the store; ``game_ttl`` idle seconds before a game expires; ``store_timeout`` per store
    call; ``budgets`` for the solver behind Solve, Hint and NewGame(winnable_only); ``pools``: the
    pools of winnable deals (sessions/winnable.py)."""

    def __init__(
        self,
        store: GameStore,
        *,
        game_ttl: float,
        store_timeout: float = 2.0,
        budgets: Budgets | None = None,
        deal_code_ttl: float = sessions.flow.DEAL_CODE_TTL,
        pools: PoolSettings | None = None,
    ) -> None:
        self.store = store
        self.sessions = sessions.Sessions(
            store,
            game_ttl=game_ttl,
            store_timeout=store_timeout,
            on_store_error=_count_store_error,
            observer=metrics.SESSION_METRICS,
            deal_code_ttl=deal_code_ttl,
        )
        self.cache = self.sessions.cache
        self.solving = Solving(budgets or Budgets())
        # NewGame(winnable_only)'s policy is the session layer's; the solver's workers are
        # handed to it as two callables (the live search, one deal's proof for the refill).
        self.winnable = WinnableDeals(
            store,
            live=self.solving.search_winnable,
            prove=self.solving.prove_deal,
            settings=pools,
            store_timeout=store_timeout,
        )

    # --- reads ---------------------------------------------------------------------------
    async def ListVariants(
        self, request: pb.ListVariantsRequest, context: Context
    ) -> pb.ListVariantsResponse:
        validation.raise_if(validation.text("variant", request.variant))
        found = [engine.find_variant(request.variant)] if request.variant else engine.all_variants()
        return pb.ListVariantsResponse(variants=[wire.encode_variant(v) for v in found])

    # GetGame, LegalMoves and Score encode the game before their next await, so the cached
    # game (``shared=True``) cannot change under them.
    async def GetGame(
        self, request: pb.GetGameRequest, context: Context
    ) -> pb.GetGameResponse | wire.Serialized:
        return wire.get_game_reply(await self._open(request, context, shared=True))

    async def GetGamePicture(self, request: pb.GetGamePictureRequest, context: Context) -> HttpBody:
        """The game as its player sees it, drawn as SVG by ``accordion.pictures`` from the same Game
        message GetGame answers (so nothing hidden can reach it); REST serves the bytes raw."""
        opened = await self._open(request, context, shared=True)
        svg = pictures.game_svg(wire.encode_game(opened.game, opened.game_id, opened.version))
        return HttpBody(content_type=pictures.CONTENT_TYPE, data=svg.encode())

    async def LegalMoves(self, request: pb.LegalMovesRequest, context: Context) -> pb.LegalMovesResponse:
        opened = await self._open(request, context, shared=True)
        return wire.encode_legal_response(opened.game, opened.version)

    async def Score(self, request: pb.ScoreRequest, context: Context) -> pb.ScoreResponse:
        opened = await self._open(request, context, shared=True)
        return wire.encode_score(opened.game, opened.version)

    async def Hint(self, request: pb.HintRequest, context: Context) -> pb.HintResponse:
        validation.raise_if(validation.game_id(request.game_id))
        # The session layer decides what the Hint may search (sessions.search_gate): no hint
        # depends on a card the player cannot see.
        token, deadline = _token(context), _deadline(context)
        opened, search = await self.sessions.open_to_hint(request.game_id, token, deadline)
        game = opened.game
        move, solved = await self.solving.hint(game, search, limits.current_client())
        return wire.hint_reply(opened.version, move, game.move_text(move) if move else "", solved)

    async def Solve(self, request: pb.SolveRequest, context: Context) -> wire.Serialized:
        validation.raise_if(validation.solve(request))
        client = limits.current_client()
        # A client over its share of the solver's queue is refused before its game is loaded: one
        # that ignores the RetryInfo and asks again at once costs no store call (a cached answer
        # would have needed no worker, but the client is over its share: it retries in a second).
        self.solving.check_solve_room(client)
        validation.raise_if(validation.game_id(request.game_id))
        # A position that hides a card is refused by the session layer (HiddenCards), before the solver.
        opened = await self.sessions.open_to_solve(request.game_id, _token(context), _deadline(context))
        game = opened.game
        limit = self.solving.budgets.solve_seconds
        seconds = min(limit, request.max_millis / 1000) if request.max_millis else limit
        remaining = context.time_remaining()
        if remaining is not None:  # answer (UNKNOWN at worst) before the caller gives up
            # The margin covers stopping the search, encoding and a busy event loop: a tenth of
            # the time left, at least 50 ms (50 ms alone was too little on a loaded machine).
            seconds = min(seconds, remaining - max(0.05, remaining / 10))
            if seconds <= 0:
                raise errors.deadline_exceeded("solve")
        answer = await self.solving.solve(
            game, max_seconds=seconds, max_nodes=request.max_nodes or None, client=client
        )
        # A solved position's reply is written once (the line's notation costs milliseconds on
        # a long line) and kept with its cached answer; each call adds its version and flag.
        solved = answer.solved
        body = solved.reply_body if solved is not None else None
        if body is None:
            body = wire.solve_body(answer.result, solution_texts(game, answer.result.moves))
            if solved is not None:
                solved.reply_body = body
        return wire.solve_reply(opened.version, body, answer.cached)

    async def WatchGame(
        self, request: pb.WatchGameRequest, context: Context
    ) -> AsyncIterator[pb.WatchGameResponse]:
        validation.raise_if(validation.watch(request))
        game_id = request.game_id
        items = self.sessions.watch(game_id, _token(context), request.after_version, _deadline(context))
        async for item in items:  # each item's game is encoded before the next is asked for
            yield wire.watch_reply(game_id, item)

    # --- mutations -------------------------------------------------------------------------
    async def NewGame(
        self, request: pb.NewGameRequest, context: Context
    ) -> pb.NewGameResponse | wire.Serialized:
        validation.raise_if(validation.new_game(request))
        start = request.WhichOneof("start")
        begun = await sessions.start_game(
            self.sessions,
            request.variant,
            request.options,
            _deadline(context),
            seed=request.seed if start == "seed" else None,
            deal=codec.deal_cards(request.deal.cards) if start == "deal" else None,
            deal_code=request.deal_code if start == "deal_code" else None,
        )
        game, seed, code, seeds_tried = begun.game, begun.seed, begun.deal_code, 0
        if request.winnable_only and start != "deal_code":
            remaining = context.time_remaining()
            deadline = None if remaining is None else time.monotonic() + remaining - 0.2
            found = await self.winnable.deal(
                request.variant,
                request.options,
                seed if start == "seed" else None,  # a drawn seed: the pool's deal, if any
                deadline,
                limits.current_client(),
            )
            # (The session layer shows the count only where it shows the seed: sessions/seed_gate.py.)
            game, seeds_tried = found.game, found.seeds_tried
        rid = request.request_id
        dealt = await self.sessions.deal(
            game,
            _deadline(context),
            seeds_tried=seeds_tried,
            request_id=rid,
            fingerprint=fingerprint("NewGame", request) if rid else b"",
            caller=auth.caller(context.invocation_metadata()) if rid else "",
            deal_code=code,
        )
        return wire.new_game_reply(dealt)

    async def ShareGame(self, request: pb.ShareGameRequest, context: Context) -> pb.ShareGameResponse:
        """The player's: the deal code and the watch token (a new one with rotate_watch_token)."""
        validation.raise_if(validation.game_id(request.game_id))
        shared = await self.sessions.share(
            request.game_id, _token(context), _deadline(context), rotate=request.rotate_watch_token
        )
        return pb.ShareGameResponse(deal_code=shared.deal_code, watch_token=shared.watch_token)

    async def ApplyMove(
        self, request: pb.ApplyMoveRequest, context: Context
    ) -> pb.ApplyMoveResponse | wire.Serialized:
        validation.raise_if(validation.apply_move(request))
        move = request.move

        def choose(game: engine.Game) -> engine.Move:
            return codec.decode_move(move, game)

        rid = request.request_id
        played = await self.sessions.play(
            request.game_id,
            _token(context),
            choose,
            _deadline(context),
            expected=request.expected_version if request.HasField("expected_version") else None,
            request_id=rid,
            fingerprint=fingerprint("ApplyMove", request) if rid else b"",
        )
        return wire.played_reply(played)

    async def Undo(self, request: pb.UndoRequest, context: Context) -> pb.UndoResponse | wire.Serialized:
        validation.raise_if(validation.undo(request))
        rid = request.request_id
        played = await self.sessions.undo(
            request.game_id,
            _token(context),
            _deadline(context),
            expected=request.expected_version if request.HasField("expected_version") else None,
            request_id=rid,
            fingerprint=fingerprint("Undo", request) if rid else b"",
        )
        return wire.played_reply(played)

    async def _open(self, request: GameRequest, context: Context, shared: bool = False) -> sessions.Opened:
        """Validate the game id, then load, authorize and decode: the start of every read but
        the player's own (Hint, Solve: ``Sessions.open_to_hint``, ``open_to_solve``)."""
        validation.raise_if(validation.game_id(request.game_id))
        return await self.sessions.open(request.game_id, _token(context), _deadline(context), shared=shared)


def _token(context: Context) -> str:
    token = auth.bearer_token(context.invocation_metadata())
    if token is None:
        raise errors.missing_token()
    return token


def _deadline(context: Context) -> float | None:
    """The call's deadline as ``time.monotonic()`` seconds (None: the call has none)."""
    remaining = context.time_remaining()
    return None if remaining is None else time.monotonic() + remaining
