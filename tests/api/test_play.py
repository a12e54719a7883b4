"""Playing over a real channel, on both backends: every RPC, full games, both faces of a move."""

from __future__ import annotations

import json

import grpc
import pytest

from accordion import engine
from accordion.engine.cards import card_text
from accordion.v1 import accordion_pb2 as pb

from .helpers import Client, expect_error

IN_PROGRESS, WON, LOST = pb.GAME_STATUS_IN_PROGRESS, pb.GAME_STATUS_WON, pb.GAME_STATUS_LOST


def assert_two_faces(move: pb.Move) -> None:
    """A returned move carries its structured fields and its notation."""
    assert move.kind != pb.MOVE_KIND_UNSPECIFIED and move.notation, move
    if move.kind == pb.MOVE_KIND_STACK:
        assert move.from_pile >= 1 and move.to_pile >= 1
    if move.kind == pb.MOVE_KIND_REMOVE:
        assert list(move.positions) and min(move.positions) >= 1


async def test_list_variants_describes_every_registered_variant(client: Client) -> None:
    reply = await client.stub.ListVariants(pb.ListVariantsRequest(), timeout=10)
    assert [v.id for v in reply.variants] == [v.id for v in engine.all_variants()]
    accordion = next(v for v in reply.variants if v.id == "accordion")
    assert "Tower of Babel" in accordion.aliases
    assert accordion.family == "stacking" and accordion.win_threshold == "1 pile"
    assert set(accordion.move_kinds) == {pb.MOVE_KIND_STACK, pb.MOVE_KIND_DEAL, pb.MOVE_KIND_RESIGN}
    dealing = next(o for o in accordion.options if o.name == "dealing")
    assert (
        dealing.default_value == "all"
        and list(dealing.allowed_values) == ["all", "stock"]
        and dealing.description
    )
    # A filter by alias names the one variant.
    one = await client.stub.ListVariants(pb.ListVariantsRequest(variant="tower of babel"), timeout=10)
    assert [v.id for v in one.variants] == ["accordion"]


async def test_a_seeded_compacted_game_played_to_the_end(client: Client) -> None:
    """First legal move until over: versions step by one, every reply agrees with GetGame and Score."""
    created = await client.new_game("compacted", seed=1)
    game = created.game
    assert game.version == 1 and game.status == IN_PROGRESS and game.moves_played == 0
    assert len(game.piles) == 1 and game.stock_size == 51 and game.variant == "compacted"
    assert not game.HasField("seed"), "a stock game in progress keeps its seed hidden"
    assert "#51" in game.state and not game.can_undo
    while game.status == IN_PROGRESS:
        legal = (await client.call("LegalMoves", pb.LegalMovesRequest(game_id=game.id))).moves
        assert list(legal) == list(game.legal_moves)
        for move in legal:
            assert_two_faces(move)
        reply = await client.apply(game.id, legal[0].notation, expected_version=game.version)
        assert reply.move == legal[0], "the played move comes back with both faces"
        assert reply.game.version == game.version + 1
        assert reply.game.moves_played == game.moves_played + 1
        game = reply.game
    assert game.status in (WON, LOST) and not game.legal_moves
    assert game.moves_played == 97 and game.stock_size == 0
    assert game.HasField("seed") and game.seed == 1, "a finished game shows its seed"
    assert await client.get(game.id) == game
    score = await client.call("Score", pb.ScoreRequest(game_id=game.id))
    assert (score.version, score.status, score.penalty, score.piles_left, score.stock_size) == (
        game.version,
        game.status,
        game.penalty,
        len(game.piles),
        0,
    )
    assert score.penalty == 52 - max(len(p.cards) for p in game.piles)
    assert score.threshold_met == (game.status == WON)
    hint = await client.call("Hint", pb.HintRequest(game_id=game.id))
    assert not hint.HasField("move") and hint.version == game.version
    # Over is over: any move is illegal and the error says nothing is legal.
    err = await expect_error(
        client.apply(game.id, "deal"), grpc.StatusCode.FAILED_PRECONDITION, "ILLEGAL_MOVE"
    )
    assert json.loads(err.info.metadata["legal_moves"]) == []


