"""The server's own view of a load run, from its /metrics before and after (issue 34): per
method, calls, p50/p99 of ``accordion_rpc_server_seconds`` (arrival → reply) and of
``accordion_rpc_queued_seconds``, the refusals by layer, the errors and client-ended calls,
and the event loop's lag. Quantiles are interpolated within histogram buckets, as PromQL's
histogram_quantile does.

    .venv/bin/python tools/server_quantiles.py save http://127.0.0.1:9100/metrics before.prom
    .venv/bin/accordion-load ...
    .venv/bin/python tools/server_quantiles.py diff before.prom http://127.0.0.1:9100/metrics
"""

from __future__ import annotations

import math
import sys
import urllib.request
from collections import defaultdict
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def read(source: str) -> Samples:
    text = (
        urllib.request.urlopen(source, timeout=30).read().decode()  # noqa: S310 (an operator's URL)
        if source.startswith("http")
        else Path(source).read_text()
    )
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


def quantile(buckets: list[tuple[float, float]], q: float) -> float:
    """histogram_quantile over (upper bound, cumulative count) pairs, sorted."""
    total = buckets[-1][1] if buckets else 0.0
    if total <= 0:
        return math.nan
    rank, lower, below = q * total, 0.0, 0.0
    for upper, count in buckets:
        if count >= rank:
            if math.isinf(upper):
                return lower
            return lower + (upper - lower) * ((rank - below) / (count - below) if count > below else 1.0)
        lower, below = upper, count
    return lower


def histograms(before: Samples, after: Samples, name: str, by: str) -> dict[str, list[tuple[float, float]]]:
    """``name``'s bucket counts grown between the two readings, summed by label ``by``."""
    grown: dict[str, dict[float, float]] = defaultdict(lambda: defaultdict(float))
    for (sample, labels), value in after.items():
        if sample != f"{name}_bucket":
            continue
        labels_d = dict(labels)
        grown[labels_d.get(by, "")][float(labels_d["le"])] += value - before.get((sample, labels), 0.0)
    return {key: sorted(b.items()) for key, b in grown.items()}


def grown_by(before: Samples, after: Samples, name: str, *keys: str) -> dict[tuple[str, ...], float]:
    found: dict[tuple[str, ...], float] = defaultdict(float)
    for (sample, labels), value in after.items():
        if sample == name:
            labels_d = dict(labels)
            found[tuple(labels_d.get(k, "") for k in keys)] += value - before.get((sample, labels), 0.0)
    return {k: v for k, v in found.items() if v}


def report(before: Samples, after: Samples) -> str:
    server = histograms(before, after, "accordion_rpc_server_seconds", "method")
    queued = histograms(before, after, "accordion_rpc_queued_seconds", "method")
    core = histograms(before, after, "accordion_rpc_core_wait_seconds", "method")
    lines = [
        f"{'method':<14}{'calls':>9}{'p50 ms':>10}{'p99 ms':>10}{'queued p50':>12}{'queued p99':>12}"
        f"{'core≥ p50':>12}{'core≥ p99':>12}"
    ]
    rows = sorted((m, b) for m, b in server.items() if b and b[-1][1] > 0)
    for method, buckets in rows:
        q, c = queued.get(method, []), core.get(method, [])
        lines.append(
            f"{method.rsplit('/', 1)[-1]:<14}{buckets[-1][1]:>9.0f}{quantile(buckets, 0.5) * 1000:>10.2f}"
            f"{quantile(buckets, 0.99) * 1000:>10.2f}"
            f"{quantile(q, 0.5) * 1000:>12.2f}{quantile(q, 0.99) * 1000:>12.2f}"
            f"{quantile(c, 0.5) * 1000:>12.2f}{quantile(c, 0.99) * 1000:>12.2f}"
        )
    for title, name, keys in (
        ("refused", "accordion_rpc_refused_total", ("method", "layer", "reason")),
        ("errors", "accordion_rpc_errors_total", ("method", "code", "reason")),
        ("client ended", "accordion_rpc_client_ended_total", ("method", "outcome")),
        ("grpc core calls", "accordion_grpc_server_calls_total", ("outcome",)),
    ):
        found = grown_by(before, after, name, *keys)
        text = (
            ", ".join(
                f"{'/'.join(k).replace('accordion.v1.AccordionService/', '')}: {v:.0f}"
                for k, v in sorted(found.items())
            )
            or "none"
        )
        lines.append(f"{title}: {text}")
    lag = histograms(before, after, "accordion_event_loop_lag_seconds", "")
    if lag.get(""):
        b = lag[""]
        lines.append(
            f"event-loop lag: p50 {quantile(b, 0.5) * 1000:.2f} ms, p99 {quantile(b, 0.99) * 1000:.2f} ms"
            f" ({b[-1][1]:.0f} samples)"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "save":
        Path(argv[2]).write_text(urllib.request.urlopen(argv[1], timeout=30).read().decode())  # noqa: S310
        return 0
    if len(argv) == 3 and argv[0] == "diff":
        print(report(read(argv[1]), read(argv[2])))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
