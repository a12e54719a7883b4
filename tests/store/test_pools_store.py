"""The store's pools (``pool_add``, ``pool_pop``, ``pool_size``) on both backends (the ``store``
fixture: memory and a real redis-server), and what only Redis has: pops are atomic across
clients, and a pool outlives the store object (a restarted server's)."""

from __future__ import annotations

import asyncio

from accordion.store import GameStore, open_store


async def test_a_pool_adds_without_duplicates_up_to_its_cap(store: GameStore) -> None:
    assert await store.pool_size("p") == 0
    assert await store.pool_pop("p") is None  # never filled: empty, no error
    assert await store.pool_add("p", [b"a", b"b", b"a"], cap=10) == 2  # a set: b"a" once
    assert await store.pool_add("p", [b"c", b"d", b"e"], cap=4) == 4  # stops at the cap
    assert await store.pool_size("p") == 4
    assert await store.pool_add("other", [b"x"], cap=4) == 1  # pools are apart
    assert await store.pool_size("p") == 4


async def test_a_pop_removes_the_item_it_returns(store: GameStore) -> None:
    items = [bytes([i]) for i in range(20)]
    await store.pool_add("p", items, cap=100)
    popped = [await store.pool_pop("p") for _ in range(20)]
    assert sorted(p for p in popped if p is not None) == items  # each item once, then gone
    assert await store.pool_pop("p") is None and await store.pool_size("p") == 0


async def test_pops_come_in_random_order(store: GameStore) -> None:
    """Which deal comes out does not follow the order the fill proved them in."""
    items = [i.to_bytes(2, "big") for i in range(64)]
    await store.pool_add("p", items, cap=100)
    popped = [await store.pool_pop("p") for _ in range(64)]
    assert popped != items and popped != items[::-1]  # 2 in 64! by chance


async def test_concurrent_pops_on_redis_never_share_an_item(redis_url: str) -> None:
    stores = [open_store(redis_url) for _ in range(4)]  # four clients, as four replicas
    try:
        await stores[0].pool_add("p", [i.to_bytes(2, "big") for i in range(200)], cap=1000)

        async def drain(s: GameStore) -> list[bytes]:
            got = []
            for _ in range(300):  # bounded: a pop that did not remove would never empty the pool
                if (item := await s.pool_pop("p")) is None:
                    break
                got.append(item)
            return got

        got = [item for part in await asyncio.gather(*(drain(s) for s in stores)) for item in part]
        assert len(got) == 200 and len(set(got)) == 200
    finally:
        for s in stores:
            await s.close()


async def test_a_redis_pool_outlives_the_store_that_filled_it(redis_url: str) -> None:
    first = open_store(redis_url)
    await first.pool_add("p", [b"a", b"b"], cap=10)
    await first.close()
    second = open_store(redis_url)
    try:
        assert await second.pool_size("p") == 2
    finally:
        await second.close()
