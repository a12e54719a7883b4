"""bench/solver.py replays every WON line through the engine and reports one that does not win.

A benchmark's win rate is only worth its lines: a search that answered WON with a line the
engine refuses (or one that stops short of the win) must not count quietly as a win.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from accordion.engine import new_game
from accordion.solver import solve

BENCH = Path(__file__).resolve().parents[2] / "bench" / "solver.py"
KLONDIKE = ("klondike", {"open": "true", "partial_runs": "true", "foundation_return": "true"})


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_solver", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def unpinned() -> Iterator[None]:
    """The bench pins its process to one core; the test process gets its cores back."""
    cores = os.sched_getaffinity(0)
    yield
    os.sched_setaffinity(0, cores)


def won_line(variant: str, options: dict[str, str]) -> tuple[int, tuple[Any, ...]]:
    """(seed, moves) of the first deal from seed 0 the solver wins."""
    for seed in range(20):
        result = solve(new_game(variant, options, seed=seed), max_nodes=300_000)
        if result.won:
            return seed, result.moves
    raise AssertionError(f"no {variant} deal won in 20 seeds")


def test_a_won_line_replays_and_a_truncated_or_corrupted_one_does_not(bench: ModuleType) -> None:
    variant, options = KLONDIKE
    seed, moves = won_line(variant, options)
    assert bench.replay_failure(new_game(variant, options, seed=seed), moves) is None
    # One move short of the win: every move is legal, the game is not won.
    why = bench.replay_failure(new_game(variant, options, seed=seed), moves[:-1])
    assert why is not None and "not won" in why, why
    # A line with a move taken out of its place: the engine refuses a move on the way.
    why = bench.replay_failure(new_game(variant, options, seed=seed), moves[1:])
    assert why is not None and why.startswith("move "), why


def test_a_line_that_does_not_replay_is_counted_and_fails_the_run(
    bench: ModuleType,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    unpinned: None,
) -> None:
    """A solver whose WON lines stop one move short: the run says so, counts each in the JSON and exits 1."""
    real_solve = bench.solve

    def short_lines(*args: Any, **kwargs: Any) -> Any:
        result = real_solve(*args, **kwargs)
        return dataclasses.replace(result, moves=result.moves[:-1]) if result.won else result

    monkeypatch.setattr(bench, "solve", short_lines)
    out = tmp_path / "out.json"
    argv = [
        "--variant",
        "accordion",
        "--deals",
        "3",
        "--budget-ms",
        "0",
        "--max-nodes",
        "100000",
        "--json",
        str(out),
    ]
    assert bench.main(argv) == 1
    row = json.loads(out.read_text())["results"][0]
    assert row["won_pct"] > 0 and row["replay_failed"] == row["replayed"] == round(3 * row["won_pct"] / 100)
    assert [f["seed"] for f in row["replay_failures"]]
    assert "REPLAY FAILED: accordion seed" in capsys.readouterr().err
    # The same run with the real lines: every one replays, exit 0.
    monkeypatch.setattr(bench, "solve", real_solve)
    assert bench.main(argv) == 0
    row = json.loads(out.read_text())["results"][0]
    assert row["replay_failed"] == 0 and row["replayed"] > 0
