"""The memory store's pools (``GameStore.pool_add`` / ``pool_pop`` / ``pool_size``): sets of
opaque items in this process's memory. Per process, like every game of the memory store: they
are lost when the process ends and not shared with another process (the Redis store's pools
are both durable and shared)."""

from __future__ import annotations

import secrets
from collections.abc import Sequence


class MemoryPools:
    """Named pools, each a list (random pops by index) and a set (no item twice). Every method
    runs to completion without awaiting, so on one event loop it is atomic."""

    def __init__(self) -> None:
        self._items: dict[str, list[bytes]] = {}
        self._members: dict[str, set[bytes]] = {}

    def add(self, pool: str, items: Sequence[bytes], cap: int) -> int:
        held = self._items.setdefault(pool, [])
        members = self._members.setdefault(pool, set())
        for item in items:
            if len(held) >= cap:
                break
            if item not in members:
                members.add(item)
                held.append(item)
        return len(held)

    def pop(self, pool: str) -> bytes | None:
        held = self._items.get(pool)
        if not held:
            return None
        # A random item, swapped to the end and removed there: O(1), and which item comes out
        # does not follow the order the fill proved them in.
        index = secrets.randbelow(len(held))
        held[index], held[-1] = held[-1], held[index]
        item = held.pop()
        self._members[pool].discard(item)
        return item

    def size(self, pool: str) -> int:
        return len(self._items.get(pool, ()))
