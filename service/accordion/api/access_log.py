"""The record of every call of every service: a JSON access line and the Prometheus metrics,
written by the one per-method wrapper (``interceptors.wrap``) through ``record``.

The log line has the method, the game id (from the request or NewGame's reply), the final
status code, the time from arrival to reply, and (issue 34, ``_call_fields``) the request id
returned to the client, the W3C trace id, the caller, the variant, the ErrorInfo reason, the
outcome and refusing layer, the bytes in and out, and the time queued and served. It never has
other metadata (the token travels there), request bodies or error messages. A game id that is
not one (too long, odd characters: anything a client sends) is cut to ``MAX_LOGGED_ID``
characters. Errors and refusals are always written; OK calls and calls their client ended 1 in
``--access-log-sample``.

What it costs per call, since it runs on every one: the wrapped handler is built once per
method, and the call itself only appends a tuple (method, game id, code, latency, time) to a
list. Everything else is done for the whole list at once, ``AccessLog.FLUSH_AFTER`` seconds
after its first call (and by ``flush_access_log`` when the server stops): the metrics (call_metrics.py: one
``inc(n)`` per method and code, one ``observe`` per call, on children built once) and the
access lines (``AccessLog``: the JSON structlog would print, each with its own call's time,
written with one ``os.write`` per few KiB). Done per call, all that cost a server ~34 µs of
CPU a call (docs/performance.md). Without a loop, on a stream that is not a file or pipe (a
test's StringIO), or when ``server.configure_logging`` did not set the access log up
(structlog writes the line then), each call is recorded at once.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import logging
import os
import re
import time
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, TextIO, TypeAlias

import grpc
import grpc.aio
import structlog

from . import auth
from .call_metrics import Call, count_calls
from .callinfo import CallInfo, new_request_id

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
# What a call's status means: ok; error (the server's answer, refusals included: counted in
# accordion_rpc_errors_total); refused (also an error, and in accordion_rpc_refused_total);
# client_cancelled, client_deadline (the client ended it: not an error, issue 34).
OUTCOMES = ("ok", "error", "refused", "client_cancelled", "client_deadline")


def status_of(context: Context, failure: BaseException | None) -> grpc.StatusCode:
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


def game_id_of(request: object, response: object = None) -> str:
    game_id = getattr(request, "game_id", "")
    if not game_id and type(response) is bytes:
        game_id = _first_game_id(response)
    elif not game_id and response is not None:  # a reply with a Game has its id
        game_id = getattr(getattr(response, "game", None), "id", "")
    game_id = str(game_id)
    if len(game_id) > MAX_LOGGED_ID:
        return game_id[:MAX_LOGGED_ID] + "…"
    return game_id


def _first_game_id(reply: bytes) -> str:
    """The game id of a reply sent as bytes whose field 1 is the Game (NewGame's: api/wire.py
    writes it; ``Game.id`` is the Game's field 1, written first), without parsing the rest;
    "" for any other layout."""
    if reply[:1] != b"\x0a":
        return ""
    i = 1
    while i < len(reply) and reply[i] & 0x80:  # past the Game's length (a varint)
        i += 1
    size = reply[i + 2] if reply[i + 1 : i + 2] == b"\x0a" and i + 2 < len(reply) else 0x80
    return "" if size >= 0x80 else reply[i + 3 : i + 3 + size].decode(errors="replace")


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
        self.tail = "".join(
            f", {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in extra.items()
        )
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
            text = datetime.datetime.fromtimestamp(second, tz=datetime.UTC).isoformat()
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
        for method, game_id, code, elapsed, wall, queued, note, caller, outcome, request, response in calls:
            if code in _SERVER_FAULTS:
                level = "warning"
            elif info:
                # Errors always; answers (and calls their client ended) 1 in ``every``.
                if every > 1 and outcome not in _ALWAYS:
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
            fields = _call_fields(note, caller, outcome, request, response, elapsed, queued)
            lines.append(
                f'{{"method": {quoted}, "game_id": {gid}, "code": "{_CODE_NAMES[code]}", '
                f'"latency_ms": {round(elapsed * 1000, 3)!r}, {fields}, "event": "rpc"{tail}, "level": '
                f'"{level}", '
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
# at once), and the timer that records them. ``record`` appends; ``flush_access_log`` empties.
_pending: list[Call] | None = None
_timer: asyncio.TimerHandle | None = None
MAX_PENDING = 1024  # recorded at once beyond this: bounds memory even if a timer never fires
_failures = logging.getLogger(__name__)  # a failed flush is told here (stderr)


def configure_access_log(
    stream: TextIO | None,
    min_level: int = _INFO,
    extra: Mapping[str, object] = MappingProxyType({}),
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
    count_calls(calls)
    try:
        access = _access_log
        if access is not None and structlog.is_configured():  # (a test may have reset structlog)
            access.write(calls)
            return
        for method, game_id, code, elapsed, _wall, queued, info, caller, outcome, request, response in calls:
            emit = log.warning if code in _SERVER_FAULTS else log.info
            latency_ms = round(elapsed * 1000, 3)
            fields = json.loads(
                "{" + _call_fields(info, caller, outcome, request, response, elapsed, queued) + "}"
            )
            emit(
                "rpc", method=method, game_id=game_id or None, code=code.name, latency_ms=latency_ms, **fields
            )
    except Exception:
        _failures.exception("writing access lines failed")


_ALWAYS = frozenset(("error", "refused"))  # outcomes whose lines are never sampled out


def _call_fields(
    info: CallInfo,
    caller: str,
    outcome: str,
    request: object,
    response: object,
    elapsed: float,
    queued: float,
) -> str:
    """The issue-34 fields of one access line, as JSON members (no braces): joinable ids, who,
    what, why, how big, how long. Computed only for the lines written; strings of plain
    characters are quoted as they are, numbers written with repr (json.dumps per field cost
    ~2 µs each, per line)."""
    trace = f'"{info.trace_id}"' if info.trace_id else "null"
    reason = f'"{info.reason}"' if info.reason else "null"
    layer = f'"{info.layer}"' if info.layer else "null"
    # (%.3f: a third of round()'s and repr's cost; "0.200" is as good a JSON number)
    if queued >= 0:
        queued_ms, served_ms = f"{queued * 1000:.3f}", f"{(elapsed - queued) * 1000:.3f}"
    else:
        queued_ms = served_ms = "null"
    in_core = info.core_wait  # (set by count_calls, which runs first)
    core_ms = f"{in_core * 1000:.3f}" if in_core is not None else "null"
    return (
        f'"request_id": "{info.request_id}", "trace_id": {trace}, "caller": {_quoted(caller)}, '
        f'"variant": {_quoted(_variant_of(request, response))}, "reason": {reason}, "outcome": "{outcome}", '
        f'"layer": {layer}, "bytes_in": {size_of(request)}, "bytes_out": '
        f"{size_of(response) + info.bytes_out}, "
        f'"queued_ms": {queued_ms}, "served_ms": {served_ms}, "core_wait_ms": {core_ms}'
    )


_PLAIN = re.compile(r"[A-Za-z0-9._:/\[\]-]*").fullmatch  # needs no JSON escape


_quotes: dict[str, str] = {}  # callers and variants repeat: each quoted once


def _quoted(text: str | None) -> str:
    if text is None:
        return "null"
    found = _quotes.get(text)
    if found is None:
        if len(_quotes) >= 4096:  # (clients' addresses: bounded all the same)
            _quotes.clear()
        found = _quotes[text] = f'"{text}"' if _PLAIN(text) else json.dumps(text, ensure_ascii=False)
    return found


def size_of(message: object) -> int:
    """A message's serialized size: bytes as they are (replies api/wire.py writes), protobuf's."""
    if message is None:
        return 0
    if type(message) is bytes:
        return len(message)
    size = getattr(message, "ByteSize", None)
    return int(size()) if size is not None else 0


MAX_LOGGED_VARIANT = 40


def _variant_of(request: object, response: object) -> str | None:
    """The variant when the request names it (NewGame) or the reply's game carries it."""
    variant = getattr(request, "variant", "") if _has_field(request, "variant") else ""
    if not variant and response is not None and type(response) is not bytes and _has_field(response, "game"):
        variant = getattr(getattr(response, "game", None), "variant", "")
    return str(variant)[:MAX_LOGGED_VARIANT] if variant else None


_fields: dict[tuple[type, str], bool] = {}


def _has_field(message: object, name: str) -> bool:
    """Whether ``message``'s type has attribute ``name``, looked up once per type (a missing
    attribute of a protobuf message costs an exception each time)."""
    key = (type(message), name)
    found = _fields.get(key)
    if found is None:
        found = _fields[key] = hasattr(message, name)
    return found


def record(
    method: str,
    game_id: str,
    code: grpc.StatusCode,
    arrived: float,
    handler_started: float = 0.0,
    info: CallInfo | None = None,
    caller: str = "",
    outcome: str = "",
    request: object = None,
    response: object = None,
) -> None:
    """The per-call part: a tuple on the list (and the timer armed by its first call).
    ``arrived``/``handler_started``: perf_counter() (``handler_started`` 0: never started);
    without ``info``/``outcome`` (callers other than the wrapper) a new request id, and ok or
    error by the code."""
    if info is None:
        info = CallInfo(new_request_id(), None)
    if not outcome:
        outcome = "ok" if code is _OK else "error"
    now = time.perf_counter()
    queued = handler_started - arrived if handler_started else -1.0
    call = (
        method,
        game_id,
        code,
        now - arrived,
        time.time(),
        queued,
        info,
        caller,
        outcome,
        request,
        response,
    )
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
