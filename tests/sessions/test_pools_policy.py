"""sessions/winnable.py's policy on the memory store, with the solver's two callables made here
(what they decide is the point of these tests, not the solver): what is taken from a pool, what
is never dealt, and the refill's bounds. The service end to end: tests/api/test_pools_*.py."""

from __future__ import annotations

from accordion import engine
from accordion.engine import Game
from accordion.sessions.winnable import PoolSettings, WinnableDeals, game_of_item, pool_item, pool_name
from accordion.store import MemoryStore

VARIANT = "klondike"


class Solver:
    """The two callables: the live search deals its first seed; ``prove`` answers ``wins``."""

    def __init__(self, wins: bool = True) -> None:
        self.wins = wins
        self.live_seeds: list[int] = []
        self.proved = 0

    async def live(
        self, variant: str, options: dict[str, str], seed: int, deadline: float | None, client: str
    ) -> tuple[Game, int]:
        self.live_seeds.append(seed)
        return engine.new_game(variant, options, seed=seed), 1

    async def prove(self, variant: str, options: dict[str, str], seed: int) -> bool:
        self.proved += 1
        return self.wins


def deals(store: MemoryStore, solver: Solver, **settings: int) -> WinnableDeals:
    return WinnableDeals(store, live=solver.live, prove=solver.prove, settings=PoolSettings(**settings))


async def test_a_pooled_deal_is_dealt_and_removed() -> None:
    store, solver = MemoryStore(), Solver()
    game = engine.new_game(VARIANT, {}, seed=12345)
    await store.pool_add(pool_name(game), [pool_item(game)], cap=10)
    found = await deals(store, solver, low_water=0).deal(VARIANT, {}, None, None)
    assert found.pooled and found.game.seed == 12345 and found.seeds_tried == 0
    assert not solver.live_seeds and await store.pool_size(pool_name(game)) == 0


async def test_an_item_that_no_longer_deals_its_cards_is_dropped_never_dealt() -> None:
    store, solver = MemoryStore(), Solver()
    game = engine.new_game(VARIANT, {}, seed=12345)
    wrong = pool_item(game)[:-1] + bytes([pool_item(game)[-1] ^ 1])  # another deal's fingerprint
    assert game_of_item(VARIANT, {}, wrong) is None and game_of_item(VARIANT, {}, b"short") is None
    await store.pool_add(pool_name(game), [wrong], cap=10)
    found = await deals(store, solver, low_water=0).deal(VARIANT, {}, None, None)
    assert not found.pooled and found.game.seed != 12345 and len(solver.live_seeds) == 1
    assert await store.pool_size(pool_name(game)) == 0


async def test_a_seed_asked_for_is_searched_from_and_the_pool_left_alone() -> None:
    store, solver = MemoryStore(), Solver()
    game = engine.new_game(VARIANT, {}, seed=12345)
    await store.pool_add(pool_name(game), [pool_item(game)], cap=10)
    found = await deals(store, solver, low_water=0).deal(VARIANT, {}, 777, None)
    assert not found.pooled and found.game.seed == 777 and solver.live_seeds == [777]
    assert await store.pool_size(pool_name(game)) == 1


async def test_pools_are_per_option_set() -> None:
    hidden, shown = engine.new_game(VARIANT, {}, seed=1), engine.new_game(VARIANT, {"open": "true"}, seed=1)
    assert pool_name(hidden) != pool_name(shown)
    assert pool_name(engine.new_game(VARIANT, {"draw": "3"}, seed=1)) == pool_name(hidden)  # the default
    assert pool_name(engine.new_game("klondike-draw-one", {}, seed=1)) != pool_name(hidden)


async def test_a_refill_stops_at_the_target_and_is_bounded_when_nothing_wins() -> None:
    store = MemoryStore()
    solver = Solver()
    name = pool_name(engine.new_game(VARIANT, {}, seed=0))
    winnable = deals(store, solver, target=3, low_water=2, tries_per_deal=4)
    assert await winnable.refill(name, VARIANT, {}) == 3 and solver.proved == 3
    assert await winnable.refill(name, VARIANT, {}) == 3 and solver.proved == 3  # not below: nothing
    losing = Solver(wins=False)
    empty = pool_name(engine.new_game(VARIANT, {"open": "true"}, seed=0))
    assert (
        await deals(store, losing, target=3, low_water=2, tries_per_deal=4).refill(
            empty, VARIANT, {"open": "true"}
        )
        == 0
    )
    assert losing.proved == 12  # 4 tries for each of the 3 deals missing, then it gives up
