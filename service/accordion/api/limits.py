"""What one client may hold at once, so no client takes the capacity health and others need.

Counted in this process, decided when a call's headers arrive (before its request message,
which a hostile client may never send), in ``admit``:

* every call but health: ``max_calls`` in the process (``--max-concurrent-rpcs``) and
  ``max_calls_per_client`` per client: its API key's name when keys are on, else its IP
  address (``context.peer()`` without the port). Behind a proxy every call comes from the
  proxy's address: raise the per-client cap there (or 0: off) and let the proxy limit clients;
* health (``grpc.health.v1``): ``max_health_calls`` of its own, counted apart from the others,
  so probes are answered whatever the rest of the server is doing, and at most
  ``max_health_calls_per_client`` of them from one client;
* the solver's searches (Solve, Hint, NewGame(winnable_only)): a share of its workers and of
  its queue per client (``accordion.api.fairpool``), the client named by ``current_client``;
* WatchGame streams, once the request names its game: ``max_watches_per_connection`` per
  connection (``context.peer()`` with its port) and ``max_watches_per_game`` per game.

Per connection, HTTP/2 itself caps the streams open at once (``grpc.max_concurrent_streams``,
set by the server from ``--max-streams-per-connection``): a connection cannot open more
calls than that, sent or half-sent. A call whose message does not arrive within
``request_timeout`` seconds of its headers ends DEADLINE_EXCEEDED (see ``accordion.api.service``).

A refusal is RESOURCE_EXHAUSTED ``CAPACITY_EXCEEDED`` with a ``google.rpc.RetryInfo``; the
call never reaches the servicer and changes nothing.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

from .errors import capacity_exceeded

HEALTH_PREFIX = "grpc.health.v1.Health/"
WATCH_METHODS = frozenset({"accordion.v1.AccordionService/WatchGame"})  # counted per game and connection
# How long a refused client is asked to wait: calls are short, a watcher's slot frees when a
# stream ends (a game's end, a client going away), so it is asked to wait longer.
CALL_RETRY_AFTER = 1.0
WATCH_RETRY_AFTER = 5.0


@dataclass(frozen=True)
class Limits:
    max_calls: int = 1000
    max_calls_per_client: int = 250  # 0: no per-client cap
    max_health_calls: int = 100
    # Of those, one client's: a client holding health calls open (half-sent, or Watch streams)
    # cannot take the budget probes from elsewhere need.
    max_health_calls_per_client: int = 10
    max_watches_per_connection: int = 16
    max_watches_per_game: int = 64
    request_timeout: float = 5.0


# The client the current call is counted as (set by the wrapper when it admits the call, in the
# call's own task): what the solver's fair pool queues a search under. "" outside a call.
_CLIENT: ContextVar[str] = ContextVar("accordion_client", default="")


def current_client() -> str:
    """The client of the call this task serves ("" outside a call)."""
    return _CLIENT.get()


def publish_client(client: str) -> None:
    """Name ``client`` as the current call's client, for the rest of this call's task."""
    _CLIENT.set(client)


def client_of(peer: str) -> str:
    """The client's address in a grpc peer string: ``ipv4:1.2.3.4:5678`` → ``1.2.3.4``,
    ``ipv6:[::1]:5678`` → ``::1``; anything else (``unix:``) as it is."""
    kind, _, rest = peer.partition(":")
    if kind in ("ipv4", "ipv6"):
        return rest.rpartition(":")[0].strip("[]")
    return peer


class Admission:
    """The counters behind ``Limits``. Every method runs on the event loop without awaiting,
    so each check-and-count is atomic; every ``enter`` that returns is paired with a ``leave``."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.calls = 0
        self.health_calls = 0
        self.by_client: dict[str, int] = {}
        self.health_by_client: dict[str, int] = {}
        self.watches_by_connection: dict[str, int] = {}
        self.watches_by_game: dict[str, int] = {}

    def enter_call(self, health: bool, client: str) -> None:
        """Count one call in, or raise ``capacity_exceeded`` (nothing counted)."""
        limits = self.limits
        if health:
            if self.health_calls >= limits.max_health_calls:
                raise capacity_exceeded("health calls", limits.max_health_calls, CALL_RETRY_AFTER)
            held = self.health_by_client.get(client, 0)
            if held >= limits.max_health_calls_per_client:
                raise capacity_exceeded(
                    "health calls from one client", limits.max_health_calls_per_client, CALL_RETRY_AFTER
                )
            self.health_calls += 1
            self.health_by_client[client] = held + 1
            return
        if self.calls >= limits.max_calls:
            raise capacity_exceeded("calls on this server", limits.max_calls, CALL_RETRY_AFTER)
        held = self.by_client.get(client, 0)
        if limits.max_calls_per_client and held >= limits.max_calls_per_client:
            raise capacity_exceeded("calls from one client", limits.max_calls_per_client, CALL_RETRY_AFTER)
        self.calls += 1
        self.by_client[client] = held + 1

    def leave_call(self, health: bool, client: str) -> None:
        if health:
            self.health_calls -= 1
            _decrement(self.health_by_client, client)
            return
        self.calls -= 1
        _decrement(self.by_client, client)

    def enter_watch(self, connection: str, game_id: str) -> None:
        limits = self.limits
        on_connection = self.watches_by_connection.get(connection, 0)
        if on_connection >= limits.max_watches_per_connection:
            raise capacity_exceeded(
                "WatchGame streams on one connection", limits.max_watches_per_connection, WATCH_RETRY_AFTER
            )
        on_game = self.watches_by_game.get(game_id, 0)
        if on_game >= limits.max_watches_per_game:
            raise capacity_exceeded(
                "WatchGame streams on one game", limits.max_watches_per_game, WATCH_RETRY_AFTER
            )
        self.watches_by_connection[connection] = on_connection + 1
        self.watches_by_game[game_id] = on_game + 1

    def leave_watch(self, connection: str, game_id: str) -> None:
        _decrement(self.watches_by_connection, connection)
        _decrement(self.watches_by_game, game_id)


def _decrement(counts: dict[str, int], key: str) -> None:
    """One less for ``key``; a key at zero is dropped, so the maps hold only what is in use."""
    left = counts.get(key, 0) - 1
    if left > 0:
        counts[key] = left
    else:
        counts.pop(key, None)
