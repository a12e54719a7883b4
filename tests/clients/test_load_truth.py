"""accordion-load tells the truth (issue 34): the offered series is the schedule, the slots not
served are a table of causes, the server's /metrics is shown beside the client's figures, and
the calls spread over several connections that a ``--workers`` server's workers share.

Real servers (subprocesses, a real redis-server for the workers), short runs at low rates."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from accordion_client.loadtest import scenario
from accordion_client.loadtest.stats import Stats, failure_cause
from redis_server import free_port
from server_launcher import ServerProcess, launch

from .conftest import script
from .test_load_report import ReportParser

pytestmark = pytest.mark.serial  # runs at a rate: one at a time (tests/conftest.py)


def load(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any], str]:
    json_path, html_path = tmp_path / "load.json", tmp_path / "load.html"
    done = subprocess.run(
        [*script("accordion-load"), *args, "--quiet", "--json", str(json_path), "--html", str(html_path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert json_path.exists(), done.stdout + done.stderr
    return done, json.loads(json_path.read_text()), html_path.read_text(encoding="utf-8")


# --- the schedule ---------------------------------------------------------------------------------


def test_each_slot_is_due_when_the_schedules_integral_reaches_it() -> None:
    plan = scenario.Scenario(
        "rate",
        (scenario.Stage(2, 300, ramp=True), scenario.Stage(3, 300), scenario.Stage(2, 50, ramp=True)),
    )
    total = plan.calls_due(plan.duration)
    for n in [0.5, 1, 2, 299, 300, 301, 1200, 1499, total]:
        assert plan.calls_due(plan.time_of_call(n)) == pytest.approx(n, abs=1e-6), n
    times = [plan.time_of_call(n) for n in range(1, int(total) + 1)]
    assert times == sorted(times) and times[-1] <= plan.duration


def test_the_offered_series_is_the_schedule_whenever_the_loop_woke() -> None:
    """Offered calls per second come from the schedule, not from when the dispatcher woke: a
    constant rate is flat, a ramp is a straight line. Missed slots count in their own second."""
    plan = scenario.constant("rate", 4000, 3, {"move": 1}, "accordion")
    stats = Stats(schedule=plan.calls_due)
    stats.miss(plan.time_of_call(4500), "client_behind")  # due at 1.125 s, whenever seen
    rows = stats.series(3.0, 3.0)
    assert [r["offered"] for r in rows] == [4000, 4000, 4000]
    assert [r["missed"] for r in rows] == [0, 1, 0]
    ramp = scenario.Scenario("rate", (scenario.Stage(4, 400, ramp=True),))
    rows = Stats(schedule=ramp.calls_due).series(4.0, 4.0)
    assert [r["offered"] for r in rows] == [50, 150, 250, 350]  # the rate at each second's middle


@pytest.mark.parametrize(
    ("code", "message", "cause"),
    [
        ("DEADLINE_EXCEEDED", "Deadline Exceeded", "deadline"),
        # as grpc words it (seen at 4,000/s over 4 connections against the 100-stream cap)
        (
            "UNAVAILABLE",
            "Stream removed (RST_STREAM (Received RST_STREAM with error code 7))",
            "connection limit",
        ),
        ("UNAVAILABLE", "Received RST_STREAM with error code 2", "server refused"),  # not the stream cap
        ("UNAVAILABLE", "failed to connect to all addresses", "server refused"),
        ("RESOURCE_EXHAUSTED", "too many new games", "server refused"),
        ("INVALID_ARGUMENT", "unknown variant", "other error"),
    ],
)
def test_each_failure_has_its_cause(code: str, message: str, cause: str) -> None:
    assert failure_cause(code, message) == cause


def test_a_real_run_offers_the_schedule_and_tables_its_unserved_slots(tmp_path: Path) -> None:
    """Against a server whose NewGame rate lets one deal through at the start (of the two
    players' first deals, one is refused at least), with too few players for the
    rate: the offered series is flat at the rate, the slots not served are a table with their
    causes (player limit, server refused) in the summary and the HTML, adding up to the counts."""
    server = launch(tmp_path, "--log-level", "warning", "--newgame-rate", "1", "--newgame-burst", "1")
    try:
        done, report, html = load(
            tmp_path, "--target", server.addr, "--rate", "3000", "--duration", "2", "--max-players", "2",
            "--keep-going",
        )  # fmt: skip
    finally:
        server.close()
    rate = report["rate"]
    assert report["latency_from"] == "schedule"
    # The schedule: 3,000 a second, every second of the window, whatever the tool's loop did.
    window = report["series"][: int(report["window_s"])]
    assert [row["offered"] for row in window] == [3000.0] * len(window)
    assert sum(row["offered"] for row in report["series"]) == pytest.approx(rate["offered"], abs=0.5)
    causes = {row["cause"]: row for row in rate["unserved"]}
    assert causes["player limit"]["slots"] == rate["missed_by_reason"]["no_idle_player"] > 0
    refused = report["errors_by_code"].get("RESOURCE_EXHAUSTED", 0)
    assert refused > 0 and causes["server refused"]["slots"] == refused
    assert sum(r["slots"] for r in rate["unserved"]) == rate["missed"] + report["errors"]
    lines = done.stdout.splitlines()
    title = next(i for i, ln in enumerate(lines) if ln.startswith("slots not served: "))
    assert lines[title + 1].split()[:4] == ["cause", "slots", "share", "what"]
    table = {ln.split("  ")[1].strip(): ln for ln in lines[title + 2 : title + 2 + len(causes)]}
    assert set(table) == set(causes) and f" {refused} " in table["server refused"]
    assert "{" not in done.stdout  # no Python dict anywhere
    page = ReportParser()
    page.feed(html)
    rows = {row[0]: row for row in page.rows if row}
    assert rows["player limit"][1] == str(causes["player limit"]["slots"])
    assert rows["server refused"][1] == str(refused)


# --- the server's view ---------------------------------------------------------------------------


def test_the_servers_metrics_stand_beside_the_clients(tmp_path: Path) -> None:
    port = free_port()
    server = launch(tmp_path, "--log-level", "warning", "--metrics-port", str(port))
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        done, report, html = load(
            tmp_path, "--target", server.addr, "--rate", "40", "--duration", "2", "--metrics-url", url
        )
    finally:
        server.close()
    assert done.returncode == 0, done.stdout + done.stderr
    view = report["server"]
    assert view["urls"] == [url] and view["unreadable"] == []
    assert view["histogram"] in ("accordion_rpc_server_seconds", "accordion_rpc_latency_seconds")
    assert view["histogram_fallback"] == (view["histogram"] == "accordion_rpc_latency_seconds")
    made = {m: r for m, r in report["methods"].items() if r["requests"]}
    assert made and set(made) <= set(view["methods"])
    for method, row in made.items():
        seen = view["methods"][method]
        assert abs(seen["calls"] - row["requests"]) <= 2, (method, seen, row)
        assert seen["errors"] == 0
        for p in ("p50", "p99"):
            lo, hi = seen[p]["bucket_ms"]
            assert hi in view["bucket_bounds_ms"] and lo < hi and lo <= seen[p]["ms"] <= hi
    assert view["cpu_seconds_by_worker"]  # the process's CPU, before and after
    assert "server view (" in done.stdout and "server calls" in done.stdout
    assert "errors by code, client/server: none" in done.stdout
    page = ReportParser()
    page.feed(html)
    assert 'id="server"' in html
    rows = {row[0]: row for row in page.rows if row}
    some = next(iter(made))
    assert rows[some][5] == str(view["methods"][some]["calls"])


def test_an_unreadable_metrics_url_is_said_and_the_run_goes_on(tmp_path: Path) -> None:
    server = launch(tmp_path, "--log-level", "warning")
    dead = f"http://127.0.0.1:{free_port()}/metrics"
    try:
        done, report, _ = load(
            tmp_path, "--target", server.addr, "--rate", "20", "--duration", "1", "--metrics-url", dead
        )
    finally:
        server.close()
    assert report["requests"] > 0 and report["server"]["unreadable"][0].startswith(dead)
    assert f"unreadable: {dead}" in done.stdout


# --- connections and workers ---------------------------------------------------------------------


def established_by_process(pids: list[int], port: int) -> dict[int, set[int]]:
    """Each pid's established TCP connections on local ``port``: the peers' ports (from /proc)."""
    sockets: dict[str, int] = {}  # socket inode -> remote port
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, remote, state, inode = fields[1], fields[2], fields[3], fields[9]
            if state == "01" and int(local.rsplit(":", 1)[1], 16) == port:  # 01: ESTABLISHED
                sockets[inode] = int(remote.rsplit(":", 1)[1], 16)
    out: dict[int, set[int]] = {}
    for pid in pids:
        peers = set()
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:[") and target[8:-1] in sockets:
                    peers.add(sockets[target[8:-1]])
        except OSError:
            continue
        out[pid] = peers
    return out


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def test_the_calls_spread_over_connections_that_reach_every_worker(tmp_path: Path, redis_url: str) -> None:
    """--workers 2 shares the port by SO_REUSEPORT, which balances connections: the tool's 64
    default connections land on both workers, and both count CPU in the server's view."""
    port = free_port()
    server: ServerProcess | None = None
    try:
        server = launch(
            tmp_path, "--log-level", "warning", "--workers", "2", "--metrics-port", str(port),
            env={"REDIS_URL": redis_url},
        )  # fmt: skip
        json_path = tmp_path / "load.json"
        proc = subprocess.Popen(
            [*script("accordion-load"), "--target", server.addr, "--rate", "60", "--duration", "3",
             "--quiet", "--json", str(json_path), "--metrics-url", f"http://127.0.0.1:{port}/metrics"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        server_port = int(server.addr.rsplit(":", 1)[1])
        seen: dict[int, set[int]] = {}
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            for pid, peers in established_by_process(children(server.proc.pid), server_port).items():
                seen.setdefault(pid, set()).update(peers)
            time.sleep(0.2)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, out + err
    finally:
        if server is not None:
            server.close()
    report = json.loads(json_path.read_text())
    assert report["connections"] == 64
    workers = {pid: peers for pid, peers in seen.items() if peers}
    assert len(workers) == 2, seen  # both workers hold some of the tool's connections
    assert sum(len(p) for p in workers.values()) >= 64
    cpu = report["server"]["cpu_seconds_by_worker"]
    assert set(cpu) >= {"0", "1", "supervisor"}
    calls = sum(r["calls"] for r in report["server"]["methods"].values())
    assert abs(calls - report["requests"]) <= 2


def test_a_sampled_traceparent_goes_with_the_calls(tmp_path: Path) -> None:
    server = launch(tmp_path, "--log-level", "warning")
    try:
        _, every, html_every = load(tmp_path, "--target", server.addr, "--rate", "20", "--duration", "1",
                                    "--traceparent-sample", "1")  # fmt: skip
        _, none, html_none = load(tmp_path, "--target", server.addr, "--rate", "20", "--duration", "1")
    finally:
        server.close()
    assert every["errors"] == 0 and every["traced_calls"] == every["requests"] > 0
    assert none["traced_calls"] == 0 and none["slowest_traced"] == [] and 'id="traced"' not in html_none
    page = ReportParser()
    page.feed(html_every)
    rows = {row[2]: row for row in page.rows if len(row) == 4}
    for r in every["slowest_traced"]:
        assert rows[r["trace_id"]][:2] == [r["method"], f"{r['latency_ms']:.2f}"]
    slowest = every["slowest_traced"]
    assert len(slowest) == min(10, every["requests"])
    assert [r["latency_ms"] for r in slowest] == sorted((r["latency_ms"] for r in slowest), reverse=True)
    assert slowest[0]["latency_ms"] == every["latency_ms"]["max"]  # every call traced: the slowest is the max
    ids = [r["trace_id"] for r in slowest]
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) and i != "0" * 32 for i in ids) and len(set(ids)) == len(ids)


# --- the server view's arithmetic, on expositions with issue 34's names -------------------------

APPLY = 'method="accordion.v1.AccordionService/ApplyMove"'
NEW = 'method="accordion.v1.AccordionService/NewGame"'
WATCH = 'method="accordion.v1.AccordionService/WatchGame"'


def exposition(apply_ok: int, buckets: tuple[int, int, int], refused: int, started: int, cpu: float) -> str:
    """A /metrics text as a server with the new metrics (docs: /work/briefs/metrics-names.md) writes it."""
    le = ("0.001", "0.0025", "0.005")
    lines = [
        "# TYPE accordion_rpc_total counter",
        f'accordion_rpc_total{{{APPLY},code="OK"}} {apply_ok}',
        f'accordion_rpc_total{{{NEW},code="RESOURCE_EXHAUSTED"}} {refused}',
        "# TYPE accordion_rpc_server_seconds histogram",
        *[
            f'accordion_rpc_server_seconds_bucket{{{APPLY},code="OK",le="{b}"}} {n}'
            for b, n in zip(le, buckets, strict=True)
        ],
        f'accordion_rpc_server_seconds_bucket{{{APPLY},code="OK",le="+Inf"}} {buckets[-1]}',
        f'accordion_rpc_server_seconds_count{{{APPLY},code="OK"}} {buckets[-1]}',
        f'accordion_rpc_server_seconds_sum{{{APPLY},code="OK"}} 0.1',
        *[
            f'accordion_rpc_server_seconds_bucket{{{NEW},code="RESOURCE_EXHAUSTED",le="{b}"}} {refused}'
            for b in le
        ],
        f'accordion_rpc_server_seconds_bucket{{{NEW},code="RESOURCE_EXHAUSTED",le="+Inf"}} {refused}',
        f'accordion_rpc_server_seconds_count{{{NEW},code="RESOURCE_EXHAUSTED"}} {refused}',
        f'accordion_rpc_server_seconds_sum{{{NEW},code="RESOURCE_EXHAUSTED"}} 0.0',
        "# TYPE accordion_rpc_refused_total counter",
        f'accordion_rpc_refused_total{{{NEW},layer="newgame_rate",reason="RATE_LIMITED"}} {refused}',
        "# TYPE accordion_rpc_errors_total counter",
        f'accordion_rpc_errors_total{{{NEW},code="RESOURCE_EXHAUSTED",reason="RATE_LIMITED"}} {refused}',
        "# TYPE accordion_rpc_client_ended_total counter",
        f'accordion_rpc_client_ended_total{{{WATCH},outcome="cancelled"}} {refused}',
        "# TYPE accordion_grpc_server_calls_total counter",
        f'accordion_grpc_server_calls_total{{outcome="started"}} {started}',
        "# TYPE process_cpu_seconds_total counter",
        f'process_cpu_seconds_total{{worker="0"}} {cpu}',
        f'process_cpu_seconds_total{{worker="1"}} {cpu / 2}',
    ]
    return "\n".join(lines) + "\n"


def test_the_server_view_is_the_difference_of_two_scrapes() -> None:
    from accordion_client.loadtest import server_view as sv

    before = sv.parse(exposition(10, (5, 8, 10), 1, 11, 1.0))
    # 100 more ApplyMoves: 50 within 1 ms, 45 in 1-2.5 ms, 5 in 2.5-5 ms; 3 more refused NewGames;
    # grpc's core started 110 calls, of which the service saw 103.
    after = sv.parse(exposition(110, (55, 103, 110), 4, 121, 3.0))
    view = sv.server_view(["http://a/metrics"], [before], [after], None)
    assert view["histogram"] == "accordion_rpc_server_seconds" and not view["histogram_fallback"]
    assert view["bucket_bounds_ms"] == [1.0, 2.5, 5.0]
    apply, new = view["methods"]["ApplyMove"], view["methods"]["NewGame"]
    assert (apply["calls"], apply["errors"]) == (100, 0)
    assert apply["p50"] == {"ms": 1.0, "bucket_ms": [0.0, 1.0]}
    assert apply["p99"] == {"ms": 4.5, "bucket_ms": [2.5, 5.0]}  # 2.5 + 2.5 * (99 - 95) / 5
    assert (new["calls"], new["errors"], new["errors_by_code"]) == (3, 3, {"RESOURCE_EXHAUSTED": 3})
    assert view["errors_by_code"] == {"RESOURCE_EXHAUSTED": 3}
    assert view["errors_by_code_reason"] == {"RESOURCE_EXHAUSTED RATE_LIMITED": 3}
    assert view["refused_by_layer_reason"] == {"newgame_rate RATE_LIMITED": 3}
    assert view["client_ended"] == {"WatchGame cancelled": 3}  # not errors
    assert view["grpc_core"] == {"calls started": 110, "calls unseen by the service": 7}
    assert view["cpu_seconds_by_worker"] == {"0": 2.0, "1": 1.0}
    # Two replicas: summed, each one's workers apart; an older server: the handler's histogram.
    two = sv.server_view(["u1", "u2"], [before, before], [after, after], None)
    assert two["methods"]["ApplyMove"]["calls"] == 200 and set(two["cpu_seconds_by_worker"]) == {
        "1:0", "1:1", "2:0", "2:1"}  # fmt: skip
    old = {k: v for k, v in after.items() if not k[0].startswith("accordion_rpc_server_seconds")}
    fallback = sv.server_view(["u"], [before], [old], None)
    assert fallback["histogram"] == "accordion_rpc_latency_seconds" and fallback["histogram_fallback"]
    assert fallback["methods"]["ApplyMove"]["p99"] is None  # no such histogram there: no figure


def test_a_percentile_past_the_last_bucket_has_only_a_lower_bound() -> None:
    from accordion_client.loadtest.server_view import quantile

    assert quantile({0.1: 90.0, float("inf"): 100.0}, 99) == {"ms": 100.0, "bucket_ms": [100.0, None]}
    assert quantile({0.1: 0.0, float("inf"): 0.0}, 50) is None


def test_more_calls_a_connection_than_the_servers_stream_cap_is_warned(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from accordion_client.loadtest.cli import parse_args

    args = parse_args(["--target", "127.0.0.1:1", "--rate", "100", "--connections", "4"])
    assert args.connections == 4 and args.max_players == 1000
    assert "up to 1000 calls at once over 4 connections is more than 100" in capsys.readouterr().err
    assert parse_args(["--target", "127.0.0.1:1", "--rate", "100"]).connections == 64
    assert parse_args(["--target", "127.0.0.1:1", "--concurrency", "8"]).connections == 8
    assert capsys.readouterr().err == ""  # 1000 players over 64, 8 over 8: no warning


def test_a_late_loop_is_noted_under_the_unserved_table() -> None:
    from accordion_client.loadtest.text_report import loop_note

    row = {"cause": "player limit", "slots": 10, "share": 0.1, "means": "..."}
    late = loop_note({"rate": {"client_loop_lag_ms": {"p99": 120.0}, "unserved": [row]}})
    assert late is not None and "p99 120 ms" in late and "several load processes" in late
    assert loop_note({"rate": {"client_loop_lag_ms": {"p99": 10.0}, "unserved": [row]}}) is None
    assert loop_note({"rate": {"client_loop_lag_ms": {"p99": 120.0}, "unserved": []}}) is None
    assert loop_note({"rate": {"client_loop_lag_ms": None, "unserved": [row]}}) is None  # closed loop
