"""Hint benchmark: play N hidden deals move by move through the service's Hint, in-process.

    nice -n 10 .venv/bin/python bench/hint_play.py --deals 300
    nice -n 10 .venv/bin/python bench/hint_play.py --deals 100 --start-seed 100000 --json out.json
    nice -n 10 .venv/bin/python bench/hint_play.py --variant spider --option suits=2 --deals 20 \
        --arms service,look-ahead

``--arms``: the hints compared side by side, each deal played by each in turn (so the
machine's load falls on both alike): ``service`` is the Hint RPC's code (the sampled Hint where
the game's search record allows it), ``look-ahead`` the visible one-move look-ahead
(``engine.hint.suggest``, what a game without sampling gets), and ``service:W:N[:T]`` the
Hint RPC's code with W worlds of N positions each, T in all (default: the --nodes total), one
deck or two, for an A/B of budgets within one run (both arms meet the same load). ``service``
itself takes two-deck games (Spider, Emperor) at --two-deck-worlds and --two-deck-nodes.

Each deal is ``new_game(variant, options, seed)`` for seeds start-seed .. start-seed+N-1, dealt
hidden (face-down cards, the stock's order unknown). Every move played is the answer of
``api.solving.Solving.hint`` (the code behind the Hint RPC: the sampled hint on hidden
positions, the solver once nothing is hidden), with the server's default budgets unless
given. A deal ends won, with no legal move, or stuck: the same position a third time (a
hint that goes round in a circle, or a lost deal where the engine still lets a run go back
and forth between passes; the pass count is not compared) or --max-moves moves; stuck counts
as lost.

Rules (the default --option set for Klondike; other games start from their own defaults):
Klondike turning three, passes unlimited, any part of a run may move, a foundation's card may
come back: the rules of lonelybot's 44.5 % and, as far as we know, of Bjarnason, Fern and
Tadepalli's 36.97 % (ICAPS 2009). lonelybot samples only the face-down tableau cards and treats
the stock's order as known (a player who went through it once remembers it); this Hint treats
the stock as unseen, as the view shows it.

Reports, for each arm, the win rate with its 95 % Wilson interval, the mean cards home at the
end, and the p50, p99 and max time of one Hint (wall time of the awaited call) and its CPU.
The process pins itself to one core (--cpu).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import re
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))

from accordion.api.solving import Budgets, Solving  # noqa: E402
from accordion.engine import Game, State, new_game  # noqa: E402
from accordion.engine.hint import suggest  # noqa: E402
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


async def hint_of(solving: Solving, arm: str, game: Game) -> object:
    """The arm's hint: the Hint RPC's code (on the arm's own budgets), or the visible look-ahead."""
    if arm == "look-ahead":
        return suggest(game)
    move, _ = await solving.hint(game, hint_search(game))
    return move


async def play(
    solving: Solving,
    arm: str,
    variant: str,
    options: dict[str, str],
    seed: int,
    max_moves: int,
    times_ms: list[float],
    cpu_ms: list[float],
) -> tuple[str, int, int]:
    """Play one deal through the arm's hints; ("won" | "lost" | "stuck", moves played, cards home)."""
    game = new_game(variant, options, seed=seed)
    rules: Any = game.rules

    def end(outcome: str, played: int) -> tuple[str, int, int]:
        return outcome, played, rules.on_foundations(game.state)

    seen: Counter[tuple[object, ...]] = Counter()
    for played in range(max_moves):
        if rules.is_won(game.state):
            return end("won", played)
        key = position_key(game.state)
        seen[key] += 1
        if seen[key] >= 3:
            return end("stuck", played)
        started, cpu = time.perf_counter(), time.process_time()
        move = await hint_of(solving, arm, game)
        times_ms.append((time.perf_counter() - started) * 1000)
        cpu_ms.append((time.process_time() - cpu) * 1000)  # the process's, worker thread included
        if move is None:
            return end("lost", played)
        game.play(move)  # type: ignore[arg-type]
    return end("won" if rules.is_won(game.state) else "stuck", max_moves)


class Arm:
    """One arm's tallies, and for a ``service:W:N[:T]`` arm its own budgets."""

    def __init__(self, name: str, budgets: Budgets) -> None:
        self.name = name
        self.budgets = budgets
        if name.startswith("service:"):
            worlds, nodes, *total = (int(x) for x in name.split(":")[1:])
            total_nodes = total[0] if total else budgets.hint_nodes
            self.budgets = replace(  # on every game: one deck or two
                budgets,
                hint_worlds=worlds,
                hint_world_nodes=nodes,
                hint_nodes=total_nodes,
                hint_two_deck_worlds=worlds,
                hint_two_deck_nodes=total_nodes,
            )
        self.outcomes: Counter[str] = Counter()
        self.times_ms: list[float] = []
        self.cpu_ms: list[float] = []  # CPU time of each Hint: what a quiet machine would take, near enough
        self.moves: list[int] = []
        self.home: list[int] = []

    def summary(self, args: argparse.Namespace, deals: int) -> dict[str, object]:
        ordered, cpu = sorted(self.times_ms), sorted(self.cpu_ms)
        won = self.outcomes["won"]
        lo, hi = wilson(won, deals)
        return {
            "arm": self.name,
            "won": won,
            "lost": self.outcomes["lost"],
            "stuck": self.outcomes["stuck"],
            "deals": deals,
            "win_rate": won / deals if deals else 0.0,
            "wilson95": [lo, hi],
            "mean_cards_home": sum(self.home) / len(self.home) if self.home else 0.0,
            "hints": len(self.times_ms),
            "hint_mean_ms": sum(self.times_ms) / len(self.times_ms) if self.times_ms else 0.0,
            "hint_p50_ms": percentile(ordered, 50),
            "hint_p99_ms": percentile(ordered, 99),
            "hint_max_ms": ordered[-1] if ordered else 0.0,
            "hint_cpu_mean_ms": sum(cpu) / len(cpu) if cpu else 0.0,
            "hint_cpu_p50_ms": percentile(cpu, 50),
            "hint_cpu_p99_ms": percentile(cpu, 99),
            "hint_cpu_max_ms": cpu[-1] if cpu else 0.0,
            "hints_over_budget": sum(1 for t in self.times_ms if t > args.budget_ms),
            "mean_moves": sum(self.moves) / len(self.moves) if self.moves else 0.0,
        }


async def run(args: argparse.Namespace, options: dict[str, str]) -> dict[str, object]:
    budgets = Budgets(
        hint_seconds=args.budget_ms / 1000,
        hint_worlds=args.worlds,
        hint_world_nodes=args.world_nodes,
        hint_nodes=args.nodes,
        hint_deep_worlds=args.deep_worlds,
        hint_deep_nodes=args.deep_nodes,
        hint_two_deck_worlds=args.two_deck_worlds,
        hint_two_deck_nodes=args.two_deck_nodes,
    )
    arms = [Arm(name, budgets) for name in args.arms.split(",")]
    solvings = [Solving(arm.budgets) for arm in arms]
    started = time.perf_counter()
    done = 0
    try:
        for k in range(args.deals):
            seed = args.start_seed + k
            for arm, solving in zip(arms, solvings):
                outcome, n, home = await play(
                    solving, arm.name, args.variant, options, seed, args.max_moves, arm.times_ms, arm.cpu_ms
                )
                arm.outcomes[outcome] += 1
                arm.moves.append(n)
                arm.home.append(home)
                if args.progress:
                    done = k + 1
                    lo, hi = wilson(arm.outcomes["won"], done)
                    print(
                        f"{arm.name} seed {seed}: {outcome} in {n} moves, {home} cards home; "
                        f"{arm.outcomes['won']}/{done} won [{lo:.3f}, {hi:.3f}], "
                        f"{time.perf_counter() - started:.0f} s",
                        file=sys.stderr,
                        flush=True,
                    )
            done = k + 1
            if args.json:  # after every deal, so a run stopped early still leaves its figures
                args.json.write_text(json.dumps(result_of(args, options, arms, done, started), indent=2))
    finally:
        for solving in solvings:
            solving.close()
    return result_of(args, options, arms, done, started)


def result_of(
    args: argparse.Namespace, options: dict[str, str], arms: list[Arm], done: int, started: float
) -> dict[str, object]:
    return {
        "variant": args.variant,
        "options": options,
        "deals": done,
        "start_seed": args.start_seed,
        "arms": [arm.summary(args, done) for arm in arms],
        "seconds": time.perf_counter() - started,
        "budgets": {
            "hint_ms": args.budget_ms,
            "worlds": args.worlds,
            "world_nodes": args.world_nodes,
            "nodes": args.nodes,
            "deep_worlds": args.deep_worlds,
            "deep_nodes": args.deep_nodes,
            "two_deck_worlds": args.two_deck_worlds,
            "two_deck_nodes": args.two_deck_nodes,
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
        help="rules option (repeatable); for Klondike the published rules' options are the default",
    )
    parser.add_argument("--arms", default="service", help="comma-separated: service, look-ahead")
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
    parser.add_argument("--two-deck-worlds", type=int, default=defaults.hint_two_deck_worlds)
    parser.add_argument("--two-deck-nodes", type=int, default=defaults.hint_two_deck_nodes)
    parser.add_argument("--max-moves", type=int, default=1000)
    parser.add_argument("--cpu", type=int, default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--progress", action="store_true")
    args = parser.parse_args()
    if any(
        a not in ("service", "look-ahead") and not re.fullmatch(r"service(:\d+){2,3}", a)
        for a in args.arms.split(",")
    ):
        parser.error(f"--arms {args.arms!r}: service, service:W:N[:T], look-ahead")
    options = dict(PUBLISHED_RULES) if args.variant == "klondike" else {}
    options.update(kv.split("=", 1) for kv in args.option)
    core = pin_to_one_core(args.cpu)
    result = asyncio.run(run(args, options))
    result.update(
        {"compiled_solver": HAVE_C, "cpu": core, "python": platform.python_version(), "load": os.getloadavg()}
    )
    print(f"{args.variant} {options}, seeds {args.start_seed}..{args.start_seed + result['deals'] - 1}:")  # type: ignore[operator]
    for arm in result["arms"]:  # type: ignore[attr-defined]
        lo, hi = arm["wilson95"]
        print(
            f"  {arm['arm']}: {arm['won']}/{arm['deals']} won = {100 * arm['win_rate']:.1f} % "
            f"(95 % Wilson {100 * lo:.1f}–{100 * hi:.1f}); lost {arm['lost']}, stuck {arm['stuck']}; "
            f"mean cards home {arm['mean_cards_home']:.1f}"
        )
        print(
            f"    {arm['hints']} hints: p50 {arm['hint_p50_ms']:.1f} ms, p99 {arm['hint_p99_ms']:.1f} ms, "
            f"max {arm['hint_max_ms']:.1f} ms, over budget {arm['hints_over_budget']}; CPU p50 "
            f"{arm['hint_cpu_p50_ms']:.1f} ms, p99 {arm['hint_cpu_p99_ms']:.1f} ms, max "
            f"{arm['hint_cpu_max_ms']:.1f} ms"
        )
    print(f"  {result['seconds']:.0f} s; load {result['load']}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
