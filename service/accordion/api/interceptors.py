"""One server interceptor for what every RPC shares: a JSON log line and the Prometheus metrics.

The log line has the method, the game id (from the request or NewGame's reply), the final
status code and the latency. It never has metadata (the token travels there), request
bodies or error details. A game id that is not one (too long, odd characters: anything a
client sends) is cut to ``MAX_LOGGED_ID`` characters.

What it costs per call, since it runs on every one: the wrapped handler is built once per
method, and the call itself only appends a tuple (method, game id, code, latency, time) to a
list. Everything else is done for the whole list at once, ``AccessLog.FLUSH_AFTER`` seconds
after its first call (and by ``flush_access_log`` when the server stops): the metrics (one
``inc(n)`` per method and code, one ``observe`` per call, on children built once) and the
access lines (``AccessLog``: the JSON structlog would print, each with its own call's time,
written with one ``os.write`` per few KiB). Done per call, all that cost a server ~34 µs of
CPU a call (docs/performance.md). Without a loop, on a stream that is not a file or pipe (a
test's StringIO), or when ``server.configure_logging`` did not set the access log up
(structlog writes the line then), each call is recorded at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import inspect
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, TextIO, TypeAlias

import grpc
import grpc.aio
import structlog

from . import auth, metrics

log = structlog.get_logger("accordion.rpc")
Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"
# Codes that mean the server (or its store) failed rather than the caller: logged as warnings.
_SERVER_FAULTS = {
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DATA_LOSS,
}
_CODE_NAMES = {code: code.name for code in grpc.StatusCode}  # cheaper than the enum's .name
_STATUS_CODE, _OK = grpc.StatusCode, grpc.StatusCode.OK  # (per call: no attribute look-ups)
# One call not recorded yet: (method, game id, status code, latency in seconds, time.time()).
Call: TypeAlias = "tuple[str, str, grpc.StatusCode, float, float]"


def _status(context: Context, failure: BaseException | None) -> grpc.StatusCode:
    code = context.code()
    if failure is None:  # most calls: no exception to look at
        return code if isinstance(code, _STATUS_CODE) else _OK
    # GeneratorExit: grpc dropped a stream whose client went away while a message was in flight.
    if isinstance(failure, (asyncio.CancelledError, GeneratorExit)):
        return grpc.StatusCode.CANCELLED
    if isinstance(code, grpc.StatusCode):
        return code
    if not isinstance(failure, grpc.aio.AbortError):
        return grpc.StatusCode.UNKNOWN
    return grpc.StatusCode.OK


MAX_LOGGED_ID = 64  # characters of a game id that is not a valid one


def _game_id(request: Any, response: Any = None) -> str:
    game_id = getattr(request, "game_id", "")
    if not game_id and response is not None and hasattr(response, "game"):
        game_id = response.game.id
    game_id = str(game_id)
    if len(game_id) > MAX_LOGGED_ID:
        return game_id[:MAX_LOGGED_ID] + "…"
    return game_id


class AccessLog:
    """The per-call JSON lines, written directly: what structlog's chain in ``configure_logging``
    prints (same keys, same order, same JSON, the same ISO time), without a bound logger and a
    processor chain per call.

    ``extra`` fields follow ``event``, then ``level`` and ``timestamp``, as there.

    ``write`` gets the calls of a batch: on a real file or pipe their lines go out with one
    ``os.write`` per at most ``CHUNK`` bytes of whole lines (so lines of worker processes
    sharing the stream never interleave); on any other stream (a test's StringIO) with
    ``write``. A crash loses the calls of the batch not written yet: at most ``FLUSH_AFTER``
    seconds of lines and metrics."""

    FLUSH_AFTER = 0.005
    CHUNK = 4096  # PIPE_BUF on Linux: a write this size or smaller to a pipe is atomic

    def __init__(self, stream: TextIO, min_level: int, extra: Mapping[str, object]) -> None:
        self.stream, self.min_level = stream, min_level
        self.tail = "".join(f", {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in extra.items())
        try:
            self.fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
            self.fd = None
        self._methods: dict[str, str] = {}  # method → its JSON string
        self._second, self._prefix = -1, ""  # the last whole second stamped, as "YYYY-MM-DDTHH:MM:SS"

    def _stamp(self, wall: float) -> str:
        """``wall`` (time.time()) as structlog's ``TimeStamper(fmt="iso", utc=True)`` prints it:
        ``datetime.fromtimestamp(wall, utc).isoformat()`` with "Z", which rounds to the
        nearest microsecond (half to even) and leaves out a fraction of 0. The date and time
        of day are formatted once per second."""
        second = int(wall)
        micros = round((wall - second) * 1e6)  # exact: as datetime rounds the fraction
        if micros >= 1_000_000:
            second, micros = second + 1, micros - 1_000_000
        if second != self._second:
            text = datetime.datetime.fromtimestamp(second, tz=datetime.timezone.utc).isoformat()
            self._second, self._prefix = second, text[:19]
        return f"{self._prefix}.{micros:06d}Z" if micros else f"{self._prefix}Z"

    def write(self, calls: list[Call]) -> None:
        """Write the lines of ``calls`` the level lets through (server faults are warnings)."""
        if self.min_level > _WARNING:  # not even the faults (the metrics are counted apart)
            return
        info = self.min_level <= _INFO
        lines = []
        methods, tail, stamp, valid_id = self._methods, self.tail, self._stamp, auth.GAME_ID_RE.fullmatch
        for method, game_id, code, elapsed, wall in calls:
            if code in _SERVER_FAULTS:
                level = "warning"
            elif info:
                level = "info"
            else:
                continue
            quoted = methods.get(method)
            if quoted is None:
                if len(methods) >= 256:  # method names are the service's; bound it all the same
                    methods.clear()
                quoted = methods[method] = json.dumps(method)
            if game_id:
                gid = f'"{game_id}"' if valid_id(game_id) else json.dumps(game_id, ensure_ascii=False)
            else:
                gid = "null"
            lines.append(
                f'{{"method": {quoted}, "game_id": {gid}, "code": "{_CODE_NAMES[code]}", '
                f'"latency_ms": {round(elapsed * 1000, 3)!r}, "event": "rpc"{tail}, "level": "{level}", '
                f'"timestamp": "{stamp(wall)}"}}\n'
            )
        if not lines:
            return
        try:
            if self.fd is None:
                self.stream.write("".join(lines))
                self.stream.flush()
                return
            self.stream.flush()  # whatever structlog wrote goes first
            data = "".join(lines).encode()
            view, start, size = memoryview(data), 0, len(data)
            while start < size:
                # Up to the last newline that fits in CHUNK bytes (the lines' JSON has no other
                # newline); a longer line, which a cut game id never makes, on its own.
                end = size
                if end - start > self.CHUNK:
                    end = data.rfind(b"\n", start, start + self.CHUNK) + 1
                    end = end or data.find(b"\n", start) + 1 or size
                chunk, start = view[start:end], end
                while chunk:
                    chunk = chunk[os.write(self.fd, chunk) :]
        except (OSError, ValueError):  # the stream is gone (closed at exit): nothing to do
            pass


_access_log: AccessLog | None = None
_INFO, _WARNING = 20, 30
# The calls not recorded yet, while the access log is on a file or pipe (None: record each call
# at once), and the timer that records them. ``_record`` appends; ``flush_access_log`` empties.
_pending: list[Call] | None = None
_timer: asyncio.TimerHandle | None = None
MAX_PENDING = 1024  # recorded at once beyond this: bounds memory even if a timer never fires
_failures = logging.getLogger(__name__)  # a failed flush is told here (stderr)


def configure_access_log(stream: TextIO | None, min_level: int = _INFO, extra: Mapping[str, object] = ()) -> None:  # type: ignore[assignment]
    """Write access lines directly to ``stream`` (None: through structlog). ``server.configure_logging``
    calls it with structlog's own stream and level."""
    global _access_log, _pending
    flush_access_log()
    _access_log = None if stream is None else AccessLog(stream, min_level, dict(extra))
    # Batches only where they pay (a write per line on a file or pipe is a system call); the
    # level does not matter: the metrics are in the batch too.
    _pending = [] if _access_log is not None and _access_log.fd is not None else None


def flush_access_log() -> None:
    """Record the calls not recorded yet: their metrics and access lines. The timer calls it
    ``FLUSH_AFTER`` seconds after the first of them; the server when it stops."""
    global _timer
    if _timer is not None:
        _timer.cancel()
        _timer = None
    if not _pending:
        return
    # Taken out first: whatever fails below, these calls are not recorded twice, and the next
    # call arms a new timer.
    calls = _pending.copy()
    _pending.clear()
    _record_calls(calls)


def _arm() -> None:
    global _timer
    try:
        _timer = asyncio.get_running_loop().call_later(AccessLog.FLUSH_AFTER, flush_access_log)
    except RuntimeError:  # no loop running here: record now
        flush_access_log()


def _record_calls(calls: list[Call]) -> None:
    """Metrics, then lines (once a line is out, its call is counted). A failure is logged, not
    raised: this runs in a loop callback and at stop, and must not lose the other part or
    stop the server's shutdown."""
    _count(calls)
    try:
        access = _access_log
        if access is not None and structlog.is_configured():  # (a test may have reset structlog)
            access.write(calls)
            return
        for method, game_id, code, elapsed, _wall in calls:
            emit = log.warning if code in _SERVER_FAULTS else log.info
            latency_ms = round(elapsed * 1000, 3)
            emit("rpc", method=method, game_id=game_id or None, code=code.name, latency_ms=latency_ms)
    except Exception:
        _failures.exception("writing access lines failed")


_children: dict[tuple[str, grpc.StatusCode], tuple[Any, Any, Any]] = {}


def _metric_children(method: str, code: grpc.StatusCode) -> tuple[Any, Any, Any]:
    found = _children.get((method, code))
    if found is None:
        name = code.name
        found = _children[(method, code)] = (
            metrics.RPCS.labels(method, name),
            metrics.LATENCY.labels(method),
            metrics.ERRORS.labels(method, name) if code is not grpc.StatusCode.OK else None,
        )
    return found


def _count(calls: list[Call]) -> None:
    """One ``inc(n)`` per (method, code) and one ``observe`` per call, on the real metric objects
    (worker processes write them to the files the supervisor's /metrics reads)."""
    latencies: dict[tuple[str, grpc.StatusCode], list[float]] = {}
    for method, _game_id, code, elapsed, _wall in calls:
        found = latencies.get((method, code))
        if found is None:
            found = latencies[(method, code)] = []
        found.append(elapsed)
    for (method, code), seconds in latencies.items():
        try:  # one key failing (say, no room to grow a metrics file) does not lose the others
            rpcs, latency, errors = _metric_children(method, code)
            rpcs.inc(len(seconds))
            if errors is not None:
                errors.inc(len(seconds))
            for elapsed in seconds:
                latency.observe(elapsed)
        except Exception:
            _failures.exception("recording RPC metrics failed")


def _record(method: str, game_id: str, code: grpc.StatusCode, started: float) -> None:
    """The per-call part: a tuple on the list (and the timer armed by its first call)."""
    call = (method, game_id, code, time.perf_counter() - started, time.time())
    pending = _pending
    if pending is None:
        _record_calls([call])
        return
    pending.append(call)
    n = len(pending)
    if n == 1:
        _arm()
    elif n >= MAX_PENDING:
        flush_access_log()


class ObservabilityInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Wraps each handler's behaviour: unary and server-streaming (the only kinds served here)."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None:
            return handler
        # One wrapped handler per handler, built on first use: the service's handlers are built
        # once. (Handlers made for one call, e.g. an API-key refusal, come and go: the cache is
        # emptied when it fills; it holds the handlers it is keyed by, so no id is reused.)
        key = (details.method, id(handler))
        wrapped = self._wrapped.get(key)
        if wrapped is None:
            if len(self._wrapped) >= 256:
                self._wrapped.clear()
            wrapped = self._wrapped[key] = (self._wrap(handler, details.method.lstrip("/")), handler)
        return wrapped[0]

    def __init__(self) -> None:
        self._wrapped: dict[tuple[str, int], tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    @staticmethod
    def _wrap(handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                _unary(handler.unary_unary, method),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            # Generators yield; coroutines (grpc's health Watch) write with context.write.
            # grpc forbids mixing the styles, so each keeps its own.
            wrap = _stream if inspect.isasyncgenfunction(handler.unary_stream) else _unary
            return grpc.unary_stream_rpc_method_handler(
                wrap(handler.unary_stream, method),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler


def _unary(behavior: Callable[..., Any], method: str) -> Callable[..., Awaitable[Any]]:
    async def wrapped(request: Any, context: Context) -> Any:
        started, failure, response = time.perf_counter(), None, None
        try:
            response = await behavior(request, context)
            return response
        except BaseException as exc:
            failure = exc
            raise
        finally:
            _record(method, _game_id(request, response), _status(context, failure), started)

    return wrapped


def _stream(behavior: Callable[..., Any], method: str) -> Callable[..., AsyncIterator[Any]]:
    async def wrapped(request: Any, context: Context) -> AsyncIterator[Any]:
        started, failure = time.perf_counter(), None
        try:
            async with contextlib.aclosing(behavior(request, context)) as items:  # close it now, not at GC
                async for item in items:
                    yield item
        except BaseException as exc:
            failure = exc
            raise
        finally:
            _record(method, _game_id(request), _status(context, failure), started)

    return wrapped


class _ObservedGeneric(grpc.GenericRpcHandler):  # type: ignore[misc]
    """A generic handler whose method handlers come out wrapped (built once per method)."""

    def __init__(self, inner: grpc.GenericRpcHandler) -> None:
        self._inner = inner
        self._wrapped: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        handler = self._inner.service(details)
        if handler is None:
            return None
        found = self._wrapped.get(details.method)
        if found is None or found[1] is not handler:
            if len(self._wrapped) >= 256:
                self._wrapped.clear()
            found = self._wrapped[details.method] = (
                ObservabilityInterceptor._wrap(handler, details.method.lstrip("/")), handler
            )
        return found[0]

    def service_name(self) -> str | None:
        name = getattr(self._inner, "service_name", None)
        return name() if callable(name) else None


class ObservedServer:
    """Stands in for a ``grpc.aio.Server`` when registering servicers: their handlers get the
    log line and the metrics without a server interceptor. (grpc.aio runs every interceptor as
    a coroutine on every call; wrapping the handlers once costs nothing per call.) With the
    API-key interceptor on, ``ObservabilityInterceptor`` is used instead: it must come first to
    log the calls that interceptor refuses."""

    def __init__(self, server: grpc.aio.Server) -> None:
        self.server = server

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        self.server.add_generic_rpc_handlers(tuple(_ObservedGeneric(h) for h in handlers))

    def add_registered_method_handlers(self, service: str, handlers: dict[str, grpc.RpcMethodHandler]) -> None:
        self.server.add_registered_method_handlers(
            service, {name: ObservabilityInterceptor._wrap(h, f"{service}/{name}") for name, h in handlers.items()}
        )
