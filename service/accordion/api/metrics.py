"""Prometheus metrics, module-level so every server in a process shares one registry.

Served on ``--metrics-port`` at ``/metrics`` only (``serve_metrics``; see ``server.py``, and
``workers.py`` for the multiprocess mode). docs/operations.md lists every metric.

* RPCs: counts, errors and latency by method and code (``call_metrics``, in batches), handlers
  running now by method (``accordion_rpc_in_flight``, ``interceptors``), error
  replies by their ErrorInfo reason (``errors.abort``), API-key rate limits (``apikeys``);
* games and the store: ``SessionMetrics``, the session layer's ``Observer``;
* read at scrape time: the memory store's size (``MemoryStoreCollector``), the process's CPU
  and memory (prometheus_client's process collector; ``WorkerProcessCollector`` per worker).
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Iterable, Mapping
from socketserver import ThreadingMixIn
from typing import Any, Protocol
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram, make_wsgi_app
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from accordion.engine.core import Status
from accordion.sessions.observer import Observer

RPCS = Counter(
    "accordion_rpc_total", "RPCs handled, by full method and final status code", ["method", "code"]
)
LATENCY = Histogram(
    "accordion_rpc_latency_seconds",
    "RPC latency (streams: until the stream ends)",
    ["method"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
ERRORS = Counter(
    "accordion_rpc_errors_total",
    "RPCs that ended with a status other than OK, by code and the ErrorInfo reason the client got "
    "('none': no ErrorInfo); calls ended by their client are not errors (accordion_rpc_client_ended_total)",
    ["method", "code", "reason"],
)
STORE_ERRORS = Counter(
    "accordion_store_errors_total",
    "Store calls that failed to reach the backend (timeouts, lost connections)",
    ["operation"],
)
RATE_LIMITED = Counter(
    "accordion_rate_limited_total", "Calls refused by an API key's rate limit, by key name", ["key_name"]
)
RATE_LIMITER_ERRORS = Counter(
    "accordion_rate_limiter_errors_total",
    "Rate-limit decisions the backend could not make in time (the call was let through)",
)

# --- what the client feels (issue 34; docs/operations.md, /work names: callinfo's "arrival") --------

_WAIT_BUCKETS = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    0.75,
    1,
    1.5,
    2,
    2.5,
    5,
    10,
    30,
    60,
)
QUEUED = Histogram(
    "accordion_rpc_queued_seconds",
    "Time from a call's arrival in Python to its handler's start (admission, API key, rate limits "
    "and the request message read), by full method; calls whose handler started",
    ["method"],
    buckets=_WAIT_BUCKETS,
)
SERVER_TIME = Histogram(
    "accordion_rpc_server_seconds",
    "Time from a call's arrival in Python to its reply handed to grpc (streams: until the stream "
    "ends), by full method and status code; every call, refused ones included",
    ["method", "code"],
    buckets=_WAIT_BUCKETS,
)
CORE_WAIT = Histogram(
    "accordion_rpc_core_wait_seconds",
    "At least how long a call waited in grpc core before its arrival in Python (a lower bound from "
    "grpc core's count of calls started, read every 0.1 s: callinfo.CoreCounts), by full method",
    ["method"],
    buckets=_WAIT_BUCKETS,
)
REFUSED = Counter(
    "accordion_rpc_refused_total",
    "Calls refused before their handler (or their work) ran, by full method, the layer that "
    "refused them and the ErrorInfo reason the client got ('none': the core sent no reason)",
    ["method", "layer", "reason"],
)
CLIENT_ENDED = Counter(
    "accordion_rpc_client_ended_total",
    "Calls ended by their client, not errors (not in accordion_rpc_errors_total): outcome "
    "cancelled (the client cancelled or went away) or deadline (a stream ended by its deadline)",
    ["method", "outcome"],
)
LOOP_LAG = Histogram(
    "accordion_event_loop_lag_seconds",
    "How late a periodic timer on the event loop fired: the wait any callback (a call's next "
    "step) had in the loop's ready queue at that moment",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
GRPC_CALLS = Counter(
    "accordion_grpc_server_calls_total",
    "grpc core's own count of this process's server calls (channelz), by outcome: started, "
    "succeeded, failed (includes calls the core ended before Python saw them)",
    ["outcome"],
)
GRPC_STREAMS = Counter(
    "accordion_grpc_streams_total",
    "HTTP/2 streams on this process's client connections (channelz socket data), by outcome: "
    "started, succeeded, failed (reset by either side; grpc core's own REFUSED_STREAM resets are not "
    "counted)",
    ["outcome"],
)
CALLS_IN_CORE = Gauge(
    "accordion_grpc_calls_waiting",
    "Calls grpc core has started that Python has not picked up yet (channelz calls started minus "
    "calls seen by the wrapper, read every second): the queue before arrival, where a busy event "
    "loop makes calls wait unseen by the other timings; with --workers summed over live workers",
    multiprocess_mode="livesum",
)
GRPC_CONNECTIONS = Gauge(
    "accordion_grpc_connections",
    "Client connections open on this process's gRPC ports (channelz); with --workers one series "
    "per live worker (label pid): SO_REUSEPORT spreads connections, not calls, so this shows "
    "how evenly the kernel spread them",
    multiprocess_mode="liveall",
)


# --- games, moves and the store (told by the session layer: ``SessionMetrics``) ---------------

GAMES_CREATED = Counter("accordion_games_created_total", "Games dealt and stored, by variant", ["variant"])
GAMES_FINISHED = Counter(
    "accordion_games_finished_total",
    "Moves that ended a game, by variant and the status they ended it in (WON, LOST)",
    ["variant", "status"],
)
GAMES_REOPENED = Counter(
    "accordion_games_reopened_total",
    "Undos that took back a game's ending move, by variant and the status it had (finished minus "
    "reopened: the games that stayed finished)",
    ["variant", "status"],
)
MOVES = Counter("accordion_moves_total", "Moves stored (undos not included), by variant", ["variant"])
UNDOS = Counter("accordion_undos_total", "Undos stored, by variant", ["variant"])
STORE_LATENCY = Histogram(
    "accordion_store_latency_seconds",
    "Time of one call to a store out of this process (Redis), whatever its outcome, by operation",
    ["operation"],
    buckets=(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
)
STORE_CALL_ERRORS = Counter(
    "accordion_store_call_errors_total",
    "Store calls that ended without a result, by operation and kind: the store's answers "
    "(not_found, conflict, exists), its failures (unavailable, timeout: --store-timeout; "
    "deadline: the request's), other",
    ["operation", "kind"],
)
ERROR_REASONS = Counter(
    "accordion_rpc_error_reasons_total",
    "Error replies by their google.rpc.ErrorInfo reason (docs/api.md, Errors)",
    ["reason"],
)


class SessionMetrics(Observer):
    """The session layer's events as Prometheus counters. Every label set's child is looked up
    once and kept: a move costs one dict look-up and one ``inc`` (plus one more when it ends or
    reopens a game). Variants and operations are the service's own, so the dicts stay small."""

    def __init__(self) -> None:
        self._created: dict[str, Counter] = {}
        self._moves: dict[tuple[str, bool], Counter] = {}
        self._ends: dict[tuple[str, str, bool], Counter] = {}
        self._latency: dict[str, Histogram] = {}
        self._failed: dict[tuple[str, str], Counter] = {}

    def dealt(self, variant: str) -> None:
        child = self._created.get(variant)
        if child is None:
            child = self._created[variant] = GAMES_CREATED.labels(variant)
        child.inc()

    def moved(self, variant: str, undo: bool, before: Status, after: Status) -> None:
        child = self._moves.get((variant, undo))
        if child is None:
            child = self._moves[(variant, undo)] = (UNDOS if undo else MOVES).labels(variant)
        child.inc()
        if before is after:
            return
        # A move out of play ends the game (counted once: it then has no moves, and an undo
        # first reopens it); an undo out of an end reopens it, counted by the status it had.
        reopened = before is not Status.IN_PROGRESS
        status = (before if reopened else after).value
        end = self._ends.get((variant, status, reopened))
        if end is None:
            metric = GAMES_REOPENED if reopened else GAMES_FINISHED
            end = self._ends[(variant, status, reopened)] = metric.labels(variant, status)
        end.inc()

    def store_call(self, operation: str, seconds: float) -> None:
        child = self._latency.get(operation)
        if child is None:
            child = self._latency[operation] = STORE_LATENCY.labels(operation)
        child.observe(seconds)

    def store_failed(self, operation: str, kind: str) -> None:
        # Not rare for "not_found": every unknown game id a client sends. Its child is kept as
        # the others are, so that an unknown id costs no more than a wrong token on an existing
        # game (a label look-up here was ~2 µs of CPU the wrong token's path did not pay: an
        # existence oracle by latency, issue 28; bench/oracle.py).
        child = self._failed.get((operation, kind))
        if child is None:
            child = self._failed[(operation, kind)] = STORE_CALL_ERRORS.labels(operation, kind)
        child.inc()


