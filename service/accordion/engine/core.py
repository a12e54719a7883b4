"""The shape every game shares: its state, its options, its rules hooks, the registry.

A game module declares a ``Rules`` subclass (its data and a few hooks) and
registers one or more ``Variant`` records: a variant is a rules class plus
preset option defaults, found by id or alias.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar, TypeAlias

from mypy_extensions import mypyc_attr

from .cards import DECK_SIZE, card_text
from .errors import (
    InvalidDealError,
    InvalidOptionError,
    InvalidStateError,
    UndoNotAllowedError,
    UnknownVariantError,
)
from .fields import Field, state_type
from .fields import Pile as Pile  # re-exported: games import them from here
from .fields import Row as Row
from .fields import State as State
from .moves import Move, MoveKind
from .rng import SplitMix64
from .search import GenericSearch, Search
from .zones import ZoneView

_NO_TEXTS: Mapping[str, str] = {}

# An option's value: a switch (bool), a number (int, from a range) or a choice (str). Option
# values come in as text or as values (``Option.parse`` reads either: typed ``object``) and are
# kept as these; ``option_text`` writes them back.
OptionValue: TypeAlias = bool | int | str


class Status(str, Enum):
    IN_PROGRESS = "IN_PROGRESS"
    WON = "WON"
    LOST = "LOST"


@dataclass(frozen=True)
class Option:
    """A rules option: its allowed values (``str`` choices or an ``int`` range) and default."""

    name: str
    default: OptionValue
    allowed: tuple[OptionValue, ...] | range
    description: str

    def parse(self, value: object) -> OptionValue:
        """The option's value from ``value`` or its text form.

        Raises:
            InvalidOptionError: a value outside ``allowed``.
        """
        if isinstance(self.allowed, range):
            try:
                number = int(str(value).strip())
            except ValueError:
                number = None
            if number is None or number not in self.allowed:
                raise InvalidOptionError(
                    f"option {self.name}={value!r}: allowed values are "
                    f"{self.allowed.start}..{self.allowed.stop - 1}"
                )
            return number
        text = str(value).strip().lower()
        for allowed in self.allowed:
            if text == option_text(allowed):
                return allowed
        raise InvalidOptionError(
            f"option {self.name}={value!r}: allowed values are {', '.join(map(str, self.allowed))}"
        )

    @property
    def allowed_text(self) -> list[str]:
        if isinstance(self.allowed, range):
            return [f"{self.allowed.start}..{self.allowed.stop - 1}"]
        return [option_text(v) for v in self.allowed]


def option_text(value: object) -> str:
    """An option value as text: ``true``/``false`` for a switch, else ``str``."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


# The undo policies, loosest first (issue 29): ``visible`` refuses to take back a move that
# revealed a hidden card (a turn-up, a DRAW or DEAL from the stock), so undo cannot be used to
# peek at the stock or under a pile and come back; ``none`` refuses every undo.
UNDO_POLICIES = ("all", "visible", "none")
UNDO = Option(
    "undo",
    "all",
    UNDO_POLICIES,
    "what Undo may take back: all (any move), visible (not a move that revealed a hidden card: "
    "a turn-up, a draw or deal from the stock), none",
)
# Options every variant has, declared once: listed after the game's own (ListVariants shows
# them), resolved and stored like them.
COMMON_OPTIONS: tuple[Option, ...] = (UNDO,)


def undo_is_stricter(policy: str, than: str) -> bool:
    """Whether undo ``policy`` allows no more than ``than`` does (equal counts)."""
    return UNDO_POLICIES.index(policy) >= UNDO_POLICIES.index(than)


