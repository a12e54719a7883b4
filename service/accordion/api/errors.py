"""Every failure the service reports, mapped to a status code in one place.

A failure becomes an ``ApiError``: a gRPC status code, an ``ErrorInfo`` reason in the
``accordion.v1`` domain, a message for people, and typed details (``BadRequest`` field
violations, the legal moves). ``from_exception`` maps the exceptions of every layer below
(engine, solver, sessions, store) through one table, ``_TABLE``; anything else is a bug and
becomes INTERNAL (logged by the caller). Only api/ raises ``ApiError``.

Errors are bounded: the message, the number of field violations and each one's length are cut
(``MAX_*``), so that no request can make its error bigger than the trailers a client accepts
(gRPC's default limit on received metadata is 8 KiB; grpc-status-details-bin is base64).
Messages never contain the game token: nothing here is given one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

import grpc
import grpc.aio
from google.protobuf import any_pb2, duration_pb2
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from accordion import engine, sessions, solver, store

from . import callinfo, metrics, wire
from .fairpool import NotStarted, PoolFull
from .solving import NoWinnableDeal

DOMAIN = "accordion.v1"
C = grpc.StatusCode
MAX_MESSAGE = 1024  # characters of an error's message
MAX_FIELDS = 8  # field violations reported (the first ones)
MAX_FIELD = 100  # characters of a violation's field path (option names are echoed there)
MAX_DESCRIPTION = 200  # characters of a violation's description


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ApiError(Exception):
    """A failure to report to the client, with everything its ``google.rpc.Status`` needs."""

    def __init__(
        self,
        code: grpc.StatusCode,
        reason: str,
        message: str,
        *,
        metadata: Mapping[str, str] | None = None,
        fields: Sequence[tuple[str, str]] = (),
        details: Sequence[Message] = (),
        layer: str = "",
    ) -> None:
        message = _cut(message, MAX_MESSAGE)
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message
        # ops: the layer that refused the call (accordion_rpc_refused_total); "" for an error
        # that is not a refusal.
        self.layer = layer
        self.metadata = dict(metadata or {})
        self.fields = tuple((_cut(f, MAX_FIELD), _cut(d, MAX_DESCRIPTION)) for f, d in fields[:MAX_FIELDS])
        self.details = tuple(details)

    def to_status(self) -> grpc.Status:
        """The rich status: ErrorInfo first, then BadRequest, then the extra details."""
        info = error_details_pb2.ErrorInfo(reason=self.reason, domain=DOMAIN, metadata=self.metadata)
        messages: list[Message] = [info]
        if self.fields:
            messages.append(
                error_details_pb2.BadRequest(
                    field_violations=[
                        error_details_pb2.BadRequest.FieldViolation(field=f, description=d)
                        for f, d in self.fields
                    ]
                )
            )
        messages.extend(self.details)
        packed = []
        for m in messages:
            any_msg = any_pb2.Any()
            any_msg.Pack(m)
            packed.append(any_msg)
        code = self.code.value[0]
        return rpc_status.to_status(status_pb2.Status(code=code, message=self.message, details=packed))

    def __repr__(self) -> str:
        return f"ApiError({self.code.name}, {self.reason}, {self.message!r})"


async def abort(context: grpc.aio.ServicerContext[Any, Any], error: ApiError) -> NoReturn:
    """End the call with ``error``'s status, counted by its reason (``accordion_rpc_error_reasons_total``),
    noted for the access line, and with the call's ``x-request-id`` in its trailers."""
    metrics.count_error_reason(error.reason)
    status = error.to_status()
    info = callinfo.CURRENT.get()
    if info is not None:
        info.reason, info.layer = error.reason, error.layer
        # abort_with_status sends the status's trailers only, not those set before: add the id.
        status = _with_request_id(status, info.request_id)
    await context.abort_with_status(status)
    raise AssertionError("abort_with_status returned")  # pragma: no cover (it always raises)


class _Status(grpc.Status):
    def __init__(self, code: grpc.StatusCode, details: str, trailing_metadata: Any) -> None:
        self.code, self.details, self.trailing_metadata = code, details, trailing_metadata


def _with_request_id(status: grpc.Status, request_id: str) -> grpc.Status:
    trailers = (*status.trailing_metadata, (callinfo.REQUEST_ID_HEADER, request_id))
    return _Status(status.code, status.details, trailers)


# --- constructors for the service's own checks -----------------------------------------


def invalid_request(fields: Sequence[tuple[str, str]]) -> ApiError:
    shown = [(_cut(f, MAX_FIELD), _cut(d, MAX_DESCRIPTION)) for f, d in fields[:MAX_FIELDS]]
    count = f" ({len(fields)} problems, the first {MAX_FIELDS} listed)" if len(fields) > MAX_FIELDS else ""
    summary = "; ".join(f"{f}: {d}" for f, d in shown)
    return ApiError(
        C.INVALID_ARGUMENT, "INVALID_REQUEST", f"invalid request{count}: {summary}", fields=fields
    )


