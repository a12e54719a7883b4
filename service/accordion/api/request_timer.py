"""Reading a call's one request message within ``--request-timeout`` (``RequestTimer``, one
sweep a second for all waiting calls), and telling why a call ended without one: malformed,
over the receive limit, or past its deadline (``EndedInCore``). Used by ``interceptors.wrap``."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import grpc.aio

from . import errors
from .access_log import Context
from .service import Malformed


class RequestTimer:
    """Ends the wait for a call's request message after ``timeout`` seconds (to within a
    second): a call that sent its headers and never its message is cancelled, and its wait
    raises DEADLINE_EXCEEDED. One sweep a second for all waiting calls, instead of a timer per
    call (``asyncio.timeout`` cost ~9 µs of CPU a call; this a dict entry)."""

    SWEEP_EVERY = 1.0

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._waiting: dict[asyncio.Task[object], float] = {}  # task → deadline (-1: timed out)
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
            error = errors.deadline_exceeded(f"the request message arrived (within {self.timeout:g} s)")
            error.layer = "deadline_expired"  # refused before its handler ran (issue 34)
            raise error from None
        finally:
            waiting.pop(task, None)
        if request is grpc.aio.EOF:
            raise await _without_message(context)
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


class EndedInCore(asyncio.CancelledError):
    """grpc's core ended the call before its request message reached the handler, and sent
    the client ``code`` itself (the handler can send nothing more): recorded with that code."""

    def __init__(self, code: grpc.StatusCode) -> None:
        super().__init__(code.name)
        self.code = code


async def _without_message(context: Context) -> BaseException:
    """What a call whose request stream ended without a message gets. The client half-closed
    without one (malformed: INVALID_ARGUMENT), or the core ended the call: a message over the
    receive limit (64 KiB; the client got RESOURCE_EXHAUSTED from the core, issue 28), or the
    deadline passed. The read says only "no message" in each case; whether the call still runs
    tells them apart, so one operation on it is tried (sending the headers: they go first in
    any answer anyway). A client that cancels between its headers and its message also ends
    the call in the core and is counted RESOURCE_EXHAUSTED here: ordinary clients send both
    at once, so that is a hostile client's half-sent call."""
    try:
        await context.send_initial_metadata(())
    except asyncio.CancelledError:  # (the EndedInCore returned is one too: the call stays cancelled)
        left = context.time_remaining()
        timed_out = left is not None and left <= 0
        return EndedInCore(
            grpc.StatusCode.DEADLINE_EXCEEDED if timed_out else grpc.StatusCode.RESOURCE_EXHAUSTED
        )
    return errors.malformed_request("the call ended without a request message")


def _checked(request: Any) -> Any:
    if isinstance(request, Malformed):
        raise errors.malformed_request(request.why)
    return request
