"""The service side by side with a bare grpc.aio echo server, in one run, on pinned cores.

    .venv/bin/python bench/service.py                      # the table (about 2 minutes)
    .venv/bin/python bench/service.py --json bench.json    # the table, and the figures as JSON
    .venv/bin/python bench/service.py --workers-scaling    # also: --workers 1 vs 2 on Redis

What runs where (a 2-core machine; with more cores the same two are used):

* the **server under test** on core 0 (``sched_setaffinity`` in the child before it execs):
  (a) a bare grpc.aio echo server written here (one unary method returning its request's
  bytes, no interceptor, no logging), (b) the *floor*: ``accordion-server`` on the memory store
  with ApplyMove answering a prebuilt reply (gRPC, parsing, wrappers, access log and metrics:
  what no ApplyMove of this server can go below), (c) ``accordion-server --workers 1`` on the
  embedded memory store, (d) the same on Redis. One at a time, each started fresh.
* the **client** (this process) and **redis-server** (started here on a free port, never 6379,
  no persistence) on core 1. Redis shares the client's core on purpose: the server's core
  must hold the server only, so its CPU time per request is the server's alone.

The client is the same for every target: ``--concurrency`` tasks (default 32) spread over
``--channels`` grpc.aio channels (default 4, each its own connection), closed loop: each task
sends its next request when the previous answer arrives. ``--warmup`` seconds (not counted),
then ``--duration`` seconds counted: requests/s, p50/p99 latency, and the server process's
CPU use over the counted window (from /proc: user + system), which gives the server's CPU
time per request. The echo runs first and again last (``echo-end``): this is a shared VM whose
speed drifts, so the ratios are taken over the mean of the two. The ratio column is each
line's requests/s over the echo's. When the
server's core is not busy ~100 % the client was the limit, and the CPU time per request is
the fairer comparison (the table shows both).

RPCs: ``ApplyMove`` on real games (each task plays a seeded random legal move from the
previous reply's ``legal_moves``, with ``expected_version`` and a fresh ``request_id``, and
deals a new game when one ends; those NewGame calls are not counted), ``LegalMoves`` on a
game per task, ``NewGame`` (Accordion, server-drawn seed), and the echo (64 bytes).

Then the **open loop**: requests started at a fixed rate of half the echo's closed-loop
maximum, whatever the answers do, latency counted from each request's scheduled start (no
coordinated omission): p50/p99 of ``ApplyMove`` on both stores, and of the echo; and again at
half of each store's own closed-loop ``ApplyMove`` maximum (the latency at a load it carries).

Probes (not timed): Redis commands per ``ApplyMove`` (INFO commandstats around 200 sequential
moves, after warm-up) and the Redis footprint of one ``accordion-stock`` game after 100
moves (MEMORY USAGE of each of its keys), with and without request ids.

``--workers-scaling``: ``accordion-server --workers 1`` and ``--workers 2`` on Redis, nothing
pinned (server, client and Redis share both cores), closed-loop ``ApplyMove``: the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# The service_* modules beside this file (on the path already when it runs as a script). Each
# sets up its own path to the service and the tests' helpers.
sys.path.insert(0, str(Path(__file__).resolve().parent))

import service_client  # noqa: E402  (REDIS_PID: the redis-server whose CPU cpu_window reads)
from service_client import Channels, Result, _progress, closed_loop, run_open, run_target  # noqa: E402
from service_probes import redis_probe  # noqa: E402
from service_procs import (  # noqa: E402
    CLIENT_CORE,
    SERVER_CORE,
    SOURCE,
    Proc,
    _run_loop,
    _serve_echo,
    pure_copy,
    server_argv,
    start_listening,
    start_redis,
)
from service_report import print_table, report  # noqa: E402

# --- the run --------------------------------------------------------------------------------------


async def main_async(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    pin = len(os.sched_getaffinity(0)) >= 2 and not args.no_pin
    server_core = SERVER_CORE if pin else None
    if pin:
        os.sched_setaffinity(0, {CLIENT_CORE})  # the client, and Redis started below, on core 1
    redis_proc, redis_port = start_redis(workdir, CLIENT_CORE if pin else None)
    service_client.REDIS_PID = redis_proc.pid
    results: list[Result] = []
    probe: dict[str, Any] = {}
    scaling: dict[str, Any] = {}
    # NewGame unlimited: the bench deals games from one address as fast as a load tool does, and
    # a per-client NewGame rate (--newgame-rate, issue 28) would refuse them (docs/load.md). By
    # the environment, which a --source tree from before that flag ignores.
    env = {"ACCORDION_LOG_LEVEL": args.log_level, "ACCORDION_NEWGAME_RATE": "0", "ACCORDION_WATCH_RATE": "0"}
    try:
        echo_argv = [sys.executable, __file__, "--serve-echo", *(["--uvloop"] if args.echo_uvloop else [])]
        targets = [("echo", echo_argv, "echo listening on", ["echo"])]
        rpcs = [r for r in ("ApplyMove", "LegalMoves", "NewGame") if r in args.rpcs]
        targets += [
            ("floor", server_argv(None, canned=True), "accordion-server listening on", ["ApplyMove"]),
            ("memory", server_argv(None), "accordion-server listening on", rpcs),
        ]
        pure = pure_copy(workdir) if args.pure_ab else None
        if pure:  # each store's compiled server, then the same with the interpreted source
            targets += [("mem-pure", server_argv(None, source=pure), "accordion-server listening on", rpcs)]
        targets += [("redis", server_argv(redis_port), "accordion-server listening on", rpcs)]
        if pure:
            targets += [
                ("redis-pure", server_argv(redis_port, source=pure), "accordion-server listening on", rpcs)
            ]
        procs: dict[str, Proc] = {}
        pure_of = {"mem-pure": "memory", "redis-pure": "redis"}
        targets = [t for t in targets if t[0] == "echo" or pure_of.get(t[0], t[0]) in args.targets]
        rate = 0.0  # the open loop's rate, set from the echo's maximum (the echo runs first)
        for label, argv, banner, target_rpcs in targets:
            print(f"{label}: starting on core {server_core}", file=sys.stderr, flush=True)
            proc = start_listening(label, argv, banner, server_core, workdir / f"{label}.log", env)
            procs[label] = proc
            try:
                results += await run_target(
                    proc, label, target_rpcs, args, 0.0 if label in ("echo", "floor") else rate
                )
                if label == "echo":
                    echo_rps = results[-1].requests / results[-1].seconds
                    rate = args.open_rate or echo_rps / 2
                    if not args.no_open:
                        results.append(await run_open(proc, label, "echo", rate, args))
                if label == "redis":
                    probe = await redis_probe(proc.addr, redis_port)
            finally:
                proc.stop()
        # The echo once more: the machine's speed drifts (a shared VM), so the ratios use the
        # mean of the echo before and after the others.
        proc = start_listening(
            "echo", echo_argv, "echo listening on", server_core, workdir / "echo2.log", env
        )
        try:
            again = await run_target(proc, "echo", ["echo"], args)
            again[0].target = "echo-end"
            results += again
        finally:
            proc.stop()
        if args.workers_scaling:
            scaling = await workers_scaling(args, redis_port, workdir, env)
    finally:
        redis_proc.terminate()
        redis_proc.wait(10)
    return report(results, probe, scaling, args, pin)


async def workers_scaling(
    args: argparse.Namespace, redis_port: int, workdir: Path, env: dict[str, str]
) -> dict[str, Any]:
    """--workers 1 vs 2 on Redis; nothing pinned (both cores shared by server, client and Redis)."""
    os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))
    rows = {}
    for workers in (1, 2):
        label = f"redis-w{workers}"
        print(f"{label}: unpinned", file=sys.stderr, flush=True)
        proc = start_listening(
            label,
            server_argv(redis_port, workers),
            "accordion-server listening on",
            None,
            workdir / f"{label}.log",
            env,
        )
        try:
            chans = Channels(proc.addr, max(args.channels, 8))  # connections spread over workers
            await chans.ready()
            res = await closed_loop(
                proc, label, "ApplyMove", chans, args.concurrency, args.warmup, args.duration, args.seed
            )
            await chans.close()
            _progress(res)
            rows[workers] = res.row()
        finally:
            proc.stop()
    return {
        "workers_1": rows[1],
        "workers_2": rows[2],
        "ratio_2_over_1": round(rows[2]["rps"] / rows[1]["rps"], 2) if rows[1]["rps"] else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=5.0, help="counted seconds per phase")
    parser.add_argument("--warmup", type=float, default=1.5, help="uncounted seconds before each phase")
    parser.add_argument("--concurrency", type=int, default=32, help="closed-loop tasks")
    parser.add_argument("--channels", type=int, default=4, help="client connections")
    parser.add_argument("--rpcs", nargs="+", default=["ApplyMove", "LegalMoves", "NewGame"])
    parser.add_argument("--open-rate", type=float, default=0.0, help="open-loop rate (default: echo max / 2)")
    parser.add_argument(
        "--no-open", action="store_true", help="closed loops only (a quicker A/B of two trees)"
    )
    parser.add_argument("--workers-scaling", action="store_true", help="also --workers 1 vs 2 on Redis")
    parser.add_argument(
        "--log-level", default="info", help="the servers' --log-level (default: info, as deployed)"
    )
    parser.add_argument("--echo-uvloop", action="store_true", help="run the echo server on uvloop")
    parser.add_argument("--no-pin", action="store_true", help="do not pin anything to cores")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--targets",
        nargs="+",
        default=["echo", "floor", "memory", "redis"],
        help="which servers (the echo always runs: the ratios need it); floor: "
        "accordion-server answering ApplyMove with a prebuilt reply",
    )
    parser.add_argument("--profile", help="py-spy each server phase; collapsed stacks and a summary here")
    parser.add_argument("--json", help="write the figures as JSON here")
    parser.add_argument(
        "--source",
        help="run accordion-server from this service/ directory (e.g. an export "
        "of an earlier commit: `git archive <rev> service | tar -x -C DIR`)",
    )
    parser.add_argument(
        "--pure-ab",
        action="store_true",
        help="after the memory and redis servers, the same "
        "servers from the pure-Python source (mypyc's modules left out): compiled vs interpreted",
    )
    parser.add_argument(
        "--gc-threshold",
        type=int,
        nargs=3,
        help="the servers' gc.set_threshold (an A/B of "
        "the collector's thresholds; the default is CPython's 700 10 10)",
    )
    parser.add_argument("--hide-hiredis", action="store_true", help="the servers run without hiredis")
    parser.add_argument("--serve-echo", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--uvloop", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_echo:
        _run_loop(_serve_echo(), args.uvloop)
        return
    SOURCE.update(dir=args.source, hide_hiredis=args.hide_hiredis, gc_threshold=args.gc_threshold)
    with tempfile.TemporaryDirectory(prefix="acc-bench-") as tmp:
        data = asyncio.run(main_async(args, Path(tmp)))
    print_table(data)
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    main()
