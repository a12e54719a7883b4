"""Write the golden records of tableau games: ``python tests/sessions/make_stored_transfers.py``.

The file (stored_transfers.json) was made by the tree before the zone codes were declared once
(main at 55ac8bc: a transfer's zones in two bits each of its head byte) and is checked in;
test_stored_transfers.py fails if a record stored then stops loading to the same game. Never
regenerate it to make that test pass: add new cases beside the old ones.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

from accordion import engine
from accordion.engine.moves import MoveKind, Zone, transfer
from accordion.sessions import binary
from accordion.sessions.record import Stored

PATH = Path(__file__).with_name("stored_transfers.json")
# (variant, options, seed): every tableau family, every zone each one has.
GAMES = (
    ("klondike", {}, 3),
    ("klondike", {"draw": "1", "partial_runs": "true"}, 11),
    ("emperor", {}, 5),
    ("spider", {"suits": "2"}, 7),
    ("streets-and-alleys", {}, 13),
    ("wish", {}, 17),
)
MOVES = 150


def _game_case(variant: str, options: dict[str, str], seed: int) -> dict[str, object]:
    game = engine.new_game(variant, options, seed=seed)
    stored = Stored.new(game)
    rng = random.Random(seed)
    states = [game.state_string()]
    for _ in range(MOVES):
        legal = game.legal_moves()
        if legal and (rng.random() > 0.1 or not game.moves):
            moves = [m for m in legal if m.kind is MoveKind.MOVE] or legal
            stored.play(rng.choice(moves))
        elif game.moves:
            stored.undo()
        else:
            break
        states.append(game.state_string())
    return {
        "variant": variant,
        "options": options,
        "seed": seed,
        "version": stored.version,
        "data": stored.dump().hex(),
        "final": game.state_string(),
        "states_sha256": hashlib.sha256("\n".join(states).encode()).hexdigest(),
    }


def _event_cases() -> list[dict[str, object]]:
    """Every pair of zones, piles packed (both < 16) and not, one card and several."""
    cases = []
    for src_zone in Zone:
        for dst_zone in Zone:
            for src, dst, count in ((0, 3, 1), (2, 7, 5), (20, 1, 1), (3, 40, 13)):
                move = transfer(src_zone, src, dst_zone, dst, count)
                cases.append(
                    {
                        "move": [src_zone.value, src, dst_zone.value, dst, count],
                        "bytes": binary.encode_event(move).hex(),
                    }
                )
    return cases


def build() -> dict[str, object]:
    return {
        "about": "records of tableau games (a transfer's zones in two bits each) and each transfer's "
        "bytes, written by main at 55ac8bc; they must load to the same games and moves forever",
        "games": [_game_case(*g) for g in GAMES],
        "transfers": _event_cases(),
    }


if __name__ == "__main__":
    PATH.write_text(json.dumps(build(), indent=1) + "\n")
