"""Behind the real Envoy (deploy/envoy/envoy.yaml), per-client limits key on the address Envoy
saw, not on a header the client wrote (issue 28, item 5).

The server trusts Envoy (``--trusted-proxies 127.0.0.1/32``); REST users connect to Envoy from
other loopback addresses (127.0.0.2, 127.0.0.3: Linux routes all of 127/8 to lo) and each
sends a made-up ``x-forwarded-for`` on every request. Envoy (``use_remote_address`` and the
header replaced, not appended to) passes on only the address it saw, so NewGame's per-client
rate counts each user apart from the other and no user escapes it by naming itself anew."""

from __future__ import annotations

import http.client
import json
from collections import Counter
from pathlib import Path

from .conftest import start_envoy, start_server


def new_games(envoy_port: int, source: str, count: int) -> Counter[int]:
    """``count`` REST NewGames from ``source``, each claiming another x-forwarded-for: statuses."""
    statuses: Counter[int] = Counter()
    for n in range(count):
        conn = http.client.HTTPConnection("127.0.0.1", envoy_port, timeout=10, source_address=(source, 0))
        try:
            conn.request(
                "POST",
                "/v1/games",
                body=json.dumps({"variant": "accordion"}),
                headers={"content-type": "application/json", "x-forwarded-for": f"198.51.100.{n + 1}"},
            )
            reply = conn.getresponse()
            reply.read()
            statuses[reply.status] += 1
        finally:
            conn.close()
    return statuses


def test_through_envoy_each_user_has_its_own_newgame_rate_and_cannot_spoof_it(tmp_path: Path) -> None:
    server = start_server(
        tmp_path, "--trusted-proxies", "127.0.0.1/32", "--newgame-rate", "0.01", "--newgame-burst", "2"
    )
    try:
        envoy = start_envoy(int(server.addr.rsplit(":", 1)[1]), tmp_path)
        try:
            # Two games each, then 429 (RESOURCE_EXHAUSTED): a fresh x-forwarded-for per request
            # does not make a user a new client.
            assert new_games(envoy.port, "127.0.0.2", 4) == {200: 2, 429: 2}
            # Another user behind the same Envoy is another client.
            assert new_games(envoy.port, "127.0.0.3", 3) == {200: 2, 429: 1}
        finally:
            envoy.close()
    finally:
        server.close()
