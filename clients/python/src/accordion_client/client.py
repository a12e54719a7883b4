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

This module holds the blocking client and its handles; the asyncio client is
``async_client.py`` (its names exported here too), and what both share ``client_base.py``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import grpc

from . import moves

# The names this module held before the split (issue 30) stay importable from it.
from .async_client import AsyncAccordionClient as AsyncAccordionClient
from .async_client import AsyncGameHandle as AsyncGameHandle
from .async_client import AsyncWatchHandle as AsyncWatchHandle
from .client_base import API_KEY_HEADER as API_KEY_HEADER
from .client_base import DEFAULT_DEADLINE as DEFAULT_DEADLINE
from .client_base import DEFAULT_RETRIES as DEFAULT_RETRIES
from .client_base import MAX_RETRY_DELAY as MAX_RETRY_DELAY
from .client_base import STATUS_NAMES as STATUS_NAMES
from .client_base import Metadata as Metadata
from .client_base import MoveLike as MoveLike
from .client_base import _backoff as _backoff
from .client_base import _Base as _Base
from .client_base import _credentials as _credentials
from .client_base import _HandleBase as _HandleBase
from .client_base import new_game_request as new_game_request
from .client_base import new_request_id as new_request_id
from .client_base import parse_watch_key as parse_watch_key
from .client_base import retry_delay as retry_delay
from .client_base import to_move as to_move
from .client_base import watch_key as watch_key
from .errors import AccordionError
from .moves import ZoneLike
from .v1 import accordion_pb2 as pb
from .v1 import accordion_pb2_grpc as pb_grpc


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
