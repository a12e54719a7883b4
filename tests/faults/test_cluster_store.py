"""The store's whole suite on a real Redis Cluster (3 masters + 3 replicas), with and without WAIT.

The backend-agnostic tests of tests/store/test_store.py are imported and run here against a
``redis+cluster://`` store (``store_url`` and ``store`` are overridden for this module), once
plain and once with ``wait_replicas=1``. A cluster refuses a script whose keys are not all in
one slot (CROSSSLOT) and a script touching an undeclared key of another slot, so the suite
passing here is the check that every script keeps to one hash tag.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import redis
from redis.crc import key_slot

from accordion.store import GameRecord, open_store
from accordion.store.redis import RedisStore

from ..store.helpers import cas
from ..store.test_store import (  # noqa: F401  (collected and run here, on the cluster)
    test_cas_bumps_version_and_returns_none,
    test_claim_request_first_wins_until_ttl,
    test_close_ends_watchers,
    test_concurrent_cas_exactly_one_wins,
    test_create_taken_id_raises_game_exists,
    test_create_then_load,
    test_each_cas_refreshes_ttl,
    test_game_expires_after_ttl,
    test_idempotent_retry_returns_first_reply_and_changes_nothing,
    test_replies_and_events_are_bounded,
    test_stale_version_raises_conflict_with_current,
    test_unknown_game_raises_not_found,
    test_watch_ends_when_game_expires,
    test_watch_from_current_version_sees_only_new_events,
    test_watch_of_missing_game_ends_at_once,
    test_watch_replays_then_follows_then_ends_on_delete,
    timed,
)
from .cluster import LocalCluster

# Fault injection: many processes (clusters, Sentinels, killed servers) and real timeouts, so one
# at a time, beside the parallel phase of `make test` (tests/conftest.py).
pytestmark = pytest.mark.serial

TTL = 60.0


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster(masters=3, replicas=1) as c:
        yield c


def masters(c: LocalCluster) -> list[int]:
    return sorted(set(c.slot_owners(c.nodes[0].port)))


@pytest.fixture
def store_url(cluster: LocalCluster) -> str:
    """The cluster's URL, every master flushed (replicas follow)."""
    for port in masters(cluster):
        with redis.Redis(port=port) as c:
            c.flushall()
    return cluster.url


@pytest.fixture(params=["plain", "wait-1"])
async def store(store_url: str, request: pytest.FixtureRequest) -> AsyncIterator[RedisStore]:
    s = open_store(store_url, wait_replicas=1 if request.param == "wait-1" else 0)
    assert isinstance(s, RedisStore)
    await s.ping()
    try:
        yield s
    finally:
        await s.close()


async def test_games_spread_over_masters_and_delete_leaves_nothing(
    store: RedisStore, cluster: LocalCluster
) -> None:
    ids = [f"game-{i}" for i in range(12)]
    for gid in ids:
        await store.create(GameRecord(gid, 1, b"t", b"d"), ttl=TTL)
        await cas(store, 1, game_id=gid, request_id="r1", fingerprint=b"f", reply=b"x")
        assert len({key_slot(k.encode()) for k in store.game_keys(gid)}) == 1
    owners = {cluster.master_of_slot(key_slot(gid.encode())).port for gid in ids}
    assert len(owners) == 3, "12 games all on one master: the test shows nothing about the others"
    assert await store.claim_request("new:abc", b"f", b"r", ttl=TTL) is None
    for gid in ids:
        await store.delete(gid)
    left = []
    for port in masters(cluster):
        with redis.Redis(port=port) as c:
            left += list(c.scan_iter(match="acc:{game-*"))
    assert left == []


async def test_a_url_naming_one_node_finds_the_whole_cluster(cluster: LocalCluster, store_url: str) -> None:
    s = open_store(f"redis+cluster://{cluster.nodes[-1].addr}")
    try:
        for i in range(6):
            await s.create(GameRecord(f"g{i}", 1, b"t", b"d"), ttl=TTL)
            assert (await s.load(f"g{i}")).version == 1
    finally:
        await s.close()
