"""An illegal move's words over a real gRPC channel (issue 32): the Status message is the engine's
``<move> is not legal: <why>; legal now: …``, for notation and for structured moves, with the
reason ILLEGAL_MOVE and the legal moves still in the details and the metadata."""

from __future__ import annotations

import json

import grpc
import grpc.aio
import pytest

from accordion.v1 import accordion_pb2 as pb

from .helpers import Client, expect_error


async def _refused(client: Client, game_id: str, move: pb.Move) -> str:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await client.apply(game_id, move=move)
    err = await expect_error(_raise(caught.value), grpc.StatusCode.FAILED_PRECONDITION, "ILLEGAL_MOVE")
    game = await client.get(game_id)
    assert err.legal is not None and list(err.legal.moves) == list(game.legal_moves)
    assert json.loads(err.info.metadata["legal_moves"]) == [m.notation for m in game.legal_moves]
    assert caught.value.details() == err.message
    return err.message


async def _raise(exc: BaseException) -> None:
    raise exc


async def test_the_status_says_why_in_the_players_words(client: Client) -> None:
    # Accordion, seed 1: 1:7♥ 2:9♠ 3:4♥ 4:8♦ 5:8♥ …
    game = (await client.new_game("accordion", seed=1)).game
    listing = ", ".join(m.notation for m in game.legal_moves)
    message = await _refused(client, game.id, pb.Move(notation="3>2"))
    assert message == (
        "4H>9S is not legal: 4♥ can go onto the pile 1 or 3 to its left when they match in suit "
        f"or rank: 9♠ does not match; legal now: {listing}"
    )
    structured = pb.Move(kind=pb.MOVE_KIND_STACK, from_pile=4, to_pile=2)
    assert (await _refused(client, game.id, structured)).startswith(
        "8D>9S is not legal: 8♦ can go only onto the pile 1 or 3 to its left; 9♠ is 2 to its left; legal "
        "now: "
    )
    off_the_row = pb.Move(kind=pb.MOVE_KIND_STACK, from_pile=60, to_pile=1)
    assert (await _refused(client, game.id, off_the_row)).startswith(
        "60>1 is not legal: there is no pile 60; there are 52;"
    )


async def test_a_tableau_move_is_explained_without_naming_a_face_down_card(client: Client) -> None:
    # Klondike, seed 1: pile 7 is six face-down cards under 8♣; the first draw shows Q♠ 4♣ 6♠.
    game = (await client.new_game("klondike", seed=1)).game
    under = pb.Move(
        kind=pb.MOVE_KIND_MOVE,
        from_zone=pb.ZONE_KIND_TABLEAU,
        from_pile=7,
        to_zone=pb.ZONE_KIND_TABLEAU,
        to_pile=1,
        count=3,
    )
    assert (await _refused(client, game.id, under)).startswith(
        "7>1 x3 is not legal: a face-down card cannot move: pile 7 has only 1 card face up; legal now: "
    )
    await client.apply(game.id, "draw")
    assert (await _refused(client, game.id, pb.Move(notation="w>7"))).startswith(
        "w>7 is not legal: 6♠ cannot go on 8♣: it needs a red 7; legal now: "
    )
    await client.apply(game.id, "resign")
    assert await _refused(client, game.id, pb.Move(notation="draw")) == (
        "draw is not legal: the game is over; legal now: nothing (the game is over)"
    )
