"""One conformance runner over every registered variant: random deals, random play.

For each variant hypothesis draws a seed and a sequence of choices; the game is
played by those choices and at every step the invariants below must hold.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accordion.engine import (
    DEAL,
    Claim,
    EngineError,
    Game,
    IllegalMoveError,
    MoveKind,
    Remove,
    Stack,
    Status,
    all_variants,
    new_game,
    replay,
)
from accordion.engine.moves import DRAW, REDEAL, RESIGN, Transfer, Zone
from accordion.engine.rng import SplitMix64
from accordion.engine.tableau import TABLEAU

VARIANTS = sorted(v.id for v in all_variants())
SEEDS = st.integers(min_value=0, max_value=2**64 - 1)
PLAY = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def cards_in_play(game: Game) -> Counter[int]:
    """Every card of the position, in every zone."""
    return Counter(game.rules.cards_in(game.state))


def deal_order(variant: str, seed: int) -> list[int]:
    """The cards of a seeded deal in dealing order (what an explicit deal lists)."""
    order = new_game(variant, seed=0).rules.order_deal(SplitMix64(seed))
    assert list(new_game(variant, seed=seed).deal_order()) == order
    assert new_game(variant, deal=order).deal_order() == tuple(order)
    return order


def random_candidates(game: Game, data: st.DataObject) -> list[object]:
    """Moves of every kind, most of them illegal, to probe that only listed moves apply."""
    n = max(len(game.state.row), len(TABLEAU.get(game.state)), 1)
    pos = st.integers(min_value=0, max_value=n - 1)
    zones = st.sampled_from(list(Zone))
    count = st.integers(min_value=1, max_value=13)
    # The same values drawn as one tuple a step: hypothesis's cost is mostly per `data.draw`
    # (40 a step were two thirds of this test's CPU), not per value.
    kinds = st.tuples(pos, pos, pos, pos, pos, zones, pos, zones, pos, count)
    out: list[object] = [DEAL, REDEAL, DRAW]
    for s1, s2, r1, r2, a, z1, src, z2, dst, k in data.draw(
        st.tuples(kinds, kinds, kinds, kinds), label="probes"
    ):
        out.append(Stack(s1, s2))
        out.append(Remove(tuple(sorted({r1, r2}))))
        out.append(Claim(a, min(a + 2, n - 1), "pair", a, min(a + 1, n - 1)))
        out.append(Transfer(z1, src, z2, dst, k))
    return out


@pytest.mark.parametrize("variant", VARIANTS)
@PLAY
@given(seed=SEEDS, data=st.data())
def test_random_play_keeps_every_invariant(variant: str, seed: int, data: st.DataObject) -> None:
    game = new_game(variant, seed=seed)
    deck = Counter(game.rules.deck())
    assert cards_in_play(game) == deck
    removed = 0
    for _ in range(data.draw(st.integers(min_value=0, max_value=60), label="length")):
        legal = game.legal_moves()
        status = game.status
        assert (status is Status.IN_PROGRESS) == bool(legal)
        # RESIGN is allowed exactly while the game is in progress and is never listed.
        assert all(m.kind is not MoveKind.RESIGN for m in legal) and "resign" not in game.legal_texts()
        assert game.is_legal(RESIGN) == bool(legal)
        if not legal:
            with pytest.raises(IllegalMoveError):
                game.play(RESIGN)
            break
        before_state, before_string = game.state, game.state_string()

        # Nothing unlisted applies, and a refused move changes nothing.
        for candidate in random_candidates(game, data):
            if candidate not in legal:
                with pytest.raises(IllegalMoveError):
                    game.play(candidate)  # type: ignore[arg-type]
                assert game.state == before_state

        # Every listed move has one text that parses back to it.
        texts = game.legal_texts()
        assert len(set(texts)) == len(texts)
        for move, text in zip(legal, texts):
            assert game.parse_move(text) == move

        move = legal[data.draw(st.integers(min_value=0, max_value=len(legal) - 1), label="choice")]
        game.play(move)
        if isinstance(move, Remove):
            removed += len(move.positions)

        # Undo restores the exact position; redo plays the move again.
        after_state = game.state
        assert game.undo() == move
        assert game.state == before_state and game.state_string() == before_string
        game.redo()
        assert game.state == after_state

        # Cards are conserved (eliminators: minus what was discarded).
        now = cards_in_play(game)
        if game.rules.discards:
            assert not now - deck and sum(now.values()) == sum(deck.values()) - removed
        else:
            assert now == deck

        # The state string round-trips to the same position and the same legal moves.
        text = game.state_string()
        loaded = Game.from_state_string(text)
        assert loaded.state == game.state and loaded.state_string() == text
        assert loaded.legal_moves() == game.legal_moves()

    # Sometimes the player resigns: LOST, the position and its penalty stand.
    if game.status is Status.IN_PROGRESS and data.draw(st.booleans(), label="resign"):
        state, penalty = game.state, game.penalty
        game.play("resign")
        assert game.status is Status.LOST and game.state == state and game.penalty == penalty
        assert game.legal_moves() == ()
        loaded = Game.from_state_string(game.state_string())
        assert loaded.status is Status.LOST and loaded.state == game.state

    # The replay record rebuilds the game exactly, and so does a snapshot.
    again = replay(game.record().to_dict())
    assert again.state == game.state and again.move_texts == game.move_texts
    resumed = Game.from_snapshot(game.snapshot())
    assert resumed.state == game.state and again.status is resumed.status is game.status
    if game.can_undo():
        game.undo()
        resumed.undo()
        assert resumed.state == game.state


@pytest.mark.parametrize("variant", VARIANTS)
@settings(max_examples=10, deadline=None)
@given(seed=SEEDS)
def test_seeded_deals_are_stable_and_explicit_deals_reproduce_them(variant: str, seed: int) -> None:
    first, second = new_game(variant, seed=seed), new_game(variant, seed=seed)
    assert first.state == second.state
    explicit = new_game(variant, seed=seed, deal=deal_order(variant, seed))
    assert explicit.state.row == first.state.row and explicit.state.stock == first.state.stock
    assert TABLEAU.get(explicit.state) == TABLEAU.get(first.state) and explicit.zones() == first.zones()


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_hidden_view_shows_no_stock_card(variant: str) -> None:
    game = new_game(variant, seed=5)
    hidden = game.state_string(hide_stock=True)
    assert f"#{len(game.state.stock)}" in hidden
    view = game.view()
    assert view.stock_size == len(game.state.stock)
    if game.state.stock:
        from accordion.engine.cards import card_code

        stock_codes = {card_code(c) for c in game.state.stock} - {
            card_code(c) for pile in game.state.row for c in pile
        }
        assert not any(code in hidden.split()[1] for code in stock_codes)


@pytest.mark.parametrize("variant", VARIANTS)
def test_variant_declares_itself(variant: str) -> None:
    from accordion.engine import find_variant

    v = find_variant(variant)
    assert v.name and v.description and v.rules.move_kinds
    for option in v.options:
        assert option.parse(option.default) == option.default
    game = new_game(v, seed=0)
    assert game.rules.win_threshold()
    assert isinstance(game.render(), str) and game.render().startswith("1:")
    # The variant's defaults (its presets over the rules'), however they are asked for.
    defaults = {o.name: o.default for o in v.options}
    assert v.defaults() == v.resolve() == v.resolve({}) == defaults
    assert game.options == defaults


@pytest.mark.parametrize("variant", VARIANTS)
def test_bad_deals_are_rejected_and_say_why(variant: str) -> None:
    from accordion.engine import InvalidDealError

    order = deal_order(variant, 9)
    with pytest.raises(InvalidDealError, match="cards"):
        new_game(variant, deal=order[:-1])
    duplicated = order[:-1] + [order[0]]
    with pytest.raises(InvalidDealError):
        new_game(variant, deal=duplicated)
    with pytest.raises(EngineError):
        new_game(variant, deal="8D 9D ZZ")
