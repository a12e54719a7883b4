"""Races and retries on both backends: one winner per version, one effect per request id."""

from __future__ import annotations

import asyncio

import grpc
import grpc.aio

from accordion.v1 import accordion_pb2 as pb

from .helpers import Client, expect_error, rich


async def test_twenty_concurrent_moves_at_one_version_apply_exactly_once(client: Client) -> None:
    game = (await client.new_game("accordion", seed=7)).game
    moves = list(game.legal_moves)
    requests = [
        pb.ApplyMoveRequest(
            game_id=game.id, move=moves[i % len(moves)], expected_version=1, request_id=f"r{i}"
        )
        for i in range(20)
    ]
    results = await asyncio.gather(*(client.call("ApplyMove", r) for r in requests), return_exceptions=True)
    applied = [r for r in results if isinstance(r, pb.ApplyMoveResponse)]
    aborted = [r for r in results if isinstance(r, grpc.aio.AioRpcError)]
    assert len(applied) == 1 and len(aborted) == 19, results
    for exc in aborted:
        assert exc.code() == grpc.StatusCode.ABORTED
        err = rich(exc)
        assert err.info.reason == "VERSION_MISMATCH" and err.info.metadata["current_version"] == "2"
    now = await client.get(game.id)
    assert now.version == 2 and now.moves_played == 1 and now == applied[0].game


async def test_without_expected_version_concurrent_moves_all_land_in_order(client: Client) -> None:
    """No version promised: a lost race is replayed on the new position (deals always stay legal)."""
    game = (await client.new_game("accordion-stock", seed=3)).game
    requests = [pb.ApplyMoveRequest(game_id=game.id, move=pb.Move(notation="deal")) for _ in range(3)]
    results = await asyncio.gather(*(client.call("ApplyMove", r) for r in requests), return_exceptions=True)
    ok = [r for r in results if isinstance(r, pb.ApplyMoveResponse)]
    assert len(ok) == 3, results  # each round has a winner, and three rounds are allowed
    assert sorted(r.game.version for r in ok) == list(range(2, 2 + len(ok)))
    assert (await client.get(game.id)).moves_played == len(ok)


async def test_retries_with_one_request_id_apply_once_and_answer_alike(client: Client) -> None:
    game = (await client.new_game("accordion", seed=7)).game
    request = pb.ApplyMoveRequest(game_id=game.id, move=game.legal_moves[0], request_id="retry-me")
    first = await client.call("ApplyMove", request)
    concurrent = await asyncio.gather(*(client.call("ApplyMove", request) for _ in range(5)))
    assert all(r == first for r in concurrent)
    # The game moves on; a late retry still gets the first answer and changes nothing.
    later = await client.apply(game.id, first.game.legal_moves[0].notation)
    assert await client.call("ApplyMove", request) == first
    now = await client.get(game.id)
    assert now.version == 3 and now.moves_played == 2 and now == later.game


async def test_concurrent_first_attempts_with_one_request_id_apply_once(client: Client) -> None:
    game = (await client.new_game("accordion", seed=7)).game
    request = pb.ApplyMoveRequest(game_id=game.id, move=game.legal_moves[0], request_id="same")
    results = await asyncio.gather(*(client.call("ApplyMove", request) for _ in range(10)))
    assert all(r == results[0] for r in results)
    assert (await client.get(game.id)).version == 2


async def test_a_request_id_reused_for_another_request_is_refused(client: Client) -> None:
    game = (await client.new_game("accordion", seed=7)).game
    await client.call(
        "ApplyMove", pb.ApplyMoveRequest(game_id=game.id, move=game.legal_moves[0], request_id="k")
    )
    other = pb.ApplyMoveRequest(game_id=game.id, move=game.legal_moves[1], request_id="k")
    err = await expect_error(
        client.call("ApplyMove", other), grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED"
    )
    assert err.bad_request.field_violations[0].field == "request_id"
    # Same id on another method is another request too.
    await expect_error(
        client.call("Undo", pb.UndoRequest(game_id=game.id, request_id="k")),
        grpc.StatusCode.INVALID_ARGUMENT,
        "REQUEST_ID_REUSED",
    )
    assert (await client.get(game.id)).version == 2


async def test_undo_retries_take_back_one_move(client: Client) -> None:
    game = (await client.new_game("accordion", seed=7)).game
    for _ in range(3):
        game = (await client.apply(game.id, game.legal_moves[0].notation)).game
    request = pb.UndoRequest(game_id=game.id, request_id="undo-1")
    replies = await asyncio.gather(*(client.call("Undo", request) for _ in range(4)))
    assert all(r == replies[0] for r in replies)
    now = await client.get(game.id)
    assert now.moves_played == 2 and now.version == 5


async def test_new_game_retries_return_the_same_game_and_token(client: Client) -> None:
    request = pb.NewGameRequest(variant="accordion-stock", request_id="new-1")  # server-drawn seed
    first = await client.stub.NewGame(request, timeout=10)
    retries = await asyncio.gather(*(client.stub.NewGame(request, timeout=10) for _ in range(4)))
    assert all(r == first for r in retries), "same game, same token, same (random) deal"
    client.token = first.token
    assert (await client.get(first.game.id)).version == 1
    reused = pb.NewGameRequest(variant="accordion", request_id="new-1")
    await expect_error(
        client.stub.NewGame(reused, timeout=10), grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED"
    )


async def test_concurrent_new_games_with_one_request_id_agree(client: Client) -> None:
    request = pb.NewGameRequest(variant="accordion", seed=4, request_id="race")
    replies = await asyncio.gather(*(client.stub.NewGame(request, timeout=10) for _ in range(8)))
    assert len({(r.game.id, r.token) for r in replies}) == 1
    client.token = replies[0].token
    assert (await client.get(replies[0].game.id)).version == 1