async def test_the_service_agrees_with_the_engine_move_for_move(client: Client) -> None:
    created = await client.new_game("accordion", seed=7)
    local = engine.new_game("accordion", seed=7)
    game = created.game
    assert game.HasField("seed") and game.seed == 7, "all cards face up: the seed hides nothing"
    for _ in range(12):
        assert [m.notation for m in game.legal_moves] == local.legal_texts()
        assert game.state == local.state_string(hide_stock=True) and game.text == local.render()
        assert [[c.text for c in p.cards] for p in game.piles] == [
            [card_text(c, symbols=True) for c in pile] for pile in local.state.row
        ]
        move = game.legal_moves[-1]
        game = (await client.apply(game.id, move.notation)).game
        local.play(move.notation)
    assert game.penalty == local.penalty and game.moves_played == 12


async def test_structured_and_notation_moves_are_the_same_move(client: Client) -> None:
    other = Client(client.channel, client.stub)
    by_structure = (await client.new_game("accordion-stock", seed=11)).game
    by_text = (await other.new_game("accordion-stock", seed=11)).game
    for _ in range(15):
        move = by_structure.legal_moves[0]
        structured = pb.Move()
        structured.CopyFrom(move)
        structured.ClearField("notation")
        a = await client.apply(by_structure.id, move=structured)
        b = await other.apply(by_text.id, move.notation)
        assert a.move == b.move == move
        assert (
            a.game.state == b.game.state and a.game.text == b.game.text and a.game.version == b.game.version
        )
        by_structure, by_text = a.game, b.game
    # Both faces at once are fine when they agree, refused when they do not.
    move = by_structure.legal_moves[0]
    both = await client.apply(by_structure.id, move=move)
    assert both.move == move
    legal = list(both.game.legal_moves)
    assert len(legal) >= 2
    mismatched = pb.Move()
    mismatched.CopyFrom(legal[0])
    mismatched.notation = legal[1].notation
    err = await expect_error(
        client.apply(by_structure.id, move=mismatched), grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST"
    )
    assert [v.field for v in err.bad_request.field_violations] == ["move.notation"]
    assert (await client.get(by_structure.id)).version == both.game.version


async def test_an_explicit_deal_is_laid_out_in_order(client: Client) -> None:
    cards = [card_text(c) for c in reversed(range(52))]
    game = (await client.new_game("accordion", deal=pb.CardList(cards=cards))).game
    assert [p.cards[0].text for p in game.piles] == [card_text(c, symbols=True) for c in reversed(range(52))]
    assert game.piles[0].cards[0].rank == 13 and game.piles[0].cards[0].suit == pb.SUIT_CLUBS
    assert game.piles[-1].cards[0].rank == 1 and game.piles[-1].cards[0].suit == pb.SUIT_SPADES
    err = await expect_error(
        client.new_game("accordion", deal=pb.CardList(cards=cards[:-1] + ["ZZ"])),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_CARD",
    )
    assert err.bad_request.field_violations[0].field == "deal.cards"
    await expect_error(
        client.new_game("accordion", deal=pb.CardList(cards=cards[:-1] + [cards[0]])),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_DEAL",
    )


async def test_options_and_aliases_reach_the_engine(client: Client) -> None:
    game = (await client.new_game("Tower of Babel", seed=3, options={"dealing": "stock", "leap": "2"})).game
    assert game.variant == "accordion" and game.options["dealing"] == "stock" and game.options["leap"] == "2"
    assert game.stock_size == 51
    err = await expect_error(
        client.new_game("accordion", seed=3, options={"leap": "9"}),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_OPTION",
    )
    assert err.bad_request.field_violations[0].field == "options"
    await expect_error(
        client.new_game("no-such-game", seed=3), grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_VARIANT"
    )


