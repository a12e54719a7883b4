"""NewGame(winnable_only)'s policy: a deal from the pool of deals proven winnable, else a search.

For each variant and option set the store keeps a pool (``GameStore.pool_*``) of deals the
solver WON, each decided with every card known: filled ahead of time by operators
(``accordion.pools``) and by the servers themselves below a watermark. A NewGame(winnable_only)
whose seed the server draws takes one deal from the pool (removed as it is taken, atomically,
so no two games get it, and no client gets one deal twice in a row); an empty pool falls back to
the live search, as before pools. A NewGame that names its seed searches from that seed, as
always: which deal it gets is a function of the seed, and the pool is for drawn seeds.

Secret per deployment: a pool is filled from seeds drawn at random (``secrets``) by the
deployment, never from a list; an item is the seed and a fingerprint of the cards it deals
(a deal that no longer matches, after an engine change, is dropped, never dealt). Nothing here
logs or returns a pooled seed: the game dealt hides what it hides as any other.

The solver is injected as two callables (the API layer runs them on the solver's workers, with
their fair share): ``live`` (the search from a seed, within a deadline) and ``prove`` (one deal,
within the pool's budget). The refill is one background task per process, one deal at a time,
so it takes at most one of the solver's workers (as one client of its fair share), never more.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from accordion import engine
from accordion.engine import Game
from accordion.store import GameStore, StoreError

log = logging.getLogger(__name__)

# (variant, options, first seed, deadline, client) → (the game of the first seed from there whose
# deal the solver wins, how many seeds were tried); raises when none within the bound.
LiveSearch = Callable[[str, dict[str, str], int, float | None, str], Awaitable[tuple[Game, int]]]
# (variant, options, seed) → whether the solver wins that seed's deal (with every card known).
ProveDeal = Callable[[str, dict[str, str], int], Awaitable[bool]]

SEED_BYTES = 8
FINGERPRINT_BYTES = 8


@dataclass(frozen=True)
class PoolSettings:
    """A pool is refilled up to ``target`` deals once it holds fewer than ``low_water`` (checked
    after each deal taken); ``target`` 0: no pools (every winnable deal searched live)."""

    target: int = 20
    low_water: int = 5
    # A failed refill (store down, solver busy) waits this long before the next try.
    retry_seconds: float = 5.0
    # Seeds tried for each deal missing before a refill gives up until the next deal taken
    # (four-suit Spider wins about 1 deal in 4 at the default budget: far fewer).
    tries_per_deal: int = 50


@dataclass(frozen=True)
class WinnableDeal:
    """The game to deal; ``seeds_tried``: the live search's count (0 from the pool); ``pooled``:
    whether it came from the pool."""

    game: Game
    seeds_tried: int
    pooled: bool


def pool_name(game: Game) -> str:
    """The pool of ``game``'s variant and option set: the variant's id and its non-default
    options, sorted (the same set of options, however asked, is one pool)."""
    defaults = game.variant.defaults()
    options = sorted(f"{k}={v}" for k, v in game.rules.values.items() if defaults.get(k) != v)
    return game.variant.id + "|" + ",".join(options)


def deal_fingerprint(game: Game) -> bytes:
    """What a pooled seed must still deal: a hash of the dealt position (server-side only)."""
    return hashlib.sha256(engine.encode_state(game.rules, game.state)).digest()[:FINGERPRINT_BYTES]


def pool_item(game: Game) -> bytes:
    """A pool's item for a game just dealt: its seed and the fingerprint of its cards."""
    return game.seed.to_bytes(SEED_BYTES, "big") + deal_fingerprint(game)


def game_of_item(variant: str, options: Mapping[str, str], item: bytes) -> Game | None:
    """The game a pool's item deals, or None if the item does not deal the cards it was proven
    on (malformed, or the engine deals that seed differently now)."""
    if len(item) != SEED_BYTES + FINGERPRINT_BYTES:
        return None
    game = engine.new_game(variant, dict(options), seed=int.from_bytes(item[:SEED_BYTES], "big"))
    return game if deal_fingerprint(game) == item[SEED_BYTES:] else None


