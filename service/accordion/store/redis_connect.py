"""How the Redis store reaches Redis: the URL forms, the connection settings, and one builder
per deployment (one plain Redis, TLS, Sentinel, Cluster), each giving the executor
(``accordion.store.redis_exec``) the store then runs every verb through.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from redis import exceptions as rexc
from redis.asyncio import BlockingConnectionPool, ConnectionPool, Redis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.connection import SSLConnection
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel
from redis.backoff import ExponentialBackoff

from .fastredis import FastRedis, fast_url
from .redis_exec import ClusterExecutor, ClusterWaitExecutor, Executor, FastExecutor, Wait, WaitExecutor

CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")
SENTINEL_SCHEMES = ("redis+sentinel",)


# --- URLs


def _split_hosts(netloc: str, url: str) -> tuple[dict[str, Any], list[tuple[str, int]]]:
    """``[user[:password]@]host:port[,host:port...]`` → (credentials, [(host, port), ...])."""
    creds: dict[str, Any] = {}
    userinfo, at, hosts = netloc.rpartition("@")
    if at:
        user, colon, password = userinfo.partition(":")
        if colon:
            creds["username"], creds["password"] = unquote(user) or None, unquote(password)
        else:
            creds["password"] = unquote(user)  # redis://secret@host: a password alone (AUTH <password>)
    nodes = []
    for part in hosts.split(","):
        host, colon, port = part.strip().rpartition(":")
        host = host.strip("[]")
        if not colon or not host or not port.isdigit():
            raise ValueError(f"store URL {url!r}: {part!r} is not host:port")
        nodes.append((host, int(port)))
    return creds, nodes


def parse_cluster_url(url: str) -> tuple[list[tuple[str, int]], dict[str, Any]]:
    """``redis+cluster://[user:pass@]h:p[,h:p...]`` → (startup nodes, client options).

    (``urlsplit`` reads the comma list as one host, so it is parsed by hand.)

    Raises:
        ValueError: not that form (quoted).
    """
    parts = urlsplit(url)
    if parts.scheme not in CLUSTER_SCHEMES or parts.query or parts.path.strip("/") not in ("", "0"):
        raise ValueError(
            f"store URL {url!r}: expected redis+cluster://host:port[,host:port...] (no db, no query)"
        )
    creds, nodes = _split_hosts(parts.netloc, url)
    if parts.scheme == "rediss+cluster":
        creds["ssl"] = True
    return nodes, creds


def parse_sentinel_url(url: str) -> tuple[list[tuple[str, int]], str, int, dict[str, Any]]:
    """``redis+sentinel://[user:pass@]h:p[,h:p...]/<service>[/db]`` → (sentinels, service, db, options).

    The credentials are the data nodes' (master and replicas); the sentinels are reached
    without authentication.

    Raises:
        ValueError: not that form (quoted).
    """
    parts = urlsplit(url)
    path = [p for p in parts.path.split("/") if p]
    if (
        parts.scheme not in SENTINEL_SCHEMES
        or parts.query
        or not 1 <= len(path) <= 2
        or (len(path) == 2 and not path[1].isdigit())
    ):
        raise ValueError(
            f"store URL {url!r}: expected redis+sentinel://host:port[,host:port...]/<service>[/db]"
        )
    creds, sentinels = _split_hosts(parts.netloc, url)
    return sentinels, unquote(path[0]), int(path[1]) if len(path) == 2 else 0, creds


# --- settings


@dataclass(frozen=True)
class Settings:
    """Timeouts, retries and pool sizes (``RedisStore.from_url`` documents their worst cases)."""

    socket_timeout: float = 1.0
    socket_connect_timeout: float = 1.0
    retries: int = 2
    backoff_base: float = 0.05
    backoff_cap: float = 0.5
    health_check_interval: int = 15
    max_connections: int = 64
    watch_block: float = 1.0
    wait_replicas: int = 0
    wait_timeout: float = 0.5
    call_timeout: float = 0.0

    def __post_init__(self) -> None:
        if self.wait_replicas < 0 or (self.wait_replicas and self.wait_timeout <= 0):
            raise ValueError(
                f"wait_replicas {self.wait_replicas!r} needs a positive wait_timeout, "
                f"not {self.wait_timeout!r}"
            )

    @property
    def write_timeout(self) -> float:
        """The read timeout of connections that write: a WAIT may take ``wait_timeout`` more."""
        return self.socket_timeout + (self.wait_timeout if self.wait_replicas else 0.0)

    @property
    def watch_timeout(self) -> float:
        """The read timeout of watchers' connections: it must outlast a blocked XREAD."""
        return self.watch_block + self.socket_timeout

    @property
    def lean_timeout(self) -> float:
        """The lean connection's read timeout: it sends a call once (no retry), so it waits as
        long as the caller lets one store call take (``call_timeout``), never less than
        ``socket_timeout``. redis-py's connections keep ``socket_timeout`` per attempt and retry."""
        return max(self.socket_timeout, self.call_timeout)

    def backoff(self) -> ExponentialBackoff:
        return ExponentialBackoff(cap=self.backoff_cap, base=self.backoff_base)

    def wait(self) -> Wait | None:
        return Wait(self.wait_replicas, self.wait_timeout) if self.wait_replicas else None

    def client_options(self, read_timeout: float) -> dict[str, Any]:
        """redis-py connection options: connection errors and timeouts retried with backoff."""
        return dict(
            socket_timeout=read_timeout,
            socket_connect_timeout=self.socket_connect_timeout,
            retry=Retry(self.backoff(), self.retries),
            retry_on_error=[rexc.ConnectionError, rexc.TimeoutError],
            health_check_interval=self.health_check_interval,
            # RESP2 pinned: redis-py 8 defaults to RESP3 (HELLO 3), older ones to RESP2, and
            # Redis < 6 has no RESP3; the reply shapes the store decodes are RESP2's.
            protocol=2,
        )


