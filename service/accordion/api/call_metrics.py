"""The Prometheus metrics of every call, counted a batch at a time (``access_log`` hands each
batch here before it writes the batch's lines): one ``inc(n)`` per method and code, one
``observe`` per call, on children built once; errors by code and reason, refusals by layer,
calls their client ended apart (docs/operations.md)."""

from __future__ import annotations

import logging
from typing import TypeAlias, TypeVar, cast

import grpc
from prometheus_client import Counter, Histogram

from . import metrics
from .callinfo import CORE_COUNTS, CallInfo

# One call not recorded yet: (method, game id, status code, seconds from arrival to reply,
# time.time(), seconds queued (arrival to handler start; -1: the handler never started), its
# CallInfo, its caller, outcome (``access_log.OUTCOMES``), request, response). Request and response are
# kept only to measure their bytes and variant for the lines written.
Call: TypeAlias = "tuple[str, str, grpc.StatusCode, float, float, float, CallInfo, str, str, object, object]"
_failures = logging.getLogger(__name__)  # a batch that failed to count is told here (stderr)
_OK = grpc.StatusCode.OK

# A method's and code's children: calls (Counter), latency, server time, queued (Histograms).
Children: TypeAlias = "tuple[Counter, Histogram, Histogram, Histogram]"
Metric = TypeVar("Metric", Counter, Histogram)
_children: dict[tuple[str, grpc.StatusCode], Children] = {}
_queued: dict[str, Histogram] = {}
_others: dict[tuple[object, ...], Counter | Histogram] = {}  # errors, refusals, client-ended: rarer


def _metric_children(method: str, code: grpc.StatusCode) -> Children:
    found = _children.get((method, code))
    if found is None:
        name = code.name
        found = _children[(method, code)] = (
            metrics.RPCS.labels(method, name),
            metrics.LATENCY.labels(method),
            metrics.SERVER_TIME.labels(method, name),
            _queued.get(method) or _queued.setdefault(method, metrics.QUEUED.labels(method)),
        )
    return found


def _other(metric: Metric, *labels: str) -> Metric:
    """``metric``'s child for ``labels``, made once (keyed by the metric and its labels)."""
    key = (metric, *labels)
    child = _others.get(key)
    if child is None:
        if len(_others) >= 4096:  # labels are the service's own; bound it all the same
            _others.clear()
        child = _others[key] = metric.labels(*labels)
    return cast(Metric, child)  # (the child of ``metric``: its own type)


def count_calls(calls: list[Call]) -> None:
    """One ``inc(n)`` per (method, code) and the ``observe``s per call, on the real metric
    objects (worker processes write them to the files the supervisor's /metrics reads)."""
    grouped: dict[tuple[str, grpc.StatusCode], list[Call]] = {}
    for call in calls:
        found = grouped.get((call[0], call[2]))
        if found is None:
            found = grouped[(call[0], call[2])] = []
        found.append(call)
    for (method, code), group in grouped.items():
        try:  # one key failing (say, no room to grow a metrics file) does not lose the others
            rpcs, latency, server, queued = _metric_children(method, code)
            rpcs.inc(len(group))
            core_wait, in_core = None, CORE_COUNTS.waited
            for call in group:
                elapsed, waited, info = call[3], call[5], call[6]
                latency.observe(elapsed)
                server.observe(elapsed)
                if waited >= 0:
                    queued.observe(waited)
                info.core_wait = before = in_core(info.seq, info.arrived)  # (kept for the line)
                if before is not None:
                    if core_wait is None:
                        core_wait = _other(metrics.CORE_WAIT, method)
                    core_wait.observe(before)
            if code is not _OK:
                _count_unanswered(method, code, group)
        except Exception:
            _failures.exception("recording RPC metrics failed")


def _count_unanswered(method: str, code: grpc.StatusCode, group: list[Call]) -> None:
    """Errors by code and reason, refusals by layer, calls their client ended apart."""
    name = code.name
    for call in group:
        info, outcome = call[6], call[8]
        if outcome == "client_cancelled" or outcome == "client_deadline":
            _other(metrics.CLIENT_ENDED, method, outcome[7:]).inc()
            continue
        reason = info.reason or "none"
        _other(metrics.ERRORS, method, name, reason).inc()
        if outcome == "refused":
            _other(metrics.REFUSED, method, info.layer, reason).inc()