class WinnableDeals:
    """NewGame(winnable_only)'s deals: from the pool, else searched live; and the pools' refill."""

    store: GameStore
    live: LiveSearch
    prove: ProveDeal
    settings: PoolSettings
    store_timeout: float
    _wanted: dict[str, tuple[str, dict[str, str]]]
    _unsupported: set[str]
    _task: asyncio.Task[None] | None
    _closed: bool

    def __init__(
        self,
        store: GameStore,
        *,
        live: LiveSearch,
        prove: ProveDeal,
        settings: PoolSettings | None = None,
        store_timeout: float = 2.0,
    ) -> None:
        self.store, self.live, self.prove = store, live, prove
        self.settings = settings if settings is not None else PoolSettings()
        self.store_timeout = store_timeout
        self._wanted = {}  # pools to check and refill: name → (variant, options)
        self._unsupported = set()  # pools the solver cannot decide: never refilled
        self._task = None
        self._closed = False

    async def deal(
        self,
        variant: str,
        options: Mapping[str, str],
        seed: int | None,
        deadline: float | None,
        client: str = "",
    ) -> WinnableDeal:
        """A game whose deal the solver wins. ``seed`` None (the server draws): the pool's, when
        it has one; else the live search from ``seed`` (or a drawn one), within ``deadline``.
        Raises the engine's errors (unknown variant or option) and whatever ``live`` raises."""
        opts = dict(options)
        first = engine.new_game(variant, opts, seed=0)  # checks the variant and options first
        name = pool_name(first)
        if seed is None and self.settings.target > 0 and name not in self._unsupported:
            game = await self._take(name, variant, opts, deadline)
            self._refill_later(name, variant, opts)
            if game is not None:
                return WinnableDeal(game, 0, pooled=True)
        start = seed if seed is not None else secrets.randbits(64)
        game, tried = await self.live(variant, opts, start, deadline, client)
        return WinnableDeal(game, tried, pooled=False)

    async def _take(
        self, name: str, variant: str, options: dict[str, str], deadline: float | None
    ) -> Game | None:
        """A deal from the pool (removed from it), or None: empty, or the store did not answer
        in time (a pool is a shortcut: the live search still answers)."""
        while True:
            budget = self.store_timeout
            if deadline is not None:
                budget = min(budget, (deadline - time.monotonic()) / 2)
            if budget <= 0:
                return None
            try:
                item = await asyncio.wait_for(self.store.pool_pop(name), budget)
            except (StoreError, TimeoutError):
                log.warning("winnable pool %s: the store did not answer; searching live", name)
                return None
            if item is None:
                return None
            game = game_of_item(variant, options, item)
            if game is not None:
                return game
            log.warning("winnable pool %s: dropped an item that no longer deals its cards", name)

    def _refill_later(self, name: str, variant: str, options: dict[str, str]) -> None:
        """Have the background task check this pool (and refill it below the watermark)."""
        if self._closed or self.settings.target <= 0 or name in self._unsupported:
            return
        self._wanted[name] = (variant, options)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._refill_all())

    async def _refill_all(self) -> None:
        while self._wanted and not self._closed:
            name = next(iter(self._wanted))
            variant, options = self._wanted.pop(name)
            try:
                await self.refill(name, variant, options)
            except engine.EngineError:  # the solver cannot decide this game (its refusal)
                self._unsupported.add(name)
            except Exception:  # a store or solver failure: try this pool again later
                log.warning("winnable pool %s: refill failed; retrying later", name, exc_info=True)
                await asyncio.sleep(self.settings.retry_seconds)
                self._wanted.setdefault(name, (variant, options))

    async def refill(self, name: str, variant: str, options: dict[str, str]) -> int:
        """Fill the pool up to ``target`` if it holds fewer than ``low_water``: one drawn seed at a
        time, proven by ``prove``; returns the pool's size. Raises what the store and ``prove``
        raise."""
        size = await asyncio.wait_for(self.store.pool_size(name), self.store_timeout)
        if size >= self.settings.low_water:
            return size
        tries = self.settings.tries_per_deal * (self.settings.target - size)
        while size < self.settings.target and tries > 0 and not self._closed:
            tries -= 1
            seed = secrets.randbits(64)
            if await self.prove(variant, options, seed):
                item = pool_item(engine.new_game(variant, options, seed=seed))
                add = self.store.pool_add(name, [item], cap=self.settings.target)
                size = await asyncio.wait_for(add, self.store_timeout)
        log.info("winnable pool %s refilled: %d deals", name, size)
        return size

    async def close(self) -> None:
        """Stop refilling (a deal being proven is dropped)."""
        self._closed = True
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass

    def refilling(self) -> Any:
        """The running refill task, or None (for tests that wait for it)."""
        return self._task
