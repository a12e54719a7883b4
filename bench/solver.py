"""Solver benchmark: solve N seeded deals of a variant; % won / lost / unknown and time per deal.

    .venv/bin/python bench/solver.py --variant accordion --deals 10000 --budget-ms 2000
    .venv/bin/python bench/solver.py --variant royal-marriage push-pin --deals 1000 --json out.json
    .venv/bin/python bench/solver.py --variant klondike klondike-draw-one --option open=true \
        --option partial_runs=true --option foundation_return=true --deals 1000 --budget-ms 2000
    .venv/bin/python bench/solver.py --variant streets-and-alleys --deals 10000 --budget-ms 2000
    .venv/bin/python bench/solver.py --variant wish --option open=true --deals 10000
    .venv/bin/python bench/solver.py --variant emperor --option open=true --deals 200 --budget-ms 2000
    .venv/bin/python bench/solver.py --variant spider --option open=true --option suits=1 \
        --deals 200 --budget-ms 2000

Deals are ``new_game(variant, options, seed)`` for seeds start-seed .. start-seed+N-1,
solved from their first position (French: the first deal, without the REDEAL). The time
per deal is the wall time of one ``accordion.solver.solve`` call (moves included), not
the deal; its CPU time (the thread's, in which the search runs) is reported beside it, so a
node budget can be shown to fit a CPU budget on a loaded machine. The process pins itself to
one core when the OS allows it (--cpu).
Every WON line is replayed through the engine (``Game.play`` from a freshly dealt game, won at
the end; untimed): a line that does not replay is printed to stderr, counted (``replay_failed``
in the JSON) and makes the exit status 1. ``--no-replay`` skips it.
Targets (issue): open ``accordion`` over 10,000 deals, at least 99.9 % solved (won or
proven lost), median <= 10 ms, p99 <= 500 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))

from accordion.engine import EngineError, Game, Move, new_game  # noqa: E402
from accordion.solver import HAVE_C, solve  # noqa: E402

DEFAULT_VARIANTS = ["accordion", "royal-marriage", "push-pin", "double-jump", "concertina", "french"]
# Klondike: pass --option open=true (and the published rules: partial_runs=true foundation_return=true).
# Wish: --option open=true (its deals hide cards otherwise); Streets and Alleys is all face up.
# Emperor and Spider: --option open=true (Spider: --option suits=1|2|4, --option layout=standard).


def pin_to_one_core(cpu: int | None) -> int | None:
    """Pin this process to one core (the last allowed one unless given); the core, or None."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    allowed = sorted(os.sched_getaffinity(0))
    target = cpu if cpu is not None else allowed[-1]
    try:
        os.sched_setaffinity(0, {target})
    except OSError:
        return None
    return target


