"""The ergonomic client: connect, deal, play by notation, keep the game's token and version.

    from accordion_client import AccordionClient

    with AccordionClient("127.0.0.1:50051") as client:
        game = client.new_game("accordion", seed=7)
        game.play("10D>4D")          # notation, as in docs/notation.md
        print(game.text, game.version)

        # Sharing: the deal code deals the same cards to anyone (hidden cards still hidden);
        # the watch token lets someone watch this game and never play it.
        again = client.new_game_from_code(game.deal_code)
        watcher = client.spectate(game.id, game.watch_token)

Every call has a deadline (``deadline=`` seconds, per call or the client's default).
Every mutating call (NewGame, ApplyMove, Undo) carries a fresh ``request_id`` (128 random
bits, unless the caller gives one); on
UNAVAILABLE the client retries a bounded number of times with the *same* request id, so a
retry never applies a move twice. Moves and undos send the handle's ``expected_version``,
so a write from a stale view fails with ``VersionMismatch`` instead of landing elsewhere.
Failures are raised as the typed exceptions of ``accordion_client.errors``.
"""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

import grpc
import grpc.aio

from . import moves
from .errors import AccordionError, RateLimited, Unavailable, from_rpc_error
from .moves import ZoneLike
from .targets import resolve_target
from .tracecontext import HEADER as TRACEPARENT
from .tracecontext import current_traceparent
from .v1 import accordion_pb2 as pb
from .v1 import accordion_pb2_grpc as pb_grpc

DEFAULT_DEADLINE = 5.0
DEFAULT_RETRIES = 3  # extra attempts on UNAVAILABLE (and RATE_LIMITED)
MAX_RETRY_DELAY = 5.0  # a rate limit asking for a longer wait is raised, not slept through
API_KEY_HEADER = "x-api-key"
Metadata = Sequence[tuple[str, str]]
MoveLike = str | pb.Move

STATUS_NAMES = {
    pb.GAME_STATUS_UNSPECIFIED: "unknown",
    pb.GAME_STATUS_IN_PROGRESS: "in progress",
    pb.GAME_STATUS_WON: "won",
    pb.GAME_STATUS_LOST: "lost",
}


def new_request_id() -> str:
    """A fresh idempotency key: 128 random bits (``secrets``), as 32 hex digits.

    The server keeps a mutating call's reply under its request id, so a retry with the same id
    gets the first answer; an id must therefore be unguessable and never reused for another
    request. The clients make one per call unless the caller gives its own.
    """
    return secrets.token_hex(16)


def watch_key(game_id: str, watch_token: str) -> str:
    """What a spectator is given: ``<game id>.<watch token>`` (the web page's ``#watch=`` link
    carries the same). It reads and watches the game and never plays it."""
    return f"{game_id}.{watch_token}"


def parse_watch_key(text: str) -> tuple[str, str]:
    """``(game id, watch token)`` from a watch key, or from a spectator link ending ``#watch=KEY``.

    Raises ValueError for text that is neither (ids and tokens are URL-safe base64: no dot)."""
    key = text.strip().rpartition("#watch=")[2]
    game_id, dot, watch_token = key.partition(".")
    if not (game_id and dot and watch_token) or "." in watch_token:
        raise ValueError(f"not a watch key: {text!r} (a watch key is <game id>.<watch token>)")
    return game_id, watch_token


def to_move(move: MoveLike) -> pb.Move:
    """A move from its notation (``"8d>9d"``, ``"x7"``, ``"deal"``) or a ``Move`` as is."""
    if isinstance(move, pb.Move):
        return move
    if not isinstance(move, str):
        raise TypeError(f"a move is notation text or an accordion_client.pb.Move, not {move!r}")
    return pb.Move(notation=move.strip())


