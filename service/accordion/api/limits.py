"""What one client may hold at once, so no client takes the capacity health and others need.

Counted in this process, decided when a call's headers arrive (before its request message,
which a hostile client may never send), in ``admit``:

* every call but health: ``max_calls`` in the process (``--max-concurrent-rpcs``) and
  ``max_calls_per_client`` per client: its API key's name when keys are on, else its IP
  address (``ClientAddresses``: the peer's, or behind a proxy listed in ``--trusted-proxies``
  the address that proxy saw, from ``x-forwarded-for``);
* health Check (``grpc.health.v1``): ``max_health_calls`` of its own, counted apart from the
  others, so probes are answered whatever the rest of the server is doing, and at most
  ``max_health_calls_per_client`` of them from one client (a half-sent one ends after
  ``request_timeout``);
* health Watch streams: a budget apart from Check's, ``max_health_watches`` in the process and
  ``max_health_watches_per_client`` per client. A Watch stream never ends by itself; counted
  with Check, a few clients holding them took every slot probes need (issue 28);
* the solver's searches (Solve, Hint, NewGame(winnable_only)): a share of its workers and of
  its queue per client (``accordion.api.fairpool``), the client named by ``current_client``;
* WatchGame streams, once the request names its game: ``max_watches_per_connection`` per
  connection (``context.peer()`` with its port) and ``max_watches_per_game`` per game.

Per connection, HTTP/2 itself caps the streams open at once (``grpc.max_concurrent_streams``,
set by the server from ``--max-streams-per-connection``): a connection cannot open more
calls than that, sent or half-sent. A call whose message does not arrive within
``request_timeout`` seconds of its headers ends DEADLINE_EXCEEDED (``accordion.api.request_timer``).

A refusal is RESOURCE_EXHAUSTED ``CAPACITY_EXCEEDED`` with a ``google.rpc.RetryInfo``; the
call never reaches the servicer and changes nothing.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from accordion.netaddr import Network

from .errors import capacity_exceeded

HEALTH_PREFIX = "grpc.health.v1.Health/"
HEALTH_WATCH = "grpc.health.v1.Health/Watch"  # a stream: counted in a budget of its own
WATCH_METHODS = frozenset({"accordion.v1.AccordionService/WatchGame"})  # counted per game and connection
# How long a refused client is asked to wait: calls are short, a watcher's slot frees when a
# stream ends (a game's end, a client going away), so it is asked to wait longer.
CALL_RETRY_AFTER = 1.0
WATCH_RETRY_AFTER = 5.0


@dataclass(frozen=True)
class Limits:
    max_calls: int = 1000
    max_calls_per_client: int = 250  # 0: no per-client cap
    max_health_calls: int = 200
    # Of those, one client's: a client holding health calls open (half-sent ones)
    # cannot take the budget probes from elsewhere need.
    max_health_calls_per_client: int = 10
    # Health Watch streams, apart from Check: in the process, and one client's.
    max_health_watches: int = 100
    max_health_watches_per_client: int = 5
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


FORWARDED_FOR = "x-forwarded-for"
MAX_FORWARDED_HOPS = 32  # addresses of x-forwarded-for read at most (from the right)


class ClientAddresses:
    """Who a call comes from, for every per-client limit: the peer's IP address, unless the peer
    is a trusted proxy (``--trusted-proxies``). Then it is the right-most address of
    ``x-forwarded-for`` that is not itself a trusted proxy: each proxy appends the address it
    received the request from, so the right-most entries are written by proxies we trust and
    everything left of the first untrusted one could have been written by the client itself
    (a spoofed header). Anything from an untrusted peer is ignored: its header is its own
    word. An entry that is not an IP address, or a header of only trusted addresses, gives the
    proxy's own address: never a string a client chose (one client would be as many clients as
    it likes)."""

    def __init__(self, trusted: Sequence[Network] = ()) -> None:
        self.trusted = tuple(trusted)

    def is_trusted(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        return any(ip in network for network in self.trusted)

    def client(self, peer: str, metadata: Iterable[Any] | None) -> str:
        """The client's address for a call from ``peer`` (grpc's peer string) with ``metadata``."""
        address = client_of(peer)
        if not self.trusted or not self.is_trusted(address):
            return address
        hops: list[str] = []
        for key, value in metadata or ():
            if key == FORWARDED_FOR:  # repeated headers read as one list, in order
                text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
                hops.extend(part.strip() for part in text.split(","))
        for hop in reversed(hops[-MAX_FORWARDED_HOPS:]):
            try:
                ip = ipaddress.ip_address(hop.strip("[]"))
            except ValueError:
                return address  # not an address: the proxy's, not a made-up name
            if not self.is_trusted(str(ip)):
                return str(ip)
        return address


class Admission:
    """The counters behind ``Limits``. Every method runs on the event loop without awaiting,
    so each check-and-count is atomic; every ``enter`` that returns is paired with a ``leave``."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.calls = 0
        self.health_calls = 0
        self.by_client: dict[str, int] = {}
        self.health_by_client: dict[str, int] = {}
        self.health_watches = 0
        self.health_watches_by_client: dict[str, int] = {}
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

    def enter_health_watch(self, client: str) -> None:
        """Count one health Watch stream in, or raise ``capacity_exceeded`` (nothing counted)."""
        limits = self.limits
        if self.health_watches >= limits.max_health_watches:
            raise capacity_exceeded("health Watch streams", limits.max_health_watches, WATCH_RETRY_AFTER)
        held = self.health_watches_by_client.get(client, 0)
        if held >= limits.max_health_watches_per_client:
            raise capacity_exceeded(
                "health Watch streams from one client",
                limits.max_health_watches_per_client,
                WATCH_RETRY_AFTER,
            )
        self.health_watches += 1
        self.health_watches_by_client[client] = held + 1

    def leave_health_watch(self, client: str) -> None:
        self.health_watches -= 1
        _decrement(self.health_watches_by_client, client)

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
