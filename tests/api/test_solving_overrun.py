"""A Solve whose search overran its budget a little still answers with that search (issue 13).

On a loaded machine a search stops a few milliseconds after its budget (it looks at the clock
every 1024 positions, and its thread waits for a core); the call used to drop such an answer
as if the search had never left the queue ("UNKNOWN, 0 ms, queued"), which is what failed
tests/api/test_solver_cancel.py in CI ([0, 0, 4, 904] ms searched). Only a call still queued
when its budget is spent is dropped (``NotStarted``: DEADLINE_EXCEEDED), and it never starts.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from accordion import engine, solver
from accordion.api import solving
from accordion.api.fairpool import NotStarted
from accordion.api.solving import Budgets, Solving

LATE = 0.15  # seconds past its budget the stand-in search answers: well past the queue's 5 % + 10 ms


def overrunning_search(started: list[float]) -> Any:
    def search(
        state: engine.State,
        rules: engine.Rules,
        *,
        answer_by: float,
        max_nodes: int | None,
        stop: solver.StopFlag,
    ) -> solver.SolveResult:
        started.append(time.monotonic())
        time.sleep(max(0.0, answer_by - time.monotonic()) + LATE)
        return solver.SolveResult(solver.Outcome.UNKNOWN, (), 12345, 0.25, "stack-dfs", "c")

    return search


@pytest.fixture
def one_worker() -> Any:
    pool = Solving(Budgets(threads=1))
    yield pool
    pool.close()


async def test_a_search_that_overran_its_budget_still_answers(
    one_worker: Solving, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[float] = []
    monkeypatch.setattr(solving, "_solve_until", overrunning_search(started))
    game = engine.new_game("accordion", seed=1)
    answer = await one_worker.solve(game, max_seconds=0.1, max_nodes=None)
    assert started and answer.result.nodes == 12345 and answer.result.method == "stack-dfs", answer.result


async def test_a_call_still_queued_past_its_budget_never_starts(
    one_worker: Solving, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[float] = []
    monkeypatch.setattr(solving, "_solve_until", overrunning_search(started))
    release = threading.Event()

    def busy(*, stop: solver.StopFlag) -> None:
        release.wait(5)

    # The one worker is busy, with another client's search (a client's own would queue it too).
    blocker = asyncio.ensure_future(one_worker._run(one_worker._solve_pool, "another client", busy))
    while one_worker._solve_pool.running == 0:  # counted as soon as the task has run once
        await asyncio.sleep(0)
    try:
        with pytest.raises(NotStarted):  # the service answers DEADLINE_EXCEEDED
            await one_worker.solve(engine.new_game("accordion", seed=2), max_seconds=0.1, max_nodes=None)
    finally:
        release.set()
        await blocker
    time.sleep(0.05)
    assert not started, "a call dropped from the queue started searching afterwards"
