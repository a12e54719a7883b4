"""Engine throughput: legal-moves, apply and play+undo, per call, on full 52- and 104-card rows
and on tableau games in mid-play.

    .venv/bin/python bench/engine.py [--deals 200] [--json out.json] [--variants all] [--tree DIR]

For each of N seeded deals the row is fully dealt (52 cards; 104 for Push Pin; a game
dealt from the stock is dealt until one card is left in it, so the game is still on).
Each operation is timed over a batch of repeats on that position; the figure per
deal is the batch mean, and the table gives the median and p90 over the deals.
Target (issue 2): median legal-moves call on a full 52-card row under 20 µs.

A tableau game (Klondike, Streets and Alleys, Wish …) is measured after 30 seeded random moves
(fewer if it would end), a position in mid-play; its "row" column gives its tableau piles.
Target (issue 12): median legal-moves call on a Klondike deal at most 30 µs.

``--variants all`` measures every registered variant; ``--tree DIR`` imports the engine from
another checkout's ``service/`` (for an A/B of two trees: alternate the runs).
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path


def _tree() -> Path:
    """The checkout whose engine is measured: ``--tree DIR``, else this one."""
    if "--tree" in sys.argv:
        return Path(sys.argv[sys.argv.index("--tree") + 1]).resolve()
    return Path(__file__).resolve().parents[1]


sys.path.insert(0, str(_tree() / "service"))

from accordion.engine import Game, all_variants, new_game  # noqa: E402

CASES = [
    ("accordion", 52),
    ("relaxed-accordion", 52),
    ("royal-marriage", 52),
    ("concertina", 52),
    ("push-pin", 104),
    ("klondike", 52),
    ("klondike-draw-one", 52),
    ("streets-and-alleys", 52),
    ("wish", 32),
    ("spider", 104),
    ("emperor", 104),
]
MID_PLAY_MOVES = 30


def per_call_us(fn: Callable[[], object], repeats: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(repeats):
        fn()
    return (time.perf_counter_ns() - start) / repeats / 1000


def dealt(variant: str, seed: int) -> Game:
    """The seeded deal with its stock dealt out but for one card (DEAL is the last legal move)."""
    game = new_game(variant, seed=seed)
    if game.rules.family == "tableau":  # mid-play: seeded random moves, stopping before the end
        choose = random.Random(seed)
        for _ in range(MID_PLAY_MOVES):
            legal = game.legal_moves()
            move = choose.choice(legal) if legal else None
            if move is None or not game.rules.legal_moves(game.rules.apply(game.state, move)):
                break
            game.play(move)
        return game
    while len(game.state.stock) > 1 and "deal" in game.legal_texts():
        game.play("deal")
    return game


def measure(variant: str, deals: int, repeats: int) -> dict[str, object]:
    legal_us, apply_us, undo_us, moves_per_row = [], [], [], []
    for seed in range(deals):
        game = dealt(variant, seed)
        rules, state = game.rules, game.state
        legal = rules.legal_moves(state)
        # The closures below are timed at once, within their iteration (B023 does not apply).
        legal_us.append(per_call_us(lambda: rules.legal_moves(state), repeats))  # noqa: B023
        moves_per_row.append(len(legal))
        if not legal:
            continue
        move = legal[0]
        apply_us.append(per_call_us(lambda: rules.apply(state, move), repeats))  # noqa: B023

        def play_undo() -> None:
            game.play(move)  # noqa: B023
            game.undo()  # noqa: B023

        undo_us.append(per_call_us(play_undo, repeats))

    def summary(values: list[float]) -> dict[str, float]:
        values = sorted(values)
        return {
            "median_us": round(statistics.median(values), 2),
            "p90_us": round(values[int(0.9 * (len(values) - 1))], 2),
        }

    return {
        "variant": variant,
        "row": _piles(dealt(variant, 0)),
        "deals": deals,
        "mean_legal_moves": round(statistics.mean(moves_per_row), 1),
        "legal_moves": summary(legal_us),
        "apply": summary(apply_us),
        "play_and_undo": summary(undo_us),
    }


def _piles(game: Game) -> int:
    """The row's piles, or a tableau game's tableau piles."""
    zones = game.zones()
    return len(zones[0].piles) if zones else len(game.state.row)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--deals", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--variants", default="", help="comma-separated ids, or 'all' (default: the five rows above)"
    )
    parser.add_argument("--tree", type=Path, help="measure the engine of this checkout (read before parsing)")
    args = parser.parse_args()
    if args.variants == "all":
        variants = [v.id for v in all_variants()]
    else:
        variants = args.variants.split(",") if args.variants else [v for v, _ in CASES]
    results = [measure(v, args.deals, args.repeats) for v in variants]
    print(
        f"python {platform.python_version()} ({platform.python_implementation()}), "
        f"{args.deals} deals x {args.repeats} repeats, per call (median / p90, µs); engine from {_tree()}"
    )
    print(f"{'variant':20} {'row':>4} {'moves':>6} {'legal_moves':>14} {'apply':>14} {'play+undo':>14}")
    for r in results:

        def cell(key: str) -> str:
            s = r[key]  # noqa: B023 (called within this iteration)
            return f"{s['median_us']:6.2f} /{s['p90_us']:6.2f}"  # type: ignore[index]

        print(
            f"{r['variant']:20} {r['row']:>4} {r['mean_legal_moves']:>6} "
            f"{cell('legal_moves'):>14} {cell('apply'):>14} {cell('play_and_undo'):>14}"
        )
    if args.json:
        args.json.write_text(json.dumps({"python": platform.python_version(), "results": results}, indent=1))


if __name__ == "__main__":
    main()
