"""Hint benchmark: play N hidden deals move by move through the service's Hint, in-process.

    nice -n 10 .venv/bin/python bench/hint_play.py --deals 300
    nice -n 10 .venv/bin/python bench/hint_play.py --deals 100 --start-seed 100000 --json out.json

Each deal is ``new_game(variant, options, seed)`` for seeds start-seed .. start-seed+N-1, dealt
hidden (face-down cards, the stock's order unknown). Every move played is the answer of
``api.solving.Solving.hint`` (the code behind the Hint RPC: the sampled hint on hidden
positions, the solver once nothing is hidden), with the server's default budgets unless
given. A deal ends won, with no legal move, or stuck: the same position a third time (a
hint that goes round in a circle, or a lost deal where the engine still lets a run go back
and forth between passes; the pass count is not compared) or --max-moves moves; stuck counts
as lost.

Rules (the default --option set): Klondike turning three, passes unlimited, any part of a
run may move, a foundation's card may come back: the rules of lonelybot's 44.5 % and, as
far as we know, of Bjarnason, Fern and Tadepalli's 36.97 % (ICAPS 2009). lonelybot samples
only the face-down tableau cards and treats the stock's order as known (a player who went
through it once remembers it); this Hint treats the stock as unseen, as the view shows it.

Reports the win rate with its 95 % Wilson interval, and the mean, p99 and max time of one
Hint (wall time of the awaited call). The process pins itself to one core (--cpu).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))

from accordion.api.solving import Budgets, Solving  # noqa: E402
from accordion.engine import State, new_game  # noqa: E402
from accordion.engine.tableau import DOWN, FOUNDATIONS, TABLEAU, WASTE  # noqa: E402
from accordion.sessions.search_gate import hint_search  # noqa: E402
from accordion.solver import HAVE_C  # noqa: E402
from solver import percentile, pin_to_one_core  # noqa: E402  (bench/solver.py, beside this file)

PUBLISHED_RULES = {"draw": "3", "passes": "0", "partial_runs": "true", "foundation_return": "true"}


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson score interval of a proportion."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def position_key(state: State) -> tuple[object, ...]:
    """The cards' places, without the pass count: a lost Klondike deal can shuffle a run between
    two piles and go through the stock again for ever, each pass a new position to the engine."""
    return TABLEAU.get(state), DOWN.get(state), FOUNDATIONS.get(state), WASTE.get(state), state.stock


async def play(
    solving: Solving,
    variant: str,
    options: dict[str, str],
    seed: int,
    max_moves: int,
    times_ms: list[float],
    cpu_ms: list[float],
) -> tuple[str, int]:
    """Play one deal through Hint; ("won" | "lost" | "stuck", moves played)."""
    game = new_game(variant, options, seed=seed)
    seen: Counter[tuple[object, ...]] = Counter()
    for played in range(max_moves):
        if game.rules.is_won(game.state):
            return "won", played
        key = position_key(game.state)
        seen[key] += 1
        if seen[key] >= 3:
            return "stuck", played
        started, cpu = time.perf_counter(), time.process_time()
        move, _ = await solving.hint(game, hint_search(game))
        times_ms.append((time.perf_counter() - started) * 1000)
        cpu_ms.append((time.process_time() - cpu) * 1000)  # the process's, worker thread included
        if move is None:
            return "lost", played
        game.play(move)
    return ("won" if game.rules.is_won(game.state) else "stuck"), max_moves


async def run(args: argparse.Namespace, options: dict[str, str]) -> dict[str, object]:
    budgets = Budgets(
        hint_seconds=args.budget_ms / 1000,
        hint_worlds=args.worlds,
        hint_world_nodes=args.world_nodes,
        hint_nodes=args.nodes,
        hint_deep_worlds=args.deep_worlds,
        hint_deep_nodes=args.deep_nodes,
    )
    solving = Solving(budgets)
    outcomes: Counter[str] = Counter()
    times_ms: list[float] = []
    cpu_ms: list[float] = []  # CPU time of each Hint: what a quiet machine would take, near enough
    moves: list[int] = []
    started = time.perf_counter()
    try:
        for k in range(args.deals):
            seed = args.start_seed + k
            outcome, n = await play(solving, args.variant, options, seed, args.max_moves, times_ms, cpu_ms)
            outcomes[outcome] += 1
            moves.append(n)
            if args.progress:
                done = k + 1
                lo, hi = wilson(outcomes["won"], done)
                print(
                    f"seed {seed}: {outcome} in {n} moves; {outcomes['won']}/{done} won "
                    f"[{lo:.3f}, {hi:.3f}], {time.perf_counter() - started:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        solving.close()
    ordered = sorted(times_ms)
    won = outcomes["won"]
    lo, hi = wilson(won, args.deals)
    return {
        "variant": args.variant,
        "options": options,
        "deals": args.deals,
        "start_seed": args.start_seed,
        "won": won,
        "lost": outcomes["lost"],
        "stuck": outcomes["stuck"],
        "win_rate": won / args.deals if args.deals else 0.0,
        "wilson95": [lo, hi],
        "hints": len(times_ms),
        "hint_mean_ms": sum(times_ms) / len(times_ms) if times_ms else 0.0,
        "hint_p50_ms": percentile(ordered, 50),
        "hint_p99_ms": percentile(ordered, 99),
        "hint_max_ms": ordered[-1] if ordered else 0.0,
        "hint_cpu_mean_ms": sum(cpu_ms) / len(cpu_ms) if cpu_ms else 0.0,
        "hint_cpu_p99_ms": percentile(sorted(cpu_ms), 99),
        "hint_cpu_max_ms": max(cpu_ms, default=0.0),
        "hints_over_budget": sum(1 for t in times_ms if t > args.budget_ms),
        "mean_moves": sum(moves) / len(moves) if moves else 0.0,
        "seconds": time.perf_counter() - started,
        "budgets": {
            "hint_ms": args.budget_ms,
            "worlds": args.worlds,
            "world_nodes": args.world_nodes,
            "nodes": args.nodes,
            "deep_worlds": args.deep_worlds,
            "deep_nodes": args.deep_nodes,
        },
    }


def main() -> None:
    defaults = Budgets()
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--variant", default="klondike")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="rules option (repeatable); the published rules' options are the default",
    )
    parser.add_argument("--deals", type=int, default=300)
    parser.add_argument("--start-seed", type=int, default=0)
    parser.add_argument("--budget-ms", type=float, default=defaults.hint_seconds * 1000)
    parser.add_argument("--worlds", type=int, default=defaults.hint_worlds)
    parser.add_argument("--world-nodes", type=int, default=defaults.hint_world_nodes)
    parser.add_argument("--nodes", type=int, default=defaults.hint_nodes)
    parser.add_argument(
        "--deep-worlds",
        type=int,
        default=defaults.hint_deep_worlds,
        help="worlds searched deeper when the first show no win (0: never)",
    )
    parser.add_argument("--deep-nodes", type=int, default=defaults.hint_deep_nodes)
    parser.add_argument("--max-moves", type=int, default=1000)
    parser.add_argument("--cpu", type=int, default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--progress", action="store_true")
    args = parser.parse_args()
    options = dict(PUBLISHED_RULES)
    options.update(kv.split("=", 1) for kv in args.option)
    core = pin_to_one_core(args.cpu)
    result = asyncio.run(run(args, options))
    result.update(
        {"compiled_solver": HAVE_C, "cpu": core, "python": platform.python_version(), "load": os.getloadavg()}
    )
    lo, hi = result["wilson95"]  # type: ignore[misc]
    print(
        f"{args.variant} {options}: {result['won']}/{args.deals} won = {100 * result['win_rate']:.1f} % "
        f"(95 % Wilson {100 * lo:.1f}–{100 * hi:.1f}); lost {result['lost']}, stuck {result['stuck']}"
    )
    print(
        f"{result['hints']} hints: mean {result['hint_mean_ms']:.1f} ms, p50 {result['hint_p50_ms']:.1f} ms, "
        f"p99 {result['hint_p99_ms']:.1f} ms, max {result['hint_max_ms']:.1f} ms, over budget "
        f"{result['hints_over_budget']}; CPU mean {result['hint_cpu_mean_ms']:.1f} ms, p99 "
        f"{result['hint_cpu_p99_ms']:.1f} ms, max {result['hint_cpu_max_ms']:.1f} ms; "
        f"{result['seconds']:.0f} s; "
        f"load {result['load']}"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
