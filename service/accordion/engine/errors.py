"""The engine's error types. Each message quotes the offending input.

They subclass ``ValueError`` because each is about a value the caller passed;
the service maps each class to one status code and reason.
"""

from __future__ import annotations

from collections.abc import Sequence


class EngineError(ValueError):
    """Base of every error the engine raises on bad input."""

    reason = "INVALID_ARGUMENT"


class UnknownVariantError(EngineError):
    reason = "UNKNOWN_VARIANT"


class InvalidOptionError(EngineError):
    reason = "INVALID_OPTION"


class InvalidCardError(EngineError):
    reason = "INVALID_CARD"


class InvalidDealError(EngineError):
    reason = "INVALID_DEAL"


class InvalidStateError(EngineError):
    """A state string or replay record that does not describe a game."""

    reason = "INVALID_STATE"


class InvalidMoveError(EngineError):
    """Text that is not a move in this game's notation."""

    reason = "INVALID_MOVE"

    def __init__(self, message: str, legal: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.legal = tuple(legal)


class IllegalMoveError(EngineError):
    """A well-formed move that the rules do not allow now. ``legal`` lists what is allowed."""

    reason = "ILLEGAL_MOVE"

    def __init__(self, message: str, legal: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.legal = tuple(legal)


class NothingToUndoError(EngineError):
    reason = "NOTHING_TO_UNDO"


class NothingToRedoError(EngineError):
    reason = "NOTHING_TO_REDO"
