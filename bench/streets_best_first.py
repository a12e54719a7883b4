"""Streets and Alleys: one part of the search off and on, A/B in one run.

    nice -n 10 .venv/bin/python bench/streets_best_first.py --deals 400 --start-seed 0 --max-nodes 4000000
    nice -n 10 .venv/bin/python bench/streets_best_first.py --compare frozen --deals 300 --max-nodes 0 \
        --budget-ms 2000

For each deal both sides run alternately (which goes first alternates by seed) with the same budget,
through the compiled core. ``--compare pass`` (the default): ``best_first_nodes=0`` turns the
best-first pass off (the search as it was before the pass); ``--compare frozen``:
``frozen_test=False`` turns the frozen-cards cut off (the search as before it). Prints won / lost /
undecided, the median and p90 positions and milliseconds per side, and the deals the two sides
decide differently. With a node budget (and no clock) the verdicts do not depend on the load; with
``--budget-ms`` both sides share the same load, deal by deal.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))

from accordion.engine import new_game  # noqa: E402
from accordion.solver.streets import adapter  # noqa: E402
from accordion.solver.streets.adapter import BUILD_ANY_SUIT  # noqa: E402

NAMES = {0: "undecided", 1: "won", 2: "lost"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, default=400)
    ap.add_argument("--start-seed", type=int, default=0)
    ap.add_argument("--max-nodes", type=int, default=4_000_000, help="node budget per deal (0: none)")
    ap.add_argument("--budget-ms", type=float, default=0.0, help="time budget per deal (0: none)")
    ap.add_argument("--compare", choices=("pass", "frozen"), default="pass")
    ap.add_argument("--best-first-nodes", type=int, default=None, help="side B's pass (default: the core's)")
    args = ap.parse_args()
    cstreets: Any = adapter._cstreets
    if cstreets is None:
        sys.exit("the compiled core is not built")
    sides: dict[str, dict[str, Any]]
    if args.compare == "frozen":
        sides = {"A (no frozen)": {"frozen_test": False}, "B (frozen)": {}}
    else:
        sides = {"A (no pass)": {"best_first_nodes": 0}, "B (pass)": {}}
    if args.best_first_nodes is not None:
        sides[list(sides)[1]]["best_first_nodes"] = args.best_first_nodes
    results: dict[str, list[tuple[int, int, float]]] = {name: [] for name in sides}
    for seed in range(args.start_seed, args.start_seed + args.deals):
        state = new_game("streets-and-alleys", {}, seed=seed).state
        piles = [bytes(p) for p in state.tableau]  # type: ignore[attr-defined]
        order = list(sides) if seed % 2 == 0 else list(reversed(sides))
        for name in order:
            t0 = time.perf_counter()
            outcome, _, nodes = cstreets.streets_solve(
                piles, [0] * 4, BUILD_ANY_SUIT, True, args.max_nodes, args.budget_ms / 1000, **sides[name]
            )
            results[name].append((outcome, nodes, (time.perf_counter() - t0) * 1000))
    print(
        f"streets-and-alleys seeds {args.start_seed}..{args.start_seed + args.deals - 1}, "
        f"max_nodes={args.max_nodes}, budget_ms={args.budget_ms:g}"
    )
    for name, rows in results.items():
        counts = {k: sum(1 for o, _, _ in rows if o == k) for k in NAMES}
        nodes = sorted(n for _, n, _ in rows)
        ms = sorted(t for _, _, t in rows)
        p50, p90 = len(rows) // 2, int(len(rows) * 0.9)
        print(
            f"  {name:14} won {counts[1]:4} lost {counts[2]:4} undecided {counts[0]:4}  "
            f"median positions {nodes[p50]:>9}  p90 {nodes[p90]:>9}  median ms {ms[p50]:8.2f}  p90 "
            f"{ms[p90]:8.1f}"
        )
    a, b = results.values()
    for k, ((oa, na, _), (ob, nb, _)) in enumerate(zip(a, b)):
        if oa != ob:
            print(f"  seed {args.start_seed + k}: {NAMES[oa]} ({na}) -> {NAMES[ob]} ({nb})")


if __name__ == "__main__":
    main()
