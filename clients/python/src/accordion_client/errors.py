"""Typed exceptions built from the service's rich errors (``google.rpc.Status`` details).

Every error the service sends carries an ``ErrorInfo`` (domain ``accordion.v1``) whose
``reason`` picks the class here; request problems add ``BadRequest`` field violations and a
refused move adds the legal moves. Errors without a rich status (a proxy, the transport)
get the class of their status code.

    AccordionError
    ├── InvalidArgument (.field_violations)
    │   ├── UnknownVariant, InvalidOption, InvalidDeal, RequestIdReused
    │   └── InvalidMove (also MoveRejected: .legal_moves, .legal)
    │   └── DealCodeOptions (options a deal code may not change: ``open``, a looser ``undo``)
    ├── FailedPrecondition
    │   ├── IllegalMove (also MoveRejected)
    │   └── NothingToUndo, UndoNotAllowed (the game's ``undo`` rule refuses it)
    ├── GameNotFound (DealCodeNotFound), VersionMismatch (.current_version, .expected_version)
    ├── Unauthenticated (also API_KEY_MISSING / API_KEY_INVALID)
    ├── PermissionDenied
    │   └── WatchOnly (a watch token on a call that changes the game)
    ├── Unavailable, DeadlineExceeded, Cancelled, ResourceExhausted
    │   └── RateLimited (.retry_delay: seconds, from google.rpc.RetryInfo)
    └── GameCorrupt, Internal
"""

from __future__ import annotations

import json
from typing import Any

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from .v1 import accordion_pb2 as pb

DOMAIN = "accordion.v1"


class AccordionError(Exception):
    """A failed call: the status ``code``, the ``reason`` (ErrorInfo), a ``message`` for people.

    ``metadata`` is the ErrorInfo metadata; ``field_violations`` the BadRequest's
    ``(field, description)`` pairs; ``details`` the raw ``google.protobuf.Any`` details.
    """

    code: grpc.StatusCode = grpc.StatusCode.UNKNOWN

    def __init__(
        self,
        message: str,
        *,
        code: grpc.StatusCode | None = None,
        reason: str = "",
        metadata: dict[str, str] | None = None,
        field_violations: list[tuple[str, str]] | None = None,
        legal: list[pb.Move] | None = None,
        details: list[Any] | None = None,
        retry_delay: float | None = None,
    ) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message
        self.reason = reason
        self.metadata = dict(metadata or {})
        self.field_violations = list(field_violations or [])
        self.details = list(details or [])
        self._legal = list(legal or [])
        self.retry_delay = retry_delay  # seconds, when the server sent a RetryInfo

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code.name}, {self.reason or '-'}, {self.message!r})"


class MoveRejected(AccordionError):
    """A move the service refused, unreadable or illegal: ``legal_moves`` lists what is legal now.

    ``legal_moves`` are notations (``["10D>4D", "deal"]``); ``legal`` the structured moves
    when the service sent them (it does), each with its notation too.
    """

    @property
    def legal_moves(self) -> list[str]:
        if self._legal:
            return [m.notation for m in self._legal]
        try:
            found = json.loads(self.metadata.get("legal_moves", "[]"))
        except ValueError:
            return []
        return [str(m) for m in found] if isinstance(found, list) else []

    @property
    def legal(self) -> list[pb.Move]:
        return list(self._legal)

    @property
    def why(self) -> str:
        """The service's words without the legal moves it lists after them: for an illegal move
        ``8D>9D is not legal: 8♦ can go only onto the pile 1 or 3 to its left; 9♦ is 7 to its
        right`` (the list is ``legal_moves``)."""
        return self.message.split("; legal now:")[0]


class InvalidArgument(AccordionError):
    code = grpc.StatusCode.INVALID_ARGUMENT


class UnknownVariant(InvalidArgument):
    pass


class InvalidOption(InvalidArgument):
    pass


class InvalidDeal(InvalidArgument):
    """``INVALID_DEAL`` or ``INVALID_CARD``: the explicit deal is not one."""


class RequestIdReused(InvalidArgument):
    pass


class InvalidMove(InvalidArgument, MoveRejected):
    """Text that is not a move (``INVALID_MOVE``)."""


class DealCodeOptions(InvalidArgument):
    """NewGame from a deal code with options that would show what the original hides (``open``)."""


class FailedPrecondition(AccordionError):
    code = grpc.StatusCode.FAILED_PRECONDITION


class IllegalMove(FailedPrecondition, MoveRejected):
    """A well-formed move the rules do not allow now (``ILLEGAL_MOVE``)."""


class NothingToUndo(FailedPrecondition):
    pass


class UndoNotAllowed(FailedPrecondition):
    """The game's ``undo`` rule refuses taking this move back (e.g. ``undo=visible``, a turn-up)."""


class GameNotFound(AccordionError):
    code = grpc.StatusCode.NOT_FOUND


class DealCodeNotFound(GameNotFound):
    """A deal code the service does not know (mistyped, or expired)."""


class VersionMismatch(AccordionError):
    """``expected_version`` was stale: ``current_version`` is where the game is now."""

    code = grpc.StatusCode.ABORTED

    @property
    def current_version(self) -> int | None:
        return _int(self.metadata.get("current_version"))

    @property
    def expected_version(self) -> int | None:
        return _int(self.metadata.get("expected_version"))


