"""The documented limits: request metadata (16 KiB), alongside the 64 KiB message limit and the
concurrent-RPC cap that tests/api/test_server.py covers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import grpc.aio
import pytest

from accordion.config import Config
from accordion.listening import MAX_METADATA_BYTES
from accordion.listening import server_options as _server_options
from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc


async def test_metadata_over_the_limit_is_refused_and_under_it_always_passes(
    start_server: Callable[..., Any],
) -> None:
    running = await start_server("memory://")
    async with grpc.aio.insecure_channel(running.addr) as channel:
        stub = pb_grpc.AccordionServiceStub(channel)
        # 12 KiB: above gRPC's default soft limit (8 KiB, where calls start failing at random),
        # below ours (soft = hard = 16 KiB): every one passes.
        for _ in range(20):
            reply = await stub.NewGame(
                pb.NewGameRequest(variant="accordion"), metadata=(("x-pad", "a" * 12 * 1024),), timeout=5
            )
            assert reply.game.version == 1
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.NewGame(
                pb.NewGameRequest(variant="accordion"),
                metadata=(("x-pad", "a" * (MAX_METADATA_BYTES + 1)),),
                timeout=5,
            )
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "metadata" in (caught.value.details() or "")
        assert (await stub.NewGame(pb.NewGameRequest(variant="accordion"), timeout=5)).game.version == 1


def test_the_limits_are_set_explicitly() -> None:
    options = dict(_server_options(Config()))
    assert options["grpc.max_concurrent_streams"] == Config().max_streams_per_connection == 100
    assert options["grpc.max_connection_idle_ms"] == 300_000
    assert options["grpc.http2.max_pings_without_data"] == 0  # keepalive finds dead watchers
    assert options["grpc.max_receive_message_length"] == 64 * 1024
    assert options["grpc.max_metadata_size"] == options["grpc.absolute_max_metadata_size"] == 16 * 1024
