"""NewGame(winnable_only) benchmark: time N winnable deals through the servicer's own code path.

    .venv/bin/python bench/winnable.py --variant klondike klondike-draw-one --deals 300
    .venv/bin/python bench/winnable.py --variant klondike --deals 300 --start-seed 1000000
    .venv/bin/python bench/winnable.py --variant klondike --deals 100 --grpc

In process (the default), each deal is one ``Solving.winnable_game`` call, the call
``AccordionServicer.NewGame`` awaits: the searches run on the solve pool, seed after seed
from the start seed, within the server's budgets (``api/solving.py``'s ``Budgets``, the
defaults unless ``--deal-nodes`` etc. say otherwise). Deal ``i`` starts from seed
``start-seed + i * 1000`` (no two deals share a seed tried). With ``--grpc`` the same deals
are asked of a real server process (``python -m accordion``, memory store) by NewGame
calls over gRPC, timed at the client (the game stored and the reply encoded included).

With ``--fill-rate SECONDS`` it measures instead how fast a pool of winnable deals fills
(``accordion-pools fill``, docs/operations.md): for each variant, random seeds solved one after
another on this one core (pinned when the OS allows) for that long, each within the pool's budget
(``--pool-nodes``, ``--pool-seconds``: the servers' refill defaults), and prints deals proven a
minute on one core, the share won and the mean seconds a deal:

    .venv/bin/python bench/winnable.py --fill-rate 60 --variant klondike spider --option open=true

The games are the normal ones (``open`` false: face-down cards and a hidden stock) unless
``--option open=true``; the server decides each deal as if dealt open. Target (issue 13):
p99 <= 1 s for Klondike, turning three and one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

SERVICE = Path(__file__).resolve().parents[1] / "service"
sys.path.insert(0, str(SERVICE))

from accordion.api.solving import Budgets, Solving  # noqa: E402
from accordion.solver import HAVE_C  # noqa: E402
from solver import percentile, pin_to_one_core  # noqa: E402  (bench/solver.py, beside this file)

SEED_SPACING = 1000


def summary(
    variant: str, options: dict[str, str], times_ms: list[float], tried: list[int], failed: int, mode: str
) -> dict[str, object]:
    times_ms = sorted(times_ms)
    tried = sorted(tried)
    return {
        "variant": variant,
        "options": options,
        "mode": mode,
        "deals": len(times_ms),
        "not_found": failed,
        "median_ms": round(percentile(times_ms, 50), 2),
        "p90_ms": round(percentile(times_ms, 90), 2),
        "p99_ms": round(percentile(times_ms, 99), 2),
        "max_ms": round(times_ms[-1], 2) if times_ms else 0.0,
        # Seeds tried: known in process only (a hidden game's reply does not show the count).
        "mean_seeds": round(sum(tried) / len(tried), 2) if tried else None,
        "p99_seeds": int(percentile([float(t) for t in tried], 99)) if tried else None,
        "max_seeds": tried[-1] if tried else None,
    }


async def in_process(
    variant: str, options: dict[str, str], deals: int, start_seed: int, budgets: Budgets
) -> dict[str, object]:
    from accordion.api.solving import NoWinnableDeal

    solving = Solving(budgets)
    times_ms: list[float] = []
    tried: list[int] = []
    failed = 0
    try:
        for i in range(deals):
            seed = start_seed + i * SEED_SPACING
            t0 = time.perf_counter()
            try:
                found = await solving.winnable_game(variant, options, seed, None)
            except NoWinnableDeal:
                failed += 1
                times_ms.append((time.perf_counter() - t0) * 1000)
                continue
            times_ms.append((time.perf_counter() - t0) * 1000)
            tried.append(found.seeds_tried)
    finally:
        solving.close()
    return summary(variant, options, times_ms, tried, failed, "in-process")


async def over_grpc(variant: str, options: dict[str, str], deals: int, start_seed: int) -> dict[str, object]:
    import grpc.aio

    from accordion.v1 import accordion_pb2 as pb
    from accordion.v1 import accordion_pb2_grpc as pb_grpc

    with tempfile.TemporaryDirectory() as tmp:
        err_path = Path(tmp) / "server.err"
        env = {k: v for k, v in os.environ.items() if not k.startswith("ACCORDION_") and k != "REDIS_URL"}
        env["PYTHONPATH"] = str(SERVICE) + os.pathsep + env.get("PYTHONPATH", "")
        with open(Path(tmp) / "server.out", "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", "accordion", "--listen", "127.0.0.1:0"],
                stdout=out,
                stderr=err,
                env=env,
            )
            try:
                addr = _wait_for_banner(Path(tmp) / "server.out", proc)
                times_ms: list[float] = []
                failed = 0
                async with grpc.aio.insecure_channel(addr) as channel:
                    stub = pb_grpc.AccordionServiceStub(channel)
                    await stub.ListVariants(pb.ListVariantsRequest(), timeout=10)  # warm: connection, imports
                    for i in range(deals):
                        request = pb.NewGameRequest(
                            variant=variant,
                            options=options,
                            seed=start_seed + i * SEED_SPACING,
                            winnable_only=True,
                        )
                        t0 = time.perf_counter()
                        try:
                            await stub.NewGame(request, timeout=30)
                        except grpc.aio.AioRpcError:
                            failed += 1
                        times_ms.append((time.perf_counter() - t0) * 1000)
            finally:
                proc.terminate()
                proc.wait(15)
    return summary(variant, options, times_ms, [], failed, "grpc")


def _wait_for_banner(out_path: Path, proc: subprocess.Popen[bytes]) -> str:
    banner = "accordion-server listening on "
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for line in out_path.read_text(errors="replace").splitlines():
            if line.startswith(banner):
                return line[len(banner) :].split()[0]
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    raise RuntimeError("the server did not start")


def fill_rate(variant: str, options: dict[str, str], seconds: float, nodes: int, deal_seconds: float) -> str:
    """Deals proven winnable a minute on this core, as ``accordion-pools fill`` proves them."""
    import secrets

    from accordion.pools import prove

    proven = tried = 0
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        tried += 1
        proven += prove(variant, options, secrets.randbits(64), nodes, deal_seconds) is not None
    spent = time.process_time() - t0
    return (
        f"{variant:<22} {','.join(f'{k}={v}' for k, v in options.items()) or '-':<14} {tried:>6} "
        f"{proven:>6} {100 * proven / tried:>6.1f} {spent / tried:>8.3f} {proven / spent * 60:>10.1f}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variant", nargs="+", default=["klondike", "klondike-draw-one"])
    ap.add_argument(
        "--option", action="append", default=[], metavar="NAME=VALUE", help="a rules option, repeatable"
    )
    ap.add_argument("--deals", type=int, default=300)
    ap.add_argument("--start-seed", type=int, default=0)
    ap.add_argument("--deal-nodes", type=int, default=None, help="positions per deal (default: the server's)")
    ap.add_argument(
        "--deal-ms", type=float, default=None, help="milliseconds per deal, at most (default: the server's)"
    )
    ap.add_argument("--total-s", type=float, default=None, help="seconds for all of one call's searches")
    ap.add_argument("--grpc", action="store_true", help="through a real server process over gRPC")
    ap.add_argument(
        "--fill-rate", type=float, default=None, metavar="SECONDS", help="pool fill rate per variant"
    )
    ap.add_argument("--cpu", type=int, default=None, help="the core --fill-rate pins itself to")
    ap.add_argument("--pool-nodes", type=int, default=Budgets().pool_deal_nodes, help="positions per deal")
    ap.add_argument(
        "--pool-seconds", type=float, default=Budgets().pool_deal_seconds, help="seconds per deal"
    )
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON ('-' for stdout)")
    args = ap.parse_args(argv)
    options = dict(o.split("=", 1) for o in args.option)
    if args.fill_rate is not None:
        core = pin_to_one_core(args.cpu)
        print(
            f"fill rate: {args.fill_rate:g} s of CPU per variant, {args.pool_nodes} positions and "
            f"{args.pool_seconds:g} s per deal at most, solver {'c' if HAVE_C else 'python'}, "
            f"core {core}, load {os.getloadavg()[0]:.2f}"
        )
        print(
            f"{'variant':<22} {'options':<14} {'tried':>6} {'won':>6} {'won %':>6} "
            f"{'s/deal':>8} {'deals/min':>10}"
        )
        for v in args.variant:
            print(fill_rate(v, options, args.fill_rate, args.pool_nodes, args.pool_seconds), flush=True)
        return 0
    budgets = Budgets()
    if args.deal_nodes is not None:
        budgets = replace(budgets, winnable_deal_nodes=args.deal_nodes)
    if args.deal_ms is not None:
        budgets = replace(budgets, winnable_deal_seconds=args.deal_ms / 1000)
    if args.total_s is not None:
        budgets = replace(budgets, winnable_seconds=args.total_s)
    rows = []
    for v in args.variant:
        if args.grpc:
            rows.append(asyncio.run(over_grpc(v, options, args.deals, args.start_seed)))
        else:
            rows.append(asyncio.run(in_process(v, options, args.deals, args.start_seed, budgets)))
    print(
        f"winnable bench: solver {'c' if HAVE_C else 'python'}, deal nodes {budgets.winnable_deal_nodes}, "
        f"deal cap {budgets.winnable_deal_seconds * 1000:g} ms, call cap {budgets.winnable_seconds:g} s, "
        f"threads {budgets.threads}, python {platform.python_version()}, load {os.getloadavg()[0]:.2f}"
    )
    head = (
        f"{'variant':<18} {'mode':<10} {'deals':>5} {'none':>4} {'median ms':>9} {'p90 ms':>8} {'p99 ms':>8} "
        f"{'max ms':>8} {'seeds mean':>10} {'p99':>4} {'max':>4}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        seeds = "-" if r["mean_seeds"] is None else f"{r['mean_seeds']:.2f}"
        print(
            f"{r['variant']:<18} {r['mode']:<10} {r['deals']:>5} {r['not_found']:>4} {r['median_ms']:>9.2f} "
            f"{r['p90_ms']:>8.2f} {r['p99_ms']:>8.2f} {r['max_ms']:>8.2f} {seeds:>10} "
            f"{r['p99_seeds'] if r['p99_seeds'] is not None else '-':>4} "
            f"{r['max_seeds'] if r['max_seeds'] is not None else '-':>4}"
        )
    if args.json:
        payload = json.dumps({"budgets": budgets.__dict__, "results": rows}, indent=2)
        if args.json == "-":
            print(payload)
        else:
            Path(args.json).write_text(payload + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
