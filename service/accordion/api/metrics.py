"""Prometheus metrics, module-level so every server in a process shares one registry.

Served by ``prometheus_client.start_http_server`` on ``--metrics-port`` (see ``server.py``).
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

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
    "accordion_rpc_errors_total", "RPCs that ended with a status other than OK, by code", ["method", "code"]
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
