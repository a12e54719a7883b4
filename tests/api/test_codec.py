"""The stored form of a game (``sessions.Stored``) and the hand-written Game message (``wire``).

Hypothesis plays random games of every variant, with undos, and checks that the blob gives
back the same game (position, moves, replay record, undo), that the log replays to every
version it went through, and that the blob stays small; and that ``game_bytes`` writes the
same message protobuf builds field by field.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accordion import engine, sessions
from accordion.api import errors, wire
from accordion.engine import encode_state
from accordion.engine.core import option_text
from accordion.engine.moves import Zone, remove, stack
from accordion.engine.rng import SplitMix64
from accordion.sessions import record, replies, tokens
from accordion.sessions.record import Stored, load_stored
from accordion.sessions.seed_gate import seed_is_public
from accordion.v1 import accordion_pb2 as pb

VARIANTS = [v.id for v in engine.all_variants()]
GAME_ID = "abcdefghijklmnopqrstuv"


def reference_game(game: engine.Game, game_id: str, version: int) -> pb.Game:
    """The Game message built the plain way, field by field (what the service sent before);
    a tableau game's piles are its tableau's face-up cards, its zones the engine's view."""
    state = game.state
    zones = game.rules.zones(state)
    piles = [p.cards for z in zones if z.zone is Zone.TABLEAU for p in z.piles] if zones else state.row
    msg = pb.Game(
        id=game_id,
        version=version,
        variant=game.variant.id,
        options={k: option_text(v) for k, v in game.options.items()},
        piles=[pb.Pile(cards=[wire.encode_card(c) for c in pile]) for pile in piles],
        stock_size=len(state.stock),
        status=wire.STATUS[game.status],
        legal_moves=wire.encode_legal(game),
        penalty=game.penalty,
        score=game.score,
        threshold_met=game.threshold_met,
        moves_played=game.move_count,
        text=game.render(),
        state=game.state_string(hide_stock=True),
        extras=game.rules.summary(state),
        can_undo=game.move_count > 0,
        zones=[wire.encode_zone(z) for z in zones],
    )
    if seed_is_public(game):
        msg.seed = game.seed
    return msg


def play_randomly(stored: Stored, rng: random.Random, steps: int, undo_odds: float) -> list[str]:
    """Random legal moves, resignations and undos through ``stored``; the state string after each step."""
    seen = []
    for _ in range(steps):
        game = stored.game
        legal = game.legal_moves()
        if game.move_count and (not legal or rng.random() < undo_odds):
            stored.undo()
        elif legal and rng.random() < 0.05:
            stored.play(engine.RESIGN)  # then the game has no legal move: the next step undoes it
        elif legal:
            stored.play(rng.choice(legal))
        else:
            break
        seen.append(game.state_string())
    return seen


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    variant=st.sampled_from(VARIANTS),
    seed=st.integers(0, 2**64 - 1),
    steps=st.integers(0, 120),
    undo_odds=st.sampled_from([0.0, 0.1, 0.4]),
    explicit_deal=st.booleans(),
)
def test_stored_game_round_trips_with_its_log(
    variant: str, seed: int, steps: int, undo_odds: float, explicit_deal: bool
) -> None:
    start = engine.new_game(variant, seed=seed)
    if explicit_deal and not start.rules.draws_after_deal:
        cards = start.rules.order_deal(SplitMix64(seed))  # the deal new_game made from the seed
        start = engine.new_game(variant, seed=seed, deal=cards)
    stored = Stored.new(start)
    first = start.state_string()
    history = [first] + play_randomly(stored, random.Random(seed), steps, undo_odds)
    blob = stored.dump()

    back = load_stored(GAME_ID, blob, stored.version)
    game = back.game
    assert back.version == stored.version == 1 + len(history) - 1
    assert game.state == stored.game.state
    assert game.move_count == stored.game.move_count
    assert game.seed == start.seed and game.deal == start.deal and game.options == start.options
    assert game.record() == stored.game.record()  # the replay record (moves as notation) survives
    assert back.dump() == blob  # and dumping again writes the same bytes
    # Every version the log went through replays exactly.
    for version in range(1, back.version + 1):
        assert back.game_at(version).state_string() == history[version - 1]
    # Undo works on the loaded game (earlier positions are rebuilt by replay), also after
    # moves played since it was loaded (as a cached game is: played on, then undone).
    reference = engine.replay(game.record())
    game = load_stored(GAME_ID, blob, stored.version).game  # (record() above replayed it)
    for step in range(3):
        legal = game.legal_moves()
        if step == 0 and legal:
            game.play(legal[0])
            reference.play(legal[0])
        elif game.move_count:
            game.undo()
            reference.undo()
        assert game.state == reference.state and game.move_count == reference.move_count
    # Size: a header of a few dozen bytes, at most a few bytes per event, then the position.
    events = back.version - 1
    state_bytes = len(encode_state(stored.game.rules, stored.game.state))
    assert len(blob) <= 40 + len(start.variant.id) + (len(start.deal or ()) + 2) + 6 * events + state_bytes
    assert state_bytes <= 2 * 104 + 64  # (Cribbage Solitaire with its claims reaches 242: seed 76, 56 moves)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 2**64 - 1), steps=st.integers(0, 80))
