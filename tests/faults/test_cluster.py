"""A Redis Cluster master dies mid-load: no acknowledged move is lost, none is applied twice.

3 masters + 3 replicas (tests/faults/cluster.py), 3 ``accordion-server`` processes with
``REDIS_URL=redis+cluster://…`` and ``--redis-wait-replicas 1``, one client channel
round-robining over them. 20 seeded games are played at once; the master owning most of
them is SIGKILLed; its replica takes over; the killed node is started again and rejoins as
a replica (until then the new master has no replica, so WAIT 1 cannot be satisfied and
moves on its slots are UNAVAILABLE: acknowledged only once replicated; the test leaves it so
for two seconds). Afterwards every
game's stored log equals exactly the acknowledged moves. The outage is printed and bounded.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from datetime import datetime
from pathlib import Path

import pytest
from redis.crc import key_slot

from accordion.store import GameRecord, StoreUnavailable, open_store
from accordion.v1 import accordion_pb2_grpc as pb_grpc

from .cluster import LocalCluster
from .play import Load, round_robin_channel, start_servers

# Fault injection: many processes (clusters, Sentinels, killed servers) and real timeouts, so one
# at a time, beside the parallel phase of `make test` (tests/conftest.py).
pytestmark = pytest.mark.serial

GAMES = 20
OUTAGE_BOUND_S = 20.0


async def test_cluster_master_killed_mid_load_loses_and_duplicates_nothing() -> None:
    t_begin = time.monotonic()
    cluster = await asyncio.to_thread(LocalCluster(masters=3, replicas=1, appendfsync="everysec").start)
    tmp = tempfile.TemporaryDirectory(prefix="acc-faults-")
    servers = []
    channel = None
    try:
        servers = await asyncio.to_thread(
            start_servers,
            3,
            Path(tmp.name),
            {"REDIS_URL": cluster.url},
            "--redis-wait-replicas",
            "1",
            "--redis-wait-timeout",
            "0.5",
            "--store-timeout",
            "2",
        )
        channel = round_robin_channel([s.addr for s in servers])
        load = Load(pb_grpc.AccordionServiceStub(channel), games=GAMES, seed=7, pace=0.02)
        await load.start()
        await load.run_until(lambda: load.acked >= 150, timeout=30)

        # The master owning most games: kill it mid-load.
        owners = {p.index: cluster.master_of_slot(key_slot(p.game_id.encode())).port for p in load.played}
        victim_port = max(set(owners.values()), key=list(owners.values()).count)
        victim = cluster.node(victim_port)
        on_victim = [p for p in load.played if owners[p.index] == victim_port]
        acked_before = load.acked
        t_kill = cluster.kill(victim)
        promoted = await asyncio.to_thread(cluster.wait_failover, victim, 30)
        t_failover, wall_failover = time.monotonic(), time.time()
        # Two seconds with no replica behind the new master: its writes land but WAIT 1 cannot
        # be met, so they are UNAVAILABLE, and their retries (same request id) must find them.
        # Checked directly too: a write to the new master's slots is refused as not replicated.
        probe = open_store(cluster.url, wait_replicas=1, wait_timeout=0.3)
        try:
            gid = next(
                g
                for g in (f"probe-{i}" for i in range(10_000))
                if cluster.master_of_slot(key_slot(g.encode()), promoted.port).port == promoted.port
            )
            with pytest.raises(StoreUnavailable, match="not replicated: 0 of 1"):
                await probe.create(GameRecord(gid, 1, b"t", b"d"), ttl=60)
        finally:
            await probe.close()
        await asyncio.sleep(max(0.0, 2.0 - (time.monotonic() - t_failover)))
        wall_restart = time.time()
        await asyncio.to_thread(cluster.restart, victim, 30)
        t_rejoined = time.monotonic()
        # Every game of the dead master moves again (on its new master), twice over.
        await load.run_until(
            lambda: all(sum(a.at > t_rejoined for a in p.acked) >= 2 for p in on_victim), timeout=30
        )
        await asyncio.sleep(0.5)
        await load.stop()
        checked = await load.verify()
        report = load.report(since=t_kill)
        # Server-side: mutations answered UNAVAILABLE while the new master was up but alone.
        unreplicated = sum(
            1
            for s in servers
            for line in map(json.loads, s.log_lines())
            if line.get("event") == "rpc"
            and line.get("code") == "UNAVAILABLE"
            and line.get("method", "").endswith(("ApplyMove", "Undo"))
            and wall_failover + 0.2 <= datetime.fromisoformat(line["timestamp"]).timestamp() < wall_restart
        )
        print(
            f"\ncluster failover: killed {victim.addr} (master of {len(on_victim)}/{GAMES} games), "
            f"{promoted.addr} promoted {t_failover - t_kill:.2f} s after the kill, old master rejoined "
            f"after {t_rejoined - t_kill:.2f} s; {acked_before} moves acknowledged before the kill, "
            f"{checked} in all, every one found exactly once; {unreplicated} attempts refused as not "
            f"replicated while the new master had no replica; outage: {report}; "
            f"test took {time.monotonic() - t_begin:.1f} s"
        )
        assert on_victim, "the killed master owned no game"
        # Games of the dead master waited at least until the failover (and the replica's return).
        assert t_failover - t_kill < report["longest_wait_s"] < OUTAGE_BOUND_S, report
        assert checked > acked_before + 2 * len(on_victim)
        # The client spread its calls over all three servers.
        for s in servers:
            assert sum("ApplyMove" in line for line in s.log_lines()) > 10, s.addr
        # Every server rode out the failover.
        assert all(s.proc.poll() is None for s in servers)
    except BaseException:
        for s in servers:  # what the servers logged at warning level or worse, for the reader
            print(*[ln for ln in s.log_lines() if '"level": "info"' not in ln][-20:], sep="\n")
        raise
    finally:
        if channel is not None:
            await channel.close()
        for s in servers:
            s.close()
        await asyncio.to_thread(cluster.close)
        tmp.cleanup()
