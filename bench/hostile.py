"""Hostile clients (issue 28): what one abusive client does to an honest one, beside a control.

    .venv/bin/python bench/hostile.py                              # this tree, every row (~2 min)
    .venv/bin/python bench/hostile.py --a /work/main --b ../integrate   # A/B, one run (~5 min)
    .venv/bin/python bench/hostile.py --rows 1 4 --repeat 2 --json hostile.json
    .venv/bin/python bench/hostile.py --a /work/main --b ../integrate --envoy --rows 1 2 6   # through Envoy
    .venv/bin/python bench/hostile.py --render hostile.json     # a saved run's tables again

For each row a fresh ``accordion-server`` is started from each source tree (``DIR/.venv/bin/python
-m accordion`` with ``PYTHONPATH=DIR/service``; a tree without a .venv runs under this
interpreter), one at a time, and measured in three phases:

* **control**: the honest client alone (``--control`` seconds);
* **attack**: the honest client while the attacker does the row's abuse (``--duration`` s);
* **after**: the attacker gone (its process exited, its connections closed), the honest client
  alone again (``--after`` s): does the server come back?

The **honest client** (this process, its own connection from 127.0.0.1) calls ``GetGame`` on
its own game every 10 ms and ``grpc.health.v1.Health/Check`` every 20 ms (each waits for the
previous answer; latency from the send), and in row 4 an easy ``Solve`` every 200 ms.
Percentiles are over the calls answered OK; OK % is over all calls sent in the phase.

The **attacker** is a separate process (``--attack``, so its work does not slow the honest
client's event loop) whose clients each connect from their own loopback address, 127.0.0.2,
127.0.0.3, …: per-client limits key on the peer's IP address, and gRPC's Python client cannot
bind a channel's source address, so each attacker client's channel goes to a small TCP relay
inside the attacker process that connects to the server from ``127.0.0.N`` (Linux routes all
of 127/8 to loopback). The honest client connects directly.

Rows (the abuses of issue 28):

1. ``watch-cancel-leak`` (Redis store, ``--max-concurrent-rpcs 100``): 8 clients, 4 at a time
   each, call WatchGame on their own game and cancel each right after its first event. Reported:
   handlers still running (``accordion_rpc_in_flight``, where the tree exports it) and Redis's
   client count (CLIENT LIST) before the attack, 2 s after the attacker left and at the after
   phase's end; the after phase shows whether later calls succeed.
2. ``health-watch-flood``: 10 clients, each holding 10 grpc.health Watch streams, 10 half-sent
   health Checks and 5 half-sent GetGames (headers sent, no message; reopened when they end).
3. ``cached-solve``: 8 clients calling Solve on one solved Spider (1 suit, open) game; the
   server's CPU per Solve (``/proc/PID/stat`` utime + stime over the attack, less the control's
   rate).
4. ``solver-hog``: one client running 4 long Solves at a time (Spider, 4 suits, open) while the
   honest client asks an easy Solve (an Accordion deal this tree's solver wins in < 20 ms
   alone, a fresh one each time so nothing is cached): its outcome and latency.
5. ``solver-48-clients``: 48 clients, each dealing open Klondike and Solving, in a loop.
6. ``newgame-flood`` (memory store capped at ``max_games=1000``): one client floods NewGame
   (16 at a time); the honest client's own game (in play) and a *resting* game dealt before
   the flood and left untouched: is either NOT_FOUND?

``--envoy``: every client (honest and attacker) connects through Envoy, started per row from
the tree's own ``deploy/envoy/envoy.yaml`` (ports and descriptor path rewritten, as tests/rest
does), and the server gets ``--trusted-proxies 127.0.0.1/32`` where it has the flag, so its
per-client limits key on the x-forwarded-for Envoy sets (each client's own 127.0.0.N); a tree
without the flag sees every client as Envoy's one address, as deployed before issue 28.

Flags a row passes that a tree's ``--help`` does not list are left out for that tree (and said).
The machine is shared: the load average is printed before and after each row; compare only
within one run. This is a benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

ROOT = Path(__file__).resolve().parents[1]
# The hostile_* modules beside this file (on the path already when it runs as a script; not when a
# test loads it by its path). Each sets up its own path to the service and the tests' helpers.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_attacker import attacker_main  # noqa: E402
from hostile_attacker import source_address as source_address  # noqa: E402  (tests/ops/test_bench_hostile.py)
from hostile_attacker import start_relay as start_relay  # noqa: E402  (tests/ops/test_bench_hostile.py)
from hostile_calls import ROWS  # noqa: E402
from hostile_report import print_markdown, print_table, print_trees  # noqa: E402
from hostile_row import easy_accordion_seeds, run_row  # noqa: E402
from hostile_servers import Tree, start_redis  # noqa: E402


async def main_async(args: argparse.Namespace, workdir: Path) -> list[dict[str, Any]]:
    trees = [Tree.of(label, d) for label, d in args.trees]
    rows = [ROWS[int(r)] if r.isdigit() else r for r in args.rows]
    redis_proc, redis_port = start_redis(workdir) if "watch-cancel-leak" in rows else (None, None)
    easy = easy_accordion_seeds(trees[0]) if "solver-hog" in rows else []
    results = []
    try:
        for _ in range(args.repeat):
            for row in rows:
                for tree in trees:
                    results.append(await run_row(row, tree, args, workdir, redis_port, easy))
    finally:
        if redis_proc is not None:
            redis_proc.terminate()
            redis_proc.wait(10)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", help="the tree to run (default: this one)")
    parser.add_argument("--a", help="A/B: the first tree (e.g. /work/main)")
    parser.add_argument("--b", help="A/B: the second tree")
    parser.add_argument("--rows", nargs="+", default=[str(n) for n in ROWS], help="row numbers or names")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--control", type=float, default=5.0, help="seconds of the control phase")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of the attack phase")
    parser.add_argument("--after", type=float, default=3.0, help="seconds of the after phase")
    parser.add_argument(
        "--envoy",
        action="store_true",
        help="every client through Envoy (the tree's "
        "deploy/envoy/envoy.yaml; the server trusts its x-forwarded-for where it can)",
    )
    parser.add_argument("--json", help="write the figures as JSON here")
    parser.add_argument(
        "--markdown",
        action="store_true",
        help="also print the table in Markdown (docs/performance/hostile.md)",
    )
    parser.add_argument(
        "--render", metavar="JSON", help="print the tables of a run saved with --json, and exit"
    )
    parser.add_argument("--attack", help=argparse.SUPPRESS)
    parser.add_argument("--addr", help=argparse.SUPPRESS)
    parser.add_argument("--params", default="{}", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.render:  # a saved run's tables again
        saved = json.loads(Path(args.render).read_text())
        print(f"{' '.join(saved['command'])}  ({saved['started']})")
        print_trees(saved["results"])
        print_table(saved["results"])
        print()
        print_markdown(saved["results"])
        return
    if args.attack:
        attacker_main(args.attack, args.addr, args.duration, args.params)
        return
    if args.a or args.b:
        args.trees = [("A", args.a or str(ROOT)), ("B", args.b or str(ROOT))]
    else:
        args.trees = [("this", args.source or str(ROOT))]
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    with tempfile.TemporaryDirectory(prefix="acc-hostile-") as tmp:
        results = asyncio.run(main_async(args, Path(tmp)))
    print(
        f"bench/hostile.py {' '.join(sys.argv[1:])}  ({started}; {os.cpu_count()} CPUs; grpcio "
        f"{grpc.__version__})"
    )
    print_trees(results)
    print_table(results)
    if args.markdown:
        print()
        print_markdown(results)
    if args.json:
        Path(args.json).write_text(
            json.dumps({"command": sys.argv, "started": started, "results": results}, indent=2) + "\n"
        )


if __name__ == "__main__":
    main()