def test_replayed_events_match_what_was_played(variant: str, seed: int, steps: int) -> None:
    """``Stored.replay``: each event's move, notation and game, as the move made them."""
    stored = Stored.new(engine.new_game(variant, seed=seed))
    rng = random.Random(seed)
    made = []
    for _ in range(steps):
        game = stored.game
        legal = game.legal_moves()
        if game.move_count and (not legal or rng.random() < 0.2):
            move = stored.undo()
            made.append((None, move, game.move_text(move), reference_game(game, GAME_ID, stored.version)))
        elif legal:
            move = rng.choice(legal)
            text = game.move_text(move)
            stored.play(move)
            made.append((move, move, text, reference_game(game, GAME_ID, stored.version)))
        else:
            break
    back = load_stored(GAME_ID, stored.dump(), stored.version)
    replayed = [
        (event, move, text, wire.encode_game(game, GAME_ID, version))
        for version, event, move, text, game in back.replay(1)
    ]
    assert replayed == made
    after = len(made) // 2
    assert [v for v, *_ in back.replay(1 + after)] == list(range(2 + after, 2 + len(made)))


@settings(max_examples=80, deadline=None)
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 2**64 - 1), steps=st.integers(0, 60))
def test_game_bytes_is_the_message_protobuf_builds(variant: str, seed: int, steps: int) -> None:
    game = engine.new_game(variant, seed=seed)
    rng = random.Random(seed)
    for version in range(1, steps + 2):
        expected = reference_game(game, GAME_ID, version)
        assert pb.Game.FromString(wire.game_bytes(game, GAME_ID, version)) == expected
        assert wire.encode_legal_response(game, version) == pb.LegalMovesResponse(
            version=version, moves=expected.legal_moves
        )
        legal = game.legal_moves()
        if not legal:
            break
        move = rng.choice(legal)
        text = game.move_text(move)
        game.play(move)
        reply = pb.ApplyMoveResponse.FromString(wire.reply_bytes(move, text, game, GAME_ID, version + 1))
        assert reply == pb.ApplyMoveResponse(
            move=wire.encode_move(move, text), game=reference_game(game, GAME_ID, version + 1)
        )


@settings(max_examples=40, deadline=None)
@given(
    variant=st.sampled_from(VARIANTS),
    seed=st.integers(0, 2**64 - 1),
    seeds_tried=st.sampled_from([0, 1, 300]),
)
def test_new_game_reply_is_the_message_protobuf_builds(variant: str, seed: int, seeds_tried: int) -> None:
    game = engine.new_game(variant, seed=seed)
    reply = wire.new_game_reply(sessions.Dealt(GAME_ID, "the-token", game, seeds_tried))
    assert isinstance(reply, bytes)  # sent as it is, like ApplyMove's
    assert pb.NewGameResponse.FromString(reply) == pb.NewGameResponse(
        game=reference_game(game, GAME_ID, sessions.FIRST_VERSION), token="the-token", seeds_tried=seeds_tried
    )