def new_game_request(
    variant: str,
    options: Mapping[str, Any] | None,
    seed: int | None,
    deal: Sequence[str] | None,
    request_id: str | None,
    deal_code: str | None = None,
) -> pb.NewGameRequest:
    if sum(start is not None for start in (seed, deal, deal_code)) > 1:
        raise ValueError("give a seed, a deal or a deal code, not more than one")
    request = pb.NewGameRequest(
        variant=variant,
        options={str(k): str(v) for k, v in (options or {}).items()},
        request_id=request_id or new_request_id(),
    )
    if seed is not None:
        request.seed = seed
    if deal is not None:
        request.deal.cards.extend(deal)
    if deal_code is not None:
        request.deal_code = deal_code.strip().upper()  # a pasted code may have been lower-cased
    return request


def _credentials(
    tls: bool,
    credentials: grpc.ChannelCredentials | None,
    root_certificates: bytes | None,
    certificate_chain: bytes | None,
    private_key: bytes | None,
) -> grpc.ChannelCredentials | None:
    if credentials is None and (tls or root_certificates or certificate_chain):
        credentials = grpc.ssl_channel_credentials(
            root_certificates=root_certificates, private_key=private_key, certificate_chain=certificate_chain
        )
    return credentials


def _backoff(attempt: int, base: float) -> float:
    return min(base * 2.0**attempt, 2.0) * random.uniform(0.5, 1.0)


def retry_delay(error: AccordionError, attempt: int, base: float) -> float | None:
    """Seconds to wait before retrying after ``error``, or None when it is not worth a retry.

    UNAVAILABLE: exponential backoff. RATE_LIMITED: the server's RetryInfo delay (when short).
    """
    if isinstance(error, Unavailable):
        return _backoff(attempt, base)
    if (
        isinstance(error, RateLimited)
        and error.retry_delay is not None
        and error.retry_delay <= MAX_RETRY_DELAY
    ):
        return max(error.retry_delay, 0.001)
    return None


class _Base:
    """What both clients share: the target, credentials, channel options, metadata and retries."""

    def __init__(
        self,
        target: str,
        *,
        tls: bool,
        credentials: grpc.ChannelCredentials | None,
        root_certificates: bytes | None,
        certificate_chain: bytes | None,
        private_key: bytes | None,
        server_name: str | None,
        api_key: str | None,
        deadline: float | None,
        retries: int,
        backoff: float,
        metadata: Metadata,
        options: Sequence[tuple[str, Any]],
        trace: bool = True,
    ) -> None:
        if retries < 0:
            raise ValueError("retries must be >= 0")
        resolved = resolve_target(target)
        if resolved.tls is False and (tls or credentials or root_certificates or certificate_chain):
            raise ValueError(f"{target!r} asks for plaintext (http://) but TLS was given; use https://")
        self.target = target  # as given, for messages
        self.address = resolved.address  # as gRPC takes it
        self.credentials = _credentials(
            tls or bool(resolved.tls), credentials, root_certificates, certificate_chain, private_key
        )
        self.tls = self.credentials is not None
        self.options = list(options)
        if server_name:  # verify the server's certificate for this name, not the target's host
            self.options.append(("grpc.ssl_target_name_override", server_name))
        self.deadline = deadline
        self.retries = retries
        self.backoff = backoff
        self.metadata = tuple(metadata) + (((API_KEY_HEADER, api_key),) if api_key else ())
        # A traceparent per call (tracecontext.py), unless the caller's metadata has its own.
        self.trace = trace and all(key.lower() != TRACEPARENT for key, _ in self.metadata)
        self.closed = False

    def _metadata(self, token: str | None) -> tuple[tuple[str, str], ...]:
        """One call's metadata (all its attempts': a retry stays in the same trace)."""
        found = self.metadata
        if self.trace:
            found = (*found, (TRACEPARENT, current_traceparent()))
        if token:
            return (*found, ("authorization", f"Bearer {token}"))
        return found

    def _deadline(self, deadline: float | None) -> float | None:
        return self.deadline if deadline is None else deadline

    def _retry_delay_or_raise(self, exc: grpc.RpcError, attempt: int) -> float:
        """Seconds to wait before the next attempt of a failed call; raises its typed error if none."""
        error = from_rpc_error(exc)
        delay = retry_delay(error, attempt, self.backoff) if attempt < self.retries else None
        if delay is None:
            raise error from exc
        return delay


