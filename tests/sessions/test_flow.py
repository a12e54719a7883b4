"""The application flow (``accordion.sessions.Sessions``) without gRPC, over each store backend
(the memory store, and a real redis-server: the ``store`` fixture of tests/conftest.py)."""

from __future__ import annotations

import asyncio
import gc
import time
import warnings

import pytest

from accordion import engine, sessions
from accordion.store import GameStore, open_store
from redis_server import RedisServer, free_port


async def dealt_game(flow: sessions.Sessions, seed: int = 7) -> sessions.Dealt:
    dealt = await flow.deal(engine.new_game("accordion", seed=seed), None)
    assert isinstance(dealt, sessions.Dealt)
    return dealt


def first_move(game: engine.Game) -> engine.Move:
    return game.legal_moves()[0]


async def test_new_play_undo_and_open_from_the_store(store: GameStore) -> None:
    flow = sessions.Sessions(store, game_ttl=60)
    dealt = await dealt_game(flow)
    move = dealt.game.legal_moves()[0]
    notation = dealt.game.move_text(move)  # (``dealt.game`` is the cached game: it moves on)
    played = await flow.play(dealt.game_id, dealt.token, first_move, None, expected=1)
    assert isinstance(played, sessions.Played)
    assert (played.version, played.move, played.notation) == (2, move, notation)
    flow.cache.discard(dealt.game_id)  # the next call reads the store, not this process's copy
    undone = await flow.undo(dealt.game_id, dealt.token, None, expected=2)
    assert isinstance(undone, sessions.Played) and (undone.version, undone.move) == (3, move)
    flow.cache.discard(dealt.game_id)
    opened = await flow.open(dealt.game_id, dealt.token, None)
    assert opened.version == 3 and opened.game.state == engine.new_game("accordion", seed=7).state


async def test_a_stale_version_is_refused_and_changes_nothing(store: GameStore) -> None:
    flow = sessions.Sessions(store, game_ttl=60)
    dealt = await dealt_game(flow)
    await flow.play(dealt.game_id, dealt.token, first_move, None, expected=1)
    with pytest.raises(sessions.VersionMismatch) as stale:
        await flow.play(dealt.game_id, dealt.token, first_move, None, expected=1)
    assert (stale.value.expected, stale.value.current) == (1, 2)
    other = sessions.Sessions(store, game_ttl=60)  # another process: no cache of this game
    assert (await other.open(dealt.game_id, dealt.token, None)).version == 2


async def test_a_move_raced_by_another_process_is_played_on_the_new_position(store: GameStore) -> None:
    """Without an expected version a lost compare-and-set is tried again on the stored game."""
    mine, theirs = sessions.Sessions(store, game_ttl=60), sessions.Sessions(store, game_ttl=60)
    dealt = await dealt_game(mine)
    await theirs.play(dealt.game_id, dealt.token, first_move, None)  # my cache is now stale
    played = await mine.play(dealt.game_id, dealt.token, first_move, None)
    assert isinstance(played, sessions.Played) and played.version == 3


async def test_wrong_tokens_and_unknown_ids(store: GameStore) -> None:
    flow = sessions.Sessions(store, game_ttl=60)
    dealt = await dealt_game(flow)
    with pytest.raises(sessions.GameNotFound):  # the store answers it as an unknown id (issue 28)
        await flow.play(dealt.game_id, "not-the-token", first_move, None)
    with pytest.raises(sessions.GameNotFound):
        await flow.open("A" * 22, dealt.token, None)
    # The watch token opens the game for reading, never for playing.
    assert (await flow.open(dealt.game_id, dealt.watch_token, None)).version == 1
    with pytest.raises(sessions.WatchOnly):
        await flow.play(dealt.game_id, dealt.watch_token, first_move, None)
    with pytest.raises(sessions.WatchOnly):
        await flow.open(dealt.game_id, dealt.watch_token, None, player=True)
    assert (await flow.open(dealt.game_id, dealt.token, None)).version == 1  # nothing moved


async def test_a_retry_gets_the_first_answer_and_a_reused_id_is_refused(store: GameStore) -> None:
    flow = sessions.Sessions(store, game_ttl=60)
    dealt = await dealt_game(flow)
    first = await flow.play(dealt.game_id, dealt.token, first_move, None, request_id="r1", fingerprint=b"f")
    flow.cache.discard(dealt.game_id)
    again = await flow.play(dealt.game_id, dealt.token, first_move, None, request_id="r1", fingerprint=b"f")
    assert isinstance(first, sessions.Played) and isinstance(again, sessions.Played)
    assert (
        (again.version, again.move, again.notation)
        == (first.version, first.move, first.notation)
        == (2, first.move, first.notation)
    )
    with pytest.raises(sessions.RequestIdReused):
        await flow.play(dealt.game_id, dealt.token, first_move, None, request_id="r1", fingerprint=b"g")
    retried = await flow.deal(engine.new_game("accordion", seed=3), None, request_id="n1", fingerprint=b"f")
    repeated = await flow.deal(engine.new_game("accordion", seed=4), None, request_id="n1", fingerprint=b"f")
    assert isinstance(retried, sessions.Dealt) and isinstance(repeated, sessions.Dealt)
    assert (repeated.game_id, repeated.token) == (retried.game_id, retried.token)
    assert repeated.game.state == engine.new_game("accordion", seed=3).state


