"""Win rates by policy beside the odds the seeds quote (a benchmark, not a test).

    .venv/bin/python bench/odds.py [--games 1000] [--policy random greedy] [--variant ...] [--json F]

Each variant plays games with seeds 0..N-1 under each policy:
  random  a uniformly random legal move (a per-game generator seeded from the deal seed)
  greedy  forced greedy play: the engine's hint (accordion.engine.hint.suggest), which makes
          the visible move that scores most and leaves most visible moves, and deals or
          redeals only when nothing else is legal
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))

from accordion.engine import Game, Move, Status, all_variants, new_game  # noqa: E402
from accordion.engine.hint import suggest  # noqa: E402
from accordion.engine.rng import SplitMix64  # noqa: E402

# What the seeds say (seed 000 unless noted).
QUOTED = {
    "accordion": "~1 % (Morehead & Mott-Smith, seed 002)",
    "compacted": "~0.05 %",
    "royal-marriage": "~19 %",
    "push-pin": "~0.05 %",
    "double-jump": "~0.04 %",
    "french": "~0.5 %",
}


def random_policy(game: Game, gen: SplitMix64) -> Move:
    legal = game.legal_moves()
    return legal[gen.below(len(legal))]


def greedy_policy(game: Game, gen: SplitMix64) -> Move:
    move = suggest(game)
    assert move is not None
    return move


POLICIES: dict[str, Callable[[Game, SplitMix64], Move]] = {"random": random_policy, "greedy": greedy_policy}


def play(variant: str, seed: int, policy: Callable[[Game, SplitMix64], Move]) -> Game:
    game = new_game(variant, seed=seed)
    gen = SplitMix64(seed ^ 0x5DEECE66D)
    while game.legal_moves():
        game.play(policy(game, gen))
    return game


def run(variant: str, policy: str, games: int) -> dict[str, object]:
    start = time.perf_counter()
    results = [play(variant, seed, POLICIES[policy]) for seed in range(games)]
    won = sum(g.status is Status.WON for g in results)
    return {
        "variant": variant, "policy": policy, "games": games, "won": won,
        "win_pct": round(100 * won / games, 3),
        "mean_penalty": round(statistics.mean(g.penalty for g in results), 1),
        "threshold_met": sum(g.threshold_met for g in results),
        "seconds": round(time.perf_counter() - start, 1),
        "quoted": QUOTED.get(variant, ""),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--policy", nargs="+", default=list(POLICIES), choices=list(POLICIES))
    parser.add_argument("--variant", nargs="+", default=sorted(v.id for v in all_variants()))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = [run(v, p, args.games) for v in args.variant for p in args.policy]
    print(f"| variant | policy | games | won | win % | mean penalty | quoted odds |")
    print(f"| --- | --- | ---: | ---: | ---: | ---: | --- |")
    for r in rows:
        print(f"| {r['variant']} | {r['policy']} | {r['games']} | {r['won']} | {r['win_pct']} | "
              f"{r['mean_penalty']} | {r['quoted']} |", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
