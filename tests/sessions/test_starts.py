"""NewGame's start in the session layer (``sessions.start_game``): a seed, a drawn seed, cards,
a deal code (and the options a code allows), without gRPC."""

from __future__ import annotations

import pytest

from accordion import engine, sessions
from accordion.store import GameStore


async def test_a_seed_deals_its_game_and_no_seed_draws_one(store: GameStore) -> None:
    flow = sessions.Sessions(store, game_ttl=60)
    seeded = await sessions.start_game(flow, "accordion", {}, None, seed=7)
    assert (seeded.seed, seeded.deal_code) == (7, "")
    assert seeded.game.state == engine.new_game("accordion", seed=7).state
    drawn = [await sessions.start_game(flow, "accordion", {}, None) for _ in range(3)]
    assert len({start.seed for start in drawn}) == 3  # 64 random bits each
    for start in drawn:  # the seed drawn is the one the game was dealt from
        assert start.game.state == engine.new_game("accordion", seed=start.seed).state


async def test_cards_deal_that_game(store: GameStore) -> None:
    flow = sessions.Sessions(store, game_ttl=60)
    cards = [pile[0] for pile in engine.new_game("accordion", seed=11).state.row]  # a full deck, in order
    start = await sessions.start_game(flow, "accordion", {}, None, seed=5, deal=cards)
    assert start.game.state == engine.new_game("accordion", seed=5, deal=cards).state
    with pytest.raises(engine.EngineError):
        await sessions.start_game(flow, "accordion", {}, None, deal=cards[:-1])


async def test_a_deal_code_deals_its_game_and_keeps_its_code_only_when_exact(store: GameStore) -> None:
    flow = sessions.Sessions(store, game_ttl=60)
    dealt = await flow.deal(engine.new_game("accordion", seed=9), None)
    assert isinstance(dealt, sessions.Dealt) and dealt.deal_code
    same = await sessions.start_game(flow, "", {}, None, deal_code=dealt.deal_code)
    assert same.game.state == engine.new_game("accordion", seed=9).state and same.seed == 9
    assert same.deal_code  # the code itself (canonical: no dashes)
    assert same.deal_code.replace("-", "") == dealt.deal_code.replace("-", "")
    stricter = await sessions.start_game(flow, "accordion", {"undo": "none"}, None, deal_code=dealt.deal_code)
    assert stricter.deal_code == "" and stricter.game.state == same.game.state  # its own game: a new code
    with pytest.raises(sessions.DealCodeOptions):
        await sessions.start_game(flow, "accordion", {"leap": "2"}, None, deal_code=dealt.deal_code)
    with pytest.raises(sessions.DealCodeNotFound):
        await sessions.start_game(flow, "", {}, None, deal_code="not a code")
