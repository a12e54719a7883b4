"""Issue 28, item 1 on Redis Cluster and Sentinel: 300 WatchGame calls cancelled right after
their first event leave no handler running and no watcher's connection (``accordion-watch``)
open on any node within 2 s (tests/stream_attack.py; tests/api/test_streams_end.py for one
plain Redis, where the whole client count comes back to its start). A watcher's connection goes
to the slot's primary (Cluster) or Sentinel's master, made and closed by the watch as on one
Redis. (The whole count is not the measure here: the command clients of Cluster and Sentinel
are redis-py's pools, which grow, bounded, to the concurrency they meet; the plain Redis's
command connections are a fixed two.)"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from accordion.store.redis_watch import WATCH_CLIENT_NAME
from redis_server import free_port
from server_launcher import launch
from stream_attack import assert_watches_end, redis_clients

from .cluster import LocalCluster
from .sentinel import LocalSentinel


async def attack_through(store_url: str, *ports: int) -> None:
    with tempfile.TemporaryDirectory(prefix="acc-streams-ha-") as tmp:
        metrics_port = free_port()
        server = await asyncio.to_thread(
            launch,
            Path(tmp),
            "--workers",
            "1",
            "--metrics-port",
            str(metrics_port),
            "--log-level",
            "warning",
            env={"REDIS_URL": store_url},
        )
        try:
            await assert_watches_end(server.addr, metrics_port, redis_clients(*ports, name=WATCH_CLIENT_NAME))
        finally:
            server.close()


async def test_cancelled_watches_end_on_a_cluster() -> None:
    cluster = await asyncio.to_thread(LocalCluster(masters=3, replicas=1).start)
    try:
        await attack_through(cluster.url, *(node.port for node in cluster.nodes))
    finally:
        await asyncio.to_thread(cluster.close)


async def test_cancelled_watches_end_with_sentinel() -> None:
    group = await asyncio.to_thread(LocalSentinel(sentinels=3).start)
    try:
        await attack_through(group.url, *(server.port for server in group.servers))
    finally:
        await asyncio.to_thread(group.close)