def percentile(sorted_values: list[float], p: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    if not sorted_values:
        return 0.0
    k = max(0, min(len(sorted_values) - 1, -(-len(sorted_values) * p // 100) - 1))
    return sorted_values[int(k)]


def replay_failure(game: Game, moves: tuple[Move, ...]) -> str | None:
    """Why ``moves`` do not win ``game`` played through the engine (None: they do). Plays them."""
    for k, move in enumerate(moves):
        try:
            game.play(move)
        except EngineError as exc:
            return f"move {k + 1} of {len(moves)}: {exc}"
    # Won: the win threshold met (all cards on the foundations, one pile left, ...). Not the
    # status: with Klondike's foundation_return a card may still come back down, so a game with
    # every card home stays IN_PROGRESS.
    if not game.threshold_met:
        status = f"{game.status.value}, penalty {game.penalty}"
        return f"the {len(moves)} moves end in a game that is not won ({status})"
    return None


def run(
    variant: str,
    options: dict[str, str],
    deals: int,
    start_seed: int,
    budget_ms: float | None,
    max_nodes: int | None,
    impl: str | None,
    progress: bool,
    replay: bool = True,
) -> dict[str, Any]:
    counts = {"WON": 0, "LOST": 0, "UNKNOWN": 0}
    times_ms: list[float] = []
    cpu_ms: list[float] = []  # the CPU time of this thread (the search runs in it), per deal
    nodes: list[int] = []
    unknown_seeds: list[int] = []
    replay_failures: list[dict[str, object]] = []
    replay_seconds = 0.0
    per_deal: list[tuple[int, str, int, int]] = []  # seed, verdict, positions, line length
    max_seconds = budget_ms / 1000 if budget_ms else None
    method = ""
    for k in range(deals):
        seed = start_seed + k
        game = new_game(variant, options, seed=seed)
        t0, c0 = time.perf_counter(), time.thread_time()
        result = solve(game, max_nodes=max_nodes, max_seconds=max_seconds, impl=impl)
        cpu_ms.append((time.thread_time() - c0) * 1000)
        times_ms.append((time.perf_counter() - t0) * 1000)
        counts[result.outcome.value] += 1
        nodes.append(result.nodes)
        per_deal.append((seed, result.outcome.value, result.nodes, len(result.moves)))
        method = f"{result.method}/{result.implementation}"
        if result.unknown:
            unknown_seeds.append(seed)
        if replay and result.won:
            t0 = time.perf_counter()
            why = replay_failure(game, result.moves)
            replay_seconds += time.perf_counter() - t0
            if why is not None:
                print(f"REPLAY FAILED: {variant} seed {seed}: {why}", file=sys.stderr, flush=True)
                replay_failures.append({"seed": seed, "why": why})
        if progress and (k + 1) % 1000 == 0:
            print(f"  {variant}: {k + 1}/{deals}", file=sys.stderr, flush=True)
    times_ms.sort()
    cpu_ms.sort()
    nodes.sort()

    def pct(n: int) -> float:
        return round(100 * n / deals, 3)

    return {
        "variant": variant,
        "options": options,
        "method": method,
        "deals": deals,
        "start_seed": start_seed,
        "won_pct": pct(counts["WON"]),
        "lost_pct": pct(counts["LOST"]),
        "unknown_pct": pct(counts["UNKNOWN"]),
        "solved_pct": pct(counts["WON"] + counts["LOST"]),
        "median_ms": round(percentile(times_ms, 50), 3),
        "p90_ms": round(percentile(times_ms, 90), 3),
        "p99_ms": round(percentile(times_ms, 99), 3),
        "max_ms": round(times_ms[-1], 3) if times_ms else 0.0,
        "cpu_median_ms": round(percentile(cpu_ms, 50), 3),
        "cpu_p99_ms": round(percentile(cpu_ms, 99), 3),
        "cpu_max_ms": round(cpu_ms[-1], 3) if cpu_ms else 0.0,
        "median_nodes": int(percentile(nodes, 50)),
        "unknown_seeds": unknown_seeds[:50],
        "replayed": counts["WON"] if replay else 0,  # WON lines replayed through the engine
        "replay_failed": len(replay_failures),
        "replay_ms": round(replay_seconds * 1000, 1),  # all the replays together
        "replay_failures": replay_failures[:50],
        "per_deal": per_deal,  # (seed, verdict, positions, line length): compare two builds exactly
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--variant", nargs="+", default=DEFAULT_VARIANTS, help="variant ids (default: the six of the issue)"
    )
    ap.add_argument(
        "--option", action="append", default=[], metavar="NAME=VALUE", help="a rules option, repeatable"
    )
    ap.add_argument("--deals", type=int, default=1000)
    ap.add_argument("--start-seed", type=int, default=0)
    ap.add_argument("--budget-ms", type=float, default=2000.0, help="time budget per deal (0: none)")
    ap.add_argument("--max-nodes", type=int, default=None, help="node budget per deal")
    ap.add_argument("--impl", choices=("c", "python"), default=None, help="default: c when built")
    ap.add_argument("--cpu", type=int, default=None, help="core to pin to (default: the last allowed)")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON ('-' for stdout)")
    ap.add_argument("--progress", action="store_true", help="print progress every 1000 deals to stderr")
    ap.add_argument(
        "--replay",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="replay every WON line through the engine (default; a failure exits 1)",
    )
    args = ap.parse_args(argv)
    options = dict(o.split("=", 1) for o in args.option)
    core = pin_to_one_core(args.cpu)
    impl = args.impl or ("c" if HAVE_C else "python")
    rows = [
        run(
            v,
            options,
            args.deals,
            args.start_seed,
            args.budget_ms or None,
            args.max_nodes,
            impl,
            args.progress,
            args.replay,
        )
        for v in args.variant
    ]
    budget = f"{args.budget_ms:g} ms" if args.budget_ms else "none"
    print(
        f"solver bench: impl={impl}, budget/deal={budget}, max_nodes={args.max_nodes}, "
        f"pinned to core {core}, python {platform.python_version()}"
    )
    head = (
        f"{'variant':<20} {'deals':>6} {'% won':>8} {'% lost':>8} {'% unknown':>9} "
        f"{'median ms':>10} {'p90 ms':>8} {'p99 ms':>8} {'max ms':>9}  method"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        print(
            f"{r['variant']:<20} {r['deals']:>6} {r['won_pct']:>8.2f} {r['lost_pct']:>8.2f} "
            f"{r['unknown_pct']:>9.2f} {r['median_ms']:>10.3f} {r['p90_ms']:>8.3f} {r['p99_ms']:>8.3f} "
            f"{r['max_ms']:>9.1f}  {r['method']}"
        )
    for r in rows:
        print(
            f"{r['variant']:<20} CPU time a deal: median {r['cpu_median_ms']:.3f} ms, "
            f"p99 {r['cpu_p99_ms']:.3f} ms, max {r['cpu_max_ms']:.1f} ms"
        )
    failed = sum(r["replay_failed"] for r in rows)
    if args.replay:
        replayed = sum(r["replayed"] for r in rows)
        seconds = sum(r["replay_ms"] for r in rows) / 1000
        verdict = f"{failed} DID NOT REPLAY TO A WIN (seeds above, on stderr)" if failed else "every one wins"
        print(f"replayed {replayed} WON lines through the engine in {seconds:.2f} s: {verdict}")
    if args.json:
        payload = json.dumps(
            {
                "impl": impl,
                "budget_ms": args.budget_ms,
                "max_nodes": args.max_nodes,
                "core": core,
                "python": platform.python_version(),
                "results": rows,
            },
            indent=2,
        )
        if args.json == "-":
            print(payload)
        else:
            Path(args.json).write_text(payload + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
