"""Shared fixtures: a real redis-server for the session, and stores over both backends.

Subdirectories add their own fixtures in their own conftest.py; these are the common ones.
``from redis_server import RedisServer`` works in any test (this directory is on sys.path).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

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
