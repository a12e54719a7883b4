"""Streets and Alleys: the depth-first attempts with and without the best-first pass, A/B in one run.

    nice -n 10 .venv/bin/python bench/streets_best_first.py --deals 400 --start-seed 0 --max-nodes 4000000

For each deal both sides run alternately (which goes first alternates by seed) with the same node
budget, through the compiled core (``best_first_nodes=0`` turns the pass off: the search as it was
before the pass). Prints won / lost / undecided and the median and p90 positions per side, and the
deals the two sides decide differently. Node counts, not wall time: they do not depend on the load.
"""

from __future__ import annotations

import argparse
import sys
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
    ap.add_argument("--max-nodes", type=int, default=4_000_000)
    ap.add_argument("--best-first-nodes", type=int, default=None, help="side B's pass (default: the core's)")
    args = ap.parse_args()
    cstreets: Any = core._cstreets  # type: ignore[attr-defined]
    if cstreets is None:
        sys.exit("the compiled core is not built")
    sides = {"A (no pass)": {"best_first_nodes": 0}, "B (pass)": {}}
    if args.best_first_nodes is not None:
        sides["B (pass)"] = {"best_first_nodes": args.best_first_nodes}
    results: dict[str, list[tuple[int, int]]] = {name: [] for name in sides}
    for seed in range(args.start_seed, args.start_seed + args.deals):
        state = new_game("streets-and-alleys", {}, seed=seed).state
        piles = [bytes(p) for p in state.tableau]  # type: ignore[attr-defined]
        order = list(sides) if seed % 2 == 0 else list(reversed(sides))
        for name in order:
            outcome, _, nodes = cstreets.streets_solve(piles, [0] * 4, BUILD_ANY_SUIT, True, args.max_nodes,
                                                       **sides[name])
            results[name].append((outcome, nodes))
    print(f"streets-and-alleys seeds {args.start_seed}..{args.start_seed + args.deals - 1}, "
          f"max_nodes={args.max_nodes}")
    for name, rows in results.items():
        counts = {k: sum(1 for o, _ in rows if o == k) for k in NAMES}
        nodes = sorted(n for _, n in rows)
        print(f"  {name:12} won {counts[1]:4} lost {counts[2]:4} undecided {counts[0]:4}  "
              f"median positions {nodes[len(nodes) // 2]:>9}  p90 {nodes[int(len(nodes) * 0.9)]:>9}")
    a, b = results.values()
    for k, ((oa, na), (ob, nb)) in enumerate(zip(a, b)):
        if oa != ob:
            print(f"  seed {args.start_seed + k}: {NAMES[oa]} ({na}) -> {NAMES[ob]} ({nb})")


if __name__ == "__main__":
    main()