class Aborted(AccordionError):
    code = grpc.StatusCode.ABORTED


class Unauthenticated(AccordionError):
    code = grpc.StatusCode.UNAUTHENTICATED


class PermissionDenied(AccordionError):
    code = grpc.StatusCode.PERMISSION_DENIED


class WatchOnly(PermissionDenied):
    """A watch token (read-only) on a call that changes the game or needs the player (``WATCH_ONLY``)."""


class Unavailable(AccordionError):
    code = grpc.StatusCode.UNAVAILABLE


class DeadlineExceeded(AccordionError):
    code = grpc.StatusCode.DEADLINE_EXCEEDED


class Cancelled(AccordionError):
    """The call was cancelled by the server or on the way (not by this client's caller)."""

    code = grpc.StatusCode.CANCELLED


class ResourceExhausted(AccordionError):
    code = grpc.StatusCode.RESOURCE_EXHAUSTED


class RateLimited(ResourceExhausted):
    """The API key is over its rate limit (``RATE_LIMITED``); ``retry_delay`` says when to retry."""


class GameCorrupt(AccordionError):
    code = grpc.StatusCode.DATA_LOSS


class Internal(AccordionError):
    code = grpc.StatusCode.INTERNAL


REASON_CLASSES: dict[str, type[AccordionError]] = {
    "INVALID_REQUEST": InvalidArgument,
    "MALFORMED_REQUEST": InvalidArgument,
    "UNKNOWN_VARIANT": UnknownVariant,
    "INVALID_OPTION": InvalidOption,
    "INVALID_CARD": InvalidDeal,
    "INVALID_DEAL": InvalidDeal,
    "INVALID_MOVE": InvalidMove,
    "REQUEST_ID_REUSED": RequestIdReused,
    "ILLEGAL_MOVE": IllegalMove,
    "NOTHING_TO_UNDO": NothingToUndo,
    "NOTHING_TO_REDO": FailedPrecondition,
    "UNDO_NOT_ALLOWED": UndoNotAllowed,
    "WATCH_ONLY": WatchOnly,
    "DEAL_CODE_NOT_FOUND": DealCodeNotFound,
    "DEAL_CODE_OPTIONS": DealCodeOptions,
    "GAME_NOT_FOUND": GameNotFound,
    "VERSION_MISMATCH": VersionMismatch,
    "GAME_EXISTS": Aborted,
    "MISSING_TOKEN": Unauthenticated,
    "API_KEY_MISSING": Unauthenticated,
    "API_KEY_INVALID": Unauthenticated,
    "RATE_LIMITED": RateLimited,
    "BAD_TOKEN": PermissionDenied,
    "STORE_UNAVAILABLE": Unavailable,
    "DEADLINE_EXCEEDED": DeadlineExceeded,
    "GAME_CORRUPT": GameCorrupt,
    "INTERNAL": Internal,
}

CODE_CLASSES: dict[grpc.StatusCode, type[AccordionError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPrecondition,
    grpc.StatusCode.NOT_FOUND: GameNotFound,
    grpc.StatusCode.ABORTED: Aborted,
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDenied,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceeded,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhausted,
    grpc.StatusCode.CANCELLED: Cancelled,
    grpc.StatusCode.DATA_LOSS: GameCorrupt,
    grpc.StatusCode.INTERNAL: Internal,
}


def from_rpc_error(exc: grpc.RpcError) -> AccordionError:
    """The typed exception for a failed call (sync ``grpc.RpcError`` or ``grpc.aio.AioRpcError``)."""
    code: grpc.StatusCode = exc.code() if hasattr(exc, "code") else grpc.StatusCode.UNKNOWN
    message: str = (exc.details() if hasattr(exc, "details") else None) or code.name
    reason, metadata = "", {}
    fields: list[tuple[str, str]] = []
    legal: list[pb.Move] = []
    details: list[Any] = []
    retry_delay: float | None = None
    try:
        status = rpc_status.from_call(exc)  # type: ignore[arg-type]
    except ValueError:  # a status whose code or message disagrees with the call's: keep the call's
        status = None
    if status is not None:
        message = status.message or message
        details = list(status.details)
        for detail in status.details:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                if info.domain in (DOMAIN, ""):
                    reason, metadata = info.reason, dict(info.metadata)
            elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                bad = error_details_pb2.BadRequest()
                detail.Unpack(bad)
                fields.extend((v.field, v.description) for v in bad.field_violations)
            elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                retry = error_details_pb2.RetryInfo()
                detail.Unpack(retry)
                retry_delay = retry.retry_delay.ToNanoseconds() / 1e9
            elif detail.Is(pb.LegalMovesResponse.DESCRIPTOR):
                moves = pb.LegalMovesResponse()
                detail.Unpack(moves)
                legal.extend(moves.moves)
    cls = REASON_CLASSES.get(reason) or CODE_CLASSES.get(code, AccordionError)
    return cls(
        message,
        code=code,
        reason=reason,
        metadata=metadata,
        field_violations=fields,
        legal=legal,
        details=details,
        retry_delay=retry_delay,
    )


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
