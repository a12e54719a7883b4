"""``--trusted-proxies``: a list of networks, parsed where both the configuration (checked at
start-up) and the API's per-client limits (``accordion.api.limits.ClientAddresses``) need it.
Standard library only: ``accordion.config`` stays light enough for ``accordion-health``."""

from __future__ import annotations

import ipaddress
from typing import TypeAlias

Network: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(text: str) -> tuple[Network, ...]:
    """CIDRs (or single addresses) separated by commas or spaces; "" → none.
    Raises ValueError naming the bad entry."""
    networks = []
    for item in text.replace(",", " ").split():
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ValueError(f"{item!r} is not a CIDR (like 10.0.0.0/8) or an IP address") from None
    return tuple(networks)
