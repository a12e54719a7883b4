"""The Redis store (redis.asyncio): several service processes share games through one Redis.

Keys (``P`` is the key prefix; the ``{game_id}`` hash tag puts one game's keys in one
cluster slot, which is what lets a single script touch them all):

* ``P:{id}:g``  HASH  v = version, t = token hash, d = data
* ``P:{id}:e``  STREAM of events, entry id ``<version>-0`` (so a watcher resumes from a
  version), field p = payload; trimmed to about ``EVENT_LOG_LEN`` entries
* ``P:{id}:r``  HASH of idempotency records, fields ``f:<request_id>`` (fingerprint) and
  ``r:<request_id>`` (reply); ``P:{id}:r0`` is the previous generation (see below)
* ``P:{req:<key>}:n``  HASH f, r: a ``claim_request`` record

Why one records hash per game and not one key per request: the base contract says every
key of a game expires together and ``delete`` removes them all; per-request keys could be
neither refreshed nor deleted without enumerating them. To bound memory on a long game the
hash is rotated: when ``r`` holds ``REPLIES_KEPT`` records it is renamed to ``r0``
(dropping the older generation), so the last ``REPLIES_KEPT``..2x records are answerable.

Every mutation is one Lua script (EVALSHA; redis-py loads it on NOSCRIPT), so it is atomic
across processes and costs one round trip. Connection errors and timeouts are retried by
redis-py with exponential backoff; what still fails becomes ``StoreUnavailable``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

from redis import exceptions as rexc
from redis.asyncio import BlockingConnectionPool, ConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff

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
from .memory import EVENT_LOG_LEN, REPLIES_KEPT

# Errors that mean "Redis is not there (right now)". BusyLoadingError is a ConnectionError
# subclass (listed for the reader); ReadOnlyError is what a demoted primary answers after a
# failover, which is just as transient.
UNAVAILABLE = (rexc.ConnectionError, rexc.TimeoutError, rexc.BusyLoadingError, rexc.ReadOnlyError)

# KEYS: g e r r0. ARGV: expected, data, ttl_ms, event, request_id, fingerprint, reply, maxlen, keep.
# Returns {'nf'} | {'dup', fingerprint, reply} | {'conflict', current} | {'ok', version}.
_CAS = """
local cur = redis.call('HGET', KEYS[1], 'v')
if not cur then return {'nf'} end
local rid = ARGV[5]
if rid ~= '' then
  for i = 3, 4 do
    local rec = redis.call('HMGET', KEYS[i], 'f:' .. rid, 'r:' .. rid)
    if rec[1] then return {'dup', rec[1], rec[2]} end
  end
end
if tonumber(cur) ~= tonumber(ARGV[1]) then return {'conflict', cur} end
local v = tostring(tonumber(cur) + 1)
redis.call('HSET', KEYS[1], 'v', v, 'd', ARGV[2])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[8], v .. '-0', 'p', ARGV[4])
if rid ~= '' then
  if redis.call('HLEN', KEYS[3]) >= 2 * tonumber(ARGV[9]) then
    redis.call('RENAME', KEYS[3], KEYS[4])
  end
  redis.call('HSET', KEYS[3], 'f:' .. rid, ARGV[6], 'r:' .. rid, ARGV[7])
end
for i = 1, 4 do redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
return {'ok', v}
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
  local rec = redis.call('HMGET', KEYS[i], 'f:' .. ARGV[1], 'r:' .. ARGV[1])
  if rec[1] then return rec end
