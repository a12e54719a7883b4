"""WatchGame's stream (``Sessions.watch``): an async generator, kept out of ``flow`` because
mypyc compiles ``flow`` and has no async generators (accordion/build_info.py lists this module
as interpreted). It reads the game through ``WatchSource`` (what ``flow.Sessions`` offers), so
``flow`` imports this module and this module imports nothing of ``flow``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from accordion import engine
from accordion import store as st

from . import replies, tokens
from .errors import BadToken, GameNotFound, StoreUnavailable
from .follow import Follower, WatchItem
from .record import load_stored


class WatchSource(Protocol):
    """What a watch needs of the flow (``flow.Sessions`` has it)."""

    async def authorize(
        self, game_id: str, token: str, deadline: float | None, *, player: bool = False
    ) -> st.GameRecord:
        """The stored game if ``token`` opens it, else BadToken (or GameNotFound, ...)."""

    async def load(self, game_id: str, deadline: float | None) -> st.GameRecord:
        """The stored game (no token checked). Raises GameNotFound, StoreUnavailable, ..."""

    def events(self, game_id: str, after_version: int) -> AsyncIterator[st.WatchEvent]:
        """The store's event stream of the game; raises the store's StoreUnavailable."""

    def watch_failed(self, unreachable: st.StoreUnavailable) -> StoreUnavailable:
        """The error to raise (counted) once the event stream failed with ``unreachable``."""


async def watch(
    sessions: WatchSource, game_id: str, token: str, after_version: int, deadline: float | None
) -> AsyncIterator[WatchItem]:
    """The stored log first (events after ``after_version``), then the store's event stream.

    Each stream entry is a compact event applied to this watcher's own copy of the game; a
    gap (the stream is kept short, and a slow watcher may miss entries) or an entry it cannot
    read is filled from the stored log again. Ends when the game is gone.

    A stream opened with the watch token checks before each event that the token still opens
    the game (one store read): once the player rotated it, the stream ends with GameNotFound."""
    record = await sessions.authorize(game_id, token, deadline)
    presented = tokens.hash_token(token)
    watcher = tokens.role(presented, record.token_hash) == tokens.WATCH

    async def game_gone() -> bool:
        """True if the game is gone (the stream ends as for any watcher); BadToken if the
        watch token no longer opens it (rotated)."""
        if not watcher:
            return False
        try:
            current = await sessions.load(game_id, deadline)
        except GameNotFound:
            return True
        if tokens.role(presented, current.token_hash) is None:
            raise BadToken(game_id)
        return False

    follower = Follower(after_version)
    for item in follower.catch_up(load_stored(game_id, record.data, record.version)):
        yield item
    events = sessions.events(game_id, max(follower.last, follower.version))
    try:
        async for event in events:
            if event.version <= follower.version:
                continue
            if await game_gone():
                return
            readable, value = replies.stream_event_value(event.payload)
            if readable and event.version == follower.version + 1 and follower.game is not None:
                next_item: WatchItem | None
                try:
                    next_item = follower.apply(value)
                except engine.EngineError:
                    next_item, follower.game = None, None  # does not apply to our copy: resync
                if follower.game is not None:
                    if next_item is not None:
                        yield next_item
                    continue
            try:  # a gap, or an entry of another format: the stored log has everything
                record = await sessions.load(game_id, deadline)
            except GameNotFound:
                return
            for item in follower.catch_up(load_stored(game_id, record.data, record.version)):
                yield item
    except st.StoreUnavailable as exc:  # the store's (a load's is this layer's, counted already)
        raise sessions.watch_failed(exc) from exc
    finally:  # the client went away or the stream ended: release the store's watcher now
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            await aclose()