def malformed_request(why: str) -> ApiError:
    return ApiError(C.INVALID_ARGUMENT, "MALFORMED_REQUEST", f"the request is not a valid message: {why}")


def request_id_reused() -> ApiError:
    return ApiError(
        C.INVALID_ARGUMENT,
        "REQUEST_ID_REUSED",
        "this request_id was already used for a different request",
        fields=[("request_id", "already used for a different request; use a new id")],
    )


def version_mismatch(game_id: str, expected: int, current: int) -> ApiError:
    return ApiError(
        C.ABORTED,
        "VERSION_MISMATCH",
        f"game {game_id} is at version {current}, not {expected}: reload and retry",
        metadata={"game_id": game_id, "expected_version": str(expected), "current_version": str(current)},
    )


def missing_token() -> ApiError:
    return ApiError(
        C.UNAUTHENTICATED,
        "MISSING_TOKEN",
        "this call needs the game's token as 'authorization: Bearer <token>' metadata",
    )


GAME_NOT_FOUND = (
    "no such game, or the token does not open it (never created, expired, or another game's token)"
)


def game_not_found() -> ApiError:
    """One answer for an unknown id and for a wrong token: it tells nothing of which ids exist."""
    return ApiError(C.NOT_FOUND, "GAME_NOT_FOUND", GAME_NOT_FOUND)


def deadline_exceeded(operation: str) -> ApiError:
    return ApiError(C.DEADLINE_EXCEEDED, "DEADLINE_EXCEEDED", f"the deadline passed before {operation}")


def store_unavailable(operation: str) -> ApiError:
    return ApiError(
        C.UNAVAILABLE,
        "STORE_UNAVAILABLE",
        f"the game store did not answer ({operation}); retry later",
        metadata={"operation": operation},
    )


def game_corrupt(game_id: str) -> ApiError:
    return ApiError(
        C.DATA_LOSS,
        "GAME_CORRUPT",
        f"game {game_id} is stored in a form that cannot be read",
        metadata={"game_id": game_id},
    )


def move_error(exc: engine.InvalidMoveError | engine.IllegalMoveError, legal: Message | None) -> ApiError:
    """An unreadable or illegal move, listing the legal moves (JSON in metadata, structured in details)."""
    illegal = isinstance(exc, engine.IllegalMoveError)
    return ApiError(
        C.FAILED_PRECONDITION if illegal else C.INVALID_ARGUMENT,
        exc.reason,
        str(exc),
        metadata={"legal_moves": json.dumps(list(exc.legal), ensure_ascii=False)},
        fields=() if illegal else [("move", str(exc).split("; legal now:")[0])],
        details=[legal] if legal is not None else (),
    )


def api_key_missing() -> ApiError:
    return ApiError(
        C.UNAUTHENTICATED, "API_KEY_MISSING", "this server needs an API key as 'x-api-key' metadata"
    )


def api_key_invalid() -> ApiError:
    return ApiError(C.UNAUTHENTICATED, "API_KEY_INVALID", "the API key is not known to this server")


def _retry_info(retry_after: float) -> tuple[error_details_pb2.RetryInfo, int]:
    """The RetryInfo of every RESOURCE_EXHAUSTED answer (at least 1 ns), and the same wait in
    whole milliseconds (at least 1) for the message and the metadata."""
    delay = duration_pb2.Duration()
    delay.FromNanoseconds(max(1, round(retry_after * 1e9)))
    return error_details_pb2.RetryInfo(retry_delay=delay), max(1, math.ceil(retry_after * 1000))


def rate_limited(key_name: str, rate: float, burst: int, retry_after: float) -> ApiError:
    """RESOURCE_EXHAUSTED with a ``RetryInfo`` saying when the key's next call would pass."""
    retry, ms = _retry_info(retry_after)
    return ApiError(
        C.RESOURCE_EXHAUSTED,
        "RATE_LIMITED",
        f"API key {key_name!r} is over its limit ({rate:g}/s, burst {burst}): retry in {ms} ms",
        metadata={"key_name": key_name, "rate": f"{rate:g}", "burst": str(burst), "retry_after_ms": str(ms)},
        details=[retry],
        layer="api_key_rate",
    )