SESSION_METRICS = SessionMetrics()  # the one every servicer of the process reports to


def count_error_reason(reason: str) -> None:
    """One error reply with ``reason`` (``errors.abort`` calls it for every error it sends)."""
    child = _reasons.get(reason)
    if child is None:
        child = _reasons[reason] = ERROR_REASONS.labels(reason)
    child.inc()


_reasons: dict[str, Counter] = {}


# --- handlers running now, by method ---------------------------------------------------------

IN_FLIGHT_NAME = "accordion_rpc_in_flight"
IN_FLIGHT_HELP = (
    "RPCs whose handler is running now, by full method (streams: until the handler has ended, "
    "given back its slots and its store connection)"
)


class InFlight(Protocol):
    """One method's count of handlers running (``interceptors._Call``: up on entry, down once
    everything the call held is given back)."""

    def inc(self) -> None: ...

    def dec(self) -> None: ...


class _Count:
    """A plain count: the wrapper moves it twice per call (inc and dec: ~0.08 µs here against
    ~1.3 µs on a prometheus Gauge, which takes a lock each time); read only at the scrape
    (``InFlightCollector``)."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0

    def inc(self) -> None:
        self.value += 1

    def dec(self) -> None:
        self.value -= 1


class InFlightCollector(Collector):
    """``accordion_rpc_in_flight{method}`` from the plain counts, read at each scrape."""

    def __init__(self) -> None:
        self.counts: dict[str, _Count] = {}

    def collect(self) -> Iterable[Metric]:
        family = GaugeMetricFamily(IN_FLIGHT_NAME, IN_FLIGHT_HELP, labels=["method"])
        for method, count in list(self.counts.items()):
            family.add_metric([method], count.value)
        return [family]


# With --workers the supervisor sums the workers' files (prometheus_client's multiprocess mode,
# set by PROMETHEUS_MULTIPROC_DIR before the workers start): there a Gauge, summed over the live
# workers; in one process the plain counts.
if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    _IN_FLIGHT_GAUGE: Gauge | None = Gauge(
        IN_FLIGHT_NAME, IN_FLIGHT_HELP, ["method"], multiprocess_mode="livesum"
    )
    _IN_FLIGHT_COUNTS: InFlightCollector | None = None
else:
    _IN_FLIGHT_GAUGE, _IN_FLIGHT_COUNTS = None, InFlightCollector()
    REGISTRY.register(_IN_FLIGHT_COUNTS)


def in_flight(method: str) -> InFlight:
    """``method``'s count of handlers running (built once per method, by ``interceptors.wrap``)."""
    if _IN_FLIGHT_GAUGE is not None:
        child: InFlight = _IN_FLIGHT_GAUGE.labels(method)
        return child
    assert _IN_FLIGHT_COUNTS is not None
    return _IN_FLIGHT_COUNTS.counts.setdefault(method, _Count())