# A base of games: a game may also be declared in interpreted code (a test, a plug-in); mypyc
# then checks for overrides on each call of its methods (leaf games are @final, and fast).
@mypyc_attr(allow_interpreted_subclasses=True)
class Rules:
    """Base of every game's rules. Subclasses set the class data and override hooks.

    An instance holds one game's resolved option values as attributes, so the
    hot hooks (``legal_moves``, ``apply``) read plain attributes. A class with options
    declares each attribute and sets it in its ``__init__`` (no attributes made on the fly).

    ``fields`` declares the game's extras beyond row and stock (``fields.Field``); the
    state type, the state string, the binary record and the view follow from them.
    """

    family: ClassVar[str] = "stacking"  # stacking | eliminator | cribbage | tableau
    options: ClassVar[tuple[Option, ...]] = ()
    move_kinds: ClassVar[tuple[MoveKind, ...]] = ()
    deck_copies: ClassVar[int] = 1
    # True where cards leave play, so a position holds only part of the deck.
    discards: ClassVar[bool] = False
    # True where a chance event follows the deal, so the generator's state is part of the position.
    draws_after_deal: ClassVar[bool] = False
    # The game's extras, in the order they are written; see fields.Field.
    fields: ClassVar[tuple[Field[Any], ...]] = ()
    # Made from ``fields`` for each class (``__init_subclass__``).
    state_type: ClassVar[type[State]] = State
    fields_by_tag: ClassVar[Mapping[int, Field[Any]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.state_type = state_type(cls.__name__, cls.fields)
        cls.fields_by_tag = {f.tag: f for f in cls.fields}

    def __init__(self, values: Mapping[str, OptionValue]) -> None:
        self.values: dict[str, OptionValue] = dict(values)

    def state(self, row: Row, stock: Pile = (), **extras: Any) -> State:
        """A position of this game: ``row``, ``stock`` and any declared field by name (the rest default).

        Raises:
            InvalidStateError: a field this game does not declare.
        """
        try:
            return self.state_type(row, stock, **extras)
        except TypeError:
            names = ", ".join(f.name for f in self.fields) or "none"
            raise InvalidStateError(
                f"{type(self).__name__} has no state field {sorted(extras)}; its fields: {names}"
            ) from None

    # --- dealing -----------------------------------------------------------
    def deck(self) -> list[int]:
        """The unshuffled cards in canonical order (``range(52)`` per deck)."""
        return list(range(DECK_SIZE)) * self.deck_copies

    def order_deal(self, gen: SplitMix64) -> list[int]:
        """The cards in deal order for a seeded game. Games with fixed cards override."""
        cards = self.deck()
        gen.shuffle(cards)
        return cards

    def check_deal(self, cards: list[int]) -> None:
        """Raise ``InvalidDealError`` unless ``cards`` is this game's deck in some order."""
        expected = self.deck()
        if len(cards) != len(expected):
            raise InvalidDealError(
                f"a {self.__class__.__name__} deal has {len(expected)} cards, not {len(cards)}"
            )
        self.check_cards(cards)

    def check_cards(self, cards: list[int]) -> None:
        """Raise ``InvalidDealError`` if ``cards`` holds a card more often than the deck does
        (a card outside the deck, such as a 2 in Wish's 32, included)."""
        in_deck: dict[int, int] = {}
        for c in self.deck():
            in_deck[c] = in_deck.get(c, 0) + 1
        counts: dict[int, int] = {}
        for c in cards:
            counts[c] = counts.get(c, 0) + 1
        for c, n in counts.items():
            have = in_deck.get(c, 0)
            if not have:
                raise InvalidDealError(f"{card_text(c)} is not in this game's deck")
            if n > have:
                raise InvalidDealError(f"{card_text(c)} appears {n} times; the deck has {have}")

    def start(self, cards: list[int], gen: SplitMix64) -> State:
        """The first position from the cards in deal order."""
        return self.state(tuple((c,) for c in cards))

    def cards_in(self, state: State) -> list[int]:
        """Every card of the position (row, stock and the zones a game declares)."""
        return [c for pile in state.row for c in pile] + list(state.stock)

    def check_state(self, state: State) -> None:
        """Raise ``InvalidStateError`` for a position of a shape the rules never make (a loaded
        state string); its cards are checked apart."""

    # --- what the player sees -------------------------------------------------
    def zones(self, state: State) -> tuple[ZoneView, ...]:
        """The layout zone by zone as the player sees it; row games have none (their row and
        stock size say it all). The one place a tableau game masks face-down cards."""
        return ()

    def hides_anything(self, state: State) -> bool:
        """Whether any card is hidden from the player now (row games: the stock's)."""
        return bool(state.stock)

    def hidden_cards(self, state: State) -> int:
        """How many cards the player cannot see now: 0 where nothing hides (dealt open), else
        the face-down cards of the zones (tableau games) or the stock (row games)."""
        if not self.hides_anything(state):
            return 0
        zones = self.zones(state)
        if zones:
            return sum(p.face_down for z in zones for p in z.piles)
        return len(state.stock)

    def check_undo(self, before: State, after: State) -> None:
        """Raise ``UndoNotAllowedError`` if the game's ``undo`` option refuses to take the
        position back from ``after`` to ``before``. The message names the rule, not the card."""
        policy = self.values.get("undo", "all")
        if policy == "all":
            return
        if policy == "none":
            raise UndoNotAllowedError("undo is off in this game (option undo=none)")
        if self.hidden_cards(after) < self.hidden_cards(before):
            raise UndoNotAllowedError(
                "this game's undo takes back only moves that revealed no hidden card (option undo=visible)"
            )

    def player_texts(self, state: State) -> Mapping[str, str]:
        """Fields written otherwise in the state string a player sees (face-down cards as ``??``)."""
        return _NO_TEXTS

    # --- play --------------------------------------------------------------
    def legal_moves(self, state: State) -> tuple[Move, ...]:
        raise NotImplementedError

    def explain(self, state: State, move: Move) -> str | None:
        """Why ``move``, of a kind this game has, is not legal in ``state``: the player's words
        (``words.why_illegal`` adds the game over and the generic sentence), or None when the
        game has nothing more specific to say. Made only from what the player sees."""
        return None

    def apply(self, state: State, move: Move) -> State:
        """The position after ``move``, which must be legal (not checked here)."""
        raise NotImplementedError

    def is_won(self, state: State) -> bool:
        """Whether a position with no legal move left counts as won."""
        raise NotImplementedError

    def status(self, state: State, legal: tuple[Move, ...]) -> Status:
        if legal:
            return Status.IN_PROGRESS
        return Status.WON if self.is_won(state) else Status.LOST

    def penalty(self, state: State) -> int:
        """Penalty points, lower is better, 0 for a win."""
        raise NotImplementedError

    def threshold_met(self, state: State) -> bool:
        """Whether the position meets the win threshold now (whatever the status)."""
        return self.is_won(state)

    def win_threshold(self) -> str:
        """The win threshold in words, e.g. ``1 pile``."""
        raise NotImplementedError

    def score(self, state: State) -> int:
        """Points scored (Cribbage Solitaire); 0 in games without a score."""
        return 0

    def summary(self, state: State) -> list[str]:
        """Extra words for the rendered layout (score, redeals left, goal card …): each
        declared field's ``show`` line."""
        out = []
        for f in self.fields:
            if f.show is not None and (line := f.show(f.get(state))) is not None:
                out.append(line)
        return out

    # --- solving -------------------------------------------------------------
    def search(self, state: State) -> Search:
        """What kind of search fits this game at ``state`` (see ``search``); the solver
        dispatches on it. The default is a generic depth-first search through these rules."""
        return GenericSearch()

    def listed_foundation(self, state: State, foundation: int) -> int:
        """The foundation (tableau games) a move onto ``foundation`` is listed under. Games with two
        interchangeable foundations for a suit (Emperor) list a card that either takes once, so a
        player who names the other one means the same move."""
        return foundation

    def face_up_equivalent(self, state: State) -> tuple[Rules, State] | None:
        """Rules and a position with every card face up that are won exactly when this
        deal is (a stock-dealt game whose dealing order cannot matter), or None."""
        return None

    def dealt_open(self, state: State) -> tuple[Rules, State] | None:
        """This position in the same game dealt ``open`` (every card known, the rules and the
        cards unchanged), or None for a game with no such option. For deciding a whole deal with
        full knowledge (NewGame with ``winnable_only``); never for what a player is told."""
        return None


@dataclass(frozen=True)
class Variant:
    """A registered game: a rules class with preset option defaults."""

    id: str
    name: str
    rules: type[Rules]
    description: str
    aliases: tuple[str, ...] = ()
    preset: Mapping[str, OptionValue] = field(default_factory=dict)

    @property
    def options(self) -> tuple[Option, ...]:
        """The rules' options with this variant's defaults."""
        return tuple(
            Option(o.name, self.preset.get(o.name, o.default), o.allowed, o.description)
            for o in (*self.rules.options, *COMMON_OPTIONS)
        )

    def resolve(self, values: Mapping[str, object] | None = None) -> dict[str, OptionValue]:
        """Every option's value: the given ones parsed, the rest defaulted.

        Raises:
            InvalidOptionError: an unknown option name or a value not allowed.
        """
        values = dict(values or {})
        # The rules' own options (``parse`` reads only the allowed values), not ``options``: no
        # Option is made per call (NewGame resolves once and stores the defaults once).
        known = {o.name: o for o in (*self.rules.options, *COMMON_OPTIONS)}
        unknown = sorted(set(values) - set(known))
        if unknown:
            names = ", ".join(known) or "none"
            raise InvalidOptionError(f"{self.id} has no option {unknown[0]!r}; its options: {names}")
        preset = self.preset
        return {
            name: o.parse(values[name]) if name in values else preset.get(name, o.default)
            for name, o in known.items()
        }

    def defaults(self) -> dict[str, OptionValue]:
        """Every option's default in this variant (``options``' defaults, by name)."""
        preset = self.preset
        return {o.name: preset.get(o.name, o.default) for o in (*self.rules.options, *COMMON_OPTIONS)}

    def make_rules(self, values: Mapping[str, object] | None = None) -> Rules:
        return self.rules(self.resolve(values))


_REGISTRY: dict[str, Variant] = {}
_BY_NAME: dict[str, Variant] = {}


def normalize_name(name: str) -> str:
    """``The Idle Year`` → ``the-idle-year``; ``23_skidoo`` → ``23-skidoo``."""
    return re.sub(r"[^a-z0-9]+", "-", name.strip().lower().replace("'", "")).strip("-")


def register(variant: Variant) -> Variant:
    for key in (variant.id, variant.name, *variant.aliases):
        norm = normalize_name(key)
        existing = _BY_NAME.get(norm)
        if existing is not None and existing.id != variant.id:
            raise ValueError(f"variant name {key!r} is taken by {existing.id}")
        _BY_NAME[norm] = variant
    _REGISTRY[variant.id] = variant
    return variant


def find_variant(name: str) -> Variant:
    """The variant with this id, display name or alias (case and punctuation ignored).

    Raises:
        UnknownVariantError: no such variant; the message lists the known ids.
    """
    variant = _BY_NAME.get(normalize_name(name)) if isinstance(name, str) else None
    if variant is None:
        raise UnknownVariantError(f"unknown variant {name!r}; known: {', '.join(_REGISTRY)}")
    return variant


def all_variants() -> Iterable[Variant]:
    return tuple(_REGISTRY.values())
