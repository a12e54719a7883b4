"""What the session layer raises. ``accordion.api.errors`` maps each to a status, in its one table.

Besides these, the engine's own errors pass through unchanged (e.g. ``NothingToUndoError``,
``UnknownVariantError``), and so does whatever a caller's move chooser raises.
"""

from __future__ import annotations

from collections.abc import Sequence

from accordion import engine


class SessionError(Exception):
    """Base of the session layer's errors."""


class GameNotFound(SessionError):
    """No game opens with this id and token: never created, expired, or the token is another's.

    One answer for all three, so a wrong token tells nothing about whether an id exists.
    """

    def __init__(self, game_id: str) -> None:
        super().__init__(
            f"no game {game_id} opens with this token (never created, expired, or another token)"
        )
        self.game_id = game_id


class BadToken(GameNotFound):
    """The game exists but the token does not open it. Reported exactly as ``GameNotFound``;
    a class of its own only so that tests and logs inside the process can tell."""


class WatchOnly(SessionError):
    """The token is the game's watch token, and the call needs the play token (it changes the
    game, or is the player's: Hint, Solve, ShareGame). Only a holder of the watch token gets
    this answer; any other token gets ``GameNotFound``."""

    def __init__(self, game_id: str) -> None:
        super().__init__(
            f"the token given for game {game_id} is its watch token: it can read and watch the game, "
            "not play it, ask for hints or share it"
        )
        self.game_id = game_id


class DealCodeNotFound(SessionError):
    """No deal code reads so (never issued, expired, or not a code at all)."""

    def __init__(self) -> None:
        super().__init__("no such deal code (never issued, or expired)")


class DealCodeOptions(SessionError):
    """NewGame from a deal code with options that would change the deal or show more of it."""

    def __init__(self, why: str) -> None:
        super().__init__(why)


class HiddenCards(SessionError):
    """Solve on a position that hides a card (a stock, a face-down card): searching it would
    read what the player cannot see (``search_gate.check_solve``)."""


class VersionMismatch(SessionError):
    """``expected`` is not the game's version (``current``): a stale view, or a lost race."""

    def __init__(self, game_id: str, expected: int, current: int) -> None:
        super().__init__(f"game {game_id} is at version {current}, not {expected}: reload and retry")
        self.game_id, self.expected, self.current = game_id, expected, current


class RequestIdReused(SessionError):
    """The request id was used before for a different request."""


class StoreUnavailable(SessionError):
    """The store did not answer ``operation`` within the store timeout (or its connection failed)."""

    def __init__(self, operation: str) -> None:
        super().__init__(f"the game store did not answer ({operation}); retry later")
        self.operation = operation


class DeadlineExceeded(SessionError):
    """The caller's deadline passed before (or during) ``operation``."""

    def __init__(self, operation: str) -> None:
        super().__init__(f"the deadline passed before {operation}")
        self.operation = operation


class GameCorrupt(SessionError):
    """A stored game that cannot be read."""

    def __init__(self, game_id: str) -> None:
        super().__init__(f"game {game_id} is stored in a form that cannot be read")
        self.game_id = game_id


class MoveRefused(SessionError):
    """The engine refused a move (unreadable or illegal) in the game at ``version``.

    ``legal`` are the legal moves and ``texts`` their notations in that position, captured
    when the move was refused (the game itself may change once the caller awaits).
    """

    def __init__(
        self,
        cause: engine.InvalidMoveError | engine.IllegalMoveError,
        version: int,
        legal: Sequence[engine.Move],
        texts: Sequence[str],
    ) -> None:
        super().__init__(str(cause))
        self.cause, self.version = cause, version
        self.legal, self.texts = tuple(legal), tuple(texts)
