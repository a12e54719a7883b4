"""What the Redis store makes of redis-py's errors: which mean "Redis is not there (right now)"
(``StoreUnavailable``), and which, in a cluster, are worth re-reading the slot map for."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from redis import exceptions as rexc

from .base import StoreUnavailable

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
TOPOLOGY = (
    rexc.ConnectionError,
    rexc.TimeoutError,
    rexc.ClusterDownError,
    rexc.TryAgainError,
    rexc.MovedError,
    rexc.AskError,
    rexc.SlotNotCoveredError,
    rexc.ReadOnlyError,
)


def refused(exc: BaseException) -> bool:
    """A Redis refusal that passes once the deployment heals (no replica in sync, and so on)."""
    return isinstance(exc, rexc.ResponseError) and any(code in str(exc) for code in _REFUSALS)


def torn_down(exc: BaseException) -> bool:
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


def retryable_in_cluster(exc: BaseException) -> bool:
    """In a cluster: an error after which the slot map is re-read and the call tried again."""
    return isinstance(exc, (*TOPOLOGY, rexc.RedisClusterException)) or torn_down(exc) or refused(exc)


def as_unavailable(exc: Exception) -> StoreUnavailable | None:
    """What ``unavailable`` raises for ``exc`` (raised ``from exc``), or None: ``exc`` goes out as it is."""
    if isinstance(exc, UNAVAILABLE) or refused(exc):
        return StoreUnavailable(f"redis: {exc}")
    if isinstance(exc, (AttributeError, TypeError, RuntimeError)) and torn_down(exc):
        return StoreUnavailable(f"redis: connection torn down mid-call ({exc})")
    if isinstance(exc, OSError) and not isinstance(exc, TimeoutError):
        # A socket's own error that redis-py did not wrap: the store says it, so no caller
        # needs to know what a store library raises. (A TimeoutError goes out as it is: the
        # caller's timer tells its own from the store's.)
        return StoreUnavailable(f"redis: {exc}")
    return None


@contextlib.contextmanager
def unavailable() -> Iterator[None]:
    """Turn what is left of redis-py's connection errors (after its retries) into StoreUnavailable.
    (The hot path's calls, ``FastExecutor``, map with ``as_unavailable`` in a plain ``except``
    instead: entering a generator-based context manager costs ~0.7 µs a call.)"""
    try:
        yield
    except Exception as exc:
        mapped = as_unavailable(exc)
        if mapped is None:
            raise
        raise mapped from exc
