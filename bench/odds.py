"""Win rates by policy beside the odds the seeds quote (a benchmark, not a test).

    .venv/bin/python bench/odds.py [--games 1000] [--policy random greedy] [--variant ...] [--json F]

A variant is an id, or an id with options: ``spider:suits=2``,
``klondike:partial_runs=true,foundation_return=true``.
Each variant plays games with seeds 0..N-1 under each policy:
  random  a uniformly random legal move (a per-game generator seeded from the deal seed)
  greedy  forced greedy play: the engine's hint (accordion.engine.hint.suggest), which makes
          the visible move that scores most and leaves most visible moves, and deals or
          redeals only when nothing else is legal; in a tableau game it judges the zones the
          player is shown (accordion.engine.tableau_hint), so neither policy ever sees a
          face-down card or the stock's order

Some tableau games never run out of moves (a card can go back and forth): there greedy play
never makes a move back to a view it has left, and resigns (LOST, its penalty stands) when
every move would; any tableau game still on after MAX_MOVES moves is resigned. A tableau game
counts as won once every card is home (a safety net: every game ends WON then, Klondike with
``foundation_return`` included since it stopped listing moves back off full foundations).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))

from accordion.engine import RESIGN, Game, Move, PileView, Status, Transfer, Zone, all_variants, new_game  # noqa: E402
from accordion.engine.cards import RANK, SUIT  # noqa: E402
from accordion.engine.hint import suggest, visible_move  # noqa: E402
from accordion.engine.rng import SplitMix64  # noqa: E402
from accordion.engine.tableau import RED  # noqa: E402

MAX_MOVES = 1500

# What the seeds say (seed 000 unless noted), and the published figures the spec names.
QUOTED = {
    "accordion": "~1 % (Morehead & Mott-Smith, seed 002)",
    "compacted": "~0.05 %",
    "royal-marriage": "~19 %",
    "push-pin": "~0.05 %",
    "double-jump": "~0.04 %",
    "french": "~0.5 %",
    "klondike": "81.956 % ± 0.096 with every card known, under other rules (next rows)",
    "klondike:partial_runs=true,foundation_return=true": (
        "81.956 % ± 0.096 (Blake & Gent 2019, Solvitaire: these rules, draw 3, unlimited passes, every card "
        "known)"
    ),
    "klondike-draw-one": "about 91.9 % with every card known (spec: Solvitaire, lonelybot, Klondike-Solver)",
    "klondike-draw-one:partial_runs=true,foundation_return=true": "about 91.9 % (thoughtful, these rules)",
}


# A policy picks a move from the game, a generator and the views already left (tableau
# games), or None to resign.
Policy = Callable[[Game, SplitMix64, set[object]], Move | None]


def random_policy(game: Game, gen: SplitMix64, seen: set[object]) -> Move | None:
    legal = game.legal_moves()
    return legal[gen.below(len(legal))]


def greedy_policy(game: Game, gen: SplitMix64, seen: set[object]) -> Move | None:
    """The hint; in a tableau game the best-valued move that is not a mere shuffle (``shuffles``)
    and whose resulting view is new (a view seen again would start a cycle), shuffles only when
    nothing else is left, or None when every move leads back. Asking whether a view is new
    tells nothing hidden: a move that turns up a card or draws always makes a new one (fewer
    cards face down or in the stock than ever before), whatever the card."""
    if game.rules.family != "tableau":
        return suggest(game)
    rules, state = game.rules, game.state
    tableau, foundations = (z.piles for z in game.zones()[:2])
    legal = game.legal_moves()
    shuffling = [m for m in legal if shuffles(game.variant.id, m, tableau, foundations)]
    for moves in ([m for m in legal if m not in shuffling], shuffling):
        while moves:
            move = visible_move(rules, state, tuple(moves))
            if rules.zones(rules.apply(state, move)) not in seen:
                return move
            moves.remove(move)
    return None


def shuffles(
    variant: str, move: Move, tableau: tuple[PileView, ...], foundations: tuple[PileView, ...]
) -> bool:
    """Whether ``move`` only carries face-up cards from one place they build on to another (or a
    whole pile from space to space), judged from the player's view: it turns nothing up, frees
    no card for the foundations and, in Spider, does not trade a build in another suit for one
    in its own suit."""
    if (
        not isinstance(move, Transfer)
        or move.src_zone is not Zone.TABLEAU
        or move.dst_zone is not Zone.TABLEAU
    ):
        return False
    shown, target = tableau[move.src].cards, tableau[move.dst].cards
    if move.count >= len(shown):  # the whole face-up part: it turns a card up or empties the pile
        return not tableau[move.src].face_down and not target
    under, deepest = shown[-move.count - 1], shown[-move.count]
    any_suit = variant in ("spider", "streets-and-alleys")
    if not (RANK[under] == RANK[deepest] + 1 and (any_suit or RED[under] != RED[deepest])):
        return False  # it does not sit on a card it builds on
    if variant == "spider" and target and SUIT[target[-1]] == SUIT[deepest] != SUIT[under]:
        return False
    return not any(
        (not f.cards and RANK[under] == 1) or (f.cards and f.cards[-1] + 1 == under and RANK[under] > 1)
        for f in foundations
    )


POLICIES: dict[str, Policy] = {"random": random_policy, "greedy": greedy_policy}


def parse_variant(spec: str) -> tuple[str, dict[str, str]]:
    """``spider:suits=2`` → ("spider", {"suits": "2"})."""
    name, _, opts = spec.partition(":")
    return name, dict(kv.split("=", 1) for kv in opts.split(",") if kv)


def play(spec: str, seed: int, policy: Policy) -> Game:
    name, options = parse_variant(spec)
    game = new_game(name, options, seed=seed)
    gen = SplitMix64(seed ^ 0x5DEECE66D)
    tableau = game.rules.family == "tableau"
    seen: set[object] = set()  # the views of a tableau game left so far
    while game.legal_moves() and not (tableau and game.threshold_met):  # all home: nothing more to play for
        if tableau:
            seen.add(game.zones())
        move = policy(game, gen, seen) if not tableau or game.move_count < MAX_MOVES else None
        game.play(RESIGN if move is None else move)
    return game


class Outcome(NamedTuple):
    """What a finished game leaves for the table (not the game: its history is large)."""

    won: bool
    penalty: int
    threshold_met: bool
    resigned: bool
    moves: int


def outcome(game: Game) -> Outcome:
    won = game.status is Status.WON or (game.rules.family == "tableau" and game.threshold_met)
    return Outcome(won, game.penalty, game.threshold_met, game.resigned, game.move_count)


def run(spec: str, policy: str, games: int) -> dict[str, object]:
    start = time.perf_counter()
    results = [outcome(play(spec, seed, POLICIES[policy])) for seed in range(games)]
    won = sum(g.won for g in results)
    return {
        "variant": spec,
        "policy": policy,
        "games": games,
        "won": won,
        "win_pct": round(100 * won / games, 3),
        "mean_penalty": round(statistics.mean(g.penalty for g in results), 1),
        "threshold_met": sum(g.threshold_met for g in results),
        "resigned": sum(g.resigned for g in results),
        "mean_moves": round(statistics.mean(g.moves for g in results), 1),
        "seconds": round(time.perf_counter() - start, 1),
        "quoted": QUOTED.get(spec, ""),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--policy", nargs="+", default=list(POLICIES), choices=list(POLICIES))
    parser.add_argument("--variant", nargs="+", default=sorted(v.id for v in all_variants()))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    print("| variant | policy | games | won | win % | mean penalty | resigned | mean moves | quoted odds |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    rows = []
    for v in args.variant:
        for p in args.policy:
            r = run(v, p, args.games)
            rows.append(r)
            print(
                f"| {r['variant']} | {r['policy']} | {r['games']} | {r['won']} | {r['win_pct']} | "
                f"{r['mean_penalty']} | {r['resigned']} | {r['mean_moves']} | {r['quoted']} |",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
