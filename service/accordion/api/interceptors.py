"""One server interceptor for what every RPC shares: a JSON log line and the Prometheus metrics.

The log line has the method, the game id (from the request or NewGame's reply), the final
status code and the latency. It never has metadata (the token travels there), request
bodies or error details.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeAlias

import grpc
import grpc.aio
import structlog

from . import metrics

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


def _game_id(request: Any, response: Any = None) -> str:
    game_id = getattr(request, "game_id", "")
    if not game_id and response is not None and hasattr(response, "game"):
        game_id = response.game.id
    return str(game_id)


def _record(method: str, game_id: str, code: grpc.StatusCode, started: float) -> None:
    elapsed = time.perf_counter() - started
    metrics.RPCS.labels(method, code.name).inc()
    metrics.LATENCY.labels(method).observe(elapsed)
    if code is not grpc.StatusCode.OK:
        metrics.ERRORS.labels(method, code.name).inc()
    emit = log.warning if code in _SERVER_FAULTS else log.info
    emit("rpc", method=method, game_id=game_id or None, code=code.name, latency_ms=round(elapsed * 1000, 3))


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
        method = details.method.lstrip("/")
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
