"""What kind of search fits a game: the description a game gives the solver (``Rules.search``).

The solver reads only these records, so it imports no game module, and a new game picks
a search by returning one (or keeps the default, ``GenericSearch``). See docs/solver.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


@dataclass(frozen=True, kw_only=True)
class Search:
    """Base of every description.

    ``chance_ahead``: a chance move (French's REDEAL) may still come; the solver never plans
    through one, so its verdict is about winning without it.
    """

    chance_ahead: bool = False
    # A Hint on a hidden position may sample the hidden cards (``TableauRules.with_hidden``) and
    # solve each world dealt open: the search is quick enough on small budgets (solver/sampling.py).
    sampling: bool = False


@dataclass(frozen=True, kw_only=True)
class StackSearch(Search):
    """Piles stack whole onto a matching pile ``near`` or ``far`` places to the left (and to
    the right with ``right``); ``strict``: a pile that can move ``near`` may not move ``far``.
    Won at ``win_piles`` piles or fewer, with the card ``goal`` on top when ``goal`` ≥ 0."""

    near: int
    far: int
    right: bool = False
    strict: bool = False
    win_piles: int = 1
    goal: int = -1


class Removal(str, Enum):
    """Which cards a REMOVE takes, given a matching pair with one or two cards between."""

    INNER = "inner"  # the cards between (Royal Marriage, Push Pin, Double Jump, French)
    OUTER = "outer"  # the pair itself; the cards between stay (Concertina)
    PAIRS = "pairs"  # Bayan: two matching cards 1 or 3 apart, both


@dataclass(frozen=True, kw_only=True)
class RemoveSearch(Search):
    """One card a pile; a REMOVE as ``removal`` says, with one card (``one``) or two
    (``two``) between the pair; won at ``win_cards`` cards or fewer."""

    removal: Removal
    one: bool = True
    two: bool = True
    win_cards: int = 2


@dataclass(frozen=True, kw_only=True)
class KlondikeSearch(Search):
    """Klondike: seven piles built down in alternating colours, Kings into spaces, a stock turned
    ``draw`` cards at a time onto a waste, ``passes`` through it (0 = unlimited); ``partial_runs``:
    any top part of a face-up run may move; ``foundation_return``: a foundation's top may come back.
    The position is read from the tableau fields (``tableau``, ``down``, ``foundations`` by suit,
    ``waste``), ``State.stock`` and ``redeals_used``/``moved`` (REDEAL only after a move since the
    previous one)."""

    draw: int
    passes: int
    partial_runs: bool
    foundation_return: bool
    redeals_used: int = 0
    moved: bool = True


@dataclass(frozen=True, kw_only=True)
class EmperorSearch(Search):
    """Emperor: ten piles built down in alternating colours one card at a time, any card into a
    space, eight foundations (suit s: s and s + 4), a stock drawn one card at a time in one pass,
    Aces compelled. The position is read from the tableau fields and ``State.stock``."""


@dataclass(frozen=True, kw_only=True)
class SpiderSearch(Search):
    """Spider: ten piles, same-suit units moving onto one rank higher (any suit) or into a space,
    DEAL (ten cards, fewer at the end) only with no empty pile, full suits lifted off. The
    position is read from the tableau fields (``foundations``: the suits lifted) and ``State.stock``."""


@dataclass(frozen=True, kw_only=True)
class GenericSearch(Search):
    """No special search: a depth-first search through the game's own rules (in Python)."""


@dataclass(frozen=True, kw_only=True)
class NoSearch(Search):
    """The solver does not play this game; ``reason`` says why."""

    reason: str


class Build(str, Enum):
    """What a card goes on in an open single-card tableau (one rank lower in every case)."""

    ANY_SUIT = "any-suit"  # Streets and Alleys, Beleaguered Castle
    ALTERNATE = "alternate"  # red on black, black on red
    SAME_SUIT = "same-suit"


@dataclass(frozen=True, kw_only=True)
class OpenTableauSearch(Search):
    """Every card face up on the tableau (no stock, no waste); one card moves at a time: to its
    suit's foundation (A up; nothing comes back), onto a top card one rank higher as ``build``
    says, or into an empty pile (any card when ``space_any``, else only a King). The solver
    reads the cards from the tableau fields (``tableau``, ``foundations`` by suit)."""

    build: Build = Build.ANY_SUIT
    space_any: bool = True


@dataclass(frozen=True, kw_only=True)
class TopPairsSearch(Search):
    """Two top cards of equal rank on two different tableau piles leave together; won when
    every card has left (Wish). A face-down card is no obstacle to the search, only to
    ``check_solvable``: the game says whether it is hidden (``open``)."""
