"""Emperor's own passes (docs/solver.md, "Emperor"): restarts, beams, the full-move beam, each against
the recorded results. The shared checks (replays, brute force, recorded results) are
test_emperor_spider.py's."""

from __future__ import annotations

import pytest

from accordion.engine import Game
from accordion.engine.moves import DRAW, Zone, transfer
from accordion.engine.tableau import DOWN, FOUNDATIONS, TABLEAU, WASTE
from accordion.solver.emperor import adapter as emperor_family

from .helpers import (
    open_game,
    replay,
)
from .recorded import check_recorded

HAVE_CORE = emperor_family.CORE is not None
needs_cores = pytest.mark.skipif(not HAVE_CORE, reason="the compiled core is not built")


# --- Emperor's restarts (docs/solver.md, "Emperor") ------------------------------------------


def emperor_args(game: Game) -> tuple[list[bytes], list[int], list[int], bytes, int]:
    """The position as the Emperor cores take it (as ``solver.core`` hands it over)."""
    state = game.state
    waste = WASTE.get(state)
    return (
        [bytes(p) for p in TABLEAU.get(state)],
        list(DOWN.get(state)),
        [len(f) for f in FOUNDATIONS.get(state)],
        bytes(waste) + bytes(state.stock),
        len(waste),
    )


# Small passes, so that the restarts, the noise and the full-move restarts all run within a budget
# that keeps these tests quick (no beams: they would take the quick passes' share).
SMALL_PASSES = {"quick_nodes": 3_000, "restart_nodes": 1_000, "quick_total": 25_000, "beam_first": 0}


@needs_cores
def test_emperor_restart_wins_what_one_pass_does_not() -> None:
    """Seed 103: no win in 60,000 positions without restarts (the first pass, then the full
    search), a win found by a restart with its move order shaken; the core gives the
    recorded line and node count, and the line replays through the engine."""
    from accordion.solver.emperor import _cemperor

    game = open_game("emperor", {}, 103)
    plain = _cemperor.emperor_solve(
        *emperor_args(game), max_nodes=60_000, **{**SMALL_PASSES, "quick_total": 0}
    )
    assert plain[0] == 0  # UNKNOWN
    c = _cemperor.emperor_solve(*emperor_args(game), max_nodes=60_000, **SMALL_PASSES)
    check_recorded("emperor-seed103-restart", *c)
    assert c[0] == 1
    assert SMALL_PASSES["quick_nodes"] < c[2] < SMALL_PASSES["quick_total"]  # in a restart
    replay_core_line(game, c[1])


def replay_core_line(game: Game, line: list[tuple[int, int, int, int, int]]) -> None:
    """Plays a core's primitive moves (src_zone, src, dst_zone, dst, count) through the engine."""
    zones = (Zone.TABLEAU, Zone.FOUNDATION, Zone.STOCK, Zone.WASTE)  # the cores' zone numbers
    replay(
        game,
        tuple(
            DRAW if src_zone == 2 else transfer(zones[src_zone], src, zones[dst_zone], dst, count)
            for src_zone, src, dst_zone, dst, count in line
        ),
    )


@needs_cores
@pytest.mark.parametrize("seed", [0, 39, 224])
def test_emperor_restarts_give_the_recorded_results(seed: int) -> None:
    """The core through the whole schedule (first pass, shaken restarts with and without the
    cut, the full search): the recorded outcome, line and nodes."""
    from accordion.solver.emperor import _cemperor

    game = open_game("emperor", {}, seed)
    c = _cemperor.emperor_solve(*emperor_args(game), max_nodes=30_000, **SMALL_PASSES)
    check_recorded(f"emperor-seed{seed}-restarts", *c)


@needs_cores
@pytest.mark.parametrize("seed", [1, 100004])
def test_emperor_beam_wins_what_the_passes_do_not(seed: int) -> None:
    """Seeds 1 and 100004: no win in 60,000 positions without the beams (the quick passes and the
    full search), a win by a beam (16, then 32, ... wide) in the same budget, within the beams'
    share (three quarters of it: the restarts come after); the core gives the recorded line and
    node count, and the line replays."""
    from accordion.solver.emperor import _cemperor

    game = open_game("emperor", {}, seed)
    passes = _cemperor.emperor_solve(*emperor_args(game), max_nodes=60_000, beam_first=0)
    assert passes[0] == 0  # UNKNOWN
    c = _cemperor.emperor_solve(*emperor_args(game), max_nodes=60_000)
    check_recorded(f"emperor-seed{seed}-beam", *c)
    assert c[0] == 1
    assert c[2] <= 45_000
    replay_core_line(game, c[1])


@needs_cores
def test_emperor_full_move_beam_wins() -> None:
    """Seed 118: the first beam (16 wide, over the cut's moves) runs dry at 7,965 positions, the
    beam over the full search's moves that follows it wins, at 31,732 positions (seen with a
    print in sched_beam when the needed-soon worth came in); the core gives the recorded result
    and the line replays."""
    from accordion.solver.emperor import _cemperor

    game = open_game("emperor", {}, 118)
    c = _cemperor.emperor_solve(*emperor_args(game), max_nodes=60_000)
    check_recorded("emperor-seed118-full-move-beam", *c)
    assert c[0] == 1
    assert c[2] == 31_732
    replay_core_line(game, c[1])


@needs_cores
@pytest.mark.parametrize("seed", [0, 39, 224])
def test_emperor_beams_then_restarts_give_the_recorded_results(seed: int) -> None:
    """The core through the whole schedule with beams (16, 32, 64 wide, each over the cut's
    moves then the full ones; then the first pass, the restarts and the full search): the
    recorded outcome, line and nodes."""
    from accordion.solver.emperor import _cemperor

    game = open_game("emperor", {}, seed)
    passes = {**SMALL_PASSES, "beam_first": 16, "beam_last": 64}
    c = _cemperor.emperor_solve(*emperor_args(game), max_nodes=30_000, **passes)
    check_recorded(f"emperor-seed{seed}-beams-restarts", *c)
