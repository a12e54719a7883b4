"""The Redis store (redis.asyncio): several service processes share games through one Redis.

Keys (``P`` is the key prefix; the ``{game_id}`` hash tag puts one game's keys in one
cluster slot, which is what lets a single script touch them all):

* ``P:{id}:g``  HASH  v = version, t = token hash, d = data
* ``P:{id}:e``  STREAM of events, entry id ``<version>-0`` (so a watcher resumes from a
  version), field p = payload; trimmed to about ``event_log_len`` entries (default
  ``EVENT_LOG_LEN``). With ``watched_only`` it exists only once a watcher asked for it
  (created empty by ``watch``): a stream costs Redis at least ~4 KiB (a preallocated node),
  far more than a game, and most games are never watched.
* ``P:{id}:r``  HASH of idempotency records, one field per request id: the fingerprint's
  length (one byte), the fingerprint, the reply; ``P:{id}:r0`` is the previous generation
* ``P:{req:<key>}:n``  HASH f, r: a ``claim_request`` record

Why one records hash per game and not one key per request: the base contract says every
key of a game expires together and ``delete`` removes them all; per-request keys could be
neither refreshed nor deleted without enumerating them. To bound memory on a long game the
hash is rotated: when ``r`` holds ``REPLIES_KEPT`` records it is renamed to ``r0``
(dropping the older generation), so the last ``REPLIES_KEPT``..2x records are answerable.

Every mutation is one Lua script (EVALSHA; redis-py loads it on NOSCRIPT), so it is atomic
across processes and costs one round trip. Connection errors and timeouts are retried by
redis-py with exponential backoff; what still fails becomes ``StoreUnavailable``.

Three deployments (``from_url``; docs/redis.md has the URL forms):

* one Redis: ``redis://``, ``rediss://``, ``unix://``;
* Sentinel: ``redis+sentinel://h:p[,h:p...]/<service>[/db]``: the master is asked of the
  sentinels at each (re)connect, so a failover costs reconnects, not a restart;
* Cluster: ``redis+cluster://h:p[,h:p...]`` (``rediss+cluster://`` for TLS): every script
  touches the keys of one hash tag only (one game's ``{id}``, or one claim's ``{req:…}``),
  so each runs on the primary of one slot; reads go to primaries too.

With ``wait_replicas`` N > 0 a write is answered only once N replicas have acknowledged it:
the script and ``WAIT N timeout`` go down ONE connection in one round trip (WAIT counts the
replication offset of the connection's own last write, so it must be the same connection;
in a cluster, a plain connection to the slot's primary). Fewer acknowledgements raise
``StoreUnavailable("not replicated")``: the write may still survive, and a retry with the
same request id is safe. A retry that finds its recorded reply re-issues WAIT after a
no-op write (a PEXPIRE to the key's current TTL), so the replay is as replicated as a
first answer would be.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

from redis import exceptions as rexc
from redis.asyncio import BlockingConnectionPool, ConnectionPool, Redis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.connection import SSLConnection
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel
from redis.backoff import ExponentialBackoff
from redis.commands.core import AsyncScript

from .base import (
    GameExists,
    GameNotFound,
    GameRecord,
    GameStore,
    StoredReply,
    StoreUnavailable,
    VersionConflict,
    WatchEvent,
)
from .fastredis import FastRedis, fast_url
from .memory import EVENT_LOG_LEN, REPLIES_KEPT

T = TypeVar("T")
CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")
SENTINEL_SCHEMES = ("redis+sentinel",)

# Errors that mean "Redis is not there (right now)". BusyLoadingError is a ConnectionError
# subclass (listed for the reader); ReadOnlyError is what a demoted primary answers after a
# failover, which is just as transient. The cluster ones: no node reachable for a slot, the
# cluster (or a slot) down during a failover, redirections that outlived redis-py's retries.
UNAVAILABLE = (
    rexc.ConnectionError,
    rexc.TimeoutError,
    rexc.BusyLoadingError,
    rexc.ReadOnlyError,
    rexc.ClusterDownError,
    rexc.TryAgainError,
    rexc.MovedError,
    rexc.AskError,
    rexc.SlotNotCoveredError,
    rexc.RedisClusterException,
    rexc.MasterDownError,  # a replica cut off from its master (replica-serve-stale-data no)
    rexc.OutOfMemoryError,  # maxmemory reached under noeviction: writes refused until memory frees
)
# Refusals redis-py has no class for (min-replicas-to-write not met: NOREPLICAS), and those a
# Redis < 7 wraps in "Error running script …: -<CODE> …" when a script's command meets them.
_REFUSALS = ("NOREPLICAS", "-OOM ", "-READONLY ", "-MASTERDOWN ", "-LOADING ")
# In a cluster, the errors after which the slot map is re-read before trying again.
_TOPOLOGY = (rexc.ConnectionError, rexc.TimeoutError, rexc.ClusterDownError, rexc.TryAgainError,
             rexc.MovedError, rexc.AskError, rexc.SlotNotCoveredError, rexc.ReadOnlyError)

# KEYS: g e r r0. ARGV: expected, data, ttl_ms, event, request_id, fingerprint, reply, maxlen,
# keep, touch, trim ('~': about maxlen, in whole stream nodes, for long logs; '=': exactly, for
# short), watched_only ('1': append the event only if the stream exists, i.e. someone watches).
# Returns {'nf'} | {'dup', fingerprint, reply} | {'conflict', current} | {'ok', version}.
# touch = '1' (only when WAIT is on): a replayed reply rewrites g's TTL to what it is, a no-op
# write whose only effect is that the WAIT after it covers the original write too.
# A record is one field: <request id> = <fingerprint length (1 byte)><fingerprint><reply>.
_CAS = """
local cur = redis.call('HGET', KEYS[1], 'v')
if not cur then return {'nf'} end
local rid = ARGV[5]
if rid ~= '' then
  for i = 3, 4 do
    local rec = redis.call('HGET', KEYS[i], rid)
    if rec then
      if ARGV[10] == '1' then
        local t = redis.call('PTTL', KEYS[1])
        if t > 0 then redis.call('PEXPIRE', KEYS[1], t) end
      end
      local n = string.byte(rec, 1)
      return {'dup', string.sub(rec, 2, n + 1), string.sub(rec, n + 2)}
    end
  end
