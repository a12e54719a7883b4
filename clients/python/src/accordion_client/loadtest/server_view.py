"""``--metrics-url URL``: the server's own view of the run, from its Prometheus /metrics.

The tool scrapes every URL (one per replica; a ``--workers`` server serves all its workers on
one) before the run and again after it, and reports the differences: per method the calls and
errors the server counted and its p50/p99 from the latency histogram's bucket deltas, the
refusals by layer and reason, the calls grpc's core ended before the service saw them, the
event loop's lag, and each worker's CPU seconds. Differences, so the counts are this run's
calls only as long as nothing else calls the server meanwhile.

A percentile from a histogram is only as fine as its buckets: the report gives the bucket the
percentile falls in (``*_bucket_ms``: lower and upper bound) and, like Prometheus's
``histogram_quantile``, a value interpolated linearly inside it (``*_ms``), which is an estimate.

The exposition format is parsed by ``prometheus_client.parser`` (the ``load`` extra): the
library that writes the server's /metrics, so every detail of the format (escapes, exemplars,
``+Inf``) is read as it was written.
"""

from __future__ import annotations

import math
import time
import urllib.request
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

# The server-side latency: arrival to reply (queueing included; issue 34). Older servers have only
# the handler's histogram, which the tool falls back to (the report says which it used).
DEFAULT_HISTOGRAM = "accordion_rpc_server_seconds"
FALLBACK_HISTOGRAM = "accordion_rpc_latency_seconds"
CALLS = "accordion_rpc_total"
ERRORS = "accordion_rpc_errors_total"
CLIENT_ENDED = "accordion_rpc_client_ended_total"
REFUSED = "accordion_rpc_refused_total"
CORE_CALLS = "accordion_grpc_server_calls_total"
CORE_STREAMS = "accordion_grpc_streams_total"
LOOP_LAG = "accordion_event_loop_lag_seconds"
CPU = "process_cpu_seconds_total"
# After the run, before the second scrape: the server records its calls in batches (5 ms) and
# samples grpc core's counts every second.
SETTLE_SECONDS = 1.5

Labels = tuple[tuple[str, str], ...]
Samples = dict[tuple[str, Labels], float]


class ScrapeError(RuntimeError):
    """A /metrics that could not be read or parsed; the message names the URL."""


def parse(text: str) -> Samples:
    """Every sample of a Prometheus text exposition as (name, sorted labels) -> value."""
    from prometheus_client.parser import text_string_to_metric_families  # the load extra

    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = float(s.value)
    return samples


def scrape(url: str, timeout: float = 10.0) -> Samples:
    """Every sample of ``url``'s /metrics; ScrapeError when it cannot be read or parsed."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as reply:  # noqa: S310 (the user's URL)
            return parse(reply.read().decode("utf-8"))
    except (OSError, ValueError) as exc:
        raise ScrapeError(f"{url}: {exc}") from exc


def check_parser() -> None:
    """ImportError, with what to install, when the parser is missing (before the run, not after)."""
    try:
        import prometheus_client.parser  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            "--metrics-url needs prometheus_client: pip install 'accordion-client[load]'"
        ) from exc


def scrape_all(urls: Sequence[str]) -> list[Samples | str]:
    """Each URL's samples, or the reason it could not be read (the run goes on without it)."""
    out: list[Samples | str] = []
    for url in urls:
        try:
            out.append(scrape(url))
        except ScrapeError as exc:
            out.append(str(exc))
    return out


def short_method(method: str) -> str:
    """``accordion.v1.AccordionService/ApplyMove`` -> ``ApplyMove``."""
    return method.rsplit("/", 1)[-1]


@dataclass
class Delta:
    """after - before of every sample, summed over the URLs (the worker CPU kept apart)."""

    values: dict[tuple[str, Labels], float] = field(default_factory=lambda: defaultdict(float))
    names: set[str] = field(default_factory=set)
    cpu: dict[str, float] = field(default_factory=dict)

    def add(self, before: Samples, after: Samples, url_index: int, urls: int) -> None:
        for key, value in after.items():
            name, labels = key
            self.names.add(name)
            diff = value - before.get(key, 0.0)  # a series new since the first scrape started at 0
            if name == CPU:
                worker = dict(labels).get("worker", "process")
                self.cpu[worker if urls == 1 else f"{url_index + 1}:{worker}"] = round(diff, 3)
            else:
                self.values[key] += diff

    def rows(self, name: str) -> Iterable[tuple[dict[str, str], float]]:
        for (n, labels), value in self.values.items():
            if n == name:
                yield dict(labels), value