class AccordionClient(_Base):
    """A blocking client on one channel. Use as a context manager, or ``close()`` it.

    Args:
        target: ``host:port``, ``http://host:port`` (plaintext), ``https://host[:port]`` (TLS,
            port 443 by default) or a gRPC target string (``dns:///host:port``); anything else
            is a ValueError that says so.
        tls: use TLS with the system's root certificates (or ``root_certificates``, PEM).
        certificate_chain, private_key: a client certificate (PEM) for mutual TLS.
        credentials: explicit channel credentials (implies TLS).
        server_name: the name the server's certificate must carry, when not the target's host.
        api_key: sent as ``x-api-key`` on every call, for servers that require keys.
        deadline: seconds each call may take (None: no deadline); per call with ``deadline=``.
        retries: extra attempts after UNAVAILABLE (or RATE_LIMITED with a short RetryInfo),
            with the same request, request id included.
        backoff: first retry delay in seconds (doubling, jittered, at most 2 s).
        metadata: extra metadata on every call.
        trace: send a W3C ``traceparent`` with every call: ``trace_context()``'s, or a new
            trace's (``accordion_client.tracecontext``); a ``traceparent`` in ``metadata`` wins.
        options: gRPC channel options; interceptors: client interceptors (e.g. for timing).
    """

    def __init__(
        self,
        target: str,
        *,
        tls: bool = False,
        credentials: grpc.ChannelCredentials | None = None,
        root_certificates: bytes | None = None,
        certificate_chain: bytes | None = None,
        private_key: bytes | None = None,
        server_name: str | None = None,
        api_key: str | None = None,
        deadline: float | None = DEFAULT_DEADLINE,
        retries: int = DEFAULT_RETRIES,
        backoff: float = 0.1,
        metadata: Metadata = (),
        options: Sequence[tuple[str, Any]] = (),
        interceptors: Sequence[Any] = (),
        trace: bool = True,
    ) -> None:
        super().__init__(
            target,
            tls=tls,
            credentials=credentials,
            root_certificates=root_certificates,
            certificate_chain=certificate_chain,
            private_key=private_key,
            server_name=server_name,
            api_key=api_key,
            deadline=deadline,
            retries=retries,
            backoff=backoff,
            metadata=metadata,
            options=options,
            trace=trace,
        )
        raw = (
            grpc.secure_channel(self.address, self.credentials, options=self.options)
            if self.credentials is not None
            else grpc.insecure_channel(self.address, options=self.options)
        )
        self._raw_channel = raw
        self.channel: grpc.Channel = grpc.intercept_channel(raw, *interceptors) if interceptors else raw
        self.stub = pb_grpc.AccordionServiceStub(self.channel)

    def close(self) -> None:
        self.closed = True
        self._raw_channel.close()

    def __enter__(self) -> AccordionClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(
        self, method: str, request: Any, *, token: str | None = None, deadline: float | None = None
    ) -> Any:
        """One RPC by name with deadline, token and retries; failures as typed exceptions.

        The request is sent unchanged on every attempt, so a mutating request keeps its
        ``request_id`` across retries and the server applies it at most once.
        """
        rpc, metadata = getattr(self.stub, method), self._metadata(token)
        for attempt in range(self.retries + 1):
            try:
                return rpc(request, timeout=self._deadline(deadline), metadata=metadata)
            except grpc.RpcError as exc:
                time.sleep(self._retry_delay_or_raise(exc, attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    # --- calls without a game ------------------------------------------------------------
    def list_variants(self, variant: str = "", *, deadline: float | None = None) -> list[pb.Variant]:
        """The registered variants (or only ``variant``: an id, name or alias)."""
        reply = self.call("ListVariants", pb.ListVariantsRequest(variant=variant), deadline=deadline)
        return list(reply.variants)

    def new_game(
        self,
        variant: str = "accordion",
        options: Mapping[str, Any] | None = None,
        seed: int | None = None,
        deal: Sequence[str] | None = None,
        *,
        request_id: str | None = None,
        deadline: float | None = None,
    ) -> GameHandle:
        """Deal a game (from ``seed``, an explicit ``deal`` of card texts, or a random seed).

        ``request_id``: the idempotency key (default: 128 random bits, ``new_request_id()``).
        Raises UnknownVariant, InvalidOption, InvalidDeal, Unavailable, DeadlineExceeded, ...
        """
        request = new_game_request(variant, options, seed, deal, request_id)
        reply = self.call("NewGame", request, deadline=deadline)
        return GameHandle(self, reply.game, reply.token, reply)

    def new_game_from_code(
        self,
        code: str,
        options: Mapping[str, Any] | None = None,
        *,
        request_id: str | None = None,
        deadline: float | None = None,
    ) -> GameHandle:
        """A new game of a deal code's cards (``GameHandle.deal_code``, ``share()``): the same
        variant, options and deal as the game it came from, hidden cards still hidden.

        ``options`` may not show what the original hides (``open``, a looser ``undo``): raises
        DealCodeOptions; an unknown code raises DealCodeNotFound.
        """
        request = new_game_request("", options, None, None, request_id, deal_code=code)
        reply = self.call("NewGame", request, deadline=deadline)
        return GameHandle(self, reply.game, reply.token, reply)

    def open_game(self, game_id: str, token: str, *, deadline: float | None = None) -> GameHandle:
        """A handle on an existing game (e.g. one saved as id + token). Raises GameNotFound, ..."""
        reply = self.call("GetGame", pb.GetGameRequest(game_id=game_id), token=token, deadline=deadline)
        return GameHandle(self, reply.game, token)

    def spectate(self, game_id: str, watch_token: str, *, deadline: float | None = None) -> WatchHandle:
        """A read-only handle on a game from its watch token (``GameHandle.watch_token``): it
        reads and watches (refresh, legal_moves, score, watch, picture) and cannot play; the
        service refuses a move with it (``WatchOnly``). Raises GameNotFound for a wrong token."""
        reply = self.call("GetGame", pb.GetGameRequest(game_id=game_id), token=watch_token, deadline=deadline)
        return WatchHandle(self, reply.game, watch_token)


class _HandleBase:
    """What both game handles share: the game, its token, the requests and what a reply changes."""

    client: _Base

    def __init__(self, game: pb.Game, token: str, dealt: pb.NewGameResponse | None = None) -> None:
        self.game = game
        self.id = game.id
        self.token = token  # the play token, or a spectator's watch token
        # What sharing needs (from NewGame, or ``share()``; empty for a game opened by id + token).
        self.watch_token = dealt.watch_token if dealt is not None else ""
        self.deal_code = dealt.deal_code if dealt is not None else ""

    @property
    def version(self) -> int:
        return self.game.version

    @property
    def text(self) -> str:
        """The one-line layout, e.g. ``1:8♦ 2:K♣×3 3:2♠ | stock 30``."""
        return self.game.text

    @property
    def status(self) -> str:
        """``in progress``, ``won`` or ``lost``."""
        return STATUS_NAMES.get(self.game.status, "unknown")

    @property
    def over(self) -> bool:
        return self.game.status in (pb.GAME_STATUS_WON, pb.GAME_STATUS_LOST)

    @property
    def resigned(self) -> bool:
        """Whether the game ended by RESIGN (lost; a resigned game's state ends ``resigned``)."""
        return self.game.status == pb.GAME_STATUS_LOST and self.game.state.endswith(" resigned")

    @property
    def legal(self) -> list[str]:
        """The legal moves' notations as of the last reply (no call)."""
        return [m.notation for m in self.game.legal_moves]

    def _apply_request(self, move: MoveLike, request_id: str | None) -> pb.ApplyMoveRequest:
        return pb.ApplyMoveRequest(
            game_id=self.id,
            move=to_move(move),
            expected_version=self.version,
            request_id=request_id or new_request_id(),
        )

    def _undo_request(self, request_id: str | None) -> pb.UndoRequest:
        return pb.UndoRequest(
            game_id=self.id, expected_version=self.version, request_id=request_id or new_request_id()
        )

    def _moved(self, reply: pb.ApplyMoveResponse | pb.UndoResponse) -> pb.Move:
        """A move's or an undo's reply: the handle takes the new game; the move as played."""
        self.game = reply.game
        return reply.move

    @staticmethod
    def _hinted(reply: pb.HintResponse) -> pb.Move | None:
        return reply.move if reply.HasField("move") else None

    def _watch_request(self, after_version: int) -> pb.WatchGameRequest:
        return pb.WatchGameRequest(game_id=self.id, after_version=after_version)

    def _shared(self, reply: pb.ShareGameResponse) -> pb.ShareGameResponse:
        self.deal_code = reply.deal_code
        self.watch_token = reply.watch_token
        return reply

    def _watch_ended(self, exc: grpc.RpcError) -> AccordionError | None:
        """How a failed watch ends: quietly (None) when this client was closed, else its typed error.

        A stream the caller stops (leaving the loop, ``close()`` on the client) is no error; one
        the server or the network ends (CANCELLED included: ``Cancelled``) is, so a watcher never
        takes a broken stream for the end of the game.
        """
        if self.client.closed and exc.code() == grpc.StatusCode.CANCELLED:
            return None
        return from_rpc_error(exc)

    def __repr__(self) -> str:  # never a token
        return f"{type(self).__name__}(id={self.id!r}, variant={self.game.variant!r}, version={self.version})"


class WatchHandle(_HandleBase):
    """A game read with a token: what a spectator holding the watch token can do (reads and
    ``watch``), and the base of ``GameHandle``, which adds the moves. ``AccordionClient.spectate``
    makes one; the service refuses every change with a watch token (``WatchOnly``).
    """

    def __init__(
        self, client: AccordionClient, game: pb.Game, token: str, dealt: pb.NewGameResponse | None = None
    ) -> None:
        super().__init__(game, token, dealt)
        self.client: AccordionClient = client

    def _call(self, method: str, request: Any, deadline: float | None) -> Any:
        return self.client.call(method, request, token=self.token, deadline=deadline)

    def score(self, *, deadline: float | None = None) -> pb.ScoreResponse:
        reply: pb.ScoreResponse = self._call("Score", pb.ScoreRequest(game_id=self.id), deadline)
        return reply

    def legal_moves(self, *, deadline: float | None = None) -> list[pb.Move]:
        """The moves legal now, from the server (each structured and as notation)."""
        reply = self._call("LegalMoves", pb.LegalMovesRequest(game_id=self.id), deadline)
        return list(reply.moves)

    def refresh(self, *, deadline: float | None = None) -> pb.Game:
        """Reload the game (e.g. after VersionMismatch); returns it."""
        self.game = self._call("GetGame", pb.GetGameRequest(game_id=self.id), deadline).game
        return self.game

    def watch(self, after_version: int = 0, *, deadline: float | None = None) -> Iterator[pb.GameEvent]:
        """The game's events as they happen (no deadline unless given; not retried).

        Leaving the loop or closing the client ends it quietly; a stream the server or the
        network ends raises its typed error (``Cancelled``, ``Unavailable``, ``DeadlineExceeded``).
        """
        stream = self.client.stub.WatchGame(
            self._watch_request(after_version), timeout=deadline, metadata=self.client._metadata(self.token)
        )
        try:
            for reply in stream:
                yield reply.event
        except grpc.RpcError as exc:
            error = self._watch_ended(exc)
            if error is not None:
                raise error from exc
        finally:
            stream.cancel()

    def picture(self, *, deadline: float | None = None) -> bytes:
        """The layout as an SVG image, as the player sees it (GetGamePicture)."""
        body = self._call("GetGamePicture", pb.GetGamePictureRequest(game_id=self.id), deadline)
        data: bytes = body.data
        return data


class GameHandle(WatchHandle):
    """One game: its id, its play token (kept for every call), and the latest ``game`` seen;
    after NewGame also its ``watch_token`` and ``deal_code`` (``share()`` fetches them later).

    ``play`` and ``undo`` send ``expected_version``: after someone else moved, they raise
    ``VersionMismatch``; ``refresh()`` then catches up.
    """

    def share(
        self, *, rotate_watch_token: bool = False, deadline: float | None = None
    ) -> pb.ShareGameResponse:
        """The game's deal code and watch token (ShareGame, the player only). With
        ``rotate_watch_token`` a new watch token is issued and the old one stops working."""
        request = pb.ShareGameRequest(game_id=self.id, rotate_watch_token=rotate_watch_token)
        return self._shared(self._call("ShareGame", request, deadline))

    def play(
        self, move: MoveLike, *, request_id: str | None = None, deadline: float | None = None
    ) -> pb.Move:
        """Play a move (notation or ``Move``); returns the move as played (with its notation).

        ``request_id``: the idempotency key (default: 128 random bits).
        Raises IllegalMove / InvalidMove (``.legal_moves``), VersionMismatch, GameNotFound, ...
        """
        return self._moved(self._call("ApplyMove", self._apply_request(move, request_id), deadline))

    def resign(self, *, request_id: str | None = None, deadline: float | None = None) -> pb.Move:
        """Give the game up: it ends lost and its penalty stands (undo takes it back). Returns
        the RESIGN move. Raises IllegalMove once the game is over, VersionMismatch, ..."""
        return self.play(moves.resign(), request_id=request_id, deadline=deadline)

    def move(
        self,
        from_zone: ZoneLike,
        from_pile: int,
        to_zone: ZoneLike,
        to_pile: int = 0,
        count: int = 1,
        *,
        request_id: str | None = None,
        deadline: float | None = None,
    ) -> pb.Move:
        """A tableau game's MOVE (``moves.move``): ``move("tableau", 3, "tableau", 7, 2)`` is ``3>7 x2``,
        ``move("waste", 1, "foundation")`` is ``w>f``. Returns the move as played."""
        built = moves.move(from_zone, from_pile, to_zone, to_pile, count)
        return self.play(built, request_id=request_id, deadline=deadline)

    def draw(self, *, request_id: str | None = None, deadline: float | None = None) -> pb.Move:
        """DRAW: turn cards from the stock onto the waste. Returns the move as played."""
        return self.play(moves.draw(), request_id=request_id, deadline=deadline)

    def undo(self, *, request_id: str | None = None, deadline: float | None = None) -> pb.Move:
        """Take back the last move; returns it. Raises NothingToUndo, VersionMismatch, ..."""
        return self._moved(self._call("Undo", self._undo_request(request_id), deadline))

    def hint(self, *, deadline: float | None = None) -> pb.Move | None:
        """A suggested move (from what the player sees), or None when the game is over."""
        return self._hinted(self._call("Hint", pb.HintRequest(game_id=self.id), deadline))


# --- asyncio ------------------------------------------------------------------------------


class AsyncAccordionClient(_Base):
    """The same client on ``grpc.aio``: ``async with AsyncAccordionClient(target) as client``.

    Arguments as ``AccordionClient``'s (``interceptors`` are grpc.aio client interceptors).
    """

    def __init__(
        self,
        target: str,
        *,
        tls: bool = False,
        credentials: grpc.ChannelCredentials | None = None,
        root_certificates: bytes | None = None,
        certificate_chain: bytes | None = None,
        private_key: bytes | None = None,
        server_name: str | None = None,
        api_key: str | None = None,
        deadline: float | None = DEFAULT_DEADLINE,
        retries: int = DEFAULT_RETRIES,
        backoff: float = 0.1,
        metadata: Metadata = (),
        options: Sequence[tuple[str, Any]] = (),
        interceptors: Sequence[grpc.aio.ClientInterceptor] = (),
        trace: bool = True,
    ) -> None:
        super().__init__(
            target,
            tls=tls,
            credentials=credentials,
            root_certificates=root_certificates,
            certificate_chain=certificate_chain,
            private_key=private_key,
            server_name=server_name,
            api_key=api_key,
            deadline=deadline,
            retries=retries,
            backoff=backoff,
            metadata=metadata,
            options=options,
            trace=trace,
        )
        icp = list(interceptors) or None
        self.channel = (
            grpc.aio.secure_channel(self.address, self.credentials, options=self.options, interceptors=icp)
            if self.credentials is not None
            else grpc.aio.insecure_channel(self.address, options=self.options, interceptors=icp)
        )
        self.stub = pb_grpc.AccordionServiceStub(self.channel)

    async def close(self) -> None:
        self.closed = True
        await self.channel.close()

    async def __aenter__(self) -> AsyncAccordionClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def call(
        self, method: str, request: Any, *, token: str | None = None, deadline: float | None = None
    ) -> Any:
        """As ``AccordionClient.call``: deadline, token, retries on UNAVAILABLE with the same request."""
        rpc, metadata = getattr(self.stub, method), self._metadata(token)
        for attempt in range(self.retries + 1):
            try:
                return await rpc(request, timeout=self._deadline(deadline), metadata=metadata)
            except grpc.aio.AioRpcError as exc:
                await asyncio.sleep(self._retry_delay_or_raise(exc, attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    async def list_variants(self, variant: str = "", *, deadline: float | None = None) -> list[pb.Variant]:
        reply = await self.call("ListVariants", pb.ListVariantsRequest(variant=variant), deadline=deadline)
        return list(reply.variants)

    async def new_game(
        self,
        variant: str = "accordion",
        options: Mapping[str, Any] | None = None,
        seed: int | None = None,
        deal: Sequence[str] | None = None,
        *,
        request_id: str | None = None,
        deadline: float | None = None,
    ) -> AsyncGameHandle:
        request = new_game_request(variant, options, seed, deal, request_id)
        reply = await self.call("NewGame", request, deadline=deadline)
        return AsyncGameHandle(self, reply.game, reply.token, reply)

    async def new_game_from_code(
        self,
        code: str,
        options: Mapping[str, Any] | None = None,
        *,
        request_id: str | None = None,
        deadline: float | None = None,
    ) -> AsyncGameHandle:
        """As ``AccordionClient.new_game_from_code``."""
        request = new_game_request("", options, None, None, request_id, deal_code=code)
        reply = await self.call("NewGame", request, deadline=deadline)
        return AsyncGameHandle(self, reply.game, reply.token, reply)

    async def open_game(self, game_id: str, token: str, *, deadline: float | None = None) -> AsyncGameHandle:
        reply = await self.call("GetGame", pb.GetGameRequest(game_id=game_id), token=token, deadline=deadline)
        return AsyncGameHandle(self, reply.game, token)

    async def spectate(
        self, game_id: str, watch_token: str, *, deadline: float | None = None
    ) -> AsyncWatchHandle:
        """As ``AccordionClient.spectate``: a read-only handle from a watch token."""
        reply = await self.call(
            "GetGame", pb.GetGameRequest(game_id=game_id), token=watch_token, deadline=deadline
        )
        return AsyncWatchHandle(self, reply.game, watch_token)


class AsyncWatchHandle(_HandleBase):
    """``WatchHandle`` for ``AsyncAccordionClient``: the reads and ``watch``, awaited."""

    def __init__(
        self,
        client: AsyncAccordionClient,
        game: pb.Game,
        token: str,
        dealt: pb.NewGameResponse | None = None,
    ) -> None:
        super().__init__(game, token, dealt)
        self.client: AsyncAccordionClient = client

    async def _call(self, method: str, request: Any, deadline: float | None) -> Any:
        return await self.client.call(method, request, token=self.token, deadline=deadline)

    async def score(self, *, deadline: float | None = None) -> pb.ScoreResponse:
        reply: pb.ScoreResponse = await self._call("Score", pb.ScoreRequest(game_id=self.id), deadline)
        return reply

    async def legal_moves(self, *, deadline: float | None = None) -> list[pb.Move]:
        reply = await self._call("LegalMoves", pb.LegalMovesRequest(game_id=self.id), deadline)
        return list(reply.moves)

    async def refresh(self, *, deadline: float | None = None) -> pb.Game:
        self.game = (await self._call("GetGame", pb.GetGameRequest(game_id=self.id), deadline)).game
        return self.game

    async def watch(
        self, after_version: int = 0, *, deadline: float | None = None
    ) -> AsyncIterator[pb.GameEvent]:
        """As ``GameHandle.watch``: quiet when the caller stops it, typed errors otherwise."""
        call = self.client.stub.WatchGame(
            self._watch_request(after_version), timeout=deadline, metadata=self.client._metadata(self.token)
        )
        try:
            async for reply in call:
                yield reply.event
        except grpc.aio.AioRpcError as exc:
            error = self._watch_ended(exc)
            if error is not None:
                raise error from exc
        except asyncio.CancelledError:
            # grpc.aio cancels a closed channel's calls with CancelledError: that end is quiet,
            # as in the blocking client; the cancellation of the caller's own task is not ours.
            task = asyncio.current_task()
            if not self.client.closed or (task is not None and task.cancelling()):
                raise
        finally:
            call.cancel()

    async def picture(self, *, deadline: float | None = None) -> bytes:
        """As ``WatchHandle.picture``."""
        body = await self._call("GetGamePicture", pb.GetGamePictureRequest(game_id=self.id), deadline)
        data: bytes = body.data
        return data


class AsyncGameHandle(AsyncWatchHandle):
    """``GameHandle`` for ``AsyncAccordionClient``: the same methods, awaited."""

    async def share(
        self, *, rotate_watch_token: bool = False, deadline: float | None = None
    ) -> pb.ShareGameResponse:
        """As ``GameHandle.share``."""
        request = pb.ShareGameRequest(game_id=self.id, rotate_watch_token=rotate_watch_token)
        return self._shared(await self._call("ShareGame", request, deadline))

    async def play(
        self, move: MoveLike, *, request_id: str | None = None, deadline: float | None = None
    ) -> pb.Move:
        return self._moved(await self._call("ApplyMove", self._apply_request(move, request_id), deadline))

    async def resign(self, *, request_id: str | None = None, deadline: float | None = None) -> pb.Move:
        return await self.play(moves.resign(), request_id=request_id, deadline=deadline)

    async def move(
        self,
        from_zone: ZoneLike,
        from_pile: int,
        to_zone: ZoneLike,
        to_pile: int = 0,
        count: int = 1,
        *,
        request_id: str | None = None,
        deadline: float | None = None,
    ) -> pb.Move:
        """As ``GameHandle.move``."""
        built = moves.move(from_zone, from_pile, to_zone, to_pile, count)
        return await self.play(built, request_id=request_id, deadline=deadline)

    async def draw(self, *, request_id: str | None = None, deadline: float | None = None) -> pb.Move:
        """As ``GameHandle.draw``."""
        return await self.play(moves.draw(), request_id=request_id, deadline=deadline)

    async def undo(self, *, request_id: str | None = None, deadline: float | None = None) -> pb.Move:
        return self._moved(await self._call("Undo", self._undo_request(request_id), deadline))

    async def hint(self, *, deadline: float | None = None) -> pb.Move | None:
        return self._hinted(await self._call("Hint", pb.HintRequest(game_id=self.id), deadline))


__all__ = [
    "AccordionClient",
    "AccordionError",
    "AsyncAccordionClient",
    "AsyncGameHandle",
    "AsyncWatchHandle",
    "GameHandle",
    "WatchHandle",
    "new_request_id",
    "parse_watch_key",
    "to_move",
    "watch_key",
]
