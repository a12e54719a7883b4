"""Sentinel: the master dies mid-load, the sentinels promote the replica, nothing is lost.

One master, one replica, three sentinels (quorum 2; tests/faults/sentinel.py); two
``accordion-server`` processes with ``REDIS_URL=redis+sentinel://…/accordion`` and
``--redis-wait-replicas 1``. The master is SIGKILLed mid-load; the servers find the new
master through the sentinels; the old master is started again as a replica of the master the
sentinels name (until it has synced, WAIT 1 cannot be met: moves wait). Every game's stored
log equals exactly its acknowledged moves.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

import pytest

from accordion.v1 import accordion_pb2_grpc as pb_grpc

from .play import Load, round_robin_channel, start_servers
from .sentinel import LocalSentinel

# Fault injection: many processes (clusters, Sentinels, killed servers) and real timeouts, so one
# at a time, beside the parallel phase of `make test` (tests/conftest.py).
pytestmark = pytest.mark.serial

OUTAGE_BOUND_S = 30.0


async def test_sentinel_failover_mid_load_loses_and_duplicates_nothing() -> None:
    t_begin = time.monotonic()
    group = await asyncio.to_thread(LocalSentinel(sentinels=3, down_after_ms=1000).start)
    tmp = tempfile.TemporaryDirectory(prefix="acc-faults-")
    procs = []
    channel = None
    try:
        procs = await asyncio.to_thread(
            start_servers,
            2,
            Path(tmp.name),
            {"REDIS_URL": group.url},
            "--redis-wait-replicas",
            "1",
            "--redis-wait-timeout",
            "0.5",
            "--store-timeout",
            "2",
        )
        channel = round_robin_channel([p.addr for p in procs])
        load = Load(pb_grpc.AccordionServiceStub(channel), games=10, seed=23, pace=0.02)
        await load.start()
        await load.run_until(lambda: load.acked >= 100, timeout=30)
        acked_before = load.acked
        old = group.server_on(group.master_port())
        old.kill()
        t_kill = time.monotonic()
        new = await asyncio.to_thread(group.wait_failover, old.port, 30)
        t_failover = time.monotonic()
        await asyncio.to_thread(group.restart_as_replica, old, 30)
        t_rejoined = time.monotonic()
        await load.run_until(
            lambda: all(sum(a.at > t_rejoined for a in p.acked) >= 2 for p in load.played), timeout=30
        )
        await load.stop()
        checked = await load.verify()
        report = load.report(since=t_kill)
        print(
            f"\nsentinel failover: killed the master :{old.port}, :{new.port} promoted "
            f"{t_failover - t_kill:.2f} s "
            f"later, old master back as a replica after {t_rejoined - t_kill:.2f} s; {acked_before} moves "
            f"acknowledged before the kill, {checked} in all, every one found exactly once; "
            f"outage: {report}; "
            f"test took {time.monotonic() - t_begin:.1f} s"
        )
        assert new.port != old.port
        assert t_failover - t_kill < report["longest_wait_s"] < OUTAGE_BOUND_S, report
        assert checked > acked_before
        assert all(p.proc.poll() is None for p in procs)
    finally:
        if channel is not None:
            await channel.close()
        for p in procs:
            p.close()
        await asyncio.to_thread(group.close)
        tmp.cleanup()