def client_rate_limited(method: str, rate: float, burst: int, retry_after: float) -> ApiError:
    """RESOURCE_EXHAUSTED ``RATE_LIMITED``: this client's calls of ``method`` (NewGame, WatchGame)
    are over their per-client rate (``--newgame-rate``, ``--watch-rate``)."""
    retry, ms = _retry_info(retry_after)
    return ApiError(
        C.RESOURCE_EXHAUSTED,
        "RATE_LIMITED",
        f"too many {method} calls from this client ({rate:g}/s, burst {burst}): retry in {ms} ms",
        metadata={
            "limit": f"{method} per client",
            "rate": f"{rate:g}",
            "burst": str(burst),
            "retry_after_ms": str(ms),
        },
        details=[retry],
        layer="newgame_rate" if method == "NewGame" else "watch_rate",
    )


def capacity_exceeded(what: str, limit: int, retry_after: float) -> ApiError:
    """RESOURCE_EXHAUSTED with a RetryInfo; ``what`` names the budget that is full (the limits'
    counters, the solver's queues)."""
    retry, ms = _retry_info(retry_after)
    return ApiError(
        C.RESOURCE_EXHAUSTED,
        "CAPACITY_EXCEEDED",
        f"too many {what} (at most {limit}): retry in {ms} ms",
        metadata={"limit": what, "max": str(limit), "retry_after_ms": str(ms)},
        details=[retry],
        layer=REFUSAL_LAYERS.get(what, "capacity"),
    )


# ops: which layer refused, by the budget ``capacity_exceeded`` names (accordion_rpc_refused_total).
REFUSAL_LAYERS = {
    "calls on this server": "process_limit",
    "calls from one client": "client_limit",
    "health calls": "health_budget",
    "health calls from one client": "health_budget",
    "health Watch streams": "health_budget",
    "health Watch streams from one client": "health_budget",
    "WatchGame streams on one connection": "watch_limit",
    "WatchGame streams on one game": "watch_limit",
    "solver searches queued from one client": "solver_queue",
    "solver searches queued on this server": "solver_queue",
}


def store_full(retry_after: float) -> ApiError:
    """RESOURCE_EXHAUSTED ``STORE_FULL``: the memory store is at its cap and every game in it is
    in play. The RetryInfo says when the least recently used game will have been idle long
    enough to make room (if nobody plays it meanwhile), in whole seconds: no finer account of
    other players' activity is given."""
    seconds = max(1, math.ceil(retry_after))
    retry, ms = _retry_info(seconds)
    return ApiError(
        C.RESOURCE_EXHAUSTED,
        "STORE_FULL",
        "the server holds as many games as it may, all of them in play: no new game now; retry in "
        f"{seconds} s",
        metadata={"retry_after_ms": str(ms)},
        details=[retry],
        layer="store_full",
    )


# --- the mapping table for exceptions from the layers below --------------------------------


def _engine(code: grpc.StatusCode, field: str = "") -> Callable[[Any], ApiError]:
    """An engine or solver error about a request value: its reason, its message, the field."""

    def make(exc: engine.EngineError) -> ApiError:
        return ApiError(code, exc.reason, str(exc), fields=[(field, str(exc))] if field else ())

    return make


def _refused(exc: sessions.MoveRefused) -> ApiError:
    return move_error(exc.cause, wire.legal_response(exc.legal, exc.texts, exc.version))


