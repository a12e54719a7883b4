"""A lean pipelined Redis connection for the hot path: one command, one future; one write per loop turn.

redis-py's asyncio client spends about 150 µs of CPU per command (a pool with a lock, command
packing argument by argument, retry and timeout wrappers, a reader per connection); a move
needs one script call, so that was more than all the rest of a move. This client keeps
``connections`` persistent connections (an ``asyncio.Protocol`` each, replies parsed by
hiredis), sends the commands of one turn of the event loop in one write, and matches replies
to callers in order (Redis answers a connection's commands in order), so any number of calls
share a connection: pipelining for free under load.

Only what the hot path needs: plain ``redis://`` or ``unix://`` (no TLS; AUTH and SELECT when
the URL has them), no Sentinel or Cluster (``RedisStore`` keeps redis-py for those, for WAIT,
and for everything but ``load`` and ``compare_and_set``). Failures keep redis-py's meaning,
so ``RedisStore`` maps them the same way: ``redis.exceptions.ConnectionError`` when the
connection cannot be made or is lost, ``TimeoutError`` when no answer comes within
``timeout`` (the connection is then dropped: what it had in flight has an unknown outcome,
as with redis-py), and a ``ResponseError`` subclass (redis-py's own parsing of the error
text) for an error reply. A lost connection is made again by the next call. Nothing is
retried here: a write must not be sent twice behind its caller's back.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import hiredis
from redis import exceptions as rexc
from redis._parsers.base import BaseParser
from redis.asyncio.connection import parse_url

# redis-py's mapping of an error reply's text to its exception class (NOSCRIPT → NoScriptError,
# …), seen through a typed name: redis-py does not annotate it.
_parse_error: Callable[[str], rexc.ResponseError] = BaseParser.parse_error

_hiredis_pack: Callable[[tuple[Any, ...]], bytes] = hiredis.pack_command

_FIELDS = {"host", "port", "db", "username", "password", "path"}


def fast_url(url: str) -> dict[str, Any] | None:
    """The connection settings of a URL this client serves, or None (TLS, Sentinel, Cluster,
    query options it does not know: redis-py serves those)."""
    if urlsplit(url).scheme not in ("redis", "unix"):
        return None
    try:
        settings = dict(parse_url(url))
    except (ValueError, TypeError):
        return None
    settings.pop("connection_class", None)  # unix:// names UnixDomainSocketConnection
    if set(settings) - _FIELDS:
        return None
    return settings


def pack(args: tuple[Any, ...]) -> bytes:
    """One command in RESP: an array of bulk strings. hiredis's packer (C, ~1.6 µs for a move's
    EVALSHA against ~4.2 here) writes the same bytes for what the store sends (str, bytes, int,
    float); it refuses other types with a TypeError, and those go to ``pack_python``, which
    answers as before (a DataError, or ``True`` for a bool)."""
    try:
        return _hiredis_pack(args)
    except TypeError:
        return pack_python(args)


def pack_python(args: tuple[Any, ...]) -> bytes:
    """``pack`` in Python: the reference (tests/store/test_fastredis.py holds hiredis's to it)."""
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        if isinstance(arg, bytes):
            data = arg
        elif isinstance(arg, str):
            data = arg.encode()
        elif isinstance(arg, (int, float)):
            data = repr(arg).encode()
        else:
            raise rexc.DataError(f"cannot send {type(arg).__name__} to Redis")
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


class _Protocol(asyncio.Protocol):
    def __init__(self) -> None:
        self.reader = hiredis.Reader(replyError=rexc.ResponseError)
        self.pending: deque[asyncio.Future[Any]] = deque()
        self.transport: Any = None  # asyncio's or uvloop's transport (uvloop's are no subclasses)
        self.lost = False
        # Commands sent during one turn of the event loop go out in one write at its end: under
        # load many handlers send in the same turn, and a write (a system call, and on loopback
        # the receiving side's TCP work too) per command cost more than the command itself.
        self.outgoing: list[bytes] = []

    def send(self, command: bytes) -> None:
        if not self.outgoing:
            asyncio.get_running_loop().call_soon(self._write)
        self.outgoing.append(command)

    def _write(self) -> None:
        data, self.outgoing = b"".join(self.outgoing), []
        if data and self.transport is not None and not self.lost:
            self.transport.write(data)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.reader.feed(data)
        pending = self.pending
        while True:
            try:
                reply = self.reader.gets()
            except hiredis.ProtocolError as exc:
                self._fail(rexc.ConnectionError(f"redis: protocol error ({exc})"))
                if self.transport is not None:
                    self.transport.abort()
                return
            if reply is False:
                return
            if not pending:  # an answer nobody asked for: the stream is out of step
                self._fail(rexc.ConnectionError("redis: unexpected reply"))
                if self.transport is not None:
                    self.transport.abort()
                return
            future = pending.popleft()
            if not future.done():  # (a caller that timed out left its future behind)
                if isinstance(reply, rexc.ResponseError):
                    future.set_exception(_parse_error(str(reply)))
                else:
                    future.set_result(reply)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self._fail(rexc.ConnectionError(f"redis: connection lost ({exc or 'closed'})"))

    def _fail(self, error: Exception) -> None:
        self.lost = True
        self.outgoing = []  # never sent: their callers fail below
        while self.pending:
            future = self.pending.popleft()
            if not future.done():
                future.set_exception(error)


class FastRedis:
    """``await call("EVALSHA", sha, …)``: the reply (bytes, int, list, None), or an exception.

    Args:
        settings: from ``fast_url``.
        timeout: seconds a call may wait for its answer (also bounds connecting).
        connect_timeout: seconds to connect.
        connections: how many connections calls are spread over (round robin).
    """

    def __init__(
        self, settings: dict[str, Any], *, timeout: float, connect_timeout: float, connections: int = 2
    ) -> None:
        self._settings = settings
        self._timeout, self._connect_timeout = timeout, connect_timeout
        self._slots: list[_Protocol | None] = [None] * max(1, connections)
        self._locks = [asyncio.Lock() for _ in self._slots]
        self._next = 0
        self._closed = False

    async def _connect(self, index: int) -> _Protocol:
        async with self._locks[index]:
            proto = self._slots[index]
            if proto is not None and not proto.lost:
                return proto
            if self._closed:
                raise rexc.ConnectionError("redis: client closed")
            loop = asyncio.get_running_loop()
            s = self._settings
            try:
                async with asyncio.timeout(self._connect_timeout):
                    if "path" in s:
                        _, made = await loop.create_unix_connection(_Protocol, s["path"])
                    else:
                        _, made = await loop.create_connection(
                            _Protocol, s.get("host", "localhost"), s.get("port", 6379)
                        )
            except TimeoutError as exc:
                raise rexc.TimeoutError("redis: timed out connecting") from exc
            except OSError as exc:
                raise rexc.ConnectionError(f"redis: cannot connect ({exc})") from exc
            setup: list[tuple[Any, ...]] = []
            if s.get("password") is not None:
                user = s.get("username")
                setup.append(("AUTH", user, s["password"]) if user else ("AUTH", s["password"]))
            if s.get("db"):
                setup.append(("SELECT", s["db"]))
            for command in setup:
                await self._send(made, command)
            self._slots[index] = made
            return made

    async def call(self, *args: Any) -> Any:
        index = self._next = (self._next + 1) % len(self._slots)
        proto = self._slots[index]
        if proto is None or proto.lost:
            proto = await self._connect(index)
        return await self._send(proto, args)

    async def _send(self, proto: _Protocol, args: tuple[Any, ...]) -> Any:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        if proto.transport is None or proto.lost:
            raise rexc.ConnectionError("redis: connection lost")
        proto.pending.append(future)
        proto.send(pack(args))
        timer = loop.call_later(self._timeout, self._expire, proto, future)
        try:
            return await future
        finally:
            timer.cancel()

    @staticmethod
    def _expire(proto: _Protocol, future: asyncio.Future[Any]) -> None:
        if not future.done():
            # No answer in time: the connection is dropped (its replies can no longer be trusted
            # to arrive), and everything in flight on it fails.
            future.set_exception(rexc.TimeoutError("redis: timed out waiting for a reply"))
            proto._fail(rexc.TimeoutError("redis: connection dropped after a timeout"))
            if proto.transport is not None:
                proto.transport.abort()

    async def close(self) -> None:
        self._closed = True
        for proto in self._slots:
            if proto is not None and proto.transport is not None:
                with contextlib.suppress(Exception):
                    proto.transport.close()
        self._slots = [None] * len(self._slots)
