"""Records written by the code before the session layer (``golden_records.json``) still load.

The file was made by that code (``api/codec.py`` of the tree before this change): a game
record per variant after random moves and undos (with the state string of every version it
went through, as a SHA-256), a record whose log was trimmed, a compact idempotency reply, watch
stream events, a compact NewGame record and the store keys of request ids. Games stored before
the change must load after it, replay every version, and dump to the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from accordion import engine, sessions
from accordion.api import wire
from accordion.engine.moves import remove, stack
from accordion.sessions import replies, tokens
from accordion.sessions.record import load_stored
from accordion.v1 import accordion_pb2 as pb

GOLDEN = json.loads((Path(__file__).parent / "golden_records.json").read_text())
GAME_ID = "abcdefghijklmnopqrstuv"


@pytest.mark.parametrize("case", GOLDEN["games"], ids=lambda c: f"{c['variant']}-{c['version']}")
def test_a_game_stored_before_the_change_loads_replays_and_dumps_the_same(case: dict[str, Any]) -> None:
    data = bytes.fromhex(case["data"])
    stored = load_stored(GAME_ID, data, case["version"])
    assert stored.version == case["version"]
    assert stored.game.state_string() == case["final"]
    assert stored.dump() == data  # byte for byte: the format did not move
    if case.get("trimmed"):
        assert stored.base > 1 and stored.game.move_count == case["moves"]
        return
    assert stored.game.seed == case["seed"] and stored.game.variant.id == case["variant"]
    states = [stored.game_at(v).state_string() for v in range(1, stored.version + 1)]
    assert hashlib.sha256("\n".join(states).encode()).hexdigest() == case["states_sha256"]
    # It plays on: a move after loading, then an undo back to the stored position.
    game = stored.game
    if game.legal_moves():
        stored.play(game.legal_moves()[0])
        stored.undo()
        assert game.state_string() == case["final"]


def test_small_records_before_the_change_still_read() -> None:
    records = GOLDEN["records"]
    assert replies.compact_reply_version(bytes.fromhex(records["compact_reply_300"])) == 300
    expected = [stack(3, 0), engine.DEAL, sessions.UNDO, remove(1, 5), engine.REDEAL]
    for (_, payload), event in zip(records["stream_events"], expected, strict=True):
        assert replies.stream_event_value(bytes.fromhex(payload)) == (True, event)
        assert replies.stream_event(event).hex() == payload
    record = replies.read_new_game_record(bytes.fromhex(records["new_game_record"]))
    assert record == replies.NewGameRecord(bytes(range(59)), 4, "abcdefghijklmnopqrstuv")
    # Keys: the records of retries made before the change are found after it.
    assert tokens.move_request_key("retry-me") == records["request_key_retry-me"]
    assert tokens.new_game_key("new-1") == records["newgame_key_new-1"]
    sealed = bytes.fromhex(records["sealed_with_rid_r1"][0])
    assert tokens.open_token(sealed, "r1") == "a-token-of-forty-three-characters-exactly00"


def test_the_newgame_record_of_earlier_versions_still_reads() -> None:
    """The record before the compact one: the sealed token's length and bytes, then the whole
    serialized reply without its token (the servicer once read it byte by byte)."""
    game = engine.new_game("accordion", seed=7)
    reply = pb.NewGameResponse(game=wire.encode_game(game, GAME_ID, 1), seeds_tried=2)
    sealed = tokens.seal_token("the-token", "rid-1")
    blob = bytes((len(sealed),)) + sealed + reply.SerializeToString()
    record = replies.read_new_game_record(blob)
    assert isinstance(record, replies.LegacyNewGameRecord)
    assert tokens.open_token(record.sealed_token, "rid-1") == "the-token"
    answer = wire.new_game_reply(sessions.RecordedNewGame(record.reply, "the-token"))
    assert answer.token == "the-token" and answer.game == reply.game and answer.seeds_tried == 2
