"""The rules engine: pure Python, no I/O, no clock, randomness only from a seeded generator.

    >>> from accordion.engine import new_game
    >>> game = new_game("accordion", seed=7)
    >>> game.play(game.legal_texts()[0])  # doctest: +SKIP

Every variant (``games/``, one module per game; docs/games.md has their rules in words) is
registered on import.
"""

from . import games  # noqa: F401  (registers every variant)
from .cards import card_text, parse_card, parse_cards
from .core import (
    COMMON_OPTIONS,
    UNDO_POLICIES,
    Option,
    OptionValue,
    Rules,
    State,
    Status,
    Variant,
    all_variants,
    find_variant,
    undo_is_stricter,
)
from .errors import (
    EngineError,
    IllegalMoveError,
    InvalidCardError,
    InvalidDealError,
    InvalidMoveError,
    InvalidOptionError,
    InvalidStateError,
    NothingToRedoError,
    NothingToUndoError,
    UndoNotAllowedError,
    UnknownVariantError,
)
from .fields import CARD, CARDS, COUNT, COUNTS, HEX64, PILES, SIGNED, Field, FieldCodec
from .game import Game, GameView, Replay, new_game, replay
from .moves import (
    DEAL,
    DRAW,
    REDEAL,
    RESIGN,
    Claim,
    Deal,
    Draw,
    Move,
    MoveKind,
    Redeal,
    Remove,
    Resign,
    Stack,
    Transfer,
    Zone,
    transfer,
)
from .record import decode_state, encode_state
from .rng import SplitMix64
from .search import GenericSearch, NoSearch, Removal, RemoveSearch, Search, StackSearch
from .zones import PileView, ZoneView

__all__ = [
    "CARD",
    "CARDS",
    "COUNT",
    "COUNTS",
    "HEX64",
    "PILES",
    "SIGNED",
    "Field",
    "FieldCodec",
    "GenericSearch",
    "NoSearch",
    "Removal",
    "RemoveSearch",
    "Search",
    "StackSearch",
    "decode_state",
    "encode_state",
    "DRAW",
    "Draw",
    "Transfer",
    "Zone",
    "transfer",
    "PileView",
    "ZoneView",
    "DEAL",
    "REDEAL",
    "RESIGN",
    "Claim",
    "Deal",
    "EngineError",
    "Game",
    "GameView",
    "IllegalMoveError",
    "InvalidCardError",
    "InvalidDealError",
    "InvalidMoveError",
    "InvalidOptionError",
    "InvalidStateError",
    "Move",
    "MoveKind",
    "NothingToRedoError",
    "NothingToUndoError",
    "Option",
    "OptionValue",
    "Redeal",
    "Remove",
    "Replay",
    "Resign",
    "Rules",
    "SplitMix64",
    "Stack",
    "State",
    "Status",
    "UnknownVariantError",
    "Variant",
    "COMMON_OPTIONS",
    "UNDO_POLICIES",
    "UndoNotAllowedError",
    "undo_is_stricter",
    "all_variants",
    "card_text",
    "find_variant",
    "new_game",
    "parse_card",
    "parse_cards",
    "replay",
]
