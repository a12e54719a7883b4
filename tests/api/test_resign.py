"""RESIGN over a real channel, on both stores: ApplyMove ends the game LOST, the stored game and
every read agree, a second RESIGN is refused as any illegal move is, undo takes it back."""

from __future__ import annotations

import grpc

from accordion import engine
from accordion.v1 import accordion_pb2 as pb

from .conftest import Running
from .helpers import Client, expect_error

IN_PROGRESS, LOST = pb.GAME_STATUS_IN_PROGRESS, pb.GAME_STATUS_LOST
RESIGN = pb.Move(kind=pb.MOVE_KIND_RESIGN)


async def test_a_game_resigned_through_apply_move_is_lost_and_stays_so(
    client: Client, served: Running
) -> None:
    start = (await client.new_game("accordion-stock", seed=5)).game
    dealt = (await client.apply(start.id, "deal")).game
    assert dealt.status == IN_PROGRESS and dealt.penalty > 0
    assert all(m.kind != pb.MOVE_KIND_RESIGN for m in dealt.legal_moves), "RESIGN is never listed"

    reply = await client.apply(start.id, move=RESIGN, expected_version=dealt.version)
    assert reply.move.kind == pb.MOVE_KIND_RESIGN and reply.move.notation == "resign"
    game = reply.game
    assert game.status == LOST and game.version == dealt.version + 1 and game.moves_played == 2
    assert game.penalty == dealt.penalty and list(game.piles) == list(dealt.piles)
    assert game.stock_size == dealt.stock_size and not game.legal_moves
    assert game.state == dealt.state + " resigned" and game.can_undo
    assert not game.HasField("seed"), "undo can take a resignation back: the stock's order stays hidden"

    # Every read agrees, the stored game too: the process's decoded copy is dropped first.
    served.server.servicer.cache.discard(start.id)
    assert await client.get(start.id) == game
    score = await client.call("Score", pb.ScoreRequest(game_id=start.id))
    assert score.status == LOST and score.penalty == dealt.penalty
    legal = await client.call("LegalMoves", pb.LegalMovesRequest(game_id=start.id))
    assert not legal.moves
    hint = await client.call("Hint", pb.HintRequest(game_id=start.id))
    assert not hint.HasField("move"), "no hint in a game that is over"

    # A second RESIGN, in either face, is an illegal move like any other; nothing changes.
    served.server.servicer.cache.discard(start.id)
    for again in (RESIGN, pb.Move(notation="resign")):
        err = await expect_error(
            client.apply(start.id, move=again), grpc.StatusCode.FAILED_PRECONDITION, "ILLEGAL_MOVE"
        )
        assert "over" in err.message and err.legal is not None and not err.legal.moves
    assert (await client.get(start.id)).version == game.version

    # Undo takes the resignation back: the game goes on where it was.
    undone = await client.call("Undo", pb.UndoRequest(game_id=start.id, expected_version=game.version))
    assert undone.move.kind == pb.MOVE_KIND_RESIGN and undone.move.notation == "resign"
    assert undone.game.status == IN_PROGRESS and list(undone.game.legal_moves) == list(dealt.legal_moves)
    assert undone.game.state == dealt.state
    # ... and the notation face resigns too.
    by_text = await client.apply(start.id, "Resign")
    assert by_text.game.status == LOST and by_text.move.kind == pb.MOVE_KIND_RESIGN


async def test_a_resignation_reaches_watchers(client: Client) -> None:
    game = (await client.new_game("accordion", seed=3)).game
    await client.apply(game.id, move=game.legal_moves[0])
    await client.apply(game.id, "resign")
    call = client.stub.WatchGame(
        pb.WatchGameRequest(game_id=game.id),
        metadata=(("authorization", f"Bearer {client.token}"),),
        timeout=5,
    )
    try:
        events = [(await call.read()).event for _ in range(2)]
    finally:
        call.cancel()
    assert [e.version for e in events] == [2, 3]
    assert events[1].move.kind == pb.MOVE_KIND_RESIGN and events[1].game.status == LOST


async def test_resign_takes_no_fields(client: Client) -> None:
    game = (await client.new_game("accordion", seed=3)).game
    err = await expect_error(
        client.apply(game.id, move=pb.Move(kind=pb.MOVE_KIND_RESIGN, from_pile=1)),
        grpc.StatusCode.INVALID_ARGUMENT,
    )
    assert err.bad_request is not None and err.bad_request.field_violations[0].field == "move.from_pile"
    assert (await client.get(game.id)).status == IN_PROGRESS


async def test_every_variant_lists_resign_among_its_move_kinds(client: Client) -> None:
    reply = await client.stub.ListVariants(pb.ListVariantsRequest(), timeout=10)
    assert len(reply.variants) == len(engine.all_variants())
    for variant in reply.variants:
        assert variant.move_kinds[-1] == pb.MOVE_KIND_RESIGN, variant.id
