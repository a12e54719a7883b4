"""How the Redis store's commands reach Redis: one executor per kind of deployment, chosen
once when the store is built (``accordion.store.redis_connect``), so the verbs never ask
which deployment they run on.

=====================  =============================================================
``Executor``           one Redis (TLS, a unix socket with options) or Sentinel's master,
                       through redis-py
``FastExecutor``       one plain Redis without WAIT: the hot path (scripts, HMGET) on the
                       lean pipelined connection (``accordion.store.fastredis``)
``WaitExecutor``       one Redis or Sentinel, each write followed by WAIT on its connection
``ClusterExecutor``    a Redis Cluster: calls retried with backoff across a failover
``ClusterWaitExecutor``  a cluster with WAIT: each write and its WAIT on a plain
                       connection to the slot's primary
=====================  =============================================================

Every executor turns what still fails after redis-py's retries into ``StoreUnavailable``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar

from redis import exceptions as rexc
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import AbstractConnection
from redis.backoff import ExponentialBackoff

from .base import StoreUnavailable
from .fastredis import FastRedis
from .redis_errors import TOPOLOGY, UNAVAILABLE, as_unavailable, refused, retryable_in_cluster, unavailable
from .redis_scripts import LOAD, TOUCH, Script
from .redis_watch import WATCH_CLIENT_NAME, WatchConnection

T = TypeVar("T")
Keys = Sequence[str]
Args = Sequence[Any]


def ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


async def evalsha(client: Redis | RedisCluster, script: Script, keys: Keys, args: Args) -> Any:
    """EVALSHA; after NOSCRIPT (a restarted or flushed Redis, a new primary) the script is loaded
    and sent once more (NOSCRIPT means it did not run)."""
    try:
        return await client.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
    except rexc.NoScriptError:
        await client.script_load(script.text)
        return await client.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)


class Executor:
    """Commands through redis-py to one Redis (or Sentinel's current master).

    ``client`` serves the short commands. Each ``watch`` reads on a connection of its own
    (``watching``: made with ``watch_client``'s settings, closed when the watch ends; a blocked
    XREAD holds its connection for up to ``watch_block`` seconds, so watchers never starve
    moves of connections, and a watcher's connection can never outlive its watch:
    ``accordion.store.redis_watch``). ``watch_timeout`` bounds one XREAD, the block included;
    a lost watch connection is made again up to ``retries`` times with ``backoff``.
    """

    #: WAIT after each write for this many replicas (0: no WAIT).
    wait_replicas = 0

    def __init__(
        self,
        client: Redis | RedisCluster,
        watch_client: Redis | RedisCluster,
        *,
        watch_block: float,
        watch_timeout: float | None = None,
        retries: int = 2,
        backoff: ExponentialBackoff | None = None,
    ) -> None:
        self.client, self.watch_client = client, watch_client
        self.watch_block_ms = ms(watch_block)
        self.watch_timeout = watch_timeout if watch_timeout is not None else watch_block + 1.0
        self.watch_retries = retries
        self.watch_backoff = backoff if backoff is not None else ExponentialBackoff(cap=0.5, base=0.05)
        self._watchers: set[WatchConnection] = set()  # open now: closed with the store

    async def call(self, fn: Callable[[], Awaitable[T]]) -> T:
        """``fn()`` (a redis-py command); Redis unreachable → ``StoreUnavailable``."""
        with unavailable():
            return await fn()

    async def script(self, script: Script, keys: Keys, args: Args) -> Any:
        """A script that needs no replica's acknowledgement (a read, a watcher's stream)."""
        return await self.call(lambda: evalsha(self.client, script, keys, args))

    async def write(self, script: Script, keys: Keys, args: Args) -> Any:
        """A script that writes a game or a claim: with WAIT, answered only once replicated."""
        return await self.script(script, keys, args)

    async def confirm(self, key: str) -> None:
        """Before a recorded reply is replayed: make it as replicated as a first answer would be
        (WAIT executors: a no-op write on ``key``, then WAIT). Nothing to do without WAIT."""

    async def read_game(self, key: str, credential: bytes = b"") -> list[Any] | None:
        """HMGET key v t d; with a credential, the LOAD script (None: no game, or the credential
        is not one of its tokens')."""
        if credential:
            found = await self.script(LOAD, [key], [credential])
            return None if found is None else list(found)
        return list(await self.call(lambda: self.client.hmget(key, ["v", "t", "d"])))

    @contextlib.asynccontextmanager
    async def watching(self) -> AsyncIterator[WatchConnection]:
        """A watcher's own connection (``WatchConnection.xread``), closed when the block ends
        however it ends (the watch's end, its client cancelling, an error)."""
        watcher = WatchConnection(
            self.watch_connection_to,
            block_ms=self.watch_block_ms,
            read_timeout=self.watch_timeout,
            retries=self.watch_retries,
            backoff=self.watch_backoff,
            on_failure=self.watch_failed,
        )
        self._watchers.add(watcher)
        try:
            yield watcher
        finally:
            self._watchers.discard(watcher)
            await watcher.close()

    async def watch_connection_to(self, key: str) -> AbstractConnection:
        """A new connection (unconnected) for a watcher of ``key``: the watch pool's settings
        (Sentinel's pool finds the master when it connects), named in CLIENT LIST."""
        client = self.watch_client
        assert not isinstance(client, RedisCluster)  # ClusterExecutor has its own
        pool = client.connection_pool
        connection: AbstractConnection = pool.connection_class(
            **{**pool.connection_kwargs, "client_name": WATCH_CLIENT_NAME}
        )
        return connection

    async def watch_failed(self) -> None:
        """After a watcher's connection failed, before it makes a new one (cluster: re-read the
        slot map)."""

    async def close(self) -> None:
        for watcher in list(self._watchers):
            await watcher.close()
        for client in (self.client, self.watch_client):
            if isinstance(client, RedisCluster):
                await client.aclose()
            else:
                await client.aclose(close_connection_pool=True)


class FastExecutor(Executor):
    """One plain Redis without WAIT: scripts and game reads on ``fast`` (one command per call,
    pipelined across calls); the rest (delete, ping, watch) on redis-py."""

    def __init__(self, client: Redis, watch_client: Redis, fast: FastRedis, **watch: Any) -> None:
        super().__init__(client, watch_client, **watch)
        self.fast = fast

    # The mapping of ``unavailable()``, in a plain ``except`` (free until something is raised):
    # these two run once per move or read.
    async def script(self, script: Script, keys: Keys, args: Args) -> Any:
        fast = self.fast
        try:
            try:
                return await fast.call("EVALSHA", script.sha, len(keys), *keys, *args)
            except rexc.NoScriptError:
                await fast.call("SCRIPT", "LOAD", script.text)
                return await fast.call("EVALSHA", script.sha, len(keys), *keys, *args)
        except Exception as exc:
            mapped = as_unavailable(exc)
            if mapped is None:
                raise
            raise mapped from exc

    async def read_game(self, key: str, credential: bytes = b"") -> list[Any] | None:
        try:
            try:
                return await self._read_game(key, credential)
            except rexc.ConnectionError:  # a read is safe to send again, on a new connection
                return await self._read_game(key, credential)
        except Exception as exc:
            mapped = as_unavailable(exc)
            if mapped is None:
                raise
            raise mapped from exc

    async def _read_game(self, key: str, credential: bytes) -> list[Any] | None:
        fast = self.fast
        if not credential:
            return list(await fast.call("HMGET", key, "v", "t", "d"))
        try:
            found = await fast.call("EVALSHA", LOAD.sha, 1, key, credential)
        except rexc.NoScriptError:
            await fast.call("SCRIPT", "LOAD", LOAD.text)
            found = await fast.call("EVALSHA", LOAD.sha, 1, key, credential)
        return None if found is None else list(found)

    async def close(self) -> None:
        await self.fast.close()
        await super().close()


class Wait:
    """A script and ``WAIT replicas timeout`` in one pipeline: one connection, one round trip.
    WAIT counts the replication offset of its own connection's last write, so it must follow
    the script on the same connection."""

    def __init__(self, replicas: int, timeout: float) -> None:
        if replicas < 1 or timeout <= 0:
            raise ValueError(f"wait_replicas {replicas!r} needs a positive wait_timeout, not {timeout!r}")
        self.replicas, self.timeout_ms = replicas, ms(timeout)

    async def run(self, client: Redis, script: Script, keys: Keys, args: Args, *, raw: bool = False) -> Any:
        """The script's result once ``replicas`` acknowledged it; fewer → StoreUnavailable("not
        replicated"). ``raw``: let redirections and connection errors out as they are (the
        cluster executor handles them)."""
        for loaded in (False, True):
            try:
                async with client.pipeline(transaction=False) as pipe:
                    pipe.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
                    pipe.execute_command("WAIT", self.replicas, self.timeout_ms)
                    result, acked = await pipe.execute(raise_on_error=False)
            except Exception as exc:
                if raw and isinstance(exc, TOPOLOGY):
                    raise
                mapped = as_unavailable(exc)
                if mapped is None:
                    raise
                raise mapped from exc
            if isinstance(result, rexc.NoScriptError) and not loaded:
                with unavailable():
                    await client.script_load(script.text)  # then once more, with WAIT after it
                continue
            for value in (result, acked):
                if isinstance(value, Exception):
                    if raw and isinstance(value, TOPOLOGY):
                        raise value
                    if isinstance(value, UNAVAILABLE) or refused(value):
                        raise StoreUnavailable(f"redis: {value}") from value
                    raise value
            if int(acked) < self.replicas:
                raise StoreUnavailable(
                    f"not replicated: {acked} of {self.replicas} replicas acknowledged "
                    f"within {self.timeout_ms} ms"
                )
            return result
        raise StoreUnavailable("redis: NOSCRIPT after SCRIPT LOAD")  # pragma: no cover


class WaitExecutor(Executor):
    """One Redis or Sentinel's master, each write followed by WAIT (``Wait``)."""

    def __init__(self, client: Redis, watch_client: Redis, wait: Wait, **watch: Any) -> None:
        super().__init__(client, watch_client, **watch)
        self._redis, self._wait = client, wait
        self.wait_replicas = wait.replicas

    async def write(self, script: Script, keys: Keys, args: Args) -> Any:
        return await self._wait.run(self._redis, script, keys, args)

    async def confirm(self, key: str) -> None:
        await self.write(TOUCH, [key], [])


class ClusterExecutor(Executor):
    """A Redis Cluster (``RedisCluster`` clients; reads from primaries).

    A call that meets a failover's errors (``TOPOLOGY``) has been retried by redis-py after
    re-reading the slot map, but at once, before a new primary is elected: it is tried again
    here, up to ``attempts`` times with backoff. Whatever still fails is StoreUnavailable.
    """

    def __init__(
        self,
        client: RedisCluster,
        watch_client: RedisCluster,
        *,
        watch_block: float,
        attempts: int,
        backoff: ExponentialBackoff,
        watch_timeout: float | None = None,
    ) -> None:
        super().__init__(
            client,
            watch_client,
            watch_block=watch_block,
            watch_timeout=watch_timeout,
            retries=attempts - 1,
            backoff=backoff,
        )
        self.cluster, self.watch_cluster = client, watch_client
        self.attempts, self.backoff = attempts, backoff

    async def call(self, fn: Callable[[], Awaitable[T]]) -> T:
        with unavailable():
            for attempt in range(self.attempts):
                if attempt:
                    await asyncio.sleep(self.backoff.compute(attempt - 1))
                try:
                    return await fn()
                except Exception as exc:
                    if attempt == self.attempts - 1 or not retryable_in_cluster(exc):
                        raise
            raise AssertionError("unreachable")  # pragma: no cover

    async def watch_connection_to(self, key: str) -> AbstractConnection:
        """A new connection to the primary of ``key``'s slot (as the slot map says now)."""
        watch = self.watch_cluster
        await watch.initialize()
        node = watch.get_node_from_key(key)
        if node is None:
            raise rexc.SlotNotCoveredError(f"no primary for {key!r}")
        connection: AbstractConnection = node.connection_class(
            **{**node.connection_kwargs, "client_name": WATCH_CLIENT_NAME}
        )
        return connection

    async def watch_failed(self) -> None:
        # A failover shows up as a connection error: the slot's new primary is found anew.
        await self.watch_cluster.nodes_manager.initialize()


class ClusterWaitExecutor(ClusterExecutor):
    """A cluster with WAIT: each write and its WAIT go down a plain connection to the primary of
    the slot (``node_client(host, port)`` makes one per primary). If that node is gone or no
    longer owns the slot (a failover), the slot map is re-read and the write tried again."""

    def __init__(
        self,
        client: RedisCluster,
        watch_client: RedisCluster,
        wait: Wait,
        node_client: Callable[[str, int], Redis],
        *,
        watch_block: float,
        attempts: int,
        backoff: ExponentialBackoff,
        watch_timeout: float | None = None,
    ) -> None:
        super().__init__(
            client,
            watch_client,
            watch_block=watch_block,
            attempts=attempts,
            backoff=backoff,
            watch_timeout=watch_timeout,
        )
        self._wait, self._node_client = wait, node_client
        self._nodes: dict[tuple[str, int], Redis] = {}
        self.wait_replicas = wait.replicas

    async def write(self, script: Script, keys: Keys, args: Args) -> Any:
        failure: BaseException | None = None
        for attempt in range(self.attempts):
            if attempt:
                await asyncio.sleep(self.backoff.compute(attempt - 1))
            try:
                await self.cluster.initialize()
                node = self.cluster.get_node_from_key(keys[0])
                if node is None:
                    raise rexc.SlotNotCoveredError(f"no primary for {keys[0]!r}")
                where = (node.host, int(node.port))
                client = self._nodes.get(where)
                if client is None:
                    client = self._nodes[where] = self._node_client(*where)
                return await self._wait.run(client, script, keys, args, raw=True)
            except StoreUnavailable as exc:
                cause = exc.__cause__
                if cause is None or not retryable_in_cluster(cause):
                    raise  # "not replicated": the write landed; the caller decides
                failure = cause
            except Exception as exc:
                if not retryable_in_cluster(exc):
                    mapped = as_unavailable(exc)
                    if mapped is None:
                        raise
                    raise mapped from exc
                failure = exc
            with contextlib.suppress(*UNAVAILABLE, OSError):
                await self.cluster.nodes_manager.initialize()
        raise StoreUnavailable(f"redis cluster: {failure}") from failure

    async def confirm(self, key: str) -> None:
        await self.write(TOUCH, [key], [])

    async def close(self) -> None:
        await super().close()
        for node in self._nodes.values():
            await node.aclose(close_connection_pool=True)
        self._nodes.clear()
