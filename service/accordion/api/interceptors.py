"""What every RPC of every service shares: ``wrap``, the one per-method wrapper (API keys,
limits, NewGame's and WatchGame's per-client rates, the request timeout, error mapping), registered through
``Host``; each call is recorded (access line, metrics) by ``access_log.record``. The request
message is read within ``--request-timeout`` by ``request_timer.RequestTimer``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn, TypeAlias, cast

import grpc
import grpc.aio

from . import access_log, callinfo, errors, metrics
from .access_log import Context, game_id_of, log, record, status_of
from .apikeys import ApiKeyInterceptor
from .limits import (
    HEALTH_PREFIX,
    HEALTH_WATCH,
    WATCH_METHODS,
    Admission,
    ClientAddresses,
    client_of,
    publish_client,
)
from .ratelimit import Limit, RateLimiter
from .request_timer import EndedInCore, RequestTimer

if TYPE_CHECKING:  # (imported only when traces are on: server.py)
    from .tracing import Tracing

Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"
NEW_GAME = "accordion.v1.AccordionService/NewGame"
WATCH_GAME = "accordion.v1.AccordionService/WatchGame"
DEADLINE_SLACK = 0.25  # seconds: a call cancelled this close to its deadline was ended by it


@dataclass(frozen=True)
class ClientRate:
    """A per-client rate of one method's calls: NewGame's (``--newgame-rate``, ``--newgame-burst``:
    NewGame needs no credential and each one takes a place in the store) and WatchGame's
    (``--watch-rate``, ``--watch-burst``: each stream opened costs a store read and, on Redis, a
    connection of its own, so opening and cancelling them in a loop took most of a server's
    CPU, issue 28). Callers with an API key are exempt (their key's own rate applies).
    ``limiter`` is the store's (Redis: shared by every process on it); ``method`` names the
    limit in its key and its refusal."""

    limit: Limit
    limiter: RateLimiter
    timeout: float = 2.0  # a limiter that cannot decide in this long lets the call through
    method: str = "NewGame"
    # client → time.monotonic() until which its calls are refused: the limiter said so, and a
    # refusal changes nothing in GCRA (other processes' calls only push it later), so until
    # then this process refuses without asking (a client that ignores the RetryInfo and asks
    # again at once costs no Redis call).
    _refused: dict[str, float] = field(default_factory=dict, compare=False, repr=False)
    MAX_REFUSED: ClassVar[int] = 4096  # clients remembered; beyond, the expired ones are dropped

    async def check(self, client: str) -> None:
        """Raises RESOURCE_EXHAUSTED ``RATE_LIMITED`` (with RetryInfo) when ``client`` is over."""
        refused = self._refused
        until = refused.get(client)
        if until is not None:
            left = until - time.monotonic()
            if left > 0:
                raise errors.client_rate_limited(self.method, self.limit.rate, self.limit.burst, left)
            del refused[client]
        try:
            decision = await asyncio.wait_for(
                self.limiter.acquire(f"{self.method.lower()}:{client}", self.limit), self.timeout
            )
        except Exception as exc:  # noqa: BLE001 (fail open, as for API keys: the other limits still hold)
            metrics.RATE_LIMITER_ERRORS.inc()
            log.warning(f"rate limiter unavailable; {self.method} allowed", error=type(exc).__name__)
            return
        if not decision.allowed:
            if len(refused) >= self.MAX_REFUSED:
                now = time.monotonic()
                for name in [name for name, t in refused.items() if t <= now]:
                    del refused[name]
            if len(refused) < self.MAX_REFUSED:
                refused[client] = time.monotonic() + decision.retry_after
            raise errors.client_rate_limited(
                self.method, self.limit.rate, self.limit.burst, decision.retry_after
            )


@dataclass(frozen=True)
class Gate:
    """What the wrapper checks before a call reaches its handler: who the client is
    (``addresses``), the limits' counters, when keys are configured the API keys, and
    NewGame's and WatchGame's per-client rates (None: unlimited); ``tracing``: a span per call
    (None: off, and the wrapper is the same as without it)."""

    admission: Admission
    api_keys: ApiKeyInterceptor | None = None
    addresses: ClientAddresses = field(default_factory=ClientAddresses)
    new_game: ClientRate | None = None
    watch_game: ClientRate | None = None
    tracing: Tracing | None = None
    timer: RequestTimer = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "timer", RequestTimer(self.admission.limits.request_timeout))


async def _mapped(context: Context, exc: Exception, method: str) -> NoReturn:
    """Abort with the status ``exc`` maps to; a bug (nothing maps it) is logged and INTERNAL."""
    error = errors.from_exception(exc)
    if error is None:
        log.error("unhandled exception", method=method, exc_info=exc)
        error = errors.internal()
    await errors.abort(context, error)


class _Call:
    """One call through a ``wrap`` wrapper: ``async with _Call(...) as call`` around all the
    wrapper does. Inside, the wrapper sets what the call holds (the client counted in, a watch
    slot, the request and response) and calls ``started()`` just before the handler. On the way
    out, an exception is mapped to its status (``_mapped``, which aborts; aborts and
    cancellations pass as they are), what the call holds is given back, and the call is
    recorded with its status and outcome (``access_log.record``)."""

    __slots__ = (
        "method",
        "health",
        "admission",
        "context",
        "arrived",
        "client",
        "watching",
        "request",
        "response",
        "in_flight",
        "info",
        "streaming",
        "handler_started",
    )

    def __init__(
        self,
        method: str,
        health: bool,
        admission: Admission,
        context: Context,
        in_flight: metrics.InFlight,
        streaming: bool = False,
    ) -> None:
        self.method, self.health, self.admission, self.context = method, health, admission, context
        # This method's child of accordion_rpc_in_flight: up while the handler runs, down only
        # once it has ended and given back what it held (so a leaked handler shows there).
        self.in_flight = in_flight
        self.arrived = callinfo.arrival()
        self.handler_started = 0.0
        self.streaming = streaming  # a response stream: its deadline ending it is no error
        # The request id and trace id (one pass over the headers); published for errors.abort.
        self.info = info = callinfo.from_metadata(context.invocation_metadata())
        info.seq, info.arrived = callinfo.ARRIVALS.count, self.arrived
        callinfo.CURRENT.set(info)
        self.client: str | None = None  # counted in (None: not yet, or refused)
        # The connection and game whose watch slot the call holds (None: none; "" is a game id
        # too, until validation refuses it, and its slot must be given back like any other).
        self.watching: tuple[str, str] | None = None
        self.request: object = None
        self.response: object = None

    def started(self) -> None:
        """The handler starts now (the end of the call's queueing); the request id goes out
        with the reply's trailers (errors.abort adds it to an error's)."""
        self.handler_started = time.perf_counter()
        self.context.set_trailing_metadata(((callinfo.REQUEST_ID_HEADER, self.info.request_id),))

    def enter_watch(self, game_id: str) -> None:
        """Takes a watch slot of ``game_id`` for this call's connection; raises the refusal."""
        connection = self.context.peer()
        self.admission.enter_watch(connection, game_id)
        self.watching = (connection, game_id)

    async def __aenter__(self) -> _Call:
        self.in_flight.inc()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, failure: BaseException | None, traceback: TracebackType | None
    ) -> None:
        try:
            if isinstance(failure, Exception) and not isinstance(failure, grpc.aio.AbortError):
                await _mapped(self.context, failure, self.method)
        finally:
            if self.watching is not None:
                self.admission.leave_watch(*self.watching)
            if self.client is not None:
                if self.method == HEALTH_WATCH:
                    self.admission.leave_health_watch(self.client)
                else:
                    self.admission.leave_call(self.health, self.client)
            self.in_flight.dec()
            game_id = game_id_of(self.request, self.response)
            code, outcome = self._outcome(failure)
            caller = self.client or client_of(self.context.peer())
            record(
                self.method,
                game_id,
                code,
                self.arrived,
                self.handler_started,
                self.info,
                caller,
                outcome,
                self.request,
                self.response,
            )

    def _outcome(self, failure: BaseException | None) -> tuple[grpc.StatusCode, str]:
        """The status the call ended with and what it means (``access_log.OUTCOMES``)."""
        info = self.info
        if isinstance(failure, EndedInCore):
            code = failure.code
            info.layer = (
                "deadline_expired" if code is grpc.StatusCode.DEADLINE_EXCEEDED else "message_too_large"
            )
            return code, "refused"
        code = status_of(self.context, failure)
        if code is grpc.StatusCode.OK:
            return code, "ok"
        if info.layer:
            return code, "refused"
        if code is grpc.StatusCode.CANCELLED and not info.reason:
            # Not sent by us: the client cancelled or went away, or its deadline passed (the
            # core cancels the handler then). A stream's deadline is how clients end watches;
            # a unary call past its deadline was answered too late: an error.
            left = self.context.time_remaining()
            # (the client's own timer fires first and resets the stream: the server's copy of
            # the deadline, set on arrival, is then a network delay ahead)
            if left is not None and left <= DEADLINE_SLACK:
                code = grpc.StatusCode.DEADLINE_EXCEEDED
                return code, "client_deadline" if self.streaming else "error"
            return code, "client_cancelled"
        return code, "error"