async def test_a_watch_sees_the_log_then_new_moves(store: GameStore) -> None:
    flow = sessions.Sessions(store, game_ttl=60)
    dealt = await dealt_game(flow)
    played = await flow.play(dealt.game_id, dealt.token, first_move, None)
    assert isinstance(played, sessions.Played)
    stream = flow.watch(dealt.game_id, dealt.watch_token, 1, None)
    try:
        seen = await asyncio.wait_for(anext(stream), 60)
        assert (seen.version, seen.move, seen.undo) == (2, played.move, False)
        await flow.undo(dealt.game_id, dealt.token, None)
        seen = await asyncio.wait_for(anext(stream), 60)
        assert (seen.version, seen.move, seen.undo) == (3, played.move, True)
    finally:
        await stream.aclose()  # type: ignore[attr-defined]
    with pytest.raises(sessions.GameNotFound):
        await anext(flow.watch(dealt.game_id, "not-the-token", 0, None))


async def test_a_watch_token_rotated_away_ends_its_stream(store: GameStore) -> None:
    flow = sessions.Sessions(store, game_ttl=60)
    dealt = await dealt_game(flow)
    stream = flow.watch(dealt.game_id, dealt.watch_token, 1, None)
    try:
        shared = await flow.share(dealt.game_id, dealt.token, None, rotate=True)
        assert shared.watch_token != dealt.watch_token
        await flow.play(dealt.game_id, dealt.token, first_move, None)
        with pytest.raises(sessions.GameNotFound):  # (the stream starts only now: as a wrong token)
            await asyncio.wait_for(anext(stream), 60)
    finally:
        await stream.aclose()  # type: ignore[attr-defined]


async def test_a_deadline_already_past_sends_nothing(redis_url: str) -> None:
    """A store out of this process is not called once the deadline has passed; the call made for
    it is closed (no 'never awaited' warning), and the failure is counted."""
    failures: list[tuple[str, str]] = []

    class Counted(sessions.flow.Observer):
        def store_failed(self, operation: str, kind: str) -> None:
            failures.append((operation, kind))

    store = open_store(redis_url)
    try:
        flow = sessions.Sessions(store, game_ttl=60, observer=Counted())
        dealt = await dealt_game(flow)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(sessions.DeadlineExceeded):
                await flow.open(dealt.game_id, dealt.token, time.monotonic() - 1)
            gc.collect()
        assert [str(w.message) for w in caught if "never awaited" in str(w.message)] == []
        assert failures == [("load", "deadline")]
    finally:
        await store.close()


async def test_an_unreachable_store_is_this_layers_store_unavailable() -> None:
    """The Redis store says "unavailable" in its own words; the flow turns it into its own
    StoreUnavailable (no store library's exception above ``store/``), and counts it."""
    errors: list[str] = []
    store = open_store(f"redis://127.0.0.1:{free_port()}/0")  # nobody listens there
    try:
        flow = sessions.Sessions(store, game_ttl=60, store_timeout=60, on_store_error=errors.append)
        with pytest.raises(sessions.StoreUnavailable) as failed:
            await flow.deal(engine.new_game("accordion", seed=7), None)
        assert not type(failed.value.__cause__).__module__.startswith("redis")
        assert errors == ["put_named"]
    finally:
        await store.close()


async def test_a_watch_whose_store_goes_away_ends_with_store_unavailable() -> None:
    """The store's event stream fails (its redis-server killed): the watch raises this layer's
    StoreUnavailable (``Sessions.watch_failed``), counted as a failed "watch"."""
    errors: list[str] = []
    server = RedisServer().start()
    store = open_store(server.url)
    try:
        flow = sessions.Sessions(store, game_ttl=60, on_store_error=errors.append)
        dealt = await dealt_game(flow)
        await flow.play(dealt.game_id, dealt.token, first_move, None)
        stream = flow.watch(dealt.game_id, dealt.token, 1, None)
        try:
            assert (await asyncio.wait_for(anext(stream), 60)).version == 2
            server.kill()
            with pytest.raises(sessions.StoreUnavailable):
                await asyncio.wait_for(anext(stream), 60)
        finally:
            await stream.aclose()  # type: ignore[attr-defined]
        assert errors == ["watch"]
    finally:
        await store.close()
        server.close()
