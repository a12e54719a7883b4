"""The process's own view of its load, sampled (issue 34): the event loop's lag, and grpc core's
counters from channelz, which see what Python cannot (calls the core ended itself, HTTP/2
streams reset, connections open).

* ``accordion_event_loop_lag_seconds``: a timer due every ``LAG_EVERY`` seconds; how late it
  fires is how long any ready callback (the next step of a call) waited at that moment. A
  blocked loop (a long synchronous step, a GC pause) shows here whatever the calls say.
* ``accordion_grpc_server_calls_total{outcome}``: channelz's per-server calls started,
  succeeded, failed (every status but OK), summed over this process's gRPC servers, read every
  ``CORE_EVERY`` seconds and added as the difference since the last reading.
* ``accordion_grpc_calls_waiting``: channelz's calls started minus the calls the wrapper has
  seen (``callinfo.ARRIVALS``), on the servers whose calls it wraps (not the admin port's): the
  calls waiting in grpc core for the event loop to ask for them, before "arrival".
* ``accordion_grpc_streams_total{outcome}``, ``accordion_grpc_connections``: channelz's
  per-connection (socket) HTTP/2 streams started, succeeded, failed (reset), and the number of
  connections. A connection that closes between two readings loses its last difference (at
  most ``CORE_EVERY`` seconds of it); only ``MAX_SOCKETS`` connections are read per server.

What stays invisible: a client that waits for a free HTTP/2 stream (the server's
``max_concurrent_streams``) queues the call in the client, never sending it; only the client
sees that wait. See docs/operations.md.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

from grpc._cython import cygrpc  # type: ignore[attr-defined]  # (channelz in the C core: no stubs)

from . import callinfo, metrics

LAG_EVERY = 0.25
CORE_EVERY = 1.0
COUNT_EVERY = 0.1  # grpc core's count of calls started, for callinfo.CoreCounts (a reading: ~0.27 ms)
MAX_SOCKETS = 512  # connections read per server and reading (each is a call into the core)
_failures = logging.getLogger(__name__)


class ServerWatch:
    """``start()`` on the running loop; ``stop()`` when the server stops."""

    def __init__(
        self,
        lag_every: float = LAG_EVERY,
        core_every: float = CORE_EVERY,
        unwrapped_ports: tuple[int, ...] = (),
    ) -> None:
        """``unwrapped_ports``: ports of servers whose calls the wrapper never sees (--admin-port)."""
        self.lag_every, self.core_every = lag_every, core_every
        self.unwrapped = tuple(f":{port}" for port in unwrapped_ports if port)
        self._lag: asyncio.TimerHandle | None = None
        self._core: asyncio.TimerHandle | None = None
        self._count: asyncio.TimerHandle | None = None
        self._calls = {"started": 0, "succeeded": 0, "failed": 0}  # the last reading (totals)
        self._streams: dict[str, tuple[int, int, int]] = {}  # socket id → its last reading
        self._lag_child = metrics.LOOP_LAG
        self._calls_children = {k: metrics.GRPC_CALLS.labels(k) for k in self._calls}
        self._streams_children = tuple(
            metrics.GRPC_STREAMS.labels(k) for k in ("started", "succeeded", "failed")
        )

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._lag = loop.call_at(
            loop.time() + self.lag_every, self._lag_due, loop, loop.time() + self.lag_every
        )
        self._core = loop.call_later(self.core_every, self._core_due, loop)
        self._count = loop.call_later(COUNT_EVERY, self._count_due, loop)

    def stop(self) -> None:
        for handle in (self._lag, self._core, self._count):
            if handle is not None:
                handle.cancel()
        self._lag = self._core = self._count = None

    def _count_due(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            started = sum(
                int(server.get("data", {}).get("callsStarted", 0))
                for server in _servers()
                if self._wrapped(server)
            )
            callinfo.CORE_COUNTS.add(time.perf_counter(), started)
        except Exception:  # skipped; the next reading tries again
            _failures.exception("reading grpc's channelz call count failed")
        self._count = loop.call_later(COUNT_EVERY, self._count_due, loop)

    def _wrapped(self, server: dict[str, Any]) -> bool:
        """Whether the wrapper sees ``server``'s calls (not the admin port's)."""
        listening = " ".join(s.get("name", "") for s in server.get("listenSocket", []))
        return not any(listening.endswith(port) for port in self.unwrapped)

    def _lag_due(self, loop: asyncio.AbstractEventLoop, due: float) -> None:
        now = loop.time()
        self._lag_child.observe(max(0.0, now - due))
        self._lag = loop.call_at(now + self.lag_every, self._lag_due, loop, now + self.lag_every)

    def _core_due(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            self.read_core()
        except Exception:  # a reading that fails is skipped; the next one tries again
            _failures.exception("reading grpc's channelz counters failed")
        self._core = loop.call_later(self.core_every, self._core_due, loop)

    def read_core(self) -> None:
        """One reading of channelz: the differences since the last one added to the counters."""
        totals = {"started": 0, "succeeded": 0, "failed": 0}
        sockets: dict[str, tuple[int, int, int]] = {}
        wrapped_started = 0
        seen = callinfo.ARRIVALS.count  # (read before channelz: a call in between is not "waiting")
        for server in _servers():
            data = server.get("data", {})
            if self._wrapped(server):
                wrapped_started += int(data.get("callsStarted", 0))
            totals["started"] += int(data.get("callsStarted", 0))
            totals["succeeded"] += int(data.get("callsSucceeded", 0))
            totals["failed"] += int(data.get("callsFailed", 0))
            sockets.update(_sockets(int(server["ref"]["serverId"])))
        for outcome, total in totals.items():
            grown = total - self._calls[outcome]
            if grown > 0:
                self._calls_children[outcome].inc(grown)
        self._calls = totals
        grown_streams = [0, 0, 0]
        for socket_id, counts in sockets.items():
            before = self._streams.get(socket_id, (0, 0, 0))
            for i in range(3):
                grown_streams[i] += max(0, counts[i] - before[i])
        for child, grown in zip(self._streams_children, grown_streams, strict=True):
            if grown:
                child.inc(grown)
        self._streams = sockets
        metrics.GRPC_CONNECTIONS.set(len(sockets))
        metrics.CALLS_IN_CORE.set(max(0, wrapped_started - seen))


def _servers() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    start = 0
    while True:
        page = json.loads(cygrpc.channelz_get_servers(start))
        servers = page.get("server", [])
        found += servers
        if page.get("end", True) or not servers:
            return found
        start = int(servers[-1]["ref"]["serverId"]) + 1


def _sockets(server_id: int) -> dict[str, tuple[int, int, int]]:
    """Each connection's streams (started, succeeded, failed), by socket id."""
    page = json.loads(cygrpc.channelz_get_server_sockets(server_id, 0, MAX_SOCKETS))
    found: dict[str, tuple[int, int, int]] = {}
    for ref in page.get("socketRef", []):
        socket_id = ref["socketId"]
        try:
            data = json.loads(cygrpc.channelz_get_socket(int(socket_id))).get("socket", {}).get("data", {})
        except ValueError:  # closed since the listing
            continue
        found[socket_id] = (
            int(data.get("streamsStarted", 0)),
            int(data.get("streamsSucceeded", 0)),
            int(data.get("streamsFailed", 0)),
        )
    return found
