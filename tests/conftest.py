"""Shared fixtures: a real redis-server for the session, and stores over both backends.

Subdirectories add their own fixtures in their own conftest.py; these are the common ones.
``from redis_server import RedisServer`` works in any test (this directory is on sys.path).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from accordion.store import GameStore, open_store
from redis_server import RedisServer

BACKENDS = ["memory", "redis"]


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """One private redis-server for the whole run (never port 6379)."""
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The session server's URL, running (restarted if a test stopped it) and flushed."""
    redis_server.flush()  # starts it again if a previous test left it stopped or killed
    return redis_server.url


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest) -> str:
    """``"memory://"`` or a flushed Redis URL, for code that opens its own store."""
    if request.param == "memory":
        return "memory://"
    return str(request.getfixturevalue("redis_url"))


@pytest.fixture(params=BACKENDS)
async def store(request: pytest.FixtureRequest) -> AsyncIterator[GameStore]:
    """An opened store of each backend (Redis flushed first); closed afterwards."""
    url = "memory://" if request.param == "memory" else str(request.getfixturevalue("redis_url"))
    opened = open_store(url)
    await opened.ping()
    try:
        yield opened
    finally:
        await opened.close()


# --- running in parallel (pytest-xdist, `make test`: -n 4, and the serial tests beside) ----------
#
# `make test` runs `pytest -n 4 -m "not serial"` and, beside it, `pytest -m serial`. Four workers
# on two cores pay because most tests wait on a server, Redis or a subprocess. Two rules decide where a
# test runs (xdist's `--dist loadgroup` broke with pytest 9 here, hence this small scheduler):
# * a module whose tests share a module-scoped fixture (a server, a cluster, a built page) runs
#   whole on one worker, so the fixture is made once; any other test is a unit of its own;
# * the long units go out first (LONG_FIRST), so the run does not end waiting on one of them.
# Tests that start many processes and kill them, or run at a rate, are marked `serial`: they run
# one at a time, beside the parallel phase (they mostly wait: 60 s of CPU in 3 minutes), not
# after it; none of them needs an idle machine.

# Directories run whole, in the order collected, on one worker: tests/web's later modules serve
# the page that test_browser.py builds (clients/web/dist; a stand-in without /docs/ otherwise).
WHOLE_DIRECTORIES = ("tests/web/",)

# Modules (or each module of a directory: a prefix ending in "/") run whole on one worker: those
# with module-scoped fixtures. pytest_collection_modifyitems checks that none is missing.
WHOLE_MODULES = (
    "tests/rest/",
    "tests/chat/",  # a Synapse, a game service and the bot per module (issue 33)
    "tests/security/",
    "tests/faults/test_wait.py",
    "tests/faults/test_cluster_store.py",
    "tests/solver/test_bench_replay.py",
    "tests/ops/test_bench_hostile.py",
)

# Node-id prefixes of the longest tests (seconds on a loaded 2-core machine, `--durations`; CPU
# seconds, tests/cpu_usage.py; docs/performance/test-suite.md), longest first: they start first. A prefix may
# be a module or a test.
LONG_FIRST = (
    "tests/deploy/test_dockerfile.py::test_the_context_holds",  # `pip wheel` of the package
    "tests/clients/test_packages.py",  # `pip wheel` and `npm pack`, each installed fresh
    "tests/web/",  # `npm run build`, then headless Chromium
    "tests/clients/test_load_report.py",
    "tests/chat/",  # Synapse restarted twice, 429s waited out
    "tests/faults/test_fuzz.py",  # 1,500 requests per backend, the over-limit ones refused slowly
    "tests/store/test_memory_cap_process.py",  # 50,000 NewGames through a real server: 45 s of CPU
    "tests/security/test_hidden_information",  # 30 s of CPU, one unit (module fixture); no .py: its pieces
    # The solver's longest (CPU seconds): four-suit Spider's searches 15, the Klondike brute forces 9-12.
    "tests/solver/test_emperor_spider.py::test_won_lines_replay_to_a_win",
    "tests/solver/test_klondike.py::test_talon_dominance_keeps_every_verdict_of_the_brute_force",
    "tests/solver/test_klondike.py::test_a_time_budget_not_reached_changes_no_search",
    "tests/solver/test_klondike.py::test_restarts_with_the_full_moves_agree_and_change_the_search",
    "tests/api/test_processes.py",
    "tests/api/test_winnable_tableau.py",
    "tests/api/test_solver_cancel.py",
    "tests/workers/",
    "tests/rest/",
    "tests/security/",
)


def unit_of(nodeid: str) -> str:
    """The unit of work a test is scheduled in: its directory for WHOLE_DIRECTORIES, its module
    for WHOLE_MODULES, else itself."""
    module = nodeid.split("::", 1)[0]
    for directory in WHOLE_DIRECTORIES:
        if module.startswith(directory):
            return directory
    if any(module == m or (m.endswith("/") and module.startswith(m)) for m in WHOLE_MODULES):
        return module
    return nodeid


def _rank(nodeid: str) -> int:
    for i, prefix in enumerate(LONG_FIRST):
        if nodeid.startswith(prefix):
            return i
    return len(LONG_FIRST)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Long tests first (a stable sort: otherwise the order collected), and a check that every
    module with a module-scoped fixture runs whole (else each worker would make its own)."""
    items.sort(key=lambda item: _rank(item.nodeid))
    split = sorted(
        {
            item.nodeid.split("::", 1)[0]
            for item in items
            if unit_of(item.nodeid) == item.nodeid and _shares_a_fixture(item)
        }
    )
    if split:
        raise pytest.UsageError(
            f"tests/conftest.py: add {split} to WHOLE_MODULES: they use a module- or class-scoped fixture"
        )


def _shares_a_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(
        d.scope in ("module", "class", "package") for defs in info.name2fixturedefs.values() for d in defs
    )


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's scope scheduling with unit_of as the scope, in the order collected (LONG_FIRST)."""
    from xdist.scheduler import LoadScopeScheduling

    class UnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    config.option.loadscopereorder = False  # (by size otherwise: the long-first order would be lost)
    return UnitScheduling(config, log)
