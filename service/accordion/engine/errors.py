"""The engine's error types. Each message quotes the offending input.

They subclass ``ValueError`` because each is about a value the caller passed;
the service maps each class to one status code and reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar


class EngineError(ValueError):
    """Base of every error the engine raises on bad input."""

    reason: ClassVar[str] = "INVALID_ARGUMENT"


class UnknownVariantError(EngineError):
    reason: ClassVar[str] = "UNKNOWN_VARIANT"


class InvalidOptionError(EngineError):
    reason: ClassVar[str] = "INVALID_OPTION"


class InvalidCardError(EngineError):
    reason: ClassVar[str] = "INVALID_CARD"


class InvalidDealError(EngineError):
    reason: ClassVar[str] = "INVALID_DEAL"


class InvalidStateError(EngineError):
    """A state string or replay record that does not describe a game."""

    reason: ClassVar[str] = "INVALID_STATE"


class InvalidMoveError(EngineError):
    """Text that is not a move in this game's notation."""

    reason: ClassVar[str] = "INVALID_MOVE"

    def __init__(self, message: str, legal: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.legal = tuple(legal)


class IllegalMoveError(EngineError):
    """A well-formed move that the rules do not allow now. ``legal`` lists what is allowed."""

    reason: ClassVar[str] = "ILLEGAL_MOVE"

    def __init__(self, message: str, legal: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.legal = tuple(legal)


class NothingToUndoError(EngineError):
    reason: ClassVar[str] = "NOTHING_TO_UNDO"


class UndoNotAllowedError(EngineError):
    """The game's ``undo`` option refuses to take back this move (it names the rule, never a card)."""

    reason: ClassVar[str] = "UNDO_NOT_ALLOWED"


class NothingToRedoError(EngineError):
    reason: ClassVar[str] = "NOTHING_TO_REDO"
