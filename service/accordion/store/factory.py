"""Choosing a backend from configuration: one URL."""

from __future__ import annotations

from urllib.parse import urlsplit

from .base import GameStore
from .memory import EVENT_LOG_LEN, MemoryStore

REDIS_SCHEMES = ("redis", "rediss", "unix", "redis+sentinel", "redis+cluster", "rediss+cluster")


def open_store(
    url: str | None,
    *,
    key_prefix: str = "acc",
    wait_replicas: int = 0,
    wait_timeout: float = 0.5,
    event_log_len: int = EVENT_LOG_LEN,
    watched_only: bool = False,
) -> GameStore:
    """The store a URL names.

    ``None``, ``""`` or ``"memory://"`` give the embedded ``MemoryStore``;
    ``redis://host:port/db``, ``rediss://…`` (TLS), ``unix:///path.sock``,
    ``redis+sentinel://host:port[,host:port…]/<service>[/db]`` and
    ``redis+cluster://host:port[,host:port…]`` (``rediss+cluster://`` for TLS) give a
    ``RedisStore`` (connections are opened lazily: call ``await store.ping()`` to check).
    ``wait_replicas`` > 0 (Redis only): a write is answered only after that many replicas
    acknowledged it within ``wait_timeout`` seconds (``WAIT``; see docs/redis.md).
    ``event_log_len``: the events kept per game for ``watch`` (the server asks for a few:
    its games carry their own log); ``watched_only``: keep them only for games
    someone watches (``watch`` then sees only events from when it began).

    Raises:
        ValueError: any other scheme, a malformed cluster or sentinel URL, or
            ``wait_replicas`` with the memory store; quoted.
    """
    if not url or url == "memory://":
        if wait_replicas:
            raise ValueError(f"wait_replicas={wait_replicas}: the memory store has no replicas")
        return MemoryStore(event_log_len=event_log_len, watched_only=watched_only)
    scheme = urlsplit(url).scheme
    if scheme in REDIS_SCHEMES:
        # Imported here so the embedded store needs nothing of redis-py.
        from .redis import RedisStore

        return RedisStore.from_url(
            url, key_prefix=key_prefix, wait_replicas=wait_replicas, wait_timeout=wait_timeout,
            event_log_len=event_log_len, watched_only=watched_only,
        )
    raise ValueError(
        f"unknown store URL {url!r}: expected memory://, redis://, rediss://, unix://, "
        "redis+sentinel:// or redis+cluster://"
    )
