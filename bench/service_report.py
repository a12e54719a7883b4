"""bench/service.py's report: the figures as one dict (the JSON), and the table printed from it."""

from __future__ import annotations

import argparse
import os
import platform
import sys
from typing import Any

import grpc
import grpc.aio
from service_client import Result
from service_procs import CLIENT_CORE, SERVER_CORE


def report(
    results: list[Result],
    probe: dict[str, Any],
    scaling: dict[str, Any],
    args: argparse.Namespace,
    pinned: bool,
) -> dict[str, Any]:
    rows = [r.row() for r in results]
    echoes = [r for r in rows if r["target"] in ("echo", "echo-end") and r["mode"] == "closed"]
    echo_rps = sum(r["rps"] for r in echoes) / len(echoes) if echoes else 0.0
    echo_us = sum(r["server_cpu_us_per_req"] for r in echoes) / len(echoes) if echoes else 0.0
    for r in rows:
        if echo_rps:
            r["ratio_rps"] = round(r["rps"] / echo_rps, 3)
            r["ratio_cpu"] = (
                round(echo_us / r["server_cpu_us_per_req"], 3) if r["server_cpu_us_per_req"] else None
            )
    return {
        "command": "python bench/service.py " + " ".join(sys.argv[1:]),
        "machine": {
            "python": platform.python_version(),
            "grpcio": grpc.__version__,
            "cpus": os.cpu_count(),
            "pinned": pinned,
            "server_core": SERVER_CORE if pinned else None,
            "client_and_redis_core": CLIENT_CORE if pinned else None,
            "load_before": os.getloadavg(),
        },
        "settings": {
            "concurrency": args.concurrency,
            "channels": args.channels,
            "warmup_s": args.warmup,
            "duration_s": args.duration,
            "log_level": args.log_level,
        },
        "echo_mean": {"rps": round(echo_rps, 1), "server_cpu_us_per_req": round(echo_us, 1)},
        "results": rows,
        "redis_probe": probe,
        "workers_scaling": scaling,
    }


def print_table(data: dict[str, Any]) -> None:
    head = (
        f"{'target':<8} {'rpc':<10} {'mode':<11} {'req/s':>8} {'x echo':>6} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'srv CPU':>7} {'µs/req':>7} {'x echo':>6} {'redis µs':>8}"
    )
    print(head)
    print("-" * len(head))
    for r in data["results"]:
        mode = r["mode"] if r["mode"] == "closed" else f"open@{r['offered_rate']:.0f}"
        print(
            f"{r['target']:<8} {r['rpc']:<10} {mode:<11} {r['rps']:>8.0f} {r.get('ratio_rps', 0):>6.2f} "
            f"{r['p50_ms']:>7.2f} {r['p99_ms']:>7.2f} {r['server_cpu_pct']:>6.0f}% "
            f"{r['server_cpu_us_per_req']:>7.0f} {r.get('ratio_cpu') or 0:>6.2f} "
            f"{'' if r['redis_cpu_us_per_req'] is None else format(r['redis_cpu_us_per_req'], '.0f'):>8}"
            + (f"  errors {r['errors']}" if r["errors"] else "")
        )
    mean = data.get("echo_mean", {})
    print(
        f"(echo: the mean of its two runs, {mean.get('rps', 0):.0f}/s and "
        f"{mean.get('server_cpu_us_per_req', 0):.0f} µs "
        "of server CPU per request)"
    )
    print(
        "(x echo: requests/s over the echo's; the second: the echo's server CPU per request over this "
        "line's, i.e. the ratio when the server's core is the limit; redis µs: redis-server's CPU per "
        "request)"
    )
    probe = data.get("redis_probe") or {}
    if probe:
        print(
            f"\nRedis commands per ApplyMove (steady state, {probe['apply_moves']} moves, MONITOR): "
            f"{probe['commands_per_move']} sent by the server {probe['commands_sent']}; inside the script: "
            f"{probe['commands_in_scripts']}"
        )
        for label, fp in probe["footprint"].items():
            print(
                f"accordion-stock game after {fp['moves']} moves, {label.replace('_', ' ')}: "
                f"{fp['total_bytes']} bytes in Redis (MEMORY USAGE: "
                + ", ".join(f"{k.rsplit(':', 1)[1]} {v}" for k, v in fp["keys"].items())
                + f"; game data {fp['data_bytes']} bytes)"
            )
    scaling = data.get("workers_scaling") or {}
    if scaling:
        w1, w2 = scaling["workers_1"], scaling["workers_2"]
        print(
            f"\nWorkers (Redis, unpinned, ApplyMove): 1 worker {w1['rps']:.0f}/s (p99 {w1['p99_ms']:.2f} "
            "ms), "
            f"2 workers {w2['rps']:.0f}/s (p99 {w2['p99_ms']:.2f} ms): x{scaling['ratio_2_over_1']}"
        )