def _behavior(fn: object) -> Callable[..., Any]:
    """A handler's behaviour as what it is here: async (grpc's stubs type them synchronous)."""
    return cast(Callable[..., Any], fn)


def wrap(handler: Handler, method: str, gate: Gate) -> Handler:
    """``handler`` with what every call of every service shares, in this order: the API key
    (when keys are on; health is exempt), the limits (``accordion.api.limits``), the request
    message read within ``--request-timeout``, the handler, the mapping of its exceptions to a
    ``google.rpc.Status``, and the access line and metrics (``access_log.record``).

    A handler that takes one request (unary-unary, unary-stream) is registered as taking a
    request *stream*: grpc then calls the wrapper as soon as the call's headers arrive, not
    once its message has, so a call that never sends its message is counted, limited and
    timed out like any other (grpc's own ``maximum_concurrent_rpcs`` counts such calls too,
    but for every method alike, health included, and never times them out)."""
    # What the handler is, and what it is registered as.
    if handler.unary_unary is not None:
        behavior, make, shape = _behavior(handler.unary_unary), grpc.stream_unary_rpc_method_handler, "unary"
    elif handler.unary_stream is not None:
        behavior, make = _behavior(handler.unary_stream), grpc.stream_stream_rpc_method_handler
        # Generators yield; coroutines (grpc's health Watch) write with context.write, and
        # grpc forbids mixing the styles, so each keeps its own.
        shape = "stream" if inspect.isasyncgenfunction(behavior) else "unary"
    elif handler.stream_unary is not None:
        behavior, make, shape = (
            _behavior(handler.stream_unary),
            grpc.stream_unary_rpc_method_handler,
            "requests",
        )
    elif handler.stream_stream is not None:
        behavior, make, shape = (
            _behavior(handler.stream_stream),
            grpc.stream_stream_rpc_method_handler,
            "requests",
        )
    else:  # pragma: no cover (a handler of no kind)
        return handler
    if gate.tracing is not None:  # what the request names (game, variant) on the call's span
        behavior = gate.tracing.handler(behavior)
    health = method.startswith(HEALTH_PREFIX)
    streams = handler.unary_stream is not None or handler.stream_stream is not None  # (replies)
    health_watch = method == HEALTH_WATCH  # a stream that never ends: a budget apart from Check's
    watch = method in WATCH_METHODS
    admission, api_keys, read, addresses = gate.admission, gate.api_keys, gate.timer.read, gate.addresses
    in_flight = metrics.in_flight(method)
    new_game = gate.new_game if method == NEW_GAME else None
    watch_rate = gate.watch_game if method == WATCH_GAME else None

    def admit(client: str) -> str:
        """``client`` counted in, and named as the call's client for what it does next (the
        solver's fair pool queues its searches by it); raises the refusal (nothing counted)."""
        if health_watch:
            admission.enter_health_watch(client)
        else:
            admission.enter_call(health, client)
        publish_client(client)
        return client

    def address(context: Context) -> str:
        """The client's address (``--trusted-proxies``); the metadata is read only when some
        proxy is trusted (it costs a tuple of the call's headers)."""
        peer = context.peer()
        if not addresses.trusted:
            return client_of(peer)
        return addresses.client(peer, context.invocation_metadata())

    async def keyed(context: Context) -> str:
        """With API keys: the key checked, and its name counted in as the client."""
        assert api_keys is not None
        key_name = await api_keys.caller(method, context.invocation_metadata())
        return admit(f"key:{key_name}" if key_name else address(context))

    async def unary(requests: AsyncIterator[Any], context: Context) -> Any:
        async with _Call(method, health, admission, context, in_flight, streams) as call:
            call.client = admit(address(context)) if api_keys is None else await keyed(context)
            if new_game is not None and not call.client.startswith("key:"):
                await new_game.check(call.client)  # an API key has its own rate
            call.request = await read(context)
            call.started()
            call.response = await behavior(call.request, context)
            return call.response

    async def stream(requests: AsyncIterator[Any], context: Context) -> AsyncIterator[Any]:
        async with _Call(method, health, admission, context, in_flight, streaming=True) as call:
            call.client = admit(address(context)) if api_keys is None else await keyed(context)
            if watch_rate is not None and not call.client.startswith("key:"):
                await watch_rate.check(call.client)  # before the request is read: a refusal costs no read
            call.request = request = await read(context)
            if watch:
                call.enter_watch(request.game_id)
            call.started()
            info = call.info
            async with contextlib.aclosing(behavior(request, context)) as items:  # close it now, not at GC
                async for item in items:
                    info.bytes_out += access_log.size_of(item)
                    yield item

    async def streamed_requests(requests: AsyncIterator[Any], context: Context) -> Any:
        """Handlers that take a request stream (reflection) get it as it is (recorded without a
        game: the call has no one request)."""
        async with _Call(method, health, admission, context, in_flight, streaming=True) as call:
            call.client = admit(address(context)) if api_keys is None else await keyed(context)
            call.started()
            result = behavior(requests, context)
            if inspect.isasyncgen(result):
                async with contextlib.aclosing(result) as items:
                    async for item in items:
                        await context.write(item)
                return None
            return await result

    wrapper = {"unary": unary, "stream": stream, "requests": streamed_requests}[shape]
    if gate.tracing is not None:  # the call inside its span (tracing.py)
        wrapper = gate.tracing.call(wrapper, method, shape)
    return make(
        wrapper,
        request_deserializer=handler.request_deserializer,
        response_serializer=handler.response_serializer,
    )


