"""One Redis with AOF, SIGKILLed mid-load and started again: every acknowledged move is there.

``appendfsync always``: Redis writes and fsyncs the AOF before it answers, so what was
acknowledged survives even a machine crash. (With ``everysec`` a process crash loses nothing
Redis already wrote, but a machine crash can lose about the last second of acknowledged
moves; docs/redis.md.) Two ``accordion-server`` processes, one round-robin channel, 12 games;
Redis is killed, stays down for a second, and comes back on the same port and directory.
The control: the same kill without AOF loses the games (so the test can tell).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

import pytest
import redis

from accordion.v1 import accordion_pb2_grpc as pb_grpc
from redis_server import RedisServer

from .play import Load, round_robin_channel, start_servers

# Fault injection: many processes (clusters, Sentinels, killed servers) and real timeouts, so one
# at a time, beside the parallel phase of `make test` (tests/conftest.py).
pytestmark = pytest.mark.serial

OUTAGE_BOUND_S = 15.0


async def test_redis_killed_and_restarted_with_aof_keeps_every_acknowledged_move() -> None:
    t_begin = time.monotonic()
    server = RedisServer(appendonly=True, appendfsync="always").start()
    tmp = tempfile.TemporaryDirectory(prefix="acc-faults-")
    procs = []
    channel = None
    try:
        procs = await asyncio.to_thread(
            start_servers, 2, Path(tmp.name), {"REDIS_URL": server.url}, "--store-timeout", "1.5"
        )
        channel = round_robin_channel([p.addr for p in procs])
        load = Load(pb_grpc.AccordionServiceStub(channel), games=12, seed=11, pace=0.02)
        await load.start()
        await load.run_until(lambda: load.acked >= 120, timeout=30)
        acked_before = load.acked
        server.kill()  # SIGKILL mid-load
        t_kill = time.monotonic()
        await asyncio.sleep(1.0)
        await asyncio.to_thread(server.start)  # same port, same dir: it replays the AOF
        t_back = time.monotonic()
        await load.run_until(lambda: all(sum(a.at > t_back for a in p.acked) >= 2 for p in load.played), 30)
        await load.stop()
        checked = await load.verify()
        report = load.report(since=t_kill)
        print(
            f"\nAOF (appendfsync always): Redis SIGKILLed with {acked_before} moves acknowledged, back after "
            f"{t_back - t_kill:.2f} s; {checked} acknowledged moves checked, every one found exactly once; "
            f"outage: {report}; test took {time.monotonic() - t_begin:.1f} s"
        )
        # Some call spanned the second Redis was down (retried by gRPC, the server or the client).
        assert 0.8 < report["longest_wait_s"] < OUTAGE_BOUND_S, report
        assert checked > acked_before
    finally:
        if channel is not None:
            await channel.close()
        for p in procs:
            p.close()
        server.close()
        tmp.cleanup()


def test_control_without_aof_the_same_kill_loses_the_data() -> None:
    """The test above can fail: without AOF (and no RDB), a SIGKILL and restart lose everything."""
    with RedisServer(appendonly=False) as server:
        with redis.Redis(port=server.port) as c:
            c.set("acknowledged", "yes")
        server.kill()
        server.start()
        with redis.Redis(port=server.port) as c:
            assert c.get("acknowledged") is None