# --- what is read at scrape time: the memory store's size, the worker processes ---------------


class MemoryStoreCollector(Collector):
    """The embedded memory store's size, read at each scrape from its ``stats()`` (games and
    request-id claims held, its cap, games expired and evicted since start). A store without
    ``stats()`` (Redis, whose size is Redis's own INFO) exports nothing."""

    def __init__(self, store: object) -> None:
        self._stats = getattr(store, "stats", None)

    def collect(self) -> Iterable[Metric]:
        if self._stats is None:
            return []
        stats = self._stats()
        found: list[Metric] = [
            GaugeMetricFamily(
                "accordion_memory_store_games", "Games the memory store holds", value=stats.games
            ),
            GaugeMetricFamily(
                "accordion_memory_store_claims",
                "NewGame request ids the memory store holds",
                value=stats.claims,
            ),
            CounterMetricFamily(
                "accordion_memory_store_expired", "Games the memory store let expire", value=stats.expired
            ),
            CounterMetricFamily(
                "accordion_memory_store_evicted",
                "Games the memory store evicted at its cap (least recently used first)",
                value=stats.evicted,
            ),
        ]
        if stats.max_games is not None:
            found.append(
                GaugeMetricFamily(
                    "accordion_memory_store_max_games",
                    "The memory store's cap on games",
                    value=stats.max_games,
                )
            )
        return found


