"""What the access line and the metrics know of one call beyond its method and status: its
request id and trace id, the reason and refusal layer of the error it got, its bytes, and when
it arrived (issue 34: logs you can join, the server measuring what the client feels).

``CallInfo`` is made by the wrapper (``interceptors._Call``) and published in a context
variable for the call's task, so ``errors.abort`` (called from anywhere below the wrapper)
can note the reason and layer and return the request id with the error.

**Arrival.** The earliest moment Python sees a call is when grpc.aio's server loop, having
pulled the call from the core, creates its ``_schedule_rpc_coro`` task (which in turn creates
the task running the handler). ``arrival_task_factory`` stamps that moment into the task's
context (``ARRIVAL``), so the ready-queue waits of both tasks count as queueing. Invisible to
Python: the kernel's socket buffer, grpc core's HTTP/2 work, and calls the core holds until
grpc.aio asks for the next one (it asks one at a time); ``accordion_event_loop_lag_seconds``
shows how busy the loop is, the proxy for that part.
"""

from __future__ import annotations

import asyncio
import bisect
import contextvars
import itertools
import os
import re
import time
from collections.abc import Coroutine, Generator, Iterable
from typing import Any, TypeVar

# Set in the context of grpc.aio's per-call task by ``arrival_task_factory``: perf_counter().
ARRIVAL: contextvars.ContextVar[float] = contextvars.ContextVar("accordion_arrival", default=0.0)
T = TypeVar("T")
_GRPC_CALL_TASK = "_schedule_rpc_coro"  # grpc.aio's name for the task it starts per call
_REQUEST_ID_RE = re.compile(r"[A-Za-z0-9._:-]{1,64}")
_TRACEPARENT_RE = re.compile(r"[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}")
_ZERO_TRACE = "0" * 32
# Generated request ids: a per-process random prefix and a counter (unique, cheap: no
# randomness per call; the id identifies a call, it guards nothing).
_PREFIX = os.urandom(4).hex()
_counter = itertools.count(1)
REQUEST_ID_HEADER = "x-request-id"


class CallInfo:
    """One call's notes (see the module doc). ``reason``/``layer``: set by ``errors.abort``
    (``layer`` only for refusals, ``errors.ApiError.layer``); ``bytes_out``: a stream's items."""

    __slots__ = (
        "request_id",
        "trace_id",
        "reason",
        "layer",
        "bytes_out",
        "handler_started",
        "seq",
        "arrived",
        "core_wait",
    )

    def __init__(self, request_id: str, trace_id: str | None) -> None:
        self.request_id, self.trace_id = request_id, trace_id
        self.reason = ""
        self.layer = ""
        self.bytes_out = 0
        self.handler_started = 0.0  # perf_counter() when the handler started (0: it never did)
        self.seq = 0  # this call's number among the calls Python saw (ARRIVALS), 0: not counted
        self.arrived = 0.0  # perf_counter() at arrival
        self.core_wait: float | None = None  # CORE_COUNTS.waited, worked out once in the batch


CURRENT: contextvars.ContextVar[CallInfo | None] = contextvars.ContextVar("accordion_call", default=None)


def new_request_id() -> str:
    return f"{_PREFIX}-{next(_counter):x}"


def from_metadata(metadata: Iterable[Any] | None) -> CallInfo:
    """The call's ``x-request-id`` (kept if it is 1-64 of ``[A-Za-z0-9._:-]``, else a new one)
    and the trace id of its W3C ``traceparent`` (None if absent, malformed or all zeros)."""
    request_id = trace_id = None
    for key, value in metadata or ():
        if key == REQUEST_ID_HEADER:
            if isinstance(value, str) and _REQUEST_ID_RE.fullmatch(value):
                request_id = value
        elif key == "traceparent" and isinstance(value, str):
            found = _TRACEPARENT_RE.fullmatch(value.strip())
            if found is not None and found.group(1) != _ZERO_TRACE:
                trace_id = found.group(1)
    return CallInfo(request_id or new_request_id(), trace_id)


class _Arrivals:
    """Calls Python has seen in this process (``server_watch`` compares it with grpc core's count)."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0


ARRIVALS = _Arrivals()


class CoreCounts:
    """grpc core's count of calls started on the wrapped servers, read often (``server_watch``):
    (perf_counter(), count) pairs, the latest ``KEEP`` or more. Calls reach Python in the order
    the core started them, so call number n of Python's (``ARRIVALS``) had started in the core
    by the first reading whose count is n or more: arriving later than that reading, it waited
    in the core at least that long. A lower bound, to within the readings' interval; calls the
    core ended before Python saw them (a deadline passing in its queue) shift the numbering and
    make it overstate (``accordion_grpc_server_calls_total{outcome="failed"}`` shows them)."""

    KEEP = 4096

    def __init__(self) -> None:
        self.times: list[float] = []
        self.counts: list[int] = []

    def add(self, when: float, count: int) -> None:
        if self.counts and count < self.counts[-1]:  # (a server gone: start again)
            self.times.clear()
            self.counts.clear()
        self.times.append(when)
        self.counts.append(count)
        if len(self.counts) > 2 * self.KEEP:
            del self.times[: self.KEEP], self.counts[: self.KEEP]

    def waited(self, seq: int, arrived: float) -> float | None:
        """At least how long call ``seq`` waited in the core before ``arrived`` (None: a call
        not numbered; 0 when no reading tells more, which is a lower bound too)."""
        if seq <= 0:
            return None
        counts = self.counts
        i = bisect.bisect_left(counts, seq)
        if i == len(counts) or (i == 0 and len(counts) >= self.KEEP):
            return 0.0  # no reading counted it yet (or none kept from before it)
        return max(0.0, arrived - self.times[i])


CORE_COUNTS = CoreCounts()


def arrival() -> float:
    """When the current call arrived (``ARRIVAL``), or now when no factory stamped it; counts it."""
    ARRIVALS.count += 1
    return ARRIVAL.get() or time.perf_counter()


def arrival_task_factory(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T] | Generator[Any, None, T], /, **kwargs: Any
) -> asyncio.Task[T]:
    """The loop's task factory: every task as the loop would make it, and grpc.aio's per-call
    task in a context whose ``ARRIVAL`` is now (its handler's task inherits it)."""
    if getattr(coro, "__name__", None) == _GRPC_CALL_TASK and kwargs.get("context") is None:
        context = contextvars.copy_context()
        context.run(ARRIVAL.set, time.perf_counter())
        kwargs["context"] = context
    return asyncio.Task(coro, loop=loop, **kwargs)


def install_arrival_stamp(loop: asyncio.AbstractEventLoop) -> bool:
    """Install ``arrival_task_factory`` on ``loop`` unless it has a factory already."""
    if loop.get_task_factory() is not None:
        return False
    loop.set_task_factory(arrival_task_factory)
    return True
