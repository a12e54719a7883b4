"""bench/hostile.py's attacker clients reach the server from their own loopback addresses.

The benchmark's rows mean something only if the server sees the attacker and the honest client
as different clients (per-client limits key on the peer's IP address), and if an attacker that
leaves closes its connections (row 1 counts what the server still holds afterwards). gRPC's
Python client cannot bind a channel's source address, so the bench relays each attacker client
through a TCP relay that connects from 127.0.0.N: these tests hold the relay to both, with real
sockets.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "hostile.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_hostile", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up there)
    spec.loader.exec_module(module)
    return module


async def test_each_relay_connects_from_its_own_address_and_closes_with_its_client(bench: ModuleType) -> None:
    seen: list[str] = []
    closed = asyncio.Event()

    async def upstream(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(writer.get_extra_info("peername")[0])
        writer.write(await reader.readexactly(5))  # an echo: bytes go both ways
        await writer.drain()
        if await reader.read() == b"":  # EOF: the relay closed its side when the client left
            closed.set()
        writer.close()

    server = await asyncio.start_server(upstream, "127.0.0.1", 0)
    target = ("127.0.0.1", server.sockets[0].getsockname()[1])
    writers: set[asyncio.StreamWriter] = set()
    relays = []
    try:
        for i in range(3):
            relay, port = await bench.start_relay(target, bench.source_address(i), writers)
            relays.append(relay)
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"hello")
            assert await asyncio.wait_for(reader.readexactly(5), 10) == b"hello"
            if i == 0:
                writer.close()
                await asyncio.wait_for(closed.wait(), 10)
        assert seen == ["127.0.0.2", "127.0.0.3", "127.0.0.4"]  # 127.0.0.1 is the honest client's
    finally:
        for relay in relays:
            relay.close()
        for w in list(writers):
            w.close()
        server.close()