def watch_memory_store(store: object, registry: CollectorRegistry = REGISTRY) -> MemoryStoreCollector | None:
    """Export ``store``'s size on ``registry`` when it has ``stats()`` (the memory store); returns
    the collector (``registry.unregister`` it when the store goes) or None."""
    if getattr(store, "stats", None) is None:
        return None
    collector = MemoryStoreCollector(store)
    registry.register(collector)
    return collector


class WorkerProcessCollector(Collector):
    """``process_*`` (CPU seconds, resident and virtual memory, open files, start time) of every
    worker process, with a ``worker`` label, and of the supervisor (``worker="supervisor"``).
    Multiprocess mode keeps only counters, gauges and histograms in its files, so the
    supervisor reads each worker's /proc at scrape time with prometheus_client's own
    ``ProcessCollector``. ``pids()`` gives the workers now: index → pid."""

    def __init__(self, pids: Callable[[], Mapping[int, int]]) -> None:
        self._pids = pids

    def collect(self) -> Iterable[Metric]:
        merged: dict[str, Metric] = {}
        targets: list[tuple[str, int | str]] = [("supervisor", "self")]
        targets += [(str(index), pid) for index, pid in sorted(self._pids().items())]
        for worker, pid in targets:
            for family in ProcessCollector(pid=_constant(pid), registry=None).collect():
                into = merged.get(family.name)
                if into is None:
                    into = merged[family.name] = Metric(family.name, family.documentation, family.type)
                for sample in family.samples:
                    into.add_sample(sample.name, {**sample.labels, "worker": worker}, sample.value)
        return list(merged.values())


def _constant(pid: int | str) -> Callable[[], int | str]:
    return lambda: pid


# --- the HTTP endpoint: /metrics and nothing else ---------------------------------------------

METRICS_PATH = "/metrics"


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        """Nothing: wsgiref writes a plain line per request to stderr, which is the JSON log."""


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True  # a scrape in progress does not hold the process at exit


def metrics_app(registry: CollectorRegistry = REGISTRY) -> Callable[..., Iterable[bytes]]:
    """prometheus_client's WSGI app on ``METRICS_PATH`` only; every other path is 404."""
    app = make_wsgi_app(registry)

    def only_metrics(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != METRICS_PATH:
            start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
            return [f"not found: the metrics are at {METRICS_PATH}\n".encode()]
        result: Iterable[bytes] = app(environ, start_response)
        return result

    return only_metrics


def serve_metrics(port: int, host: str, registry: CollectorRegistry = REGISTRY) -> WSGIServer:
    """Serve ``registry`` on http://host:port/metrics (only there) from a daemon thread, as
    ``prometheus_client.start_http_server`` would, IPv6 hosts included; returns the server
    (``shutdown()`` stops it)."""
    family, _, _, _, address = socket.getaddrinfo(
        host or "0.0.0.0", port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]

    class Server(_ThreadingServer):
        address_family = family

    server = make_server(str(address[0]), port, metrics_app(registry), Server, handler_class=_QuietHandler)
    threading.Thread(target=server.serve_forever, name="metrics-http", daemon=True).start()
    return server