# --- one builder per deployment


def connect(url: str, settings: Settings) -> Executor:
    """The executor for the deployment ``url`` names.

    Raises:
        ValueError: a malformed cluster or sentinel URL (quoted).
    """
    scheme = urlsplit(url).scheme
    if scheme in CLUSTER_SCHEMES:
        return cluster(url, settings)
    if scheme in SENTINEL_SCHEMES:
        return sentinel(url, settings)
    if scheme == "rediss":
        return tls(url, settings)
    return plain(url, settings)


def _single(url: str, s: Settings) -> tuple[Redis, Redis]:
    """The command and watch clients of one Redis server."""
    # Commands: bounded, and a caller waits (up to socket_timeout) for a free connection
    # rather than failing at once when all are busy.
    pool = BlockingConnectionPool.from_url(
        url, max_connections=s.max_connections, timeout=s.socket_timeout, **s.client_options(s.write_timeout)
    )
    # Watchers: the settings of each watcher's own connection (``Executor.watching``).
    watch_pool = ConnectionPool.from_url(url, **s.client_options(s.watch_timeout))
    return Redis(connection_pool=pool), Redis(connection_pool=watch_pool)


def _watching(s: Settings) -> dict[str, Any]:
    """How the executor's watchers read (``Executor``): each XREAD bounded by ``watch_timeout``,
    a lost watch connection made again with the commands' retries and backoff."""
    return dict(
        watch_block=s.watch_block, watch_timeout=s.watch_timeout, retries=s.retries, backoff=s.backoff()
    )


def _on_one(client: Redis, watch: Redis, s: Settings) -> Executor:
    wait = s.wait()
    if wait is not None:
        return WaitExecutor(client, watch, wait, **_watching(s))
    return Executor(client, watch, **_watching(s))


def plain(url: str, s: Settings) -> Executor:
    """``redis://`` or ``unix://``: without WAIT the hot path goes on the lean connection
    (``FastRedis``) unless the URL has options only redis-py knows."""
    client, watch = _single(url, s)
    fast = fast_url(url) if not s.wait_replicas else None
    if fast is None:
        return _on_one(client, watch, s)
    lean = FastRedis(fast, timeout=s.lean_timeout, connect_timeout=s.socket_connect_timeout)
    return FastExecutor(client, watch, lean, **_watching(s))


def tls(url: str, s: Settings) -> Executor:
    """``rediss://``: redis-py's TLS connections (its URL options set certificates)."""
    client, watch = _single(url, s)
    return _on_one(client, watch, s)


def sentinel(url: str, s: Settings) -> Executor:
    """``redis+sentinel://``: each (re)connect asks the sentinels where the master is; a demoted
    master's READONLY answer drops the connection (redis-py), and the retry reconnects."""
    sentinels, service, db, creds = parse_sentinel_url(url)
    sentinel = Sentinel(  # type: ignore[no-untyped-call]
        sentinels,
        sentinel_kwargs=dict(
            socket_timeout=s.socket_timeout, socket_connect_timeout=s.socket_connect_timeout
        ),
    )
    client = sentinel.master_for(
        service, db=db, max_connections=s.max_connections, **s.client_options(s.write_timeout), **creds
    )
    watch = sentinel.master_for(service, db=db, **s.client_options(s.watch_timeout), **creds)
    return _on_one(client, watch, s)


def cluster(url: str, s: Settings) -> Executor:
    """``redis+cluster://``: every URL node a startup node, ``require_full_coverage=False`` (a
    failover in one shard does not stop the others), reads from primaries."""
    nodes, creds = parse_cluster_url(url)

    def client(read_timeout: float) -> RedisCluster:
        options = s.client_options(read_timeout)
        del options["retry_on_error"]  # RedisCluster retries its own list (connection, cluster-down)
        return RedisCluster(
            startup_nodes=[ClusterNode(h, p) for h, p in nodes],
            require_full_coverage=False,
            max_connections=s.max_connections,
            **options,
            **creds,
        )

    def node_client(host: str, port: int) -> Redis:
        """A plain connection to one primary, for a write and its WAIT."""
        ssl: dict[str, Any] = {"connection_class": SSLConnection} if creds.get("ssl") else {}
        plain_creds = {k: v for k, v in creds.items() if k != "ssl"}
        pool = BlockingConnectionPool(
            host=host,
            port=port,
            max_connections=s.max_connections,
            timeout=s.socket_timeout,
            **s.client_options(s.write_timeout),
            **plain_creds,
            **ssl,
        )
        return Redis(connection_pool=pool)

    common: dict[str, Any] = dict(
        watch_block=s.watch_block, watch_timeout=s.watch_timeout, attempts=s.retries + 2, backoff=s.backoff()
    )
    wait = s.wait()
    if wait is not None:
        return ClusterWaitExecutor(
            client(s.write_timeout), client(s.watch_timeout), wait, node_client, **common
        )
    return ClusterExecutor(client(s.write_timeout), client(s.watch_timeout), **common)
