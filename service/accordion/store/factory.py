"""Choosing a backend from configuration: one URL."""

from __future__ import annotations

from urllib.parse import urlsplit

from .base import GameStore
from .memory import MemoryStore

REDIS_SCHEMES = ("redis", "rediss", "unix")


def open_store(url: str | None, *, key_prefix: str = "acc") -> GameStore:
    """The store a URL names.

    ``None``, ``""`` or ``"memory://"`` give the embedded ``MemoryStore``;
    ``redis://host:port/db``, ``rediss://…`` (TLS) and ``unix:///path.sock`` give a
    ``RedisStore`` (connections are opened lazily: call ``await store.ping()`` to check).

    Raises:
        ValueError: any other scheme, quoted.
    """
    if not url or url == "memory://":
        return MemoryStore()
    scheme = urlsplit(url).scheme
    if scheme in REDIS_SCHEMES:
        # Imported here so the embedded store needs nothing of redis-py.
        from .redis import RedisStore

        return RedisStore.from_url(url, key_prefix=key_prefix)
    raise ValueError(f"unknown store URL {url!r}: expected memory://, redis://, rediss:// or unix://")
