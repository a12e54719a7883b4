"""Where to connect: ``host:port``, a URL, or a gRPC target string, resolved to what grpc wants.

    resolve_target("127.0.0.1:50051")          # Target("127.0.0.1:50051", tls=None)
    resolve_target("http://localhost:50051")   # Target("localhost:50051", tls=False)
    resolve_target("https://games.example.com")  # Target("games.example.com:443", tls=True)
    resolve_target("dns:///games.example.com:443")  # passed to gRPC as is, tls=None

``tls`` is what the text says about TLS: True for ``https://``, False for ``http://``, None when
it says nothing (the client's ``tls=`` and certificates decide). Anything else is a ValueError
whose message says what a target looks like.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

# gRPC's own name-resolver schemes: the text goes to gRPC unchanged.
GRPC_SCHEMES = ("dns:", "unix:", "unix-abstract:", "ipv4:", "ipv6:", "vsock:", "xds:")
URL_PORTS = {"http": 80, "https": 443}
HOST = re.compile(r"^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)$")
EXAMPLES = "host:port (127.0.0.1:50051), http://host:port, https://host[:port] or dns:///host:port"


@dataclass(frozen=True)
class Target:
    address: str  # what grpc.insecure_channel / secure_channel take
    tls: bool | None  # what the text says: True (https), False (http), None (nothing)


def _port(text: str, target: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"not a valid target {target!r}: the port must be a number in 1..65535")
    return int(text)


def _host_port(host: str, port: int, target: str) -> str:
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # an IPv6 address, bracketed again for gRPC
    if not HOST.match(host):
        raise ValueError(f"not a valid target {target!r}: {host!r} is not a host name; give {EXAMPLES}")
    return f"{host}:{port}"


def resolve_target(target: str) -> Target:
    """The gRPC address and the TLS the text asks for; ValueError for anything else."""
    if not isinstance(target, str):
        raise TypeError(f"a target is text such as '127.0.0.1:50051', not {target!r}")
    text = target.strip()
    if not text:
        raise ValueError(f"the target is empty; give {EXAMPLES}")
    if text.lower().startswith(GRPC_SCHEMES):
        return Target(text, None)
    if "://" in text:
        try:
            url = urlsplit(text)
            port = url.port
        except ValueError as exc:  # a port that is not a number, or out of range
            raise ValueError(f"not a valid target {target!r}: {exc}; give {EXAMPLES}") from None
        scheme = url.scheme.lower()
        if scheme not in URL_PORTS:
            raise ValueError(f"not a valid target {target!r}: use http:// or https:// (or {EXAMPLES})")
        if url.path not in ("", "/") or url.query or url.fragment or url.username or url.password:
            raise ValueError(
                f"not a valid target {target!r}: a target has no path, query or user; give {EXAMPLES}"
            )
        if not url.hostname:
            raise ValueError(f"not a valid target {target!r}: the host is missing; give {EXAMPLES}")
        return Target(_host_port(url.hostname, port or URL_PORTS[scheme], target), scheme == "https")
    host, sep, port_text = text.rpartition(":")
    if not sep or not host:
        raise ValueError(f"not a valid target {target!r}: the port is missing; give {EXAMPLES}")
    if host.startswith("[") != host.endswith("]") or (":" in host and not host.startswith("[")):
        raise ValueError(f"not a valid target {target!r}: an IPv6 address goes in brackets ([::1]:50051)")
    return Target(_host_port(host, _port(port_text, target), target), None)
