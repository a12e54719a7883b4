"""Who a call comes from (``ClientAddresses``, ``--trusted-proxies``), NewGame's flags, and the
in-process rate limiter's table staying bounded when its keys come from clients."""

from __future__ import annotations

import pytest

from accordion.api.limits import ClientAddresses
from accordion.api.ratelimit import Limit, MemoryRateLimiter
from accordion.config import parse_args
from accordion.netaddr import parse_networks

PROXIES = ClientAddresses(parse_networks("10.0.0.0/8, 192.0.2.5"))


def xff(*values: str) -> list[tuple[str, str]]:
    return [("x-forwarded-for", v) for v in values]


def test_an_untrusted_peer_is_the_client_whatever_it_says() -> None:
    assert PROXIES.client("ipv4:203.0.113.9:5555", xff("198.51.100.1")) == "203.0.113.9"
    assert ClientAddresses().client("ipv4:10.1.1.1:5555", xff("198.51.100.1")) == "10.1.1.1"  # none trusted
    assert PROXIES.client("ipv6:[2001:db8::1]:5555", xff("198.51.100.1")) == "2001:db8::1"
    assert PROXIES.client("unix:/tmp/sock", xff("198.51.100.1")) == "unix:/tmp/sock"


def test_behind_a_trusted_proxy_the_right_most_untrusted_address_is_the_client() -> None:
    peer = "ipv4:10.1.2.3:40000"
    assert PROXIES.client(peer, xff("198.51.100.1")) == "198.51.100.1"
    # What the client wrote itself (left) is not believed; trusted hops (right) are skipped.
    assert PROXIES.client(peer, xff("6.6.6.6, 198.51.100.1, 10.9.9.9, 192.0.2.5")) == "198.51.100.1"
    assert (
        PROXIES.client(peer, xff("6.6.6.6", "198.51.100.1")) == "198.51.100.1"
    )  # repeated headers, in order
    assert PROXIES.client(peer, xff(" 2001:db8::7 ")) == "2001:db8::7"
    assert PROXIES.client("ipv6:[::ffff:10.1.2.3]:40000", xff("198.51.100.3")) == "198.51.100.3"  # v4-mapped


@pytest.mark.parametrize(
    "header",
    [[], xff(""), xff("10.0.0.1, 10.0.0.2"), xff("not-an-address"), xff("1.2.3.4, evil"), xff("a" * 5000)],
)
def test_behind_a_trusted_proxy_anything_else_is_the_proxy_itself(header: list[tuple[str, str]]) -> None:
    assert PROXIES.client("ipv4:10.1.2.3:40000", header) == "10.1.2.3"


def test_trusted_proxies_are_parsed_and_checked() -> None:
    assert [str(n) for n in parse_networks("10.0.0.0/8,192.0.2.5 2001:db8::/32")] == [
        "10.0.0.0/8",
        "192.0.2.5/32",
        "2001:db8::/32",
    ]
    assert parse_networks("") == ()
    with pytest.raises(ValueError, match="'10.0.0.0/33'"):
        parse_networks("10.0.0.0/33")
    assert parse_args(["--trusted-proxies", "172.28.0.10/32"], env={}).trusted_proxies == "172.28.0.10/32"
    for bad in (
        ["--trusted-proxies", "proxy.local"],
        ["--newgame-rate", "-1"],
        ["--newgame-burst", "0"],
        ["--evict-idle", "-5"],
    ):
        with pytest.raises(SystemExit):
            parse_args(bad, env={})


def test_the_defaults_are_the_documented_ones() -> None:
    config = parse_args([], env={})
    assert (config.newgame_rate, config.newgame_burst, config.evict_idle, config.trusted_proxies) == (
        10.0,
        100,
        300.0,
        "",
    )
    assert parse_args([], env={"ACCORDION_NEWGAME_RATE": "0"}).newgame_rate == 0


async def test_the_memory_rate_limiter_forgets_keys_whose_budget_is_whole_again() -> None:
    now = [0]
    limiter = MemoryRateLimiter(clock=lambda: now[0])
    limit = Limit(rate=10, burst=5)  # a key's TAT is at most 0.5 s ahead of the clock
    for i in range(5000):
        assert (await limiter.acquire(f"client-{i}", limit)).allowed
        now[0] += 1000  # 1 ms between calls: ~100 keys have a TAT ahead of the clock at any time
    assert len(limiter) < 2048, len(limiter)
    # A key still within its budget's memory is kept: its refusal still holds.
    for _ in range(5):
        await limiter.acquire("busy", limit)
    for i in range(3000):
        await limiter.acquire(f"other-{i}", limit)
    assert not (await limiter.acquire("busy", limit)).allowed
