"""Streets and Alleys: one part of the search off and on, A/B in one run.

    nice -n 10 .venv/bin/python bench/streets_best_first.py --deals 400 --start-seed 0 --max-nodes 4000000
    nice -n 10 .venv/bin/python bench/streets_best_first.py --compare frozen --deals 300 --max-nodes 0 --budget-ms 2000
    nice -n 10 .venv/bin/python bench/streets_best_first.py --compare sleep --single --deals 100 --max-nodes 40000000

For each deal both sides run alternately (which goes first alternates by seed) with the same budget,
through the compiled core. ``--compare pass`` (the default): ``best_first_nodes=0`` turns the
best-first pass off (the search as it was before the pass); ``--compare frozen``:
``frozen_test=False`` turns the frozen-cards cut off (the search as before it); ``--compare sleep``
(``sleep2``): side B searches with sleep sets (``sleep_sets=1``; 2: the moved card sleeps too), an
experiment of branch ssleep that did not pay. ``--single``: both sides search in one attempt, no
best-first pass (``first_attempt`` = the budget), so a LOST is one search's proof. Prints won / lost /
undecided, the median and p90 positions and milliseconds per side, the positions and CPU seconds
spent on the deals both sides prove lost, and the deals the two sides decide differently. With a node budget (and no clock) the verdicts do not depend on the load; with
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
from accordion.solver import core  # noqa: E402
from accordion.solver._pystreets import BUILD_ANY_SUIT  # noqa: E402

NAMES = {0: "undecided", 1: "won", 2: "lost"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, default=400)
    ap.add_argument("--start-seed", type=int, default=0)
    ap.add_argument("--max-nodes", type=int, default=4_000_000, help="node budget per deal (0: none)")
    ap.add_argument("--budget-ms", type=float, default=0.0, help="time budget per deal (0: none)")
    ap.add_argument("--compare", choices=("pass", "frozen", "sleep", "sleep2"), default="pass")
    ap.add_argument("--single", action="store_true", help="one attempt, no best-first pass, on both sides")
    ap.add_argument("--best-first-nodes", type=int, default=None, help="side B's pass (default: the core's)")
    args = ap.parse_args()
    cstreets: Any = core._cstreets  # type: ignore[attr-defined]
    if cstreets is None:
        sys.exit("the compiled core is not built")
    sides: dict[str, dict[str, Any]]
    if args.compare == "frozen":
        sides = {"A (no frozen)": {"frozen_test": False}, "B (frozen)": {}}
    elif args.compare in ("sleep", "sleep2"):
        sides = {"A (no sleep)": {}, f"B ({args.compare})": {"sleep_sets": 1 if args.compare == "sleep" else 2}}
    else:
        sides = {"A (no pass)": {"best_first_nodes": 0}, "B (pass)": {}}
    if args.single:
        for side in sides.values():
            side.update(first_attempt=2 * args.max_nodes if args.max_nodes else 1 << 62, best_first_nodes=0)
    if args.best_first_nodes is not None:
        sides[list(sides)[1]]["best_first_nodes"] = args.best_first_nodes
    results: dict[str, list[tuple[int, int, float, float]]] = {name: [] for name in sides}
    for seed in range(args.start_seed, args.start_seed + args.deals):
        state = new_game("streets-and-alleys", {}, seed=seed).state
        piles = [bytes(p) for p in state.tableau]  # type: ignore[attr-defined]
        order = list(sides) if seed % 2 == 0 else list(reversed(sides))
        for name in order:
            t0, c0 = time.perf_counter(), time.process_time()
            outcome, _, nodes = cstreets.streets_solve(piles, [0] * 4, BUILD_ANY_SUIT, True, args.max_nodes,
                                                       args.budget_ms / 1000, **sides[name])
            results[name].append((outcome, nodes, (time.perf_counter() - t0) * 1000, time.process_time() - c0))
    print(f"streets-and-alleys seeds {args.start_seed}..{args.start_seed + args.deals - 1}, "
          f"max_nodes={args.max_nodes}, budget_ms={args.budget_ms:g}")
    for name, rows in results.items():
        counts = {k: sum(1 for o, *_ in rows if o == k) for k in NAMES}
        nodes = sorted(n for _, n, *_ in rows)
        ms = sorted(t for _, _, t, _ in rows)
        p50, p90 = len(rows) // 2, int(len(rows) * 0.9)
        print(f"  {name:14} won {counts[1]:4} lost {counts[2]:4} undecided {counts[0]:4}  "
              f"median positions {nodes[p50]:>9}  p90 {nodes[p90]:>9}  median ms {ms[p50]:8.2f}  p90 {ms[p90]:8.1f}")
    a, b = results.values()
    both_lost = [k for k, (ra, rb) in enumerate(zip(a, b)) if ra[0] == rb[0] == 2]
    for name, rows in results.items():
        print(f"  {name:14} on the {len(both_lost)} deals both prove lost: "
              f"{sum(rows[k][1] for k in both_lost):,} positions, {sum(rows[k][3] for k in both_lost):.2f} CPU s")
    for k, ((oa, na, *_), (ob, nb, *_)) in enumerate(zip(a, b)):
        if oa != ob:
            print(f"  seed {args.start_seed + k}: {NAMES[oa]} ({na}) -> {NAMES[ob]} ({nb})")


if __name__ == "__main__":
    main()
