"""A watcher's own Redis connection (``WatchConnection``), and ``raise_lost_cancel``: why every
WatchGame ends when its client goes away.

The leak this prevents (issue 28): on Python 3.11 ``asyncio.wait_for`` drops a cancellation
that arrives just as the awaitable it wraps completes (CPython gh-86296, fixed in 3.12 where
``wait_for`` is built on ``asyncio.timeout``), and redis-py sends every command through
``wait_for(…, socket_timeout)``. When a client cancelled a WatchGame, grpc.aio cancelled the
handler's task; if that cancellation fell on such a moment it was lost, and the handler went
on with its XREAD loop for ever, holding its admission slots and a pooled connection.

So a watcher:

* reads on a connection of its own (``WatchConnection``): made for the stream, named
  ``accordion-watch`` (CLIENT SETNAME, so operators see them in CLIENT LIST), closed when the
  stream ends, whatever the way; no pool lends it, so nothing can keep it after the stream;
* bounds each blocking read with ``asyncio.timeout`` (which never loses a cancellation);
* after each redis-py call, ``raise_lost_cancel``: the task's pending cancellation, if one was
  swallowed on the way, is raised there.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from redis import exceptions as rexc
from redis.asyncio.connection import AbstractConnection
from redis.backoff import ExponentialBackoff

from .redis_errors import TOPOLOGY, UNAVAILABLE, as_unavailable, torn_down

WATCH_CLIENT_NAME = "accordion-watch"

#: Makes a fresh, unconnected connection to the node that holds ``key`` (cluster: the slot's
#: primary, found anew after a failure; otherwise the one Redis or Sentinel's master).
ConnectionFactory = Callable[[str], Awaitable[AbstractConnection]]


def raise_lost_cancel() -> None:
    """Raise ``CancelledError`` when the current task was cancelled and the cancellation was
    swallowed on the way (see the module docstring): ``Task.cancelling()`` still counts a
    request nobody took back (``asyncio.timeout`` and ``uncancel`` take theirs back)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError("a cancellation swallowed by asyncio.wait_for, delivered")


class WatchConnection:
    """One watcher's connection: ``await xread(key, last)`` until ``close()``.

    A lost connection or a timeout is tried again on a new connection (after a failover:
    the new primary) up to ``retries`` times with ``backoff``; then ``StoreUnavailable``.
    """

    def __init__(
        self,
        factory: ConnectionFactory,
        *,
        block_ms: int,
        read_timeout: float,
        retries: int,
        backoff: ExponentialBackoff,
        on_failure: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._factory = factory
        self._block_ms, self._read_timeout = block_ms, read_timeout
        self._retries, self._backoff = retries, backoff
        self._on_failure = on_failure  # a cluster re-reads its slot map before trying again
        self._connection: AbstractConnection | None = None
        self.closed = False

    async def xread(self, key: str, last: bytes | str) -> list[tuple[bytes, dict[bytes, bytes]]]:
        """One ``XREAD COUNT 100 BLOCK block_ms``: the new entries (id, fields), or none."""
        for attempt in range(self._retries + 1):
            raise_lost_cancel()
            if attempt:
                await asyncio.sleep(self._backoff.compute(attempt - 1))
            try:
                reply = await self._read_once(key, last)
            except Exception as exc:
                await self._drop()
                if self.closed or attempt == self._retries or not _transient(exc):
                    mapped = as_unavailable(exc)
                    if mapped is None:
                        raise
                    raise mapped from exc
                if self._on_failure is not None:
                    with contextlib.suppress(*UNAVAILABLE, OSError):
                        await self._on_failure()
                continue
            raise_lost_cancel()
            return _entries(reply)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _read_once(self, key: str, last: bytes | str) -> Any:
        if self.closed:
            raise rexc.ConnectionError("redis: the watch was closed")
        connection = self._connection
        if connection is None:
            connection = self._connection = await self._factory(key)
            raise_lost_cancel()
        # The read may block block_ms, then Redis answers; asyncio.timeout (not wait_for) bounds
        # the whole command and, unlike wait_for on 3.11, never loses a cancellation.
        async with asyncio.timeout(self._read_timeout):
            await connection.send_command(
                "XREAD", "COUNT", 100, "BLOCK", self._block_ms, "STREAMS", key, last
            )
            raise_lost_cancel()
            return await connection.read_response()

    async def _drop(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            with contextlib.suppress(Exception):
                await connection.disconnect(nowait=True)

    async def close(self) -> None:
        """Close the connection now (also from another task: the store closing): a read in
        progress fails, and the watcher sees ``closed``."""
        self.closed = True
        await self._drop()


def _transient(exc: BaseException) -> bool:
    """Worth a new connection: it was lost or timed out, or the node no longer serves the key
    (a failover, a slot moved: the cluster's slot map is re-read first, ``on_failure``)."""
    return isinstance(exc, (*TOPOLOGY, TimeoutError, OSError)) or torn_down(exc)


def _entries(reply: Any) -> list[tuple[bytes, dict[bytes, bytes]]]:
    """XREAD's raw RESP2 reply (``[[stream, [[id, [field, value, …]], …]]]``, or nil when the
    block timed out) → [(id, {field: value})]."""
    found: list[tuple[bytes, dict[bytes, bytes]]] = []
    for _stream, entries in reply or ():
        for entry_id, flat in entries:
            found.append((entry_id, dict(zip(flat[::2], flat[1::2], strict=True))))
    return found
