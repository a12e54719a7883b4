"""Choosing a backend from configuration: one URL."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from .base import GameStore
from .memory import DEFAULT_EVICT_IDLE, DEFAULT_MAX_GAMES, EVENT_LOG_LEN, MemoryStore

REDIS_SCHEMES = ("redis", "rediss", "unix", "redis+sentinel", "redis+cluster", "rediss+cluster")


def is_memory_url(url: str | None) -> bool:
    """Whether ``url`` names the embedded memory store (``None``, ``""``, ``memory://…``): games
    then live in one process, so it cannot be shared by several workers."""
    return not url or urlsplit(url).scheme == "memory"


def parse_memory_url(url: str) -> int | None:
    """``memory://`` or ``memory://?max_games=N`` → the cap on games (``DEFAULT_MAX_GAMES`` when
    not given; ``max_games=none``: no cap).

    Raises:
        ValueError: a host, path or another query option, or a cap that is not a positive
            integer; quoted.
    """
    parts = urlsplit(url)
    try:
        query = parse_qs(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query))
    except ValueError as exc:
        raise ValueError(f"store URL {url!r}: malformed query ({exc})") from None
    if parts.scheme != "memory" or parts.netloc or parts.path or parts.fragment or set(query) - {"max_games"}:
        raise ValueError(f"store URL {url!r}: expected memory:// or memory://?max_games=<positive integer>")
    values = query.get("max_games")
    if values is None:
        return DEFAULT_MAX_GAMES
    if len(values) != 1 or not (values[0].isdigit() and int(values[0]) > 0 or values[0] == "none"):
        raise ValueError(f"store URL {url!r}: max_games must be one positive integer (or none for no cap)")
    return None if values[0] == "none" else int(values[0])


def open_store(
    url: str | None,
    *,
    key_prefix: str = "acc",
    wait_replicas: int = 0,
    wait_timeout: float = 0.5,
    call_timeout: float = 0.0,
    event_log_len: int = EVENT_LOG_LEN,
    watched_only: bool = False,
    evict_idle: float = DEFAULT_EVICT_IDLE,
) -> GameStore:
    """The store a URL names.

    ``None``, ``""`` or ``"memory://"`` give the embedded ``MemoryStore``, holding at most
    ``DEFAULT_MAX_GAMES`` games; ``memory://?max_games=N`` sets that cap (``none``: no cap);
    ``redis://host:port/db``, ``rediss://…`` (TLS), ``unix:///path.sock``,
    ``redis+sentinel://host:port[,host:port…]/<service>[/db]`` and
    ``redis+cluster://host:port[,host:port…]`` (``rediss+cluster://`` for TLS) give a
    ``RedisStore`` (connections are opened lazily: call ``await store.ping()`` to check).
    ``wait_replicas`` > 0 (Redis only): a write is answered only after that many replicas
    acknowledged it within ``wait_timeout`` seconds (``WAIT``; see docs/redis.md).
    ``call_timeout`` (Redis only): how long the caller lets one store call take; a connection
    that sends a call only once waits that long for its answer (``RedisStore.from_url``).
    ``event_log_len``: the events kept per game for ``watch`` (the server asks for a few:
    its games carry their own log); ``watched_only``: keep them only for games
    someone watches (``watch`` then sees only events from when it began). ``evict_idle``
    (memory only): seconds a game must go untouched before the cap may evict it.

    Raises:
        ValueError: any other scheme, a malformed memory, cluster or sentinel URL, or
            ``wait_replicas`` with the memory store; quoted.
    """
    if is_memory_url(url):
        max_games = parse_memory_url(url) if url else DEFAULT_MAX_GAMES
        if wait_replicas:
            raise ValueError(f"wait_replicas={wait_replicas}: the memory store has no replicas")
        return MemoryStore(
            event_log_len=event_log_len, watched_only=watched_only, max_games=max_games, evict_idle=evict_idle
        )
    assert url is not None
    scheme = urlsplit(url).scheme
    if scheme in REDIS_SCHEMES:
        # Imported here so the embedded store needs nothing of redis-py.
        from .redis import RedisStore

        return RedisStore.from_url(
            url,
            key_prefix=key_prefix,
            wait_replicas=wait_replicas,
            wait_timeout=wait_timeout,
            call_timeout=call_timeout,
            event_log_len=event_log_len,
            watched_only=watched_only,
        )
    raise ValueError(
        f"unknown store URL {url!r}: expected memory://, redis://, rediss://, unix://, "
        "redis+sentinel:// or redis+cluster://"
    )
