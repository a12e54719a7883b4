"""What every RPC of every service shares: ``wrap``, the one per-method wrapper (API keys,
limits, the request timeout, error mapping; registered through ``Host``), and its record of
each call: a JSON access line and the Prometheus metrics.

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
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn, TextIO, TypeAlias, cast

import grpc
import grpc.aio
import structlog

from . import auth, errors, metrics
from .apikeys import ApiKeyInterceptor
from .limits import HEALTH_PREFIX, WATCH_METHODS, Admission, client_of
from .service import Malformed

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
Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"


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

    def __init__(
        self, stream: TextIO, min_level: int, extra: Mapping[str, object], sample_every: int = 1
    ) -> None:
        self.stream, self.min_level = stream, min_level
        # ops: 1 in ``sample_every`` info lines is written (a count, not a coin: exact and cheap).
        self.sample_every, self._info_seen = max(1, sample_every), 0
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
        """Write the lines of ``calls`` the level lets through (server faults are warnings,
        always written; info lines 1 in ``sample_every``)."""
        if self.min_level > _WARNING:  # not even the faults (the metrics are counted apart)
            return
        info = self.min_level <= _INFO
        every, seen = self.sample_every, self._info_seen
        lines = []
        methods, tail, stamp, valid_id = self._methods, self.tail, self._stamp, auth.GAME_ID_RE.fullmatch
        for method, game_id, code, elapsed, wall in calls:
            if code in _SERVER_FAULTS:
                level = "warning"
            elif info:
                if every > 1:
                    seen += 1
                    if seen % every:
                        continue
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
        self._info_seen = seen
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


def configure_access_log(
    stream: TextIO | None,
    min_level: int = _INFO,
    extra: Mapping[str, object] = (),  # type: ignore[assignment]
    sample_every: int = 1,
) -> None:
    """Write access lines directly to ``stream`` (None: through structlog). ``server.configure_logging``
    calls it with structlog's own stream and level, and ``--access-log-sample``."""
    global _access_log, _pending
    flush_access_log()
    _access_log = None if stream is None else AccessLog(stream, min_level, dict(extra), sample_every)
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


# --- the one per-method wrapper --------------------------------------------------------------


@dataclass(frozen=True)
class Gate:
    """What the wrapper checks before a call reaches its handler: the limits' counters and,
    when keys are configured, the API keys."""

    admission: Admission
    api_keys: ApiKeyInterceptor | None = None
    timer: RequestTimer = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "timer", RequestTimer(self.admission.limits.request_timeout))


class RequestTimer:
    """Ends the wait for a call's request message after ``timeout`` seconds (to within a
    second): a call that sent its headers and never its message is cancelled, and its wait
    raises DEADLINE_EXCEEDED. One sweep a second for all waiting calls, instead of a timer per
    call (``asyncio.timeout`` cost ~9 µs of CPU a call; this a dict entry)."""

    SWEEP_EVERY = 1.0

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._waiting: dict[asyncio.Task[Any], float] = {}  # task → deadline (-1: timed out)
        self._sweep: asyncio.TimerHandle | None = None

    async def read(self, context: Context) -> Any:
        """The call's one request message. (``context.read``, not the request iterator grpc
        passes: that is an async generator, and one left suspended after its first message
        costs a finalizer task per call.)"""
        task = asyncio.current_task()
        if task is None:  # pragma: no cover (grpc runs every handler in a task)
            return _checked(await context.read())
        loop = asyncio.get_running_loop()
        waiting = self._waiting
        waiting[task] = loop.time() + self.timeout
        if self._sweep is None:
            self._sweep = loop.call_later(self.SWEEP_EVERY, self._expire, loop)
        try:
            request = await context.read()
        except asyncio.CancelledError:
            if waiting.get(task) != -1:
                raise  # the client went away (or the server stops): not ours
            task.uncancel()
            raise errors.deadline_exceeded(f"the request message arrived (within {self.timeout:g} s)") from None
        finally:
            waiting.pop(task, None)
        if request is grpc.aio.EOF:
            raise errors.malformed_request("the call ended without a request message")
        return _checked(request)

    def _expire(self, loop: asyncio.AbstractEventLoop) -> None:
        self._sweep = None
        now = loop.time()
        for task, deadline in list(self._waiting.items()):
            if 0 <= deadline <= now:
                self._waiting[task] = -1
                task.cancel()
        if self._waiting:
            self._sweep = loop.call_later(self.SWEEP_EVERY, self._expire, loop)


def _checked(request: Any) -> Any:
    if isinstance(request, Malformed):
        raise errors.malformed_request(request.why)
    return request


async def _mapped(context: Context, exc: Exception, method: str) -> NoReturn:
    """Abort with the status ``exc`` maps to; a bug (nothing maps it) is logged and INTERNAL."""
    error = errors.from_exception(exc)
    if error is None:
        log.error("unhandled exception", method=method, exc_info=exc)
        error = errors.internal()
    await errors.abort(context, error)


