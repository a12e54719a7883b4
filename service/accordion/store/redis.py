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
* ``P:{n:<name>}``  STRING: a ``put_named`` record (a deal code's), with its own TTL
* ``P:{pool:<name>}``  SET: a pool's items (deals proven winnable), no TTL: they stay until
  popped, across restarts of every server

Why one records hash per game and not one key per request: the base contract says every
key of a game expires together and ``delete`` removes them all; per-request keys could be
neither refreshed nor deleted without enumerating them. To bound memory on a long game the
hash is rotated: when ``r`` holds ``REPLIES_KEPT`` records it is renamed to ``r0``
(dropping the older generation), so the last ``REPLIES_KEPT``..2x records are answerable.

Every mutation is one Lua script (``accordion.store.redis_scripts``; EVALSHA, loaded on
NOSCRIPT), so it is atomic across processes and costs one round trip. This module is what
the verbs do; how the commands reach Redis is an executor chosen when the store is built
(``accordion.store.redis_connect`` parses the URL and builds it; ``accordion.store.redis_exec``
has one per kind of deployment). Connection errors and timeouts are retried by redis-py with
exponential backoff; what still fails becomes ``StoreUnavailable``.

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

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from .base import (
    MAX_FINGERPRINT,
    GameExists,
    GameNotFound,
    GameRecord,
    GameStore,
    StoredReply,
    StoreUnavailable,
    VersionConflict,
    WatchEvent,
)
from .memory import EVENT_LOG_LEN, REPLIES_KEPT
from .redis_connect import Settings, connect, parse_cluster_url, parse_sentinel_url
from .redis_exec import Executor, ms
from .redis_scripts import (
    CAS,
    CLAIM,
    CREATE,
    GET_REPLY,
    OPEN_STREAM,
    POOL_ADD,
    POOL_POP,
    PUT_NAMED,
    SET_TOKEN_HASH,
)
from .redis_watch import raise_lost_cancel

__all__ = ["RedisStore", "parse_cluster_url", "parse_sentinel_url"]


@dataclass(frozen=True)
class _Keys:
    g: str
    e: str
    r: str
    r0: str

    @property
    def all(self) -> list[str]:
        return [self.g, self.e, self.r, self.r0]


class RedisStore(GameStore):
    """A ``GameStore`` on Redis. Build it with ``from_url`` (timeouts and retries set there), or
    from an ``Executor`` (``accordion.store.redis_connect.connect``).

    ``wait_replicas`` > 0: every write is answered only once that many replicas acknowledged
    it (see the module docstring); the executor does it.
    """

    def __init__(
        self,
        executor: Executor,
        *,
        key_prefix: str = "acc",
        event_log_len: int = EVENT_LOG_LEN,
        watched_only: bool = False,
    ) -> None:
        if event_log_len < 1:
            raise ValueError(f"event_log_len must be at least 1, not {event_log_len!r}")
        self.executor = executor
        # The command client, which server.py's rate limiter shares (it reads ``_redis``).
        self._redis = executor.client
        self._prefix = key_prefix
        # MAXLEN ~ trims whole stream nodes (100 entries): exact trimming for short logs.
        self._event_log = (event_log_len, "~" if event_log_len >= 100 else "=")
        self._watched_only = "1" if watched_only else "0"
        # A replayed reply rewrites the game's TTL (a no-op write) so that WAIT covers it.
        self._touch = "1" if executor.wait_replicas else "0"
        self._closed = False

    @property
    def wait_replicas(self) -> int:
        return self.executor.wait_replicas

    @property
    def redis_client(self) -> Redis | RedisCluster:
        """The redis-py client of short commands (for other users of the same Redis: rate limits)."""
        return self.executor.client

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
        call_timeout: float = 0.0,
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

        ``wait_replicas``/``wait_timeout``: see the module docstring; the read timeout of the
        connections that write grows by ``wait_timeout``.

        ``call_timeout``: how long the caller lets one store call take (the server's
        ``--store-timeout``). The lean connection of a plain ``redis://``/``unix://`` URL sends
        a call once, so its read timeout is this (when longer than ``socket_timeout``): a Redis
        that stalls for more than ``socket_timeout`` is waited for, not failed early.

        Raises:
            ValueError: a malformed cluster or sentinel URL, a negative ``wait_replicas``.
        """
        settings = Settings(
            socket_timeout=socket_timeout,
            socket_connect_timeout=socket_connect_timeout,
            retries=retries,
            backoff_base=backoff_base,
            backoff_cap=backoff_cap,
            health_check_interval=health_check_interval,
            max_connections=max_connections,
            watch_block=watch_block,
            wait_replicas=wait_replicas,
            wait_timeout=wait_timeout,
            call_timeout=call_timeout,
        )
        return cls(
            connect(url, settings),
            key_prefix=key_prefix,
            event_log_len=event_log_len,
            watched_only=watched_only,
        )

    def _keys(self, game_id: str) -> _Keys:
        base = f"{self._prefix}:{{{game_id}}}:"
        return _Keys(base + "g", base + "e", base + "r", base + "r0")

    def claim_key(self, key: str) -> str:
        return f"{self._prefix}:{{req:{key}}}:n"

    def named_key(self, name: str) -> str:
        return f"{self._prefix}:{{n:{name}}}"

    def pool_key(self, pool: str) -> str:
        return f"{self._prefix}:{{pool:{pool}}}"

    def game_keys(self, game_id: str) -> list[str]:
        """Every key a game can have (for tests and operators)."""
        return self._keys(game_id).all

    # --- the verbs

    async def create(self, record: GameRecord, *, ttl: float) -> None:
        keys = self._keys(record.game_id)
        created = await self.executor.write(
            CREATE, keys.all, [record.version, record.token_hash, record.data, ms(ttl)]
        )
        if not created:
            raise GameExists(record.game_id)

    async def load(self, game_id: str, *, credential: bytes = b"") -> GameRecord:
        # With a credential Redis checks it (the LOAD script): a wrong one gets the nil an
        # unknown id gets, so nothing here tells them apart.
        found = await self.executor.read_game(self._keys(game_id).g, credential)
        if found is None or found[0] is None:
            raise GameNotFound(game_id)
        version, token_hash, data = found
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
        if len(fingerprint) > MAX_FINGERPRINT:
            raise ValueError(f"a fingerprint is at most {MAX_FINGERPRINT} bytes")
        args = [
            expected_version,
            data,
            ms(ttl),
            event,
            request_id,
            fingerprint,
            reply,
            self._event_log[0],
            REPLIES_KEPT,
            self._touch,
            self._event_log[1],
            self._watched_only,
        ]
        result = await self.executor.write(CAS, self._keys(game_id).all, args)
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
        rec = await self.executor.script(GET_REPLY, [keys.r, keys.r0], [request_id])
        if rec is None:
            return None
        await self.executor.confirm(keys.g)  # a replayed reply is an answer like the first
        return StoredReply(rec[0], rec[1])

    async def claim_request(
        self, key: str, fingerprint: bytes, reply: bytes, *, ttl: float
    ) -> StoredReply | None:
        args = [fingerprint, reply, ms(ttl), self._touch]
        rec = await self.executor.write(CLAIM, [self.claim_key(key)], args)
        return None if rec is None else StoredReply(rec[0], rec[1])

    async def replace_token_hash(self, game_id: str, expected: bytes, token_hash: bytes) -> bool:
        result = await self.executor.write(SET_TOKEN_HASH, [self._keys(game_id).g], [expected, token_hash])
        kind = result[0]
        if kind == b"nf":
            raise GameNotFound(game_id)
        return bool(kind == b"ok")

    async def put_named(self, name: str, value: bytes, *, ttl: float) -> bool:
        key = self.named_key(name)
        return bool(await self.executor.write(PUT_NAMED, [key], [value, ms(ttl)]))

    async def get_named(self, name: str) -> bytes | None:
        key = self.named_key(name)
        value = await self.executor.call(lambda: self._redis.get(key))
        return None if value is None else value if isinstance(value, bytes) else value.encode()

    async def pool_add(self, pool: str, items: Sequence[bytes], *, cap: int) -> int:
        if not items:
            return await self.pool_size(pool)
        return int(await self.executor.write(POOL_ADD, [self.pool_key(pool)], [cap, *items]))

    async def pool_pop(self, pool: str) -> bytes | None:
        item = await self.executor.write(POOL_POP, [self.pool_key(pool)], [])
        return None if item is None else item if isinstance(item, bytes) else str(item).encode()

    async def pool_size(self, pool: str) -> int:
        key = self.pool_key(pool)
        return int(await self.executor.call(lambda: self._redis.scard(key)))

    async def delete(self, game_id: str) -> None:
        keys = self._keys(game_id).all
        await self.executor.call(lambda: self._redis.delete(*keys))  # one slot, so one DEL

    def watch(self, game_id: str, after_version: int) -> AsyncIterator[WatchEvent]:
        return self._watch(game_id, after_version)

    async def _exists(self, key: str) -> bool:
        return bool(await self.executor.call(lambda: self._redis.exists(key)))

    async def _watch(self, game_id: str, after_version: int) -> AsyncIterator[WatchEvent]:
        """XREAD BLOCK from ``<after_version>-0`` on a connection of this watch's own, closed
        when the watch ends however it ends; when a block times out with nothing new, end if
        the game key is gone (deleted or expired). Redis going away raises
        ``StoreUnavailable`` once the retries are spent. After every redis-py call a cancelled
        watcher stops even if the cancellation was swallowed on the way (``raise_lost_cancel``:
        ``accordion.store.redis_watch`` tells why)."""
        keys = self._keys(game_id)
        last: bytes | str = f"{max(after_version, 0)}-0"
        if self._watched_only == "1":  # the stream exists only once someone watches: make it
            opened = await self.executor.script(OPEN_STREAM, [keys.g, keys.e], [])
            raise_lost_cancel()
            if opened is None:
                return
        else:
            exists = await self._exists(keys.g)
            raise_lost_cancel()
            if not exists:
                return
        async with self.executor.watching() as reader:
            while not self._closed:
                try:
                    entries = await reader.xread(keys.e, last)
                    if not entries:
                        exists = await self._exists(keys.g)
                        raise_lost_cancel()
                        if not exists:
                            return
                except StoreUnavailable:
                    if self._closed:
                        return  # close() cut our connection: that is an end, not an outage
                    raise
                for entry_id, fields in entries:
                    last = entry_id
                    yield WatchEvent(game_id, int(entry_id.split(b"-", 1)[0]), fields[b"p"])

    async def ping(self) -> None:
        await self.executor.call(self._redis.ping)

    async def close(self) -> None:
        """Close every client and every watcher's connection: watchers end at once."""
        self._closed = True
        await self.executor.close()