async def test_an_illegal_move_lists_the_legal_ones_in_both_faces(client: Client) -> None:
    game = (await client.new_game("accordion", seed=7)).game
    illegal = next(f"{a.text}>{b.text}" for a, b in ((game.piles[0].cards[0], game.piles[1].cards[0]),))
    err = await expect_error(
        client.apply(game.id, illegal), grpc.StatusCode.FAILED_PRECONDITION, "ILLEGAL_MOVE"
    )
    assert json.loads(err.info.metadata["legal_moves"]) == [m.notation for m in game.legal_moves]
    assert (
        err.legal is not None and list(err.legal.moves) == list(game.legal_moves) and err.legal.version == 1
    )
    # Structured: a pile that does not exist.
    err = await expect_error(
        client.apply(game.id, move=pb.Move(kind=pb.MOVE_KIND_STACK, from_pile=99, to_pile=98)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "ILLEGAL_MOVE",
    )
    assert err.legal is not None and len(err.legal.moves) == len(game.legal_moves)
    # Unreadable notation is INVALID_ARGUMENT, and lists the legal moves too.
    err = await expect_error(
        client.apply(game.id, "fly me to the moon"), grpc.StatusCode.INVALID_ARGUMENT, "INVALID_MOVE"
    )
    assert err.legal is not None and err.bad_request.field_violations[0].field == "move"
    assert (await client.get(game.id)).version == 1, "failed moves change nothing"


async def test_a_stale_expected_version_is_aborted_with_the_current_version(client: Client) -> None:
    game = (await client.new_game("accordion", seed=7)).game
    moved = await client.apply(game.id, game.legal_moves[0].notation, expected_version=1)
    assert moved.game.version == 2
    err = await expect_error(
        client.apply(game.id, moved.game.legal_moves[0].notation, expected_version=1),
        grpc.StatusCode.ABORTED,
        "VERSION_MISMATCH",
    )
    assert err.info.metadata["current_version"] == "2" and err.info.metadata["expected_version"] == "1"
    await expect_error(
        client.call("Undo", pb.UndoRequest(game_id=game.id, expected_version=5)),
        grpc.StatusCode.ABORTED,
        "VERSION_MISMATCH",
    )
    assert await client.get(game.id) == moved.game


async def test_undo_takes_back_exactly_one_move(client: Client) -> None:
    start = (await client.new_game("accordion-stock", seed=5)).game
    await expect_error(
        client.call("Undo", pb.UndoRequest(game_id=start.id)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOTHING_TO_UNDO",
    )
    first = await client.apply(start.id, "deal")
    second = await client.apply(start.id, move=first.game.legal_moves[0])
    undone = await client.call("Undo", pb.UndoRequest(game_id=start.id, expected_version=3))
    assert undone.move == second.move, "the move taken back, read where it was played"
    assert undone.game.version == 4
    for name in ("piles", "stock_size", "state", "text", "legal_moves", "moves_played"):
        assert getattr(undone.game, name) == getattr(first.game, name), name
    again = await client.call("Undo", pb.UndoRequest(game_id=start.id))
    assert again.game.state == start.state and again.game.version == 5 and not again.game.can_undo


async def test_hint_suggests_a_legal_move_with_both_faces(client: Client) -> None:
    game = (await client.new_game("accordion-stock", seed=9)).game
    for _ in range(10):
        hint = await client.call("Hint", pb.HintRequest(game_id=game.id))
        assert hint.version == game.version
        assert_two_faces(hint.move)
        assert hint.move in list(game.legal_moves)
        if len(game.legal_moves) > 1:
            assert hint.move.kind != pb.MOVE_KIND_DEAL, "a hint never bets on the stock's order"
        game = (await client.apply(game.id, move=hint.move)).game


async def test_seeds_are_drawn_by_the_server_and_hidden_while_they_reveal_the_stock(client: Client) -> None:
    stocked = [(await client.new_game("accordion-stock")).game for _ in range(3)]
    assert all(not g.HasField("seed") for g in stocked)
    told = [(await client.new_game("accordion-stock", seed=5)).game]
    assert not told[0].HasField("seed"), "not even one the client chose: the rule is about what is hidden"
    face_up = [(await client.new_game("accordion")).game for _ in range(3)]
    assert all(g.HasField("seed") for g in face_up), (
        "nothing is hidden in a face-up deal, so its seed is shown"
    )
    assert len({g.seed for g in face_up}) == 3 and len({g.state for g in face_up}) == 3, "64 random bits each"
    face_up = face_up[0]
    replayed = (await client.new_game("accordion", seed=face_up.seed)).game
    assert replayed.state == face_up.state


async def test_unknown_game_is_not_found(client: Client) -> None:
    await client.new_game("accordion", seed=1)
    await expect_error(
        client.call("GetGame", pb.GetGameRequest(game_id="A" * 22)),
        grpc.StatusCode.NOT_FOUND,
        "GAME_NOT_FOUND",
    )


@pytest.mark.parametrize("variant", ["cribbage-solitaire", "royal-marriage", "french"])
async def test_other_families_play_through_the_same_rpcs(client: Client, variant: str) -> None:
    game = (await client.new_game(variant, seed=2)).game
    for _ in range(30):
        if game.status != IN_PROGRESS:
            break
        for move in game.legal_moves:
            assert_two_faces(move)
        # Alternate the faces: structured on even moves, notation on odd ones.
        move = game.legal_moves[0]
        reply = (
            await client.apply(game.id, move=move)
            if game.version % 2
            else await client.apply(game.id, move.notation)
        )
        assert reply.move == move
        game = reply.game
    assert game.moves_played >= 1
