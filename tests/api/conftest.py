"""Fixtures for end-to-end tests: real servers (in-process or subprocess) and real gRPC channels.

* ``start_server(store_url, **config)``: an in-process ``AccordionServer`` on a free port of
  127.0.0.1, stopped at teardown. ``served`` is one on the parametrized backend (``store_url``
  from tests/conftest.py: memory and a real redis-server).
* ``spawn_server(*args, env=...)``: the real ``accordion-server`` console script as a
  subprocess (tests/server_launcher.py: port 0, read from its banner; output kept).
* ``Client``: the generated stub plus the token metadata and a few shortcuts.
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import grpc.aio
import pytest

from accordion.config import Config
from accordion.server import AccordionServer
from accordion.v1 import accordion_pb2_grpc as pb_grpc
from server_launcher import START_TIMEOUT, ServerProcess, launch

from .helpers import Client


@pytest.fixture
async def connect() -> AsyncIterator[Callable[[str], Client]]:
    """``connect("127.0.0.1:port")`` → a Client on a fresh channel, closed at teardown."""
    channels: list[grpc.aio.Channel] = []

    def make(addr: str) -> Client:
        channel = grpc.aio.insecure_channel(addr)
        channels.append(channel)
        return Client(channel, pb_grpc.AccordionServiceStub(channel))

    yield make
    for ch in channels:
        await ch.close()


# --- in-process servers --------------------------------------------------------------------


@dataclass
class Running:
    server: AccordionServer
    addr: str


@pytest.fixture
async def start_server() -> AsyncIterator[Callable[..., Any]]:
    started: list[AccordionServer] = []

    async def start(store_url: str = "memory://", **overrides: Any) -> Running:
        config = replace(
            Config(
                listen="127.0.0.1:0",
                redis_url="" if store_url == "memory://" else store_url,
                health_interval=0.2,
                grace=1.0,
                newgame_rate=0,  # the suites make games from one address as fast as a load tool
                watch_rate=0,  # ... and open watches so
            ),
            **overrides,
        )
        server = AccordionServer(config)
        port = await server.start()
        started.append(server)
        return Running(server, f"127.0.0.1:{port}")

    yield start
    for server in started:
        await server.stop(grace=0)


@pytest.fixture
async def served(start_server: Callable[..., Any], store_url: str) -> Running:
    """An in-process server on each backend."""
    return await start_server(store_url)


@pytest.fixture
async def client(served: Running, connect: Callable[[str], Client]) -> Client:
    return connect(served.addr)


# --- subprocess servers -----------------------------------------------------------------------


@pytest.fixture
def spawn_server() -> Iterator[Callable[..., ServerProcess]]:
    procs: list[ServerProcess] = []
    tmp = tempfile.TemporaryDirectory(prefix="acc-server-")

    def spawn(*args: str, env: dict[str, str] | None = None, timeout: float = START_TIMEOUT) -> ServerProcess:
        sp = launch(Path(tmp.name), *args, env=env, timeout=timeout, name=str(len(procs)))
        procs.append(sp)
        return sp

    yield spawn
    for sp in procs:
        sp.close()
    tmp.cleanup()
