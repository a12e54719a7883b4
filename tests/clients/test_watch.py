"""``watch`` ends the same way in both clients: quietly when the caller stops it (leaving the
loop, closing the client), with a typed error when the server or the network ends it.

A stream the server cancels needs a server that does so on purpose: a gRPC server in this
process whose WatchGame sends one event and then ends the call with CANCELLED (real channels,
real HTTP/2; only the servicer is the test's).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest

from accordion_client import AccordionClient, AsyncAccordionClient, errors, pb
from accordion_client.v1 import accordion_pb2_grpc as pb_grpc
from tests.api.helpers import ServerProcess


class CancellingWatch(pb_grpc.AccordionServiceServicer):
    """GetGame answers a game; WatchGame sends one event, then cancels the call."""

    def GetGame(self, request: pb.GetGameRequest, context: grpc.ServicerContext) -> pb.GetGameResponse:
        return pb.GetGameResponse(game=pb.Game(id=request.game_id, variant="accordion", version=2))

    def WatchGame(self, request: pb.WatchGameRequest, context: grpc.ServicerContext) -> Iterator[Any]:
        yield pb.WatchGameResponse(event=pb.GameEvent(version=2, kind=pb.GameEvent.KIND_MOVE))
        context.abort(grpc.StatusCode.CANCELLED, "the server is going away")


@pytest.fixture
def cancelling_server() -> Iterator[str]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    pb_grpc.add_AccordionServiceServicer_to_server(CancellingWatch(), server)  # type: ignore[abstract]
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(0)


def test_a_stream_the_server_cancels_raises_in_the_blocking_client(cancelling_server: str) -> None:
    with AccordionClient(cancelling_server) as client:
        game = client.open_game("A" * 22, "token")
        seen: list[int] = []
        with pytest.raises(errors.Cancelled) as cancelled:
            for event in game.watch():
                seen.append(event.version)
    assert seen == [2] and cancelled.value.code == grpc.StatusCode.CANCELLED
    assert cancelled.value.message == "the server is going away"


async def test_a_stream_the_server_cancels_raises_in_the_async_client(cancelling_server: str) -> None:
    async with AsyncAccordionClient(cancelling_server) as client:
        game = await client.open_game("A" * 22, "token")
        seen: list[int] = []
        with pytest.raises(errors.Cancelled) as cancelled:
            async for event in game.watch():
                seen.append(event.version)
    assert seen == [2] and cancelled.value.message == "the server is going away"


def test_closing_the_blocking_client_ends_a_watch_quietly(server: ServerProcess) -> None:
    client = AccordionClient(server.addr)
    game = client.new_game(seed=7)
    outcome: dict[str, Any] = {}

    def watch() -> None:
        try:
            outcome["versions"] = [e.version for e in game.watch()]
        except Exception as exc:  # the test reports it below
            outcome["error"] = exc

    watcher = threading.Thread(target=watch)
    watcher.start()
    time.sleep(0.3)
    game.play("10D>4D")
    deadline = time.monotonic() + 30  # polled: generous for a loaded machine
    while time.monotonic() < deadline and watcher.is_alive():
        client.close()  # once the move's event is through, or at once: either way a quiet end
        watcher.join(0.2)
    assert not watcher.is_alive()
    assert "error" not in outcome, outcome
    assert outcome["versions"] in ([], [2])


async def test_closing_the_async_client_ends_a_watch_quietly(server: ServerProcess) -> None:
    client = AsyncAccordionClient(server.addr)
    game = await client.new_game(seed=7)
    seen: list[int] = []
    moved = asyncio.Event()

    async def watch() -> None:
        async for event in game.watch():
            seen.append(event.version)
            moved.set()

    watcher = asyncio.create_task(watch())
    await asyncio.sleep(0.1)
    await game.play("10D>4D")
    await asyncio.wait_for(moved.wait(), 5)
    await client.close()
    await asyncio.wait_for(watcher, 5)  # ends without an exception
    assert seen == [2]


async def test_cancelling_the_callers_task_still_cancels_it(server: ServerProcess) -> None:
    async with AsyncAccordionClient(server.addr) as client:
        game = await client.new_game(seed=7)

        async def watch() -> None:
            async for _ in game.watch():
                pass

        watcher = asyncio.create_task(watch())
        await asyncio.sleep(0.2)
        watcher.cancel()
        with pytest.raises(asyncio.CancelledError):
            await watcher