end
return false
"""

# KEYS: n. ARGV: fingerprint, reply, ttl_ms. Returns the earlier {fingerprint, reply} or nil.
_CLAIM = """
local rec = redis.call('HMGET', KEYS[1], 'f', 'r')
if rec[1] then return rec end
redis.call('HSET', KEYS[1], 'f', ARGV[1], 'r', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return false
"""


@contextlib.contextmanager
def _unavailable() -> Iterator[None]:
    """Turn what is left of redis-py's connection errors (after its retries) into StoreUnavailable."""
    try:
        yield
    except UNAVAILABLE as exc:
        raise StoreUnavailable(f"redis: {exc}") from exc


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


class RedisStore(GameStore):
    """A ``GameStore`` on Redis. Build it with ``from_url`` (timeouts and retries set there).

    Two pools: ``pool`` serves the short commands; ``watch_pool`` serves the blocking XREADs
    of ``watch``. A blocked XREAD holds its connection for up to ``watch_block`` seconds, so
    watchers get their own pool and can never starve moves of connections; each watcher
    borrows a connection per XREAD and returns it between reads.
    """

    def __init__(
        self,
        pool: ConnectionPool,
        watch_pool: ConnectionPool,
        *,
        key_prefix: str = "acc",
        watch_block: float = 1.0,
    ) -> None:
        self._redis = Redis(connection_pool=pool)
        self._watch_redis = Redis(connection_pool=watch_pool)
        self._prefix = key_prefix
        self._watch_block_ms = _ms(watch_block)
        self._cas = self._redis.register_script(_CAS)
        self._create = self._redis.register_script(_CREATE)
        self._get_reply = self._redis.register_script(_GET_REPLY)
        self._claim = self._redis.register_script(_CLAIM)
        self._closed = False

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
    ) -> RedisStore:
        """A store on ``redis://``, ``rediss://`` or ``unix://`` ``url``.

        Worst case for one call while Redis is down: about ``(retries + 1)`` attempts, each
        bounded by ``socket_connect_timeout`` (refused connections fail at once) plus
        backoff sleeps of ``backoff_base * 2**n`` capped at ``backoff_cap``; a hung Redis
        costs up to ``(retries + 1) * socket_timeout``. Then ``StoreUnavailable``. With the
        defaults: about 0.3 s when the port refuses, about 3.3 s when Redis hangs (measured).

        A command that timed out may still run later (it sits in the socket buffer of a hung
        server), so StoreUnavailable from ``compare_and_set`` means "unknown outcome": retry
        with the same ``request_id`` and the recorded reply tells.
        """
        retry_on = [rexc.ConnectionError, rexc.TimeoutError]

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

        # Commands: bounded, and a caller waits (up to socket_timeout) for a free connection
        # rather than failing at once when all are busy.
        pool = BlockingConnectionPool.from_url(
            url, max_connections=max_connections, timeout=socket_timeout, **options(socket_timeout)
        )
        # Watchers: one connection per blocked XREAD; the read timeout must outlast the block.
        watch_pool = ConnectionPool.from_url(url, **options(watch_block + socket_timeout))
        return cls(pool, watch_pool, key_prefix=key_prefix, watch_block=watch_block)

    def _keys(self, game_id: str) -> _Keys:
        base = f"{self._prefix}:{{{game_id}}}:"
        return _Keys(base + "g", base + "e", base + "r", base + "r0")

    def claim_key(self, key: str) -> str:
        return f"{self._prefix}:{{req:{key}}}:n"

    def game_keys(self, game_id: str) -> list[str]:
        """Every key a game can have (for tests and operators)."""
        return self._keys(game_id).all

    # --- the verbs

    async def create(self, record: GameRecord, *, ttl: float) -> None:
        keys = self._keys(record.game_id)
        with _unavailable():
            created = await self._create(
                keys=keys.all, args=[record.version, record.token_hash, record.data, _ms(ttl)]
            )
        if not created:
            raise GameExists(record.game_id)

    async def load(self, game_id: str) -> GameRecord:
        with _unavailable():
            version, token_hash, data = await self._redis.hmget(self._keys(game_id).g, ["v", "t", "d"])
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
        args = [expected_version, data, _ms(ttl), event, request_id, fingerprint, reply,
                EVENT_LOG_LEN, REPLIES_KEPT]
        with _unavailable():
            result = await self._cas(keys=self._keys(game_id).all, args=args)
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
        with _unavailable():
            rec = await self._get_reply(keys=[keys.r, keys.r0], args=[request_id])
        return None if rec is None else StoredReply(rec[0], rec[1])

    async def claim_request(self, key: str, fingerprint: bytes, reply: bytes, *, ttl: float) -> StoredReply | None:
        with _unavailable():
            rec = await self._claim(keys=[self.claim_key(key)], args=[fingerprint, reply, _ms(ttl)])
        return None if rec is None else StoredReply(rec[0], rec[1])

    async def delete(self, game_id: str) -> None:
        with _unavailable():
            await self._redis.delete(*self._keys(game_id).all)  # one slot, so one DEL

    def watch(self, game_id: str, after_version: int) -> AsyncIterator[WatchEvent]:
        return self._watch(game_id, after_version)

    async def _watch(self, game_id: str, after_version: int) -> AsyncIterator[WatchEvent]:
        """XREAD BLOCK from ``<after_version>-0``; when a block times out with nothing new,
        end if the game key is gone (deleted or expired). Redis going away raises
        ``StoreUnavailable`` once redis-py's retries are spent."""
        keys = self._keys(game_id)
        last: bytes | str = f"{max(after_version, 0)}-0"
        with _unavailable():
            if not await self._redis.exists(keys.g):
                return
        while not self._closed:
            try:
                with _unavailable():
                    batches = await self._watch_redis.xread({keys.e: last}, count=100, block=self._watch_block_ms)
                    if not batches and not await self._redis.exists(keys.g):
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
        with _unavailable():
            await self._redis.ping()

    async def close(self) -> None:
        """Close both pools. Watchers end at their next wake-up, within about ``watch_block``
        (redis-py reconnects a cut XREAD by itself, so it is the flag that stops them)."""
        self._closed = True
        await self._redis.aclose(close_connection_pool=True)
        await self._watch_redis.aclose(close_connection_pool=True)