end
if tonumber(cur) ~= tonumber(ARGV[1]) then return {'conflict', cur} end
local v = tostring(tonumber(cur) + 1)
redis.call('HSET', KEYS[1], 'v', v, 'd', ARGV[2])
if ARGV[12] ~= '1' or redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('XADD', KEYS[2], 'MAXLEN', ARGV[11], ARGV[8], v .. '-0', 'p', ARGV[4])
end
if rid ~= '' then
  if redis.call('HLEN', KEYS[3]) >= tonumber(ARGV[9]) then
    redis.call('RENAME', KEYS[3], KEYS[4])
  end
  redis.call('HSET', KEYS[3], rid, string.char(#ARGV[6]) .. ARGV[6] .. ARGV[7])
end
for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
return {'ok', v}
"""

# KEYS: g e. The stream of a game nobody watched yet (watched_only): made, empty, at the game's
# version (so the next event's id follows), with the game's TTL. Returns the version, or nil.
_OPEN_STREAM = """
local v = redis.call('HGET', KEYS[1], 'v')
if not v then return false end
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('XADD', KEYS[2], 'MAXLEN', '0', v .. '-0', 'p', '')
  local t = redis.call('PTTL', KEYS[1])
  if t > 0 then redis.call('PEXPIRE', KEYS[2], t) end
end
return v
"""

# KEYS: g e r r0. ARGV: version, token_hash, data, ttl_ms. Leftover e/r/r0 of an earlier
# game with this id are dropped so the new game inherits no events or replies.
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
redis.call('HSET', KEYS[1], 'v', ARGV[1], 't', ARGV[2], 'd', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
"""

# KEYS: r r0. ARGV: request_id. Returns {fingerprint, reply} or nil.
_GET_REPLY = """
for i = 1, 2 do
  local rec = redis.call('HGET', KEYS[i], ARGV[1])
  if rec then
    local n = string.byte(rec, 1)
    return {string.sub(rec, 2, n + 1), string.sub(rec, n + 2)}
  end
end
return false
"""

# KEYS: n. ARGV: fingerprint, reply, ttl_ms, touch. Returns the earlier {fingerprint, reply} or nil.
_CLAIM = """
local rec = redis.call('HMGET', KEYS[1], 'f', 'r')
if rec[1] then
  if ARGV[4] == '1' then
    local t = redis.call('PTTL', KEYS[1])
    if t > 0 then redis.call('PEXPIRE', KEYS[1], t) end
  end
  return rec
end
redis.call('HSET', KEYS[1], 'f', ARGV[1], 'r', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return false
"""

# KEYS: any. Rewrites each existing key's TTL to its current value: a write that changes
# nothing, so that a WAIT after it on the same connection covers every earlier write.
_TOUCH = """
local n = 0
for i = 1, #KEYS do
  local t = redis.call('PTTL', KEYS[i])
  if t > 0 then redis.call('PEXPIRE', KEYS[i], t); n = n + 1 end
end
return n
"""


def _refused(exc: BaseException) -> bool:
    """A Redis refusal that passes once the deployment heals (no replica in sync, and so on)."""
    return isinstance(exc, rexc.ResponseError) and any(code in str(exc) for code in _REFUSALS)


def _torn_down(exc: BaseException) -> bool:
    """redis-py's asyncio connections can be disconnected by one task (after a connection
    error: the failing node's idle connections are dropped, a cluster client re-reads the
    slot map) while another task is using them; that task then fails on the torn-down
    transport with ``'NoneType' object has no attribute …`` / ``… is not callable``
    (redis/redis-py#3546), or, on uvloop, with uvloop's ``RuntimeError: unable to perform
    operation on <TCPTransport closed=True …>; the handler is closed``. It is a lost
    connection, and is treated as one."""
    if isinstance(exc, (AttributeError, TypeError)):
        return "'NoneType' object" in str(exc)
    return isinstance(exc, RuntimeError) and "the handler is closed" in str(exc)


@contextlib.contextmanager
def _unavailable() -> Iterator[None]:
    """Turn what is left of redis-py's connection errors (after its retries) into StoreUnavailable."""
    try:
        yield
    except UNAVAILABLE as exc:
        raise StoreUnavailable(f"redis: {exc}") from exc
    except rexc.ResponseError as exc:
        if not _refused(exc):
            raise
        raise StoreUnavailable(f"redis: {exc}") from exc
    except (AttributeError, TypeError, RuntimeError) as exc:
        if not _torn_down(exc):
            raise
        raise StoreUnavailable(f"redis: connection torn down mid-call ({exc})") from exc


def _ms(ttl: float) -> int:
    return max(1, round(ttl * 1000))


@dataclass(frozen=True)
class _Keys:
    g: str
    e: str
    r: str
    r0: str

    @property
    def all(self) -> list[str]:
        return [self.g, self.e, self.r, self.r0]


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
    if parts.scheme not in SENTINEL_SCHEMES or parts.query or not 1 <= len(path) <= 2 or (
        len(path) == 2 and not path[1].isdigit()
    ):
        raise ValueError(
            f"store URL {url!r}: expected redis+sentinel://host:port[,host:port...]/<service>[/db]"
        )
    creds, sentinels = _split_hosts(parts.netloc, url)
    return sentinels, unquote(path[0]), int(path[1]) if len(path) == 2 else 0, creds


class RedisStore(GameStore):
    """A ``GameStore`` on Redis. Build it with ``from_url`` (timeouts and retries set there).

    Two clients: ``redis`` serves the short commands; ``watch_redis`` serves the blocking XREADs
    of ``watch``. A blocked XREAD holds its connection for up to ``watch_block`` seconds, so
    watchers get their own pool and can never starve moves of connections; each watcher
    borrows a connection per XREAD and returns it between reads. Both are ``Redis`` clients
    (one server, or Sentinel's master) or both ``RedisCluster`` clients.

    ``wait_replicas`` > 0: every write is followed by ``WAIT wait_replicas wait_timeout`` on
    its own connection (see the module docstring); ``node_client`` makes the plain
    connections to a cluster primary for that (a ``Redis`` for (host, port)).
    """

    def __init__(
        self,
        redis: Redis | RedisCluster,
        watch_redis: Redis | RedisCluster,
        *,
        key_prefix: str = "acc",
        watch_block: float = 1.0,
        wait_replicas: int = 0,
        wait_timeout: float = 0.5,
        node_client: Callable[[str, int], Redis] | None = None,
        cluster_attempts: int = 4,
        backoff_base: float = 0.05,
        backoff_cap: float = 0.5,
        event_log_len: int = EVENT_LOG_LEN,
        fast: FastRedis | None = None,
        watched_only: bool = False,
    ) -> None:
        if event_log_len < 1:
            raise ValueError(f"event_log_len must be at least 1, not {event_log_len!r}")
        # MAXLEN ~ trims whole stream nodes (100 entries): exact trimming for short logs.
        self._event_log = (event_log_len, "~" if event_log_len >= 100 else "=")
        self._watched_only = "1" if watched_only else "0"
        if wait_replicas < 0 or (wait_replicas and wait_timeout <= 0):
            raise ValueError(
                f"wait_replicas {wait_replicas!r} needs a positive wait_timeout, not {wait_timeout!r}"
            )
        self._redis = redis
        self._watch_redis = watch_redis
        self._cluster = isinstance(redis, RedisCluster)
        if self._cluster and wait_replicas and node_client is None:
            raise ValueError("a cluster store with wait_replicas needs node_client")
        self._prefix = key_prefix
        self._watch_block_ms = _ms(watch_block)
        self._wait_replicas, self._wait_ms = wait_replicas, _ms(wait_timeout)
        self._node_client = node_client
        self._node_clients: dict[tuple[str, int], Redis] = {}
        self._attempts = cluster_attempts
        self._backoff = ExponentialBackoff(cap=backoff_cap, base=backoff_base)
        self._cas = redis.register_script(_CAS)
        self._create = redis.register_script(_CREATE)
        self._get_reply = redis.register_script(_GET_REPLY)
        self._claim = redis.register_script(_CLAIM)
        self._touch = redis.register_script(_TOUCH)
        self._open_stream = redis.register_script(_OPEN_STREAM)
        # The hot path (load, compare_and_set) on a lean pipelined connection when the
        # deployment allows it (one Redis, no TLS, no WAIT): see accordion.store.fastredis.
        self._fast = fast if not wait_replicas and not self._cluster else None
        self._closed = False

    @property
    def wait_replicas(self) -> int:
        return self._wait_replicas

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        key_prefix: str = "acc",
        socket_timeout: float = 1.0,
        socket_connect_timeout: float = 1.0,
        retries: int = 2,
        backoff_base: float = 0.05,
        backoff_cap: float = 0.5,
        health_check_interval: int = 15,
        max_connections: int = 64,
        watch_block: float = 1.0,
        wait_replicas: int = 0,
        wait_timeout: float = 0.5,
        event_log_len: int = EVENT_LOG_LEN,
        watched_only: bool = False,
    ) -> RedisStore:
        """A store on a ``redis://``, ``rediss://``, ``unix://``, ``redis+sentinel://`` or
        ``redis+cluster://`` (``rediss+cluster://``) ``url``.

        Worst case for one call while Redis is down: about ``(retries + 1)`` attempts, each
        bounded by ``socket_connect_timeout`` (refused connections fail at once) plus
        backoff sleeps of ``backoff_base * 2**n`` capped at ``backoff_cap``; a hung Redis
        costs up to ``(retries + 1) * socket_timeout``. Then ``StoreUnavailable``. With the
        defaults: about 0.3 s when the port refuses, about 3.3 s when Redis hangs (measured).
        In a cluster, a call that fails on a node re-reads the slot map and tries again, in
        at most ``retries + 2`` rounds with the same backoff (a failover moves the slot).

        A command that timed out may still run later (it sits in the socket buffer of a hung
        server), so StoreUnavailable from ``compare_and_set`` means "unknown outcome": retry
        with the same ``request_id`` and the recorded reply tells.

        ``wait_replicas``/``wait_timeout``: see the class docstring; the read timeout of the
        connections that write grows by ``wait_timeout``.

        Raises:
            ValueError: a malformed cluster or sentinel URL.
        """
        scheme = urlsplit(url).scheme
        retry_on = [rexc.ConnectionError, rexc.TimeoutError]
        write_timeout = socket_timeout + (wait_timeout if wait_replicas else 0.0)

        def options(read_timeout: float) -> dict[str, Any]:
            return dict(
                socket_timeout=read_timeout,
                socket_connect_timeout=socket_connect_timeout,
                retry=Retry(ExponentialBackoff(cap=backoff_cap, base=backoff_base), retries),
                retry_on_error=retry_on,
                health_check_interval=health_check_interval,
                # RESP2 pinned: redis-py 8 defaults to RESP3 (HELLO 3), older ones to RESP2, and
                # Redis < 6 has no RESP3; the reply shapes this module decodes are RESP2's.
                protocol=2,
            )

        common: dict[str, Any] = dict(
            key_prefix=key_prefix, watch_block=watch_block, wait_replicas=wait_replicas,
            wait_timeout=wait_timeout, backoff_base=backoff_base, backoff_cap=backoff_cap,
            event_log_len=event_log_len, watched_only=watched_only,
        )
        if scheme in CLUSTER_SCHEMES:
            nodes, creds = parse_cluster_url(url)

            def cluster(read_timeout: float) -> RedisCluster:
                opts = options(read_timeout)
                del opts["retry_on_error"]  # RedisCluster retries its own list (connection, cluster-down)
                return RedisCluster(
                    startup_nodes=[ClusterNode(h, p) for h, p in nodes],
                    require_full_coverage=False,  # a failover in one shard does not stop the others
                    max_connections=max_connections,
                    **opts,
                    **creds,
                )

            def node_client(host: str, port: int) -> Redis:
                tls: dict[str, Any] = {"connection_class": SSLConnection} if creds.get("ssl") else {}
                plain = {k: v for k, v in creds.items() if k != "ssl"}
                pool = BlockingConnectionPool(
                    host=host, port=port, max_connections=max_connections, timeout=socket_timeout,
                    **options(write_timeout), **plain, **tls,
                )
                return Redis(connection_pool=pool)

            return cls(cluster(write_timeout), cluster(watch_block + socket_timeout), node_client=node_client,
                       cluster_attempts=retries + 2, **common)
        if scheme in SENTINEL_SCHEMES:
            sentinels, service, db, creds = parse_sentinel_url(url)
            sentinel = Sentinel(  # type: ignore[no-untyped-call]
                sentinels,
                sentinel_kwargs=dict(
                    socket_timeout=socket_timeout, socket_connect_timeout=socket_connect_timeout
                ),
            )
            # master_for: each (re)connect asks the sentinels where the master is; a demoted
            # master's READONLY answer drops the connection (redis-py), and the retry reconnects.
            main = sentinel.master_for(
                service, db=db, max_connections=max_connections, **options(write_timeout), **creds
            )
            watch = sentinel.master_for(service, db=db, **options(watch_block + socket_timeout), **creds)
            return cls(main, watch, **common)
        settings = fast_url(url) if not wait_replicas else None
        if settings is not None:
            common["fast"] = FastRedis(settings, timeout=socket_timeout, connect_timeout=socket_connect_timeout)
        # Commands: bounded, and a caller waits (up to socket_timeout) for a free connection
        # rather than failing at once when all are busy.
        pool = BlockingConnectionPool.from_url(
            url, max_connections=max_connections, timeout=socket_timeout, **options(write_timeout)
        )
        # Watchers: one connection per blocked XREAD; the read timeout must outlast the block.
        watch_pool = ConnectionPool.from_url(url, **options(watch_block + socket_timeout))
        return cls(Redis(connection_pool=pool), Redis(connection_pool=watch_pool), **common)

    def _keys(self, game_id: str) -> _Keys:
        base = f"{self._prefix}:{{{game_id}}}:"
        return _Keys(base + "g", base + "e", base + "r", base + "r0")

    def claim_key(self, key: str) -> str:
        return f"{self._prefix}:{{req:{key}}}:n"

    def game_keys(self, game_id: str) -> list[str]:
        """Every key a game can have (for tests and operators)."""
        return self._keys(game_id).all

    # --- running a command, a script (and WAIT)

    def _retryable(self, exc: BaseException) -> bool:
        """In a cluster: an error after which the slot map is re-read and the call tried again."""
        return isinstance(exc, (*_TOPOLOGY, rexc.RedisClusterException)) or _torn_down(exc) or _refused(exc)

    async def _call(self, fn: Callable[[], Awaitable[T]]) -> T:
        """``fn()``; in a cluster, retried with backoff after a failover's errors (``_TOPOLOGY``:
        redis-py has already re-read the slot map, but retries at once, before a new primary is
        elected). Whatever still fails becomes StoreUnavailable."""
        with _unavailable():
            if not self._cluster:
                return await fn()
            for attempt in range(self._attempts):
                if attempt:
                    await asyncio.sleep(self._backoff.compute(attempt - 1))
                try:
                    return await fn()
                except Exception as exc:
                    if attempt == self._attempts - 1 or not self._retryable(exc):
                        raise
            raise AssertionError("unreachable")  # pragma: no cover

    async def _run(self, script: AsyncScript, keys: list[str], args: list[Any]) -> Any:
        """The script's result; with ``wait_replicas``, only once enough replicas have it."""
        if self._fast is not None:  # (never with wait_replicas)
            return await self._fast_script(script, keys, args)
        if not self._wait_replicas:
            return await self._call(lambda: script(keys=keys, args=args))
        if not self._cluster:
            assert isinstance(self._redis, Redis)
            return await self._run_and_wait(self._redis, script, keys, args)
        # A cluster: a plain connection to the slot's primary. If the node is gone or no
        # longer owns the slot (a failover), re-read the slot map and try again, with backoff.
        assert isinstance(self._redis, RedisCluster)
        failure: BaseException | None = None
        for attempt in range(self._attempts):
            if attempt:
                await asyncio.sleep(self._backoff.compute(attempt - 1))
            try:
                await self._redis.initialize()
                node = self._redis.get_node_from_key(keys[0])
                if node is None:
                    raise rexc.SlotNotCoveredError(f"no primary for {keys[0]!r}")
                where = (node.host, int(node.port))
                client = self._node_clients.get(where)
                if client is None:
                    assert self._node_client is not None  # checked in __init__
                    client = self._node_clients[where] = self._node_client(*where)
                return await self._run_and_wait(client, script, keys, args, raw=True)
            except StoreUnavailable as exc:
                cause = exc.__cause__
                if cause is None or not self._retryable(cause):
                    raise  # "not replicated": the write landed; the caller decides
                failure = cause
            except Exception as exc:
                if not self._retryable(exc):
                    raise
                failure = exc
            with contextlib.suppress(*UNAVAILABLE, OSError):
                await self._redis.nodes_manager.initialize()
        raise StoreUnavailable(f"redis cluster: {failure}") from failure

    async def _run_and_wait(
        self, client: Redis, script: AsyncScript, keys: list[str], args: list[Any], *, raw: bool = False
    ) -> Any:
        """EVALSHA and WAIT in one pipeline (one connection, one round trip). ``raw``: let
        redirections and connection errors out as they are (the cluster path handles them)."""
        for loaded in (False, True):
            try:
                async with client.pipeline(transaction=False) as pipe:
                    pipe.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
                    pipe.execute_command("WAIT", self._wait_replicas, self._wait_ms)
                    result, acked = await pipe.execute(raise_on_error=False)
            except UNAVAILABLE as exc:
                if raw and isinstance(exc, _TOPOLOGY):
                    raise
                raise StoreUnavailable(f"redis: {exc}") from exc
            except (AttributeError, TypeError) as exc:
                if not _torn_down(exc):
                    raise
                raise StoreUnavailable(f"redis: connection torn down mid-call ({exc})") from exc
            if isinstance(result, rexc.NoScriptError) and not loaded:
                with _unavailable():
                    await client.script_load(script.script)  # then once more, with WAIT after it
                continue
            for value in (result, acked):
                if isinstance(value, Exception):
                    if raw and isinstance(value, _TOPOLOGY):
                        raise value
                    if isinstance(value, UNAVAILABLE) or _refused(value):
                        raise StoreUnavailable(f"redis: {value}") from value
                    raise value
            if int(acked) < self._wait_replicas:
                raise StoreUnavailable(
                    f"not replicated: {acked} of {self._wait_replicas} replicas acknowledged "
                    f"within {self._wait_ms} ms"
                )
            return result
        raise StoreUnavailable("redis: NOSCRIPT after SCRIPT LOAD")  # pragma: no cover

    async def _fast_script(self, script: AsyncScript, keys: list[str], args: list[Any]) -> Any:
        """EVALSHA on the fast connection; after NOSCRIPT (a restarted or flushed Redis) the
        script is loaded and sent once more (NOSCRIPT means it did not run)."""
        assert self._fast is not None
        with _unavailable():
            try:
                return await self._fast.call("EVALSHA", script.sha, len(keys), *keys, *args)
            except rexc.NoScriptError:
                await self._fast.call("SCRIPT", "LOAD", script.script)
                return await self._fast.call("EVALSHA", script.sha, len(keys), *keys, *args)

    def _touch_flag(self) -> str:
        return "1" if self._wait_replicas else "0"

    # --- the verbs

    async def create(self, record: GameRecord, *, ttl: float) -> None:
        keys = self._keys(record.game_id)
        created = await self._run(
            self._create, keys.all, [record.version, record.token_hash, record.data, _ms(ttl)]
        )
        if not created:
            raise GameExists(record.game_id)

    async def load(self, game_id: str) -> GameRecord:
        key = self._keys(game_id).g
        if self._fast is not None:
            with _unavailable():
                try:
                    reply = await self._fast.call("HMGET", key, "v", "t", "d")
                except rexc.ConnectionError:  # a read is safe to send again, on a new connection
                    reply = await self._fast.call("HMGET", key, "v", "t", "d")
            version, token_hash, data = reply
        else:
            version, token_hash, data = await self._call(lambda: self._redis.hmget(key, ["v", "t", "d"]))
        if version is None:
            raise GameNotFound(game_id)
        return GameRecord(game_id, int(version), token_hash or b"", data or b"")

    async def compare_and_set(
        self,
        game_id: str,
        expected_version: int,
        data: bytes,
        *,
        ttl: float,
        event: bytes,
        request_id: str = "",
        fingerprint: bytes = b"",
        reply: bytes = b"",
    ) -> StoredReply | None:
        if len(fingerprint) > 255:
            raise ValueError("a fingerprint is at most 255 bytes")
        args = [expected_version, data, _ms(ttl), event, request_id, fingerprint, reply,
                self._event_log[0], REPLIES_KEPT, self._touch_flag(), self._event_log[1], self._watched_only]
        result = await self._run(self._cas, self._keys(game_id).all, args)
        kind = result[0]
        if kind == b"ok":
            return None
        if kind == b"dup":
            return StoredReply(result[1], result[2])
        if kind == b"conflict":
            raise VersionConflict(game_id, expected_version, int(result[1]))
        if kind == b"nf":
            raise GameNotFound(game_id)
        raise AssertionError(f"unexpected CAS script result {result!r}")

    async def get_reply(self, game_id: str, request_id: str) -> StoredReply | None:
        keys = self._keys(game_id)
        if self._fast is not None:
            rec = await self._fast_script(self._get_reply, [keys.r, keys.r0], [request_id])
        else:
            rec = await self._call(lambda: self._get_reply(keys=[keys.r, keys.r0], args=[request_id]))
        if rec is None:
            return None
        if self._wait_replicas:
            # A replayed reply is an answer like the first: it waits for the replicas too.
            await self._run(self._touch, [keys.g], [])
        return StoredReply(rec[0], rec[1])

    async def claim_request(
        self, key: str, fingerprint: bytes, reply: bytes, *, ttl: float
    ) -> StoredReply | None:
        args = [fingerprint, reply, _ms(ttl), self._touch_flag()]
        rec = await self._run(self._claim, [self.claim_key(key)], args)
        return None if rec is None else StoredReply(rec[0], rec[1])

    async def delete(self, game_id: str) -> None:
        keys = self._keys(game_id).all
        await self._call(lambda: self._redis.delete(*keys))  # one slot, so one DEL

    def watch(self, game_id: str, after_version: int) -> AsyncIterator[WatchEvent]:
        return self._watch(game_id, after_version)

    async def _xread(self, key: str, last: bytes | str) -> Any:
        if not self._cluster:
            return await self._watch_redis.xread({key: last}, count=100, block=self._watch_block_ms)
        # XREAD's keys are "movable": redis-py would ask a node (COMMAND GETKEYS) each time;
        # the slot's primary is known, so name it. A failover shows up as a connection error.
        watch = self._watch_redis
        assert isinstance(watch, RedisCluster)
        await watch.initialize()
        node = watch.get_node_from_key(key)
        try:
            return await watch.execute_command(
                "XREAD", "COUNT", 100, "BLOCK", self._watch_block_ms, "STREAMS", key, last, target_nodes=node
            )
        except _TOPOLOGY:
            with contextlib.suppress(*UNAVAILABLE, OSError):
                await watch.nodes_manager.initialize()
            raise

    async def _watch(self, game_id: str, after_version: int) -> AsyncIterator[WatchEvent]:
        """XREAD BLOCK from ``<after_version>-0``; when a block times out with nothing new,
        end if the game key is gone (deleted or expired). Redis going away raises
        ``StoreUnavailable`` once redis-py's retries are spent."""
        keys = self._keys(game_id)
        last: bytes | str = f"{max(after_version, 0)}-0"
        if self._watched_only == "1":  # the stream exists only once someone watches: make it
            if await self._call(lambda: self._open_stream(keys=[keys.g, keys.e])) is None:
                return
        elif not await self._call(lambda: self._redis.exists(keys.g)):
            return
        while not self._closed:
            try:
                with _unavailable():
                    batches = await self._xread(keys.e, last)
                if not batches and not await self._call(lambda: self._redis.exists(keys.g)):
                    return
            except StoreUnavailable:
                if self._closed:
                    return  # close() cut our connection: that is an end, not an outage
                raise
            # RESP2: [[stream, entries]]; a RESP3 client would give {stream: [entries]}.
            streams = batches.values() if isinstance(batches, dict) else (e for _, e in batches or ())
            for entries in streams:
                for entry_id, fields in entries:
                    last = entry_id
                    yield WatchEvent(game_id, int(entry_id.split(b"-", 1)[0]), fields[b"p"])

    async def ping(self) -> None:
        await self._call(self._redis.ping)

    async def close(self) -> None:
        """Close every client. Watchers end at their next wake-up, within about ``watch_block``
        (redis-py reconnects a cut XREAD by itself, so it is the flag that stops them)."""
        self._closed = True
        if self._fast is not None:
            await self._fast.close()
        for client in (self._redis, self._watch_redis):
            if isinstance(client, RedisCluster):
                await client.aclose()
            else:
                await client.aclose(close_connection_pool=True)
        for node in self._node_clients.values():
            await node.aclose(close_connection_pool=True)
        self._node_clients.clear()
