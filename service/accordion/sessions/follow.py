"""One watcher's copy of a game, kept in step with the stored log and the store's event stream."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from accordion.engine import Game
from accordion.engine.moves import Move

from .binary import Event, play_event
from .record import Stored


@dataclass(frozen=True, slots=True)
class WatchItem:
    """One event as a watcher sees it: ``undo`` or not, the move played or taken back, its
    notation, and the game after it at ``version``. ``game`` is the watcher's own copy, changed
    by the next event: read it before asking for the next item."""

    version: int
    undo: bool
    move: Move
    notation: str
    game: Game


class Follower:
    """One watcher's view: its own copy of the game at ``version``, and the last version sent."""

    def __init__(self, after_version: int) -> None:
        self.last = after_version  # events up to here are not sent
        self.version = 0  # the version of ``game`` (0: none yet)
        self.game: Game | None = None

    def catch_up(self, stored: Stored) -> Iterator[WatchItem]:
        """The events in the stored log after what was sent; the copy follows to its end."""
        start = max(self.last, self.version if self.game is not None else 0)
        if start >= stored.version:  # nothing new to send: follow from the stored game itself
            if self.version < stored.version:
                self.game, self.version = stored.fresh_game(), stored.version
            return
        game = None
        for version, event, move, text, game in stored.replay(start):
            if version > self.last:
                yield WatchItem(version, event is None, move, text, game)
        if game is None:  # nothing replayed (start was the log's end)
            game = stored.fresh_game()
        self.game, self.version = game, stored.version
        self.last = max(self.last, stored.version)

    def apply(self, event: Event) -> WatchItem | None:
        """One event from the stream, next after ``version``; None if already sent. Raises
        ``EngineError`` if it does not apply to this copy (the caller resyncs from the log)."""
        game = self.game
        assert game is not None
        move, text = play_event(game, event)
        self.version += 1
        if self.version <= self.last:
            return None
        self.last = self.version
        return WatchItem(self.version, event is None, move, text, game)