def test_a_100_move_stock_game_is_a_few_hundred_bytes() -> None:
    """accordion-stock (52 cards, dealt one by one): 100 moves of history, about 2 bytes each."""
    for seed in range(200):
        stored = Stored.new(engine.new_game("accordion-stock", seed=seed))
        rng = random.Random(seed)
        while stored.version <= 100 and stored.game.legal_moves():
            legal = stored.game.legal_moves()
            stacks = [m for m in legal if m.kind is engine.MoveKind.STACK]
            stored.play(rng.choice(stacks) if stacks else legal[0])
        if stored.version == 101:
            blob = stored.dump()
            assert len(blob) < 300, len(blob)  # the JSON snapshot of the same game: ~1 KB
            assert len(json.dumps(stored.game.snapshot())) > 3 * len(blob)
            return
    raise AssertionError("no accordion-stock deal reached 100 moves")


def test_the_log_is_trimmed_but_replays_what_it_keeps() -> None:
    stored = Stored.new(engine.new_game("accordion", seed=3))
    for _ in range(record.EVENTS_KEPT + 150):  # a move and its undo, over and over
        game = stored.game
        if game.move_count:
            stored.undo()
        else:
            stored.play(game.legal_moves()[0])
    back = load_stored(GAME_ID, stored.dump(), stored.version)
    assert back.base > 1 and record.EVENTS_KEPT <= back.version - back.base <= record.EVENTS_KEPT + 100
    assert back.game_at(back.base).state == back.game_at(back.base + 2).state
    with pytest.raises(LookupError):
        back.game_at(back.base - 1)
    assert back.game.state == stored.game.state


def test_json_snapshots_of_earlier_versions_still_load() -> None:
    game = engine.new_game("accordion-stock", seed=11)
    for _ in range(12):
        game.play(game.legal_moves()[0])
    old = json.dumps(game.snapshot(), separators=(",", ":")).encode()
    back = load_stored(GAME_ID, old, 13)
    assert back.game.state == game.state and back.game.move_count == 12
    assert back.base == back.version == 13  # the log starts where the old record was
    back.play(back.game.legal_moves()[0])
    again = load_stored(GAME_ID, back.dump(), 14)
    assert again.game.state == back.game.state and again.game_at(13).state == game.state
    again.game.undo()
    assert again.game.state == game.state


@pytest.mark.parametrize(
    "blob",
    [b"", b"\x02", b"\x01", b"\x01\x05abc", b"{not json", b"\x01" + bytes(40), b"\xff" * 30],
)
def test_a_blob_that_is_not_a_game_is_data_loss(blob: bytes) -> None:
    with pytest.raises(sessions.GameCorrupt) as caught:
        load_stored(GAME_ID, blob, 1)
    mapped = errors.from_exception(caught.value)
    assert mapped is not None and mapped.reason == "GAME_CORRUPT"


def test_a_blob_at_another_version_than_its_record_is_data_loss() -> None:
    stored = Stored.new(engine.new_game("accordion", seed=1))
    stored.play(stored.game.legal_moves()[0])
    with pytest.raises(sessions.GameCorrupt, match="cannot be read"):
        load_stored(GAME_ID, stored.dump(), 3)


def test_compact_records() -> None:
    assert replies.compact_reply_version(replies.compact_reply(300)) == 300
    assert (
        replies.compact_reply_version(pb.ApplyMoveResponse(move=pb.Move(notation="x")).SerializeToString())
        is None
    )
    for event in (stack(3, 0), engine.DEAL, sessions.UNDO, remove(1, 5)):
        assert replies.stream_event_value(replies.stream_event(event)) == (True, event)
    assert replies.stream_event_value(pb.GameEvent(version=3).SerializeToString())[0] is False
    assert len(tokens.move_request_key("a" * 128)) == 12 and tokens.move_request_key(
        "x"
    ) != tokens.move_request_key("y")
