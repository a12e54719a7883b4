"""What both clients (``client.AccordionClient``, ``async_client.AsyncAccordionClient``) and
their game handles share: request ids, watch keys, moves from notation, the NewGame request,
the retry policy, the channel's set-up and metadata (``_Base``), and a handle's state and
requests (``_HandleBase``). No call is made here: the two clients make them, blocking or awaited.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

import grpc

from .errors import AccordionError, RateLimited, Unavailable, from_rpc_error
from .targets import resolve_target
from .tracecontext import HEADER as TRACEPARENT
from .tracecontext import current_traceparent
from .v1 import accordion_pb2 as pb

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
