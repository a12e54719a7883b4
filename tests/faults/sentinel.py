"""A real Redis Sentinel group for fault tests, on loopback (the way tests/faults/cluster.py
builds a Redis Cluster, and with its helpers).

``LocalSentinel``: one master, one replica, three sentinels (quorum 2),
``down-after-milliseconds`` 1000. Every process is a real ``redis-server`` (the one
``tests/redis_server.py`` finds; the sentinels run it with ``--sentinel``) in its own temp dir,
on free 127.0.0.1 ports (never 6379). Every wait is bounded; ``close()`` kills every process it
started and removes the dirs.
"""

from __future__ import annotations

from redis_server import RedisServer, redis_server_binary
from server_launcher import START_TIMEOUT

from .cluster import client, wait_until


class SentinelServer(RedisServer):
    """A ``redis-server --sentinel`` process monitoring ``master_port`` as ``service``."""

    def __init__(self, master_port: int, *, service: str, quorum: int, down_after_ms: int) -> None:
        super().__init__()
        self.conf = self.dir / "sentinel.conf"
        self.conf.write_text(
            "\n".join(
                [
                    f"port {self.port}",
                    "bind 127.0.0.1",
                    f"dir {self.dir}",
                    f"logfile {self.logfile}",
                    f"sentinel monitor {service} 127.0.0.1 {master_port} {quorum}",
                    f"sentinel down-after-milliseconds {service} {down_after_ms}",
                    f"sentinel failover-timeout {service} 10000",
                    f"sentinel parallel-syncs {service} 1",
                    "",
                ]
            )
        )

    def _argv(self) -> list[str]:
        return [redis_server_binary(), str(self.conf), "--sentinel"]


class LocalSentinel:
    """One master, one replica, ``sentinels`` sentinels; ``service`` is the monitored name."""

    def __init__(
        self,
        *,
        service: str = "accordion",
        sentinels: int = 3,
        down_after_ms: int = 1000,
        appendfsync: str = "everysec",
    ) -> None:
        self.service = service
        extra = ("--repl-diskless-sync-delay", "0")
        self.master = RedisServer(appendonly=True, appendfsync=appendfsync, extra_args=extra)
        self.replica = RedisServer(
            appendonly=True,
            appendfsync=appendfsync,
            extra_args=(*extra, "--replicaof", "127.0.0.1", str(self.master.port)),
        )
        quorum = sentinels // 2 + 1
        self.sentinels = [
            SentinelServer(self.master.port, service=service, quorum=quorum, down_after_ms=down_after_ms)
            for _ in range(sentinels)
        ]

    @property
    def servers(self) -> list[RedisServer]:
        return [self.master, self.replica]

    @property
    def url(self) -> str:
        hosts = ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels)
        return f"redis+sentinel://{hosts}/{self.service}"

    def start(self, timeout: float = START_TIMEOUT) -> LocalSentinel:
        try:
            self.master.start()
            self.replica.start()
            for s in self.sentinels:
                s.start()
            wait_until("the replica to sync", lambda: self.in_sync(self.replica), timeout)
            wait_until("the sentinels to see the replica and each other", self._sentinels_ready, timeout)
        except BaseException:
            self.close()
            raise
        return self

    def in_sync(self, server: RedisServer) -> bool:
        with client(server.port) as c:
            repl = c.info("replication")
        return repl.get("role") == "slave" and repl.get("master_link_status") == "up"

    def _sentinels_ready(self) -> bool:
        for s in self.sentinels:
            with client(s.port) as c:
                master = c.sentinel_master(self.service)  # parsed by redis-py into a dict
            if int(master["num-slaves"]) < 1 or int(master["num-other-sentinels"]) < len(self.sentinels) - 1:
                return False
        return True

    def master_port(self) -> int:
        with client(self.sentinels[0].port) as c:
            _, port = c.execute_command("SENTINEL GET-MASTER-ADDR-BY-NAME", self.service)
        return int(port)

    def server_on(self, port: int) -> RedisServer:
        return next(s for s in self.servers if s.port == port)

    def wait_failover(self, old_port: int, timeout: float = 30) -> RedisServer:
        """Until every sentinel names a new master and that server says it is one."""

        def promoted() -> RedisServer | None:
            ports = set()
            for s in self.sentinels:
                with client(s.port) as c:
                    ports.add(int(c.execute_command("SENTINEL GET-MASTER-ADDR-BY-NAME", self.service)[1]))
            if len(ports) != 1 or old_port in ports:
                return None
            new = self.server_on(ports.pop())
            with client(new.port) as c:
                return new if c.info("replication").get("role") == "master" else None

        return wait_until("the sentinels to promote the replica", promoted, timeout)

    def restart_as_replica(self, server: RedisServer, timeout: float = 30) -> None:
        """Start a killed server again as a replica of the master the sentinels name now (what a
        pod's start script does; left alone, the sentinels would convert it too, but only after
        their 10-second INFO period)."""
        master = self.master_port()
        server.extra_args = (*server.extra_args, "--replicaof", "127.0.0.1", str(master))
        server.start()
        wait_until(
            f"127.0.0.1:{server.port} to sync from the new master", lambda: self.in_sync(server), timeout
        )

    def close(self) -> None:
        for s in [*self.sentinels, self.master, self.replica]:
            s.kill()
            s.close()

    def __enter__(self) -> LocalSentinel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
