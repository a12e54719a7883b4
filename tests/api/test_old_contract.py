"""A client built from the last released contract (proto/baseline/accordion_v1.binpb, the one
`make proto-breaking` compares with) still plays against today's server, on both stores.

The old client's messages are made at run time from that descriptor set, in a pool of their
own, so nothing of today's generated code is used on the client side: the bytes it sends and
reads are exactly what a client generated from the old protos would send and read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from tests.api.helpers import ROOT, ServerProcess

BASELINE = ROOT / "proto" / "baseline" / "accordion_v1.binpb"
SERVICE = "accordion.v1.AccordionService"


def old_messages() -> dict[str, Any]:
    """The old contract's message classes by short name (NewGameRequest, Game, ...)."""
    files = descriptor_pb2.FileDescriptorSet.FromString(BASELINE.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    accordion = pool.FindFileByName("accordion/v1/accordion.proto")
    return {name: message_factory.GetMessageClass(d) for name, d in accordion.message_types_by_name.items()}


def rpc(channel: grpc.Channel, old: dict[str, Any], method: str, response: str) -> Callable[..., Any]:
    return channel.unary_unary(
        f"/{SERVICE}/{method}",
        request_serializer=lambda m: m.SerializeToString(),
        response_deserializer=old[response].FromString,
    )


@pytest.mark.parametrize("variant", ["accordion", "compacted", "royal-marriage", "cribbage-solitaire"])
def test_a_client_of_the_last_contract_plays_a_game_to_its_end(
    spawn_server: Callable[..., ServerProcess], store_url: str, variant: str
) -> None:
    old = old_messages()
    assert "GetGamePictureRequest" not in old, "the baseline is the contract before this change"
    server = (
        spawn_server()
        if store_url == "memory://"
        else spawn_server("--redis-url", store_url, "--workers", "1")
    )
    with grpc.insecure_channel(server.addr) as channel:
        new_game = rpc(channel, old, "NewGame", "NewGameResponse")
        apply_move = rpc(channel, old, "ApplyMove", "ApplyMoveResponse")
        undo = rpc(channel, old, "Undo", "UndoResponse")
        get_game = rpc(channel, old, "GetGame", "GetGameResponse")
        variants = rpc(channel, old, "ListVariants", "ListVariantsResponse")(
            old["ListVariantsRequest"](), timeout=10
        )
        assert variant in [v.id for v in variants.variants]

        reply = new_game(old["NewGameRequest"](variant=variant, seed=7), timeout=10)
        auth = (("authorization", f"Bearer {reply.token}"),)
        game, moves = reply.game, 0
        while game.legal_moves and moves < 300:
            move = game.legal_moves[0]
            played = apply_move(
                old["ApplyMoveRequest"](game_id=game.id, move=move, expected_version=game.version),
                metadata=auth,
                timeout=10,
            )
            assert played.move.notation == move.notation and played.game.version == game.version + 1
            game, moves = played.game, moves + 1
        assert moves > 0 and game.status in (2, 3), "played to WON or LOST"  # GAME_STATUS_WON / _LOST
        assert get_game(old["GetGameRequest"](game_id=game.id), metadata=auth, timeout=10).game == game
        taken = undo(old["UndoRequest"](game_id=game.id), metadata=auth, timeout=10)
        assert taken.game.version == game.version + 1 and taken.game.status == 1  # in progress again
