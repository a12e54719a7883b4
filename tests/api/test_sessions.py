"""The session layer on its own: no gRPC, a token and a deadline in, results or its exceptions out."""

from __future__ import annotations

import asyncio
import time

import pytest

from accordion import engine, sessions
from accordion.store import GameRecord, MemoryStore, open_store
from accordion.store.base import GameStore


async def test_a_game_is_dealt_played_undone_and_opened(store_url: str) -> None:
    store = open_store(None if store_url == "memory://" else store_url)
    try:
        flow = sessions.Sessions(store, game_ttl=60)
        dealt = await flow.deal(engine.new_game("accordion", seed=7), None)
        assert isinstance(dealt, sessions.Dealt)
        first = dealt.game.legal_moves()[0]
        played = await flow.play(
            dealt.game_id, dealt.token, lambda game: first, time.monotonic() + 5, expected=1
        )
        assert isinstance(played, sessions.Played) and played.version == 2 and played.move == first
        undone = await flow.undo(dealt.game_id, dealt.token, None, request_id="u1", fingerprint=b"f")
        assert isinstance(undone, sessions.Played) and undone.version == 3 and undone.move == first
        again = await flow.undo(dealt.game_id, dealt.token, None, request_id="u1", fingerprint=b"f")
        assert isinstance(again, sessions.Played) and (again.version, again.move) == (3, first)  # a retry
        with pytest.raises(sessions.RequestIdReused):
            await flow.undo(dealt.game_id, dealt.token, None, request_id="u1", fingerprint=b"other")
        flow.cache.discard(dealt.game_id)  # from the store, not the cache
        opened = await flow.open(dealt.game_id, dealt.token, None)
        assert opened.version == 3 and opened.game.state == dealt.game.state
        with pytest.raises(engine.NothingToUndoError):
            await flow.undo(dealt.game_id, dealt.token, None)
    finally:
        await store.close()


async def test_refusals_change_nothing_and_say_why() -> None:
    flow = sessions.Sessions(MemoryStore(), game_ttl=60)
    dealt = await flow.deal(engine.new_game("accordion", seed=7), None)
    assert isinstance(dealt, sessions.Dealt)
    with pytest.raises(sessions.MoveRefused) as refused:
        await flow.play(dealt.game_id, dealt.token, lambda game: game.parse_move("KC>10D"), None)
    assert refused.value.version == 1 and refused.value.texts == tuple(dealt.game.legal_texts())
    assert isinstance(refused.value.cause, engine.IllegalMoveError)
    with pytest.raises(sessions.VersionMismatch) as stale:
        await flow.play(dealt.game_id, dealt.token, lambda game: game.legal_moves()[0], None, expected=5)
    assert (stale.value.expected, stale.value.current) == (5, 1)
    with pytest.raises(sessions.GameNotFound) as wrong:  # the store answers it as an unknown id
        await flow.open(dealt.game_id, "not-the-token", None)
    assert type(wrong.value) is sessions.GameNotFound  # (not even this process tells them apart)
    with pytest.raises(sessions.GameNotFound):
        await flow.open("A" * 22, dealt.token, None)
    assert (await flow.open(dealt.game_id, dealt.token, None)).version == 1


class _HungStore(MemoryStore):
    """A store whose loads never answer (and which says it is not in-process, so its calls may wait)."""

    in_process = False

    async def load(self, game_id: str, *, credential: bytes = b"") -> GameRecord:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")


async def test_store_calls_are_bounded_by_the_timeout_and_the_deadline() -> None:
    errors: list[str] = []
    flow = sessions.Sessions(_HungStore(), game_ttl=60, store_timeout=0.2, on_store_error=errors.append)
    started = time.monotonic()
    with pytest.raises(sessions.StoreUnavailable):
        await flow.open("A" * 22, "t", time.monotonic() + 10)
    with pytest.raises(sessions.DeadlineExceeded):
        await flow.open("A" * 22, "t", time.monotonic() + 0.05)
    with pytest.raises(sessions.DeadlineExceeded):
        await flow.open("A" * 22, "t", time.monotonic() - 1)  # already past: no store call at all
    # ~0.25 s on a quiet machine (0.2 s store timeout, then the 0.05 s deadline); a hung call would
    # end only at the first call's 10 s deadline (and as DeadlineExceeded): 8 s tells them apart.
    assert time.monotonic() - started < 8 and errors == ["load", "load"]
    assert not GameStore.in_process and MemoryStore.in_process


# --- the store call's timer (``store_calls._within``) behaves as ``asyncio.timeout`` does ------------------


async def _reference(seconds: float, call: object) -> object:
    async with asyncio.timeout(seconds):
        return await call  # type: ignore[misc]


async def _outcome(
    within: object, seconds: float, work: object, cancel_after: float | None
) -> tuple[str, int]:
    """What a task running ``within(seconds, work())`` ends with, cancelled from outside
    ``cancel_after`` seconds after it starts (None: never): its result or exception type, and
    its cancelling() count as the call ends."""
    seen: list[int] = []

    async def body() -> object:
        try:
            return await within(seconds, work())  # type: ignore[operator]
        finally:
            seen.append(asyncio.current_task().cancelling())  # type: ignore[union-attr]

    task = asyncio.ensure_future(body())
    if cancel_after is not None:
        asyncio.get_running_loop().call_later(cancel_after, task.cancel)
    try:
        outcome = repr(await task)
    except BaseException as exc:  # noqa: BLE001 (the outcome is what is compared)
        outcome = type(exc).__name__
    return outcome, seen[0]


async def _slow() -> str:
    await asyncio.sleep(0.3)
    return "done"


async def _quick() -> str:
    await asyncio.sleep(0)
    return "done"


async def _swallows() -> str:  # catches the cancellation and answers anyway
    try:
        await asyncio.sleep(0.3)
    except asyncio.CancelledError:
        return "swallowed"
    return "done"


async def _blocks() -> str:  # holds the loop past both timers: they fire in the same turn
    await asyncio.sleep(0)
    time.sleep(0.1)
    await asyncio.sleep(0.3)
    return "done"


@pytest.mark.parametrize(
    ("seconds", "work", "cancel_after", "expected"),
    [
        (1.0, _quick, None, ("'done'", 0)),  # answered in time
        (0.05, _slow, None, ("TimeoutError", 0)),  # the time ran out
        (1.0, _slow, 0.05, ("CancelledError", 1)),  # cancelled from outside: not a timeout
        (0.05, _blocks, 0.05, ("CancelledError", 1)),  # both at once: the outside's cancellation wins
        (0.05, _swallows, None, ("'swallowed'", 0)),  # fired, but the call answered: its answer
    ],
)
async def test_the_store_timer_is_asyncio_timeout(
    seconds: float, work: object, cancel_after: float | None, expected: tuple[str, int]
) -> None:
    from accordion.sessions import store_calls

    assert await _outcome(_reference, seconds, work, cancel_after) == expected  # the reference, as read
    assert await _outcome(store_calls._within, seconds, work, cancel_after) == expected
