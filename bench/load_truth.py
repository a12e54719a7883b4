"""Figures for issue 34's load tool: one accordion-load run against a `make serve-redis` stack
(tools/serve_redis.py: Redis with AOF, accordion-server --workers N, /metrics on), with each
worker's CPU read from /proc (utime+stime) before and after, and the tool's summary.

    .venv/bin/python bench/load_truth.py --workers 2 -- --rate 1500 --duration 15
    .venv/bin/python bench/load_truth.py --tool-src /tmp/old/clients/python/src -- --rate 1500 --duration 15

Everything after ``--`` goes to accordion-load (``--target`` and ``--metrics-url`` are added).
``--tool-src`` runs another copy of the tool (e.g. the one before issue 34, from ``git archive``)
to compare. Prints the summary, the offered/started series' spread and the CPU per worker.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from redis_server import free_port  # noqa: E402 (tests/ helpers: a free loopback port)

TICKS = os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def workers_of(stack: int) -> list[int]:
    """The server's worker processes: the supervisor's children but its resource tracker."""
    supervisor = next(p for p in children(stack) if "redis-server" not in cmdline(p).split(" ")[0])
    found = [p for p in children(supervisor) if "resource_tracker" not in cmdline(p)]
    return sorted(found)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--tool-src", help="run the accordion_client package found here instead")
    parser.add_argument("load_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    load_args = [a for a in args.load_args if a != "--"]
    port, metrics = free_port(), free_port()
    addr = f"127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="load-truth-") as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ACCORDION_") and k != "REDIS_URL"}
        stack = subprocess.Popen(
            [sys.executable, str(ROOT / "tools" / "serve_redis.py"), "--workers", str(args.workers),
             "--listen", addr, "--data-dir", f"{tmp}/data", "--", "--metrics-port", str(metrics)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True,
        )  # fmt: skip
        try:
            assert stack.stdout is not None
            for line in stack.stdout:
                if line.startswith("serve-redis: ready"):
                    break
            else:
                raise SystemExit("serve-redis did not start")
            workers = workers_of(stack.pid)
            before = {p: cpu_seconds(p) for p in workers}
            tool_env = {**os.environ}
            if args.tool_src:
                tool_env["PYTHONPATH"] = args.tool_src
            out = Path(tmp) / "load.json"
            started = time.monotonic()
            done = subprocess.run(
                [sys.executable, "-m", "accordion_client.load", "--target", addr, "--quiet",
                 "--json", str(out), *load_args]
                + ([] if args.tool_src else ["--metrics-url", f"http://127.0.0.1:{metrics}/metrics"]),
                capture_output=True, text=True, env=tool_env, check=False,
            )  # fmt: skip
            wall = time.monotonic() - started
            after = {p: cpu_seconds(p) for p in workers}
            report = json.loads(out.read_text()) if out.exists() else {}
        finally:
            os.killpg(stack.pid, signal.SIGINT)
            stack.wait(60)
    print(done.stdout + done.stderr)
    window = report.get("series", [])[: int(report.get("window_s", 0))]
    for key in ("offered", "started"):
        values = [row[key] for row in window]
        if values:
            print(f"series {key} per second: min {min(values):g}, max {max(values):g}")
    print(f"connections: {report.get('connections')}; tool wall {wall:.1f} s")
    for i, p in enumerate(workers):
        print(f"worker {i} (pid {p}): {after[p] - before[p]:.2f} CPU s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
