"""OpenTelemetry traces (issue 34): a server span for each RPC, children for its store calls
and solver runs, exported over OTLP/gRPC (``--otlp-endpoint``, OTEL_EXPORTER_OTLP_ENDPOINT).

Off by default, and then free: nothing imports this module (``server.py`` does only when an
endpoint is configured), ``interceptors.wrap`` builds the same wrapper as without it, the store
and the solver are not wrapped. On, the wrappers are chosen once per method at registration:

* ``Tracing.call``: the RPC's span (kind SERVER) around the whole wrapped call (limits, the
  request's read, the handler, the error mapping), its parent the W3C ``traceparent`` of the
  client's metadata when there is one; ended with the gRPC code and the ErrorInfo reason the
  client got (read back from the status sent);
* ``Tracing.handler``: what the request says, on that span (game id, request id, variant);
* ``TracedStore``: a child span per store call (``store load``, ``store compare_and_set``, …);
* ``Tracing.solver``: a child span per solver run (queue wait included: what the call waited).

Never on a span: metadata (the token travels there), request bodies, moves, cards, error
messages (they may quote a position); only the method, ids, the variant, code and reason.
The sessions layer knows nothing of this: its store is wrapped from outside.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextvars import Token
from typing import Any, TypeAlias, TypeVar

import grpc
from google.rpc import error_details_pb2, status_pb2
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.trace import Span, SpanKind, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from accordion.store.base import GameRecord, GameStore, StoredReply, WatchEvent

from .access_log import Context, game_id_of, status_of
from .limits import HEALTH_PREFIX

Attached: TypeAlias = "Token[otel_context.Context]"  # what ``otel_context.attach`` returns, for ``detach``

T = TypeVar("T")
_PROPAGATOR = TraceContextTextMapPropagator()
_STATUS_DETAILS = "grpc-status-details-bin"
_TRACE_HEADERS = ("traceparent", "tracestate")  # W3C trace context; nothing else of the metadata is read
# The access line's request id (not the idempotency key): the caller's header, or the one the
# server gave the call in its trailing metadata.
_REQUEST_ID = "x-request-id"
# Codes that are the server's failure (the span's status is ERROR); a caller's mistake is not.
_SERVER_FAULTS = {
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DATA_LOSS,
}
MAX_ATTRIBUTE = 64  # characters of an id taken from a request (clients choose them)


def otlp_exporter(endpoint: str) -> SpanExporter:
    """OTLP over gRPC to ``endpoint`` (``http://host:port``: plaintext; ``https://``: TLS)."""
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(endpoint=endpoint, insecure=endpoint.startswith("http://"))


class Tracing:
    """One process's tracer: spans batched to ``exporter`` (the SDK's BatchSpanProcessor:
    a thread, OTEL_BSP_* settings); the sampler is the SDK's (OTEL_TRACES_SAMPLER: by default
    every trace, and a client's sampled flag is followed)."""

    def __init__(self, exporter: SpanExporter, service_name: str = "accordion") -> None:
        # OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, when set, win over the default name.
        resource = Resource.create({"service.name": service_name})
        self.provider = TracerProvider(resource=resource)
        self.provider.add_span_processor(BatchSpanProcessor(exporter))
        self.tracer = self.provider.get_tracer("accordion.api")

    def shutdown(self) -> None:
        """Export what is left (bounded by the exporter's timeout) and stop the thread."""
        self.provider.shutdown()

    # --- the RPC's span ----------------------------------------------------------------------
    def _start(self, method: str, context: Context) -> tuple[Span, Attached]:
        service, _, name = method.rpartition("/")
        attributes = {"rpc.system": "grpc", "rpc.service": service, "rpc.method": name}
        carrier: dict[str, str] = {}
        for key, value in context.invocation_metadata() or ():
            if key in _TRACE_HEADERS and isinstance(value, str):
                carrier[key] = value
            elif key == _REQUEST_ID and isinstance(value, str):  # the caller's (access log's) id
                attributes["accordion.request_id"] = value[:MAX_ATTRIBUTE]
        parent = _PROPAGATOR.extract(carrier) if carrier else None
        span = self.tracer.start_span(method, context=parent, kind=SpanKind.SERVER, attributes=attributes)
        return span, otel_context.attach(trace.set_span_in_context(span))

    @staticmethod
    def _end(span: Span, token: Attached, context: Context, failure: BaseException | None) -> None:
        otel_context.detach(token)
        if not span.is_recording():  # not sampled: its context went to the children, nothing more
            span.end()
            return
        code = status_of(context, failure)
        span.set_attribute("rpc.grpc.status_code", code.value[0])
        span.set_attribute("rpc.grpc.code", code.name)
        trailing = _trailing(context)
        for key, value in trailing:
            if key == _REQUEST_ID and isinstance(value, str):
                span.set_attribute("accordion.request_id", value[:MAX_ATTRIBUTE])
        if code is not grpc.StatusCode.OK:
            reason = _reason(trailing)
            if reason:
                span.set_attribute("accordion.reason", reason)
            if code in _SERVER_FAULTS:
                span.set_status(StatusCode.ERROR, code.name)
        span.end()

    def call(self, wrapper: Callable[..., Any], method: str, shape: str) -> Callable[..., Any]:
        """``wrapper`` (``interceptors.wrap``'s, of shape unary, stream or requests) inside the
        RPC's span; health's calls as they are (probes every second: noise, not users)."""
        if method.startswith(HEALTH_PREFIX):
            return wrapper
        start, end = self._start, self._end
        if shape == "stream":

            async def stream(requests: AsyncIterator[Any], context: Context) -> AsyncIterator[Any]:
                span, token = start(method, context)
                failure: BaseException | None = None
                try:
                    async with contextlib.aclosing(wrapper(requests, context)) as items:
                        async for item in items:
                            yield item
                except BaseException as exc:
                    failure = exc
                    raise
                finally:
                    end(span, token, context, failure)

            return stream

        async def unary(requests: AsyncIterator[Any], context: Context) -> Any:
            span, token = start(method, context)
            failure: BaseException | None = None
            try:
                return await wrapper(requests, context)
            except BaseException as exc:
                failure = exc
                raise
            finally:
                end(span, token, context, failure)

        return unary

    def handler(self, behavior: Callable[..., Any]) -> Callable[..., Any]:
        """``behavior`` (a servicer's handler) that first notes what the request names on the
        current span: ``game_id``, ``variant`` (NewGame, ListVariants). Never its ``request_id``:
        an idempotency key is a secret (a NewGame retried with it gets the game's token)."""

        def noted(request: Any) -> Span:
            span = trace.get_current_span()
            if not span.is_recording():
                return span
            for field, key in _REQUEST_ATTRIBUTES:
                value = getattr(request, field, None)
                if isinstance(value, str) and value:
                    span.set_attribute(key, value[:MAX_ATTRIBUTE])
            return span

        if not inspect.iscoroutinefunction(behavior):  # a stream's generator: the request only

            def streamed(request: Any, context: Context) -> Any:
                noted(request)
                return behavior(request, context)

            return streamed

        async def answered(request: Any, context: Context) -> Any:
            span = noted(request)
            response = await behavior(request, context)
            if not getattr(request, "game_id", ""):  # NewGame's: the game id is in its reply
                game_id = game_id_of(request, response)
                if game_id:
                    span.set_attribute("accordion.game_id", game_id)
            return response

        return answered

    # --- children: the solver, the store -----------------------------------------------------
    def solver(self, run: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
        """``Solving._run`` with a span per run (``solver <pool>``: the wait for a thread and
        the search; what was searched is not told)."""
        tracer = self.tracer

        @functools.wraps(run)
        async def traced(pool: Any, client: str, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
            with tracer.start_as_current_span(f"solver {getattr(pool, 'name', '')}".strip()):
                return await run(pool, client, fn, *args, **kwargs)

        return traced

    def store(self, store: GameStore) -> GameStore:
        return TracedStore(store, self.tracer)


_REQUEST_ATTRIBUTES = (
    ("game_id", "accordion.game_id"),
    ("variant", "accordion.variant"),
)


def _trailing(context: Context) -> tuple[tuple[str, Any], ...]:
    """The call's trailing metadata (grpc-status-details-bin once it aborted)."""
    try:
        return tuple(context.trailing_metadata() or ())
    except Exception:  # noqa: BLE001 (an older grpc without the getter: nothing, no failure)
        return ()


def _reason(trailing: tuple[tuple[str, Any], ...]) -> str:
    """The ErrorInfo reason of the status the call ended with ("" when it has none)."""
    for key, value in trailing:
        if key == _STATUS_DETAILS and isinstance(value, bytes):
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return str(info.reason)
    return ""


_UNTRACED = contextlib.nullcontext()  # (reusable: it holds nothing)


class TracedStore(GameStore):
    """``inner`` with a span per call (``store <operation>``, the game id; never the data).
    ``watch`` is passed through: a stream as long as the watcher, not one store call."""

    def __init__(self, inner: GameStore, tracer: trace.Tracer) -> None:
        self.inner, self._tracer = inner, tracer
        self.in_process = inner.in_process

    def _span(self, operation: str, game_id: str = "") -> Any:
        if not trace.get_current_span().is_recording():  # the call is not sampled: no child either
            return _UNTRACED
        attributes = {"db.operation.name": operation}
        if game_id:
            attributes["accordion.game_id"] = game_id[:MAX_ATTRIBUTE]
        return self._tracer.start_as_current_span(
            f"store {operation}", kind=SpanKind.CLIENT, attributes=attributes
        )

    async def create(self, record: GameRecord, *, ttl: float) -> None:
        with self._span("create", record.game_id):
            await self.inner.create(record, ttl=ttl)

    async def load(self, game_id: str, *, credential: bytes = b"") -> GameRecord:
        with self._span("load", game_id):
            return await self.inner.load(game_id, credential=credential)

    async def compare_and_set(
        self,
        game_id: str,
        expected_version: int,
        data: bytes,
        *,
        ttl: float,
        event: bytes,
        request_id: str = "",
        fingerprint: bytes = b"",
        reply: bytes = b"",
    ) -> StoredReply | None:
        with self._span("compare_and_set", game_id):
            return await self.inner.compare_and_set(
                game_id,
                expected_version,
                data,
                ttl=ttl,
                event=event,
                request_id=request_id,
                fingerprint=fingerprint,
                reply=reply,
            )

    async def get_reply(self, game_id: str, request_id: str) -> StoredReply | None:
        with self._span("get_reply", game_id):
            return await self.inner.get_reply(game_id, request_id)

    async def claim_request(
        self, key: str, fingerprint: bytes, reply: bytes, *, ttl: float
    ) -> StoredReply | None:
        with self._span("claim_request"):  # (the key names the caller's API key: not told)
            return await self.inner.claim_request(key, fingerprint, reply, ttl=ttl)

    async def replace_token_hash(self, game_id: str, expected: bytes, token_hash: bytes) -> bool:
        with self._span("replace_token_hash", game_id):
            return await self.inner.replace_token_hash(game_id, expected, token_hash)

    async def put_named(self, name: str, value: bytes, *, ttl: float) -> bool:
        with self._span("put_named"):  # (a deal code is a name: not told)
            return await self.inner.put_named(name, value, ttl=ttl)

    async def get_named(self, name: str) -> bytes | None:
        with self._span("get_named"):
            return await self.inner.get_named(name)

    async def pool_add(self, pool: str, items: Sequence[bytes], *, cap: int) -> int:
        with self._span("pool_add"):  # (the items are deals: never told)
            return await self.inner.pool_add(pool, items, cap=cap)

    async def pool_pop(self, pool: str) -> bytes | None:
        with self._span("pool_pop"):
            return await self.inner.pool_pop(pool)

    async def pool_size(self, pool: str) -> int:
        with self._span("pool_size"):
            return await self.inner.pool_size(pool)

    async def delete(self, game_id: str) -> None:
        with self._span("delete", game_id):
            await self.inner.delete(game_id)

    def watch(self, game_id: str, after_version: int) -> AsyncIterator[WatchEvent]:
        return self.inner.watch(game_id, after_version)

    async def ping(self) -> None:
        await self.inner.ping()  # (health's, every second: no span)

    async def close(self) -> None:
        await self.inner.close()