def quantile(buckets: dict[float, float], p: float) -> dict[str, Any] | None:
    """The ``p`` percentile of cumulative bucket counts (upper bound -> calls at or below):
    the bucket it falls in and a linear estimate inside it; None without calls."""
    bounds = sorted(buckets)
    total = buckets[bounds[-1]] if bounds else 0.0
    if total <= 0:
        return None
    rank = max(1.0, math.ceil(p / 100 * total))
    lower, below = 0.0, 0.0
    for upper in bounds:
        count = buckets[upper]
        if count >= rank:
            if math.isinf(upper):  # beyond the last finite bucket: only a lower bound is known
                return {"ms": round(lower * 1000, 3), "bucket_ms": [round(lower * 1000, 3), None]}
            share = (rank - below) / (count - below) if count > below else 1.0
            return {
                "ms": round((lower + (upper - lower) * share) * 1000, 3),
                "bucket_ms": [round(lower * 1000, 3), round(upper * 1000, 3)],
            }
        lower, below = upper, count
    return None


def histogram_of(delta: Delta, name: str, by: str | None) -> dict[str, dict[float, float]]:
    """Cumulative bucket counts of histogram ``name``, summed over every label but ``by``."""
    out: dict[str, dict[float, float]] = defaultdict(lambda: defaultdict(float))
    for labels, value in delta.rows(name + "_bucket"):
        key = labels.get(by, "") if by else ""
        out[key][float(labels["le"])] += value
    return out


def server_view(
    urls: Sequence[str], before: list[Samples | str], after: list[Samples | str], histogram: str | None
) -> dict[str, Any]:
    """The report's ``server`` section from the two scrapes of each URL."""
    delta = Delta()
    unreadable = []
    for i, (b, a) in enumerate(zip(before, after, strict=True)):
        if isinstance(b, str) or isinstance(a, str):
            unreadable.append(b if isinstance(b, str) else a)
            continue
        delta.add(b, a, i, len(urls))
    chosen = histogram or (
        DEFAULT_HISTOGRAM if DEFAULT_HISTOGRAM + "_bucket" in delta.names else FALLBACK_HISTOGRAM
    )
    latency = histogram_of(delta, chosen, "method")
    methods: dict[str, dict[str, Any]] = {}

    def method(name: str) -> dict[str, Any]:
        short = short_method(name)
        return methods.setdefault(
            short, {"calls": 0, "errors": 0, "errors_by_code": {}, "p50": None, "p99": None}
        )

    for labels, value in delta.rows(CALLS):
        if value > 0:
            method(labels.get("method", ""))["calls"] += round(value)
    # Errors as the server counts them (a stream its client ended is not one, issue 34).
    reasons: dict[str, int] = defaultdict(int)
    for labels, value in delta.rows(ERRORS):
        if value > 0:
            row, code = method(labels.get("method", "")), labels.get("code", "?")
            row["errors"] += round(value)
            row["errors_by_code"][code] = row["errors_by_code"].get(code, 0) + round(value)
            reasons[f"{code} {labels.get('reason', 'none')}"] += round(value)
    ended: dict[str, int] = defaultdict(int)
    for labels, value in delta.rows(CLIENT_ENDED):
        if value > 0:
            ended[f"{short_method(labels.get('method', ''))} {labels.get('outcome', '?')}"] += round(value)
    for name, buckets in latency.items():
        if buckets and max(buckets.values()) > 0:
            row = method(name)
            row["p50"], row["p99"] = quantile(buckets, 50), quantile(buckets, 99)
    by_code: dict[str, int] = defaultdict(int)  # beside the client's failures by code
    for row in methods.values():
        for code, n in row["errors_by_code"].items():
            by_code[code] += n
    refused: dict[str, int] = defaultdict(int)
    for labels, value in delta.rows(REFUSED):
        if value > 0:
            refused[f"{labels.get('layer', '?')} {labels.get('reason', 'none')}"] += round(value)
    core: dict[str, int] = {}
    for name, prefix in ((CORE_CALLS, "calls"), (CORE_STREAMS, "streams")):
        for labels, value in delta.rows(name):
            core[f"{prefix} {labels.get('outcome', '?')}"] = round(value)
    if "calls started" in core:  # calls grpc's core ended before the service's wrapper saw them
        seen = sum(r["calls"] for r in methods.values())
        core["calls unseen by the service"] = max(0, core["calls started"] - seen)
    lag = quantile(histogram_of(delta, LOOP_LAG, None).get("", {}), 99)
    return {
        "urls": list(urls),
        "unreadable": unreadable,
        "histogram": chosen,
        "histogram_fallback": chosen == FALLBACK_HISTOGRAM and histogram is None,
        "bucket_bounds_ms": sorted(
            round(b * 1000, 3) for b in next(iter(latency.values()), {}) if not math.isinf(b)
        ),
        "methods": dict(sorted(methods.items())),
        "errors_by_code": dict(sorted(by_code.items())),
        "errors_by_code_reason": dict(sorted(reasons.items())),
        "refused_by_layer_reason": dict(sorted(refused.items())),
        "client_ended": dict(sorted(ended.items())),
        "grpc_core": core,
        "event_loop_lag_p99": lag,
        "cpu_seconds_by_worker": dict(sorted(delta.cpu.items())),
    }


def settle() -> None:
    time.sleep(SETTLE_SECONDS)