# Exception class → its ApiError; a class not listed takes its nearest listed base class.
_TABLE: dict[type[BaseException], Callable[[Any], ApiError]] = {
    # the engine and the solver
    engine.InvalidMoveError: lambda exc: move_error(exc, None),
    engine.IllegalMoveError: lambda exc: move_error(exc, None),
    engine.UnknownVariantError: _engine(C.INVALID_ARGUMENT, "variant"),
    engine.InvalidOptionError: _engine(C.INVALID_ARGUMENT, "options"),
    engine.InvalidCardError: _engine(C.INVALID_ARGUMENT, "deal.cards"),
    engine.InvalidDealError: _engine(C.INVALID_ARGUMENT, "deal"),
    engine.NothingToUndoError: _engine(C.FAILED_PRECONDITION),
    engine.NothingToRedoError: _engine(C.FAILED_PRECONDITION),
    engine.UndoNotAllowedError: _engine(C.FAILED_PRECONDITION),
    solver.HiddenInformationError: _engine(C.FAILED_PRECONDITION),
    solver.UnsupportedGameError: _engine(C.FAILED_PRECONDITION),
    NoWinnableDeal: _engine(C.FAILED_PRECONDITION, "winnable_only"),
    # the solver's fair pool (fairpool.py): over the client's share, or no worker free in time
    PoolFull: lambda exc: capacity_exceeded(exc.what, exc.limit, exc.retry_after),
    NotStarted: lambda exc: deadline_exceeded("a solver worker was free (the search never started)"),
    engine.EngineError: _engine(C.INVALID_ARGUMENT),
    # the session layer
    sessions.MoveRefused: _refused,
    sessions.GameNotFound: lambda exc: game_not_found(),  # BadToken too: the same answer
    sessions.WatchOnly: lambda exc: ApiError(C.PERMISSION_DENIED, "WATCH_ONLY", str(exc)),
    sessions.HiddenCards: lambda exc: ApiError(C.FAILED_PRECONDITION, "HIDDEN_INFORMATION", str(exc)),
    sessions.DealCodeNotFound: lambda exc: ApiError(C.NOT_FOUND, "DEAL_CODE_NOT_FOUND", str(exc)),
    sessions.DealCodeOptions: lambda exc: ApiError(
        C.INVALID_ARGUMENT, "DEAL_CODE_OPTIONS", str(exc), fields=[("options", str(exc))]
    ),
    sessions.VersionMismatch: lambda exc: version_mismatch(exc.game_id, exc.expected, exc.current),
    sessions.RequestIdReused: lambda exc: request_id_reused(),
    sessions.StoreUnavailable: lambda exc: store_unavailable(exc.operation),
    sessions.DeadlineExceeded: lambda exc: deadline_exceeded(exc.operation),
    sessions.GameCorrupt: lambda exc: game_corrupt(exc.game_id),
    # the store, for calls that reach it without the session layer
    store.GameNotFound: lambda exc: game_not_found(),
    store.VersionConflict: lambda exc: version_mismatch(exc.game_id, exc.expected, exc.current),
    store.GameExists: lambda exc: ApiError(C.ABORTED, "GAME_EXISTS", "a game with that id exists; retry"),
    store.StoreUnavailable: lambda exc: store_unavailable("store"),
    store.StoreFull: lambda exc: store_full(exc.retry_after),
}


def from_exception(exc: BaseException) -> ApiError | None:
    """The ``ApiError`` for a known exception; None for anything else (a bug: INTERNAL)."""
    if isinstance(exc, ApiError):
        return exc
    for cls in type(exc).__mro__:
        make = _TABLE.get(cls)
        if make is not None:
            return make(exc)
    return None


def internal() -> ApiError:
    return ApiError(C.INTERNAL, "INTERNAL", "internal error (logged on the server)")


# The documented table (docs/api.md, "Errors"): each reason's one status code. Tests hold replies to it.
REASONS: dict[str, grpc.StatusCode] = {
    "INVALID_REQUEST": C.INVALID_ARGUMENT,
    "MALFORMED_REQUEST": C.INVALID_ARGUMENT,
    "UNKNOWN_VARIANT": C.INVALID_ARGUMENT,
    "INVALID_OPTION": C.INVALID_ARGUMENT,
    "INVALID_CARD": C.INVALID_ARGUMENT,
    "INVALID_DEAL": C.INVALID_ARGUMENT,
    "INVALID_MOVE": C.INVALID_ARGUMENT,
    "REQUEST_ID_REUSED": C.INVALID_ARGUMENT,
    "ILLEGAL_MOVE": C.FAILED_PRECONDITION,
    "NOTHING_TO_UNDO": C.FAILED_PRECONDITION,
    "NOTHING_TO_REDO": C.FAILED_PRECONDITION,
    "UNDO_NOT_ALLOWED": C.FAILED_PRECONDITION,
    "HIDDEN_INFORMATION": C.FAILED_PRECONDITION,
    "SOLVER_UNSUPPORTED": C.FAILED_PRECONDITION,
    "WINNABLE_NOT_FOUND": C.FAILED_PRECONDITION,
    "GAME_NOT_FOUND": C.NOT_FOUND,
    "DEAL_CODE_NOT_FOUND": C.NOT_FOUND,
    "DEAL_CODE_OPTIONS": C.INVALID_ARGUMENT,
    "WATCH_ONLY": C.PERMISSION_DENIED,
    "VERSION_MISMATCH": C.ABORTED,
    "GAME_EXISTS": C.ABORTED,
    "MISSING_TOKEN": C.UNAUTHENTICATED,
    "API_KEY_MISSING": C.UNAUTHENTICATED,
    "API_KEY_INVALID": C.UNAUTHENTICATED,
    "RATE_LIMITED": C.RESOURCE_EXHAUSTED,
    "CAPACITY_EXCEEDED": C.RESOURCE_EXHAUSTED,  # accordion.api.limits, the solver's queues
    "STORE_FULL": C.RESOURCE_EXHAUSTED,  # the memory store's cap, no game idle enough to evict
    "STORE_UNAVAILABLE": C.UNAVAILABLE,
    "DEADLINE_EXCEEDED": C.DEADLINE_EXCEEDED,
    "GAME_CORRUPT": C.DATA_LOSS,
    "INTERNAL": C.INTERNAL,
}