def _behavior(fn: object) -> Callable[..., Any]:
    """A handler's behaviour as what it is here: async (grpc's stubs type them synchronous)."""
    return cast(Callable[..., Any], fn)


def wrap(handler: Handler, method: str, gate: Gate) -> Handler:
    """``handler`` with what every call of every service shares, in this order: the API key
    (when keys are on; health is exempt), the limits (``accordion.api.limits``), the request
    message read within ``--request-timeout``, the handler, the mapping of its exceptions to a
    ``google.rpc.Status``, and the access line and metrics (``_record``).

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
        behavior, make, shape = _behavior(handler.stream_unary), grpc.stream_unary_rpc_method_handler, "requests"
    elif handler.stream_stream is not None:
        behavior, make, shape = _behavior(handler.stream_stream), grpc.stream_stream_rpc_method_handler, "requests"
    else:  # pragma: no cover (a handler of no kind)
        return handler
    health = method.startswith(HEALTH_PREFIX)
    watch = method in WATCH_METHODS
    admission, api_keys, read = gate.admission, gate.api_keys, gate.timer.read

    def admit(client: str) -> str:
        """``client`` counted in; raises the refusal (nothing counted)."""
        admission.enter_call(health, client)
        return client

    async def keyed(context: Context) -> str:
        """With API keys: the key checked, and its name counted in as the client."""
        assert api_keys is not None
        key_name = await api_keys.caller(method, context.invocation_metadata())
        return admit(f"key:{key_name}" if key_name else client_of(context.peer()))

    async def unary(requests: AsyncIterator[Any], context: Context) -> Any:
        started, request, response = time.perf_counter(), None, None
        failure: BaseException | None = None
        client: str | None = None
        try:
            client = admit(client_of(context.peer())) if api_keys is None else await keyed(context)
            request = await read(context)
            response = await behavior(request, context)
            return response
        except grpc.aio.AbortError as exc:
            failure = exc
            raise
        except Exception as exc:
            failure = exc
            await _mapped(context, exc, method)
        except BaseException as exc:
            failure = exc
            raise
        finally:
            if client is not None:
                admission.leave_call(health, client)
            _record(method, _game_id(request, response), _status(context, failure), started)

    async def stream(requests: AsyncIterator[Any], context: Context) -> AsyncIterator[Any]:
        # The game whose watch slot this call holds (None: none; "" is a game id too, until
        # validation refuses it, and its slot must be given back like any other).
        started, request = time.perf_counter(), None
        watching: str | None = None
        failure: BaseException | None = None
        client: str | None = None
        connection = context.peer()
        try:
            client = admit(client_of(context.peer())) if api_keys is None else await keyed(context)
            request = await read(context)
            if watch:
                admission.enter_watch(connection, request.game_id)
                watching = request.game_id
            async with contextlib.aclosing(behavior(request, context)) as items:  # close it now, not at GC
                async for item in items:
                    yield item
        except grpc.aio.AbortError as exc:
            failure = exc
            raise
        except Exception as exc:
            failure = exc
            await _mapped(context, exc, method)
        except BaseException as exc:
            failure = exc
            raise
        finally:
            if watching is not None:
                admission.leave_watch(connection, watching)
            if client is not None:
                admission.leave_call(health, client)
            _record(method, _game_id(request), _status(context, failure), started)

    async def streamed_requests(requests: AsyncIterator[Any], context: Context) -> Any:
        """Handlers that take a request stream (reflection) get it as it is."""
        started = time.perf_counter()
        failure: BaseException | None = None
        client: str | None = None
        try:
            client = admit(client_of(context.peer())) if api_keys is None else await keyed(context)
            result = behavior(requests, context)
            if inspect.isasyncgen(result):
                async with contextlib.aclosing(result) as items:
                    async for item in items:
                        await context.write(item)
                return None
            return await result
        except grpc.aio.AbortError as exc:
            failure = exc
            raise
        except Exception as exc:
            failure = exc
            await _mapped(context, exc, method)
        except BaseException as exc:
            failure = exc
            raise
        finally:
            if client is not None:
                admission.leave_call(health, client)
            _record(method, "", _status(context, failure), started)

    wrapper = {"unary": unary, "stream": stream, "requests": streamed_requests}[shape]
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
        self.server.add_generic_rpc_handlers(tuple(_WrappedGeneric(h, self.gate) for h in generic_rpc_handlers))

    def add_registered_method_handlers(self, service: str, handlers: dict[str, Handler]) -> None:
        self.server.add_registered_method_handlers(
            service, {name: wrap(h, f"{service}/{name}", self.gate) for name, h in handlers.items()}
        )
