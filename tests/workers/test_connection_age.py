"""``--max-connection-age``: the server sends GOAWAY to old connections so clients reconnect
(and, behind SO_REUSEPORT workers or a Service, land somewhere new); calls keep working."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import grpc
import grpc.aio

from accordion.config import Config
from accordion.listening import server_options as _server_options
from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc


async def state_after(channel: grpc.aio.Channel, within: float) -> grpc.ChannelConnectivity:
    """The channel's state once it leaves READY, or READY if it stays there ``within`` seconds."""
    try:
        await asyncio.wait_for(channel.wait_for_state_change(grpc.ChannelConnectivity.READY), within)
    except TimeoutError:
        pass
    return channel.get_state()


async def test_old_connections_are_sent_away_and_clients_reconnect(start_server: Callable[..., Any]) -> None:
    aged = await start_server("memory://", max_connection_age=1.0, grace=1.0)
    plain = await start_server("memory://")
    options = [("grpc.use_local_subchannel_pool", 1)]
    async with (
        grpc.aio.insecure_channel(aged.addr, options=options) as a,
        grpc.aio.insecure_channel(plain.addr, options=options) as b,
    ):
        for ch in (a, b):
            await pb_grpc.AccordionServiceStub(ch).NewGame(pb.NewGameRequest(variant="accordion"), timeout=5)
            assert ch.get_state() == grpc.ChannelConnectivity.READY
        after_a, after_b = await asyncio.gather(state_after(a, 4.0), state_after(b, 2.5))
        assert after_a != grpc.ChannelConnectivity.READY, "GOAWAY after about a second"
        assert after_b == grpc.ChannelConnectivity.READY, "without the flag a connection stays"
        reply = await pb_grpc.AccordionServiceStub(a).NewGame(
            pb.NewGameRequest(variant="accordion"), timeout=5
        )
        assert reply.game.version == 1, "the client reconnected by itself"


def test_the_age_options_reach_grpc_with_the_drain_grace() -> None:
    options = dict(_server_options(Config(max_connection_age=300, grace=10)))
    assert options["grpc.max_connection_age_ms"] == 300_000
    assert options["grpc.max_connection_age_grace_ms"] == 10_000
    assert "grpc.max_connection_age_ms" not in dict(_server_options(Config()))
    assert dict(_server_options(Config(workers=4)))["grpc.so_reuseport"] == 1
    assert dict(_server_options(Config(workers=1)))["grpc.so_reuseport"] == 0
