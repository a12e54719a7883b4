"""Where and how a server listens: grpc's options for the main server (the receive and
metadata limits, keepalive, connection age), the check that an address is free before grpc
binds it, and why a bind failed, in a few words (``ListenError``). ``server.py`` uses them."""

from __future__ import annotations

import errno
import socket

from accordion.config import Config

MAX_RECEIVE_BYTES = 64 * 1024
IDLE_CONNECTION_MS = 300_000  # a connection without calls this long gets GOAWAY
MAX_METADATA_BYTES = 16 * 1024  # all request metadata (headers) together; beyond it the call fails


class ListenError(Exception):
    """The server could not listen where it was told (the port is taken, the address is not
    this machine's): one line for the person who started it, no traceback."""


def server_options(config: Config) -> list[tuple[str, int]]:
    """grpc's options for the main server: limits, keepalive, connection age and idleness."""
    # One process: a taken port is an error, not a second server sharing it. Workers
    # (--workers > 1) share the port on purpose: the kernel spreads connections over them.
    reuse_port = 1 if config.workers > 1 else 0
    age = [
        ("grpc.max_connection_age_ms", max(1, round(config.max_connection_age * 1000))),
        ("grpc.max_connection_age_grace_ms", max(1, round(config.grace * 1000))),  # as for SIGTERM
    ]
    return [
        ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
        ("grpc.max_metadata_size", MAX_METADATA_BYTES),  # soft and hard limit equal: no random
        ("grpc.absolute_max_metadata_size", MAX_METADATA_BYTES),  # rejections between the two
        ("grpc.so_reuseport", reuse_port),
        *(age if config.max_connection_age > 0 else []),
        ("grpc.keepalive_time_ms", 60_000),  # ping idle connections every minute...
        ("grpc.keepalive_timeout_ms", 20_000),  # ...and drop those that do not answer in 20 s
        ("grpc.keepalive_permit_without_calls", 1),  # WatchGame clients sit idle between events
        ("grpc.http2.min_ping_interval_without_data_ms", 10_000),  # tolerate client pings this often
        ("grpc.http2.max_ping_strikes", 3),
        # Per connection: HTTP/2 streams open at once, counted when a call's headers arrive, so
        # one connection cannot hold more calls than this, sent or half-sent (accordion.api.limits).
        ("grpc.max_concurrent_streams", config.max_streams_per_connection),
        # ops (issue 34): without this, grpc core also resets new streams (REFUSED_STREAM: the
        # client's UNAVAILABLE "RST_STREAM ... error code 7") while the loop has not yet freed
        # finished ones, counted nowhere on the server: 4,990 of 26,083 calls at 1,500/s on 4
        # connections, none with it off. The advertised cap still holds; the calls wait in the
        # core instead, where accordion_grpc_calls_waiting and accordion_rpc_core_wait_seconds
        # see them, and the limits of accordion.api.limits refuse with a reason.
        ("grpc.http.overload_protection", 0),
        # The server's keepalive pings go on while a connection carries no data (an idle
        # WatchGame): a peer that vanished is found and its calls and watch slots freed.
        ("grpc.http2.max_pings_without_data", 0),
        # A connection with no call open for this long is closed (GOAWAY; gRPC clients reconnect
        # on their next call): idle connections hold nothing for a client but cost a socket here.
        ("grpc.max_connection_idle_ms", IDLE_CONNECTION_MS),
    ]


def check_free(listen: str, flag: str = "", *, shared: bool = False) -> None:
    """Raise ``ListenError`` when ``listen`` is taken, before grpc tries (grpc's C core would
    print its own multi-part error line first). ``flag`` says which setting it came from;
    ``shared``: the port may be shared with this server's other workers (SO_REUSEPORT), so only
    a socket that does not share it makes the port taken."""
    host, _, port_text = listen.rpartition(":")
    if not port_text.isdigit() or int(port_text) == 0:
        return  # grpc's own parsing and error apply
    try:
        found = socket.getaddrinfo(
            host.strip("[]") or None, int(port_text), type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as exc:
        raise ListenError(f"cannot listen on {listen}{flag}: {exc.strerror}") from None
    for family, kind, proto, _, addr in found:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as grpc binds
            if shared:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            try:
                probe.bind(addr)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    raise ListenError(f"cannot listen on {listen}{flag}: {_IN_USE}") from None
                raise ListenError(f"cannot listen on {listen}{flag}: {exc.strerror}") from None


_IN_USE = "the address is in use (is another server running?); pick another port with --listen"


def bind_failure(exc: RuntimeError) -> str:
    """Why grpc could not bind, in a few words (its message names the address and little else)."""
    text = str(exc)
    if "in use" in text.lower() or "Failed to bind" in text:
        return _IN_USE
    return text
