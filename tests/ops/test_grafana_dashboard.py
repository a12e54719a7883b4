"""deploy/grafana/accordion.json: valid JSON, a Grafana dashboard whose every PromQL expression
names only metrics a real server exports (scraped after a game played to its end)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from .helpers import http_get, play_to_end, running_server

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "accordion.json"
# Our metric names in PromQL (every one starts with one of these prefixes).
METRIC = re.compile(r"\b((?:accordion|process|python)_[a-zA-Z0-9_]+)\b")
SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}


def _expressions(node: object) -> list[str]:
    """Every PromQL string in the dashboard, at any depth: panels' "expr", variables' "definition"."""
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("expr", "definition") and isinstance(value, str):
                found.append(value)
            else:
                found += _expressions(value)
    elif isinstance(node, list):
        for item in node:
            found += _expressions(item)
    return found


def _exported(text: str) -> set[str]:
    """The series names the exposition ``text`` offers, including those of metrics declared but
    not observed yet (a labelled metric shows its HELP and TYPE before its first child)."""
    names: set[str] = set()
    for family in text_string_to_metric_families(text):
        names.update(sample.name for sample in family.samples)
        names.update(family.name + suffix for suffix in SUFFIXES.get(family.type, ("",)))
    return names


def test_the_dashboard_uses_only_exported_metrics(tmp_path: Path) -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["title"] and dashboard["uid"] and dashboard["schemaVersion"] >= 36
    panels = [p for p in dashboard["panels"] if p["type"] != "row"]
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in panels:
        assert panel["targets"] and all(t["expr"] for t in panel["targets"]), panel["title"]
    expressions = _expressions(dashboard)
    used = {name for expr in expressions for name in METRIC.findall(expr)}
    for expr in expressions:  # every expression names at least one of our metrics
        assert METRIC.search(expr), expr
    with running_server(tmp_path) as server:
        play_to_end(server.addr)
        status, text = http_get(server.metrics_port, "/metrics")
    assert status == 200
    exported = _exported(text)
    unknown = sorted(used - exported)
    assert not unknown, f"the dashboard uses metrics the server does not export: {unknown}"
    # what issue 16 asks the dashboard to show
    for wanted in (
        "accordion_rpc_total",
        "accordion_rpc_errors_total",
        "accordion_rpc_latency_seconds_bucket",
        "accordion_rpc_error_reasons_total",
        "accordion_games_created_total",
        "accordion_games_finished_total",
        "accordion_moves_total",
        "accordion_store_latency_seconds_bucket",
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "accordion_memory_store_games",
        "accordion_rpc_in_flight",  # issue 34: saturation beside the alerts
        "accordion_rpc_queued_seconds_bucket",
        "accordion_rpc_server_seconds_bucket",  # issue 34:
        "accordion_event_loop_lag_seconds_bucket",
        "accordion_rpc_refused_total",  # what clients feel
    ):
        assert wanted in used, wanted
