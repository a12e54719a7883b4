"""Findings of the review of the session layer and its wrapper, each over a real channel:
a seed shown for a finished game that undo reopens, and watch slots never given back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import pytest

from accordion.v1 import accordion_pb2 as pb

from .conftest import Running
from .helpers import Client, bearer

IN_PROGRESS = pb.GAME_STATUS_IN_PROGRESS


async def test_a_finished_game_that_undo_reopens_keeps_its_seed_hidden(client: Client) -> None:
    """French's redeals shuffle with the seed's generator: a seed shown once the game is over
    tells every shuffle to come after the player takes a move back."""
    game = (await client.new_game("french")).game  # the server draws the seed
    assert not game.HasField("seed")
    for _ in range(500):
        if game.status != IN_PROGRESS:
            break
        game = (await client.apply(game.id, game.legal_moves[0].notation)).game
    assert game.status != IN_PROGRESS and game.can_undo
    assert not game.HasField("seed"), "undo reopens the game: the seed would tell the shuffles to come"
    assert not (await client.get(game.id)).HasField("seed")
    reopened = (await client.call("Undo", pb.UndoRequest(game_id=game.id))).game
    assert reopened.status == IN_PROGRESS and not reopened.HasField("seed")


async def test_watch_calls_refused_for_their_request_give_their_slots_back(
    start_server: Callable[..., Any], connect: Callable[[str], Client]
) -> None:
    """A WatchGame with an empty game id is refused (INVALID_REQUEST); its connection's watch
    slot must be given back, or a few bad requests lock the connection out of watching (and
    every connection that sent one stays in the server's counters for ever)."""
    running: Running = await start_server(max_watches_per_connection=2)
    client = connect(running.addr)
    for _ in range(3):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            async for _event in client.stub.WatchGame(pb.WatchGameRequest(game_id=""), timeout=10):
                pass
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    admission = running.server.admission
    assert admission.watches_by_connection == {} and admission.watches_by_game == {}

    created = await client.new_game("accordion", seed=3)
    await client.apply(created.game.id, created.game.legal_moves[0].notation)
    stream = client.stub.WatchGame(
        pb.WatchGameRequest(game_id=created.game.id, after_version=1),
        metadata=bearer(client.token),
        timeout=10,
    )
    event = await stream.read()  # refused (CAPACITY_EXCEEDED) if the bad calls kept their slots
    assert event.event.version == 2
    stream.cancel()
