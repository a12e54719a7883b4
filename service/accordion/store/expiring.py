"""The memory store's tables: entries under string keys with deadlines, least recently used
first, at most a cap, expired entries swept from a heap of deadlines (``ExpiringTable``;
memory.py keeps its games, named values and NewGame claims in three of them)."""

from __future__ import annotations

import heapq
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from .base import StoreFull


class Expiring(Protocol):
    """What ``ExpiringTable`` keeps: an entry with a deadline (the clock's), its item of the
    heap (``serial``) and when it was last used (``touched``), both set by the table."""

    deadline: float
    serial: int
    touched: float


E = TypeVar("E", bound=Expiring)


class ExpiringTable(Generic[E]):
    """Entries under string keys with deadlines: least recently used first, at most ``cap``.

    ``entries`` is in order of use (``use`` moves an entry to the end). ``_due`` is a heap of
    (deadline, serial, key) with one item per entry, pushed when the entry is added (the serial
    says which entry: the heap holds no reference that would keep a removed one alive): a later
    deadline (a game written again) is found when the item comes up, and the item pushed
    again. Items of entries that left otherwise (deleted, evicted, replaced) are skipped when
    they come up, and the heap is rebuilt once they outnumber the live ones, so it stays
    within twice the entries. ``on_drop`` is told of every entry that leaves.

    ``evict_idle`` > 0: at the cap, only an entry untouched that many seconds may be evicted
    (the least recently used one is the only candidate: every other was used later); else
    ``add`` raises ``StoreFull``. 0: the least recently used is evicted however recent.
    """

    def __init__(
        self,
        cap: int | None,
        clock: Callable[[], float],
        on_drop: Callable[[E], None],
        evict_idle: float = 0.0,
    ) -> None:
        self.entries: OrderedDict[str, E] = OrderedDict()
        self._due: list[tuple[float, int, str]] = []
        self._serial = 0
        self._cap, self._clock, self._on_drop = cap, clock, on_drop
        self._evict_idle = evict_idle
        self._peak = 0
        self.expired = self.evicted = 0

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, key: str, now: float | None = None) -> E | None:
        """The live entry (an expired one is dropped); ``now``: the clock, if just read."""
        entry = self.entries.get(key)
        if entry is not None and entry.deadline <= (self._clock() if now is None else now):
            self.remove(key)
            self.expired += 1
            return None
        return entry

    def use(self, key: str, entry: E, now: float) -> None:
        """``entry`` (under ``key``) was loaded or written at ``now``: the most recently used."""
        entry.touched = now
        self.entries.move_to_end(key)

    def add(self, key: str, entry: E) -> None:
        """Store ``entry`` (replacing any under ``key``), evicting the least recently used if full.
        Raises ``StoreFull`` (nothing changed but expired entries dropped) when that one was
        touched within ``evict_idle`` seconds."""
        now = self.sweep()
        replaced = self.entries.get(key)
        cap = self._cap
        if cap is not None and len(self.entries) - (replaced is not None) >= cap and self._evict_idle > 0:
            # Checked before anything is dropped: a refusal loses nothing.
            oldest = next(iter(self.entries.values()))
            if oldest.touched > now - self._evict_idle:
                raise StoreFull(
                    f"{len(self.entries)} games, none untouched for {self._evict_idle:g} s",
                    retry_after=oldest.touched + self._evict_idle - now,
                )
        self.remove(key)
        while cap is not None and len(self.entries) >= cap:
            _, oldest = self.entries.popitem(last=False)
            self._on_drop(oldest)
            self.evicted += 1
        self._serial += 1
        entry.serial = self._serial
        entry.touched = now
        self.entries[key] = entry
        self._peak = max(self._peak, len(self.entries))
        heapq.heappush(self._due, (entry.deadline, entry.serial, key))
        if len(self._due) > 2 * len(self.entries) + 64:
            self._due = [(e.deadline, e.serial, k) for k, e in self.entries.items()]
            heapq.heapify(self._due)

    def remove(self, key: str) -> E | None:
        entry = self.entries.pop(key, None)
        if entry is not None:
            self._on_drop(entry)
            # A dict keeps its table at the largest size it had: once it holds an eighth of
            # that, copy it, so that memory comes back after a burst.
            if self._peak > 1024 and len(self.entries) * 8 < self._peak:
                self.entries = OrderedDict(self.entries)
                self._peak = len(self.entries)
        return entry

    def sweep(self) -> float:
        """Remove every entry whose deadline has passed: O(1) when none is due. Returns the clock."""
        due, now = self._due, self._clock()
        while due and due[0][0] <= now:
            _, serial, key = heapq.heappop(due)
            entry = self.entries.get(key)
            if entry is None or entry.serial != serial:
                continue  # deleted, evicted or replaced since
            if entry.deadline > now:  # written since: due later
                heapq.heappush(due, (entry.deadline, serial, key))
            else:
                self.remove(key)
                self.expired += 1
        return now
