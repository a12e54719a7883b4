"""One server interceptor for what every RPC shares: a JSON log line and the Prometheus metrics.

The log line has the method, the game id (from the request or NewGame's reply), the final
status code and the latency. It never has metadata (the token travels there), request
bodies or error details. A game id that is not one (too long, odd characters: anything a
client sends) is cut to ``MAX_LOGGED_ID`` characters.

What it costs per call, since it runs on every one: the wrapped handler is built once per
method, the metric children once per (method, code), and the access line is written by
``AccessLog`` (one f-string and one ``write``, the same JSON structlog would print) once
``server.configure_logging`` set it up; otherwise structlog writes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import inspect
import json
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


def _status(context: Context, failure: BaseException | None) -> grpc.StatusCode:
    # GeneratorExit: grpc dropped a stream whose client went away while a message was in flight.
    if isinstance(failure, (asyncio.CancelledError, GeneratorExit)):
        return grpc.StatusCode.CANCELLED
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return code
    if failure is not None and not isinstance(failure, grpc.aio.AbortError):
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
    """The per-call JSON line, written directly: what structlog's chain in ``configure_logging``
    prints (same keys, same order, same JSON), without a bound logger and a processor chain
    per call.

    ``extra`` fields follow ``event``, then ``level`` and ``timestamp``, as there.

    On a real file or pipe the lines are written in batches: collected, and written
    ``FLUSH_AFTER`` seconds after the first of them with one ``os.write`` per at most
    ``CHUNK`` bytes of whole lines (so lines of worker processes sharing the stream never
    interleave); the server writes what is left when it stops, and a crash loses at most
    those few milliseconds of lines. A write per line cost a server about 30 µs of CPU per
    call (docs/performance.md). On any other stream (a test's StringIO) each line is written
    at once."""

    FLUSH_AFTER = 0.005
    CHUNK = 4096  # PIPE_BUF on Linux: a write this size or smaller to a pipe is atomic

    def __init__(self, stream: TextIO, min_level: int, extra: Mapping[str, object]) -> None:
        self.stream, self.min_level = stream, min_level
        self.tail = "".join(f", {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in extra.items())
        try:
            self.fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
            self.fd = None
        self._pending: list[str] = []
        self._timer: asyncio.TimerHandle | None = None

    def write(self, level: str, method: str, game_id: str, code: str, latency_ms: float) -> None:
        if game_id:
            gid = f'"{game_id}"' if auth.GAME_ID_RE.fullmatch(game_id) else json.dumps(game_id, ensure_ascii=False)
        else:
            gid = "null"
        stamp = datetime.datetime.now(tz=datetime.timezone.utc).isoformat().replace("+00:00", "Z")
        line = (
            f'{{"method": {json.dumps(method)}, "game_id": {gid}, "code": "{code}", "latency_ms": {latency_ms!r}, '
            f'"event": "rpc"{self.tail}, "level": "{level}", "timestamp": "{stamp}"}}\n'
        )
        if self.fd is None:
            try:
                self.stream.write(line)
                self.stream.flush()
            except (OSError, ValueError):  # the stream is gone (closed at exit): nothing to do
                pass
            return
        self._pending.append(line)
        if self._timer is None:
            try:
                self._timer = asyncio.get_running_loop().call_later(self.FLUSH_AFTER, self.flush)
            except RuntimeError:  # no loop running here: write now
                self.flush()

    def flush(self) -> None:
        """Write the lines collected so far."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._pending or self.fd is None:
            return
        pending, self._pending = self._pending, []
        chunks, chunk, size = [], [], 0
        for line in pending:
            data = line.encode()
            if chunk and size + len(data) > self.CHUNK:
                chunks.append(b"".join(chunk))
                chunk, size = [], 0
            chunk.append(data)
            size += len(data)
        chunks.append(b"".join(chunk))
        try:
            self.stream.flush()  # whatever structlog wrote goes first
            for data in chunks:
                while data:
                    data = data[os.write(self.fd, data) :]
        except (OSError, ValueError):  # the stream is gone (closed at exit): nothing to do
            pass


_access_log: AccessLog | None = None
_INFO, _WARNING = 20, 30


def configure_access_log(stream: TextIO | None, min_level: int = _INFO, extra: Mapping[str, object] = ()) -> None:  # type: ignore[assignment]
    """Write access lines directly to ``stream`` (None: through structlog). ``server.configure_logging``
    calls it with structlog's own stream and level."""
    global _access_log
    flush_access_log()
    _access_log = None if stream is None else AccessLog(stream, min_level, dict(extra))


def flush_access_log() -> None:
    """Write the access lines not written yet (the server calls it when it stops)."""
    if _access_log is not None:
        _access_log.flush()


_children: dict[tuple[str, str], tuple[Any, Any, Any]] = {}


def _metric_children(method: str, code: str) -> tuple[Any, Any, Any]:
    found = _children.get((method, code))
    if found is None:
        found = _children[(method, code)] = (
            metrics.RPCS.labels(method, code),
            metrics.LATENCY.labels(method),
            metrics.ERRORS.labels(method, code) if code != "OK" else None,
        )
    return found


def _record(method: str, game_id: str, code: grpc.StatusCode, started: float) -> None:
    elapsed = time.perf_counter() - started
    name = code.name
    rpcs, latency, errors = _metric_children(method, name)
    rpcs.inc()
    latency.observe(elapsed)
    if errors is not None:
        errors.inc()
    fault = code in _SERVER_FAULTS
    access = _access_log
    if access is not None and structlog.is_configured():  # (a test may have reset structlog)
        if (_WARNING if fault else _INFO) >= access.min_level:
            access.write("warning" if fault else "info", method, game_id, name, round(elapsed * 1000, 3))
        return
    emit = log.warning if fault else log.info
    emit("rpc", method=method, game_id=game_id or None, code=name, latency_ms=round(elapsed * 1000, 3))


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
