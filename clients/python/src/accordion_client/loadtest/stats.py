"""What a load run measured: every call's latency, per second and per method, errors with a sample
message per code, the schedule's offered and missed calls; and the report built from them."""

from __future__ import annotations

import bisect
import heapq
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

METHODS = ("NewGame", "LegalMoves", "ApplyMove", "Score", "GetGame", "Hint")
WATCH = "WatchGame"  # a stream: its events are timed (move sent -> event seen), not counted as calls
PERCENTILES = (50, 90, 99, 99.9)
# Latency histogram buckets: 10 per decade from 10 µs to 100 s, in milliseconds (log-spaced, so
# the relative error of a bucket is the same for a 0.3 ms and a 300 ms call).
BUCKET_EDGES_MS = tuple(round(10 ** (k / 10), 6) for k in range(-20, 51))
SLOWEST_TRACED = 10  # traced calls reported with their ids, the slowest first
# Slots the open loop could not use, by why.
MISSED_NO_PLAYER = "no_idle_player"  # every player was waiting for a reply and --max-players reached
MISSED_BEHIND = "client_behind"  # the load tool's own loop fell more than a second behind schedule
# Why a slot (open loop) or a call (closed loop) got no successful reply: the table of the report,
# in this order, each cause with what it means. The first two are slots never sent (missed), the
# others calls that were sent and failed.
CAUSES = {
    "client saturated": "never sent: the tool's own loop fell more than 1 s behind the schedule "
    "(its CPU is the bottleneck: run several processes)",
    "player limit": "never sent: all --max-players players were waiting for replies (the replies "
    "came too slowly for the rate)",
    "connection limit": "sent, refused by the server's HTTP/2 stream cap on the connection "
    "(UNAVAILABLE, RST_STREAM REFUSED_STREAM): open more --connections or raise the server's cap",
    "server refused": "sent, refused by the server: RESOURCE_EXHAUSTED (per-client or per-process "
    "limits, store full) or UNAVAILABLE",
    "deadline": "sent, no reply within --deadline (DEADLINE_EXCEEDED)",
    "other error": "sent, failed otherwise (see the errors by code)",
}
MISSED_CAUSE = {MISSED_BEHIND: "client saturated", MISSED_NO_PLAYER: "player limit"}
# How gRPC words a stream the server refused (HTTP/2 RST_STREAM, error code 7: REFUSED_STREAM):
# "Stream removed (RST_STREAM (Received RST_STREAM with error code 7))". The server counts these
# nowhere (grpc core refuses them before the service or channelz sees a call): only the client can.
_REFUSED_STREAM = re.compile(r"RST_STREAM.*error code 7\b|REFUSED_STREAM", re.IGNORECASE)


def failure_cause(code: str, message: str) -> str:
    """The cause (a key of ``CAUSES``) of a call that failed with ``code`` and ``message``."""
    if code == "DEADLINE_EXCEEDED":
        return "deadline"
    if code == "UNAVAILABLE" and _REFUSED_STREAM.search(message):
        return "connection limit"
    if code in ("RESOURCE_EXHAUSTED", "UNAVAILABLE"):
        return "server refused"
    return "other error"


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile of an ascending sequence (0.0 when empty)."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def pkey(p: float) -> str:
    """The report's name of a percentile: p50, p99, p999 (99.9)."""
    return "p" + f"{p:g}".replace(".", "")


def summarize(latencies: Sequence[float]) -> dict[str, float]:
    """Milliseconds: p50, p90, p99, p999, max and mean of latencies given in seconds."""
    values = sorted(latencies)
    out = {pkey(p): round(percentile(values, p) * 1000, 3) for p in PERCENTILES}
    out["max"] = round(values[-1] * 1000, 3) if values else 0.0
    out["mean"] = round(sum(values) / len(values) * 1000, 3) if values else 0.0
    return out


def histogram(latencies: Sequence[float]) -> list[dict[str, float]]:
    """Counts per log-spaced bucket (only the buckets with calls): from_ms < latency <= to_ms."""
    counts: Counter[int] = Counter(bisect.bisect_left(BUCKET_EDGES_MS, x * 1000) for x in latencies)
    rows = []
    for i in sorted(counts):
        lo = BUCKET_EDGES_MS[i - 1] if i > 0 else 0.0
        hi = BUCKET_EDGES_MS[i] if i < len(BUCKET_EDGES_MS) else math.inf
        rows.append({"from_ms": lo, "to_ms": hi, "count": counts[i]})
    return rows