class _WrappedGeneric(grpc.GenericRpcHandler):
    """A generic handler whose method handlers come out wrapped (built once per method)."""

    def __init__(self, inner: grpc.GenericRpcHandler, gate: Gate) -> None:
        self._inner, self._gate = inner, gate
        self._wrapped: dict[str, tuple[Handler, Handler]] = {}

    def service(self, details: grpc.HandlerCallDetails) -> Handler | None:
        handler = self._inner.service(details)
        if handler is None:
            return None
        found = self._wrapped.get(details.method)
        if found is None or found[1] is not handler:
            if len(self._wrapped) >= 256:  # method names come from clients: bound the cache
                self._wrapped.clear()
            wrapped = wrap(handler, details.method.lstrip("/"), self._gate)
            found = self._wrapped[details.method] = (wrapped, handler)
        return found[0]

    def service_name(self) -> str | None:
        name = getattr(self._inner, "service_name", None)
        return name() if callable(name) else None


class Host:
    """Stands in for a ``grpc.aio.Server`` when registering servicers: every handler of every
    service registered through it is ``wrap``-ped once. (No server interceptor: grpc.aio runs
    each as a coroutine on every call, and it sees a call without its peer.)"""

    def __init__(self, server: grpc.aio.Server, gate: Gate) -> None:
        self.server, self.gate = server, gate

    def add_generic_rpc_handlers(self, generic_rpc_handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        self.server.add_generic_rpc_handlers(
            tuple(_WrappedGeneric(h, self.gate) for h in generic_rpc_handlers)
        )

    def add_registered_method_handlers(self, service: str, handlers: dict[str, Handler]) -> None:
        self.server.add_registered_method_handlers(
            service, {name: wrap(h, f"{service}/{name}", self.gate) for name, h in handlers.items()}
        )