@dataclass
class Second:
    """One second of the run: calls started and finished in it, their outcome and latencies."""

    started: int = 0
    ok: int = 0
    errors: int = 0
    missed: int = 0  # slots of this second (by their scheduled time) never sent
    players: int = 0  # the most players at once
    watch_events: int = 0
    latencies: list[float] = field(default_factory=list)


@dataclass
class Stats:
    # Open loop: calls due in the first t seconds (``Scenario.calls_due``). The series' offered
    # calls per second come from it, so they are the schedule itself, not when the tool woke.
    schedule: Callable[[float], float] | None = None
    latencies: dict[str, list[float]] = field(default_factory=lambda: {m: [] for m in METHODS})
    errors: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    samples: dict[str, str] = field(default_factory=dict)  # the first message seen per code
    first_error: str = ""  # "Method CODE: message" of the first failure
    first_error_at: float | None = None
    seconds: dict[int, Second] = field(default_factory=lambda: defaultdict(Second))
    missed: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)  # failed calls by cause (CAUSES)
    send_delays: list[float] = field(default_factory=list)  # open loop: scheduled -> sent, seconds
    offered: float = 0.0
    started: int = 0
    traced: int = 0  # calls sent with a traceparent (--traceparent-sample)
    slowest_traced: list[tuple[float, str, str, str | None]] = field(default_factory=list)  # a min-heap
    sample_request_ids: dict[str, str] = field(default_factory=dict)  # code -> the first's x-request-id
    watch_lags: list[float] = field(default_factory=list)
    watch_streams: int = 0
    loop_lags: list[float] = field(default_factory=list)  # how late the open loop's dispatcher woke
    window: list[float] = field(default_factory=list)  # successes since the last progress line
    window_errors: int = 0
    games_started: int = 0
    games_finished: int = 0
    games_won: int = 0

    # --- recording (t: seconds since the run started) ---

    def start(self, t: float) -> None:
        self.started += 1
        self.seconds[int(t)].started += 1

    def record(
        self,
        method: str,
        t_end: float,
        seconds: float,
        code: str | None,
        message: str = "",
        request_id: str | None = None,
    ) -> None:
        """One finished call: its latency counts when it succeeded; a failure counts under its code
        (``request_id``: the server's, of the first failure per code, to find its log line)."""
        second = self.seconds[int(t_end)]
        if code is None:
            self.latencies.setdefault(method, []).append(seconds)
            self.window.append(seconds)
            second.ok += 1
            second.latencies.append(seconds)
            return
        self.errors[method][code] += 1
        if method != WATCH:
            self.failed[failure_cause(code, message)] += 1
        self.window_errors += 1
        second.errors += 1
        self.samples.setdefault(code, message)
        if request_id and code not in self.sample_request_ids:
            self.sample_request_ids[code] = request_id
        if not self.first_error:
            self.first_error, self.first_error_at = f"{method} {code}: {message}", t_end

    def miss(self, scheduled: float, reason: str, n: int = 1) -> None:
        """``n`` slots due at ``scheduled`` (counted in that second) that were never sent."""
        self.missed[reason] += n
        self.seconds[int(scheduled)].missed += n

    def players(self, t: float, n: int) -> None:
        second = self.seconds[int(t)]
        second.players = max(second.players, n)

    def traced_call(self, method: str, seconds: float, trace_id: str, request_id: str | None) -> None:
        """A traced call that succeeded: the slowest ``SLOWEST_TRACED`` are kept."""
        item = (seconds, method, trace_id, request_id)
        if len(self.slowest_traced) < SLOWEST_TRACED:
            heapq.heappush(self.slowest_traced, item)
        elif item > self.slowest_traced[0]:
            heapq.heapreplace(self.slowest_traced, item)

    def watch_event(self, t: float, lag: float | None) -> None:
        self.seconds[int(t)].watch_events += 1
        if lag is not None:
            self.watch_lags.append(lag)

    # --- totals ---

    @property
    def ok_count(self) -> int:
        return sum(len(v) for v in self.latencies.values())

    @property
    def error_count(self) -> int:
        return sum(sum(c.values()) for c in self.errors.values())

    @property
    def requests(self) -> int:
        return self.ok_count + self.error_count

    def offered_in(self, second: int, window: float) -> float:
        """The calls the schedule asked for in ``second`` (up to the end of ``window``)."""
        if self.schedule is None or second >= window:
            return 0.0
        return self.schedule(min(second + 1.0, window)) - self.schedule(float(second))

    def unserved(self, offered: float) -> list[dict[str, Any]]:
        """The slots (calls) that got no successful reply, by cause, as the report's table rows;
        ``share``: of ``offered`` (the schedule's calls, or the calls made in a closed loop)."""
        counts: Counter[str] = Counter({MISSED_CAUSE.get(r, r): n for r, n in self.missed.items()})
        counts.update(self.failed)
        return [
            {
                "cause": cause,
                "slots": counts[cause],
                "share": round(counts[cause] / offered, 6) if offered else 0.0,
                "means": means,
            }
            for cause, means in CAUSES.items()
            if counts[cause]
        ]

    def series(self, until: float, window: float | None = None) -> list[dict[str, Any]]:
        """One row per second from 0 to ``until``, empty seconds included (a plot needs the gaps).
        ``offered``: the schedule's calls in that second (``window``: how long the schedule ran)."""
        rows = []
        window = until if window is None else window
        for i in range(max(math.ceil(until), max(self.seconds, default=-1) + 1)):
            s = self.seconds.get(i, Second())
            values = sorted(s.latencies)
            lat = {pkey(p): round(percentile(values, p) * 1000, 3) for p in (50, 90, 99)}
            lat["max"] = round(values[-1] * 1000, 3) if values else 0.0
            rows.append(
                {
                    "t": i,
                    "offered": round(self.offered_in(i, window), 1),
                    "started": s.started,
                    "ok": s.ok,
                    "errors": s.errors,
                    "missed": s.missed,
                    "players": s.players,
                    "watch_events": s.watch_events,
                    "latency_ms": lat,
                }
            )
        return rows

    def report(self, elapsed: float, window: float, settings: dict[str, Any]) -> dict[str, Any]:
        """The whole run as JSON-able data. ``window``: seconds the schedule ran (the run's duration,
        or less when it stopped early); ``elapsed``: until the last reply came back."""
        methods_seen = [m for m in METHODS] + sorted(set(self.errors) - set(METHODS))
        every = [x for v in self.latencies.values() for x in v]
        by_code: Counter[str] = Counter()
        for c in self.errors.values():
            by_code.update(c)
        methods = {}
        for m in methods_seen:
            ok = self.latencies.get(m, [])
            errs = self.errors.get(m, Counter())
            calls = len(ok) + sum(errs.values())
            methods[m] = {
                "requests": calls,
                "errors": sum(errs.values()),
                "throughput_rps": round(calls / elapsed, 2) if elapsed else 0.0,
                "latency_ms": summarize(ok),
                "errors_by_code": dict(sorted(errs.items())),
                "histogram": histogram(ok),
            }
        total = self.requests
        open_loop = settings.get("mode") == "rate"
        rate: dict[str, Any] = {
            "offered": round(self.offered) if open_loop else None,
            "offered_rps": round(self.offered / window, 2) if open_loop and window else None,
            "started": self.started,
            "achieved_rps": round(self.started / window, 2) if window else 0.0,
            "achieved_ratio": round(self.started / self.offered, 4) if open_loop and self.offered else None,
            "missed": sum(self.missed.values()),
            "missed_by_reason": dict(sorted(self.missed.items())),
            "unserved": self.unserved(self.offered if open_loop else total),
            "client_loop_lag_ms": summarize(self.loop_lags) if self.loop_lags else None,
            "send_delay_ms": summarize(self.send_delays) if self.send_delays else None,
        }
        return {
            **settings,
            "elapsed_s": round(elapsed, 3),
            "window_s": round(window, 3),
            "requests": total,
            "errors": self.error_count,
            "error_ratio": round(self.error_count / total, 6) if total else 0.0,
            "throughput_rps": round(total / elapsed, 2) if elapsed else 0.0,
            "rate": rate,
            # Open loop: from each call's scheduled time (a late send counts in its latency: no
            # coordinated omission); closed loop: from sending.
            "latency_from": "schedule" if open_loop else "send",
            "latency_ms": summarize(every),
            "histogram": histogram(every),
            "errors_by_code": dict(sorted(by_code.items())),
            "error_samples": dict(sorted(self.samples.items())),
            "error_request_ids": dict(sorted(self.sample_request_ids.items())),
            "first_error": self.first_error or None,
            "methods": methods,
            "watch": {
                "streams": self.watch_streams,
                "events": sum(s.watch_events for s in self.seconds.values()),
                "lag_ms": summarize(self.watch_lags),
            },
            "traced_calls": self.traced,
            "slowest_traced": [
                {"method": m, "latency_ms": round(sec * 1000, 3), "trace_id": tid, "request_id": rid}
                for sec, m, tid, rid in sorted(self.slowest_traced, reverse=True)
            ],
            "games": {"started": self.games_started, "finished": self.games_finished, "won": self.games_won},
            "series": self.series(elapsed, window),
        }
