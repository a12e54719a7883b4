"""Positions: the ``State`` every game shares (row, stock) and the extras each game declares.

A game that remembers more than its row and stock (French's generator and redeals, the
goal card of Accordion's Revenge, Cribbage Solitaire's score and marks) declares each
extra once, as one ``Field`` in its own module::

    GOAL = Field("goal", -1, CARD, tag=4, show=lambda g: f"goal {card_text(g, True)}" if g >= 0 else None)

    class AccordionsRevengeRules(StackingRules):
        fields = (GOAL,)

Everything else follows from the declarations: the game's state type (a ``State`` with
those fields after ``row`` and ``stock``), the state string (``state_string.format_state``), the
binary state record (``record.encode_state``), the view (``Rules.summary``) and what a
player may not see (``hidden``). Rules code reads and writes extras through the field
(``GOAL.get(state)``, ``GOAL.set(state, card)``); code outside the engine asks the
Game/Rules API (``Game.score``, ``Rules.summary``), never ``state.goal``.

A field's value may be anything its codec can write: a number, a card, a pile, piles of a
zone (``PILES``), counts per pile (``COUNTS``); so a game with foundations, a waste and
face-down cards declares them as fields too, with no change here.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar, cast

from mypy_extensions import mypyc_attr

from accordion import bytecodec
from accordion.bytecodec import unzigzag as unzigzag  # re-exported: the games' codecs use them
from accordion.bytecodec import varint as varint
from accordion.bytecodec import zigzag as zigzag

from .cards import card_code, parse_card
from .errors import InvalidStateError

Pile = tuple[int, ...]
Row = tuple[Pile, ...]
T = TypeVar("T")


class State(NamedTuple):
    """One position, immutable. Piles run bottom → top; ``stock[0]`` is dealt next.

    A game that declares ``fields`` gets its own state type: this one with those fields
    appended (``Rules.state_type``); ``row`` and ``stock`` stay plain attributes, read by
    every hot path.
    """

    row: Row
    stock: Pile = ()


# --- the binary form: the shared byte codec, and the engine's reader ------------------------


class Reader(bytecodec.Reader):
    """Reads a state record front to back; every overrun is an ``InvalidStateError`` (the engine's
    word for a record that does not describe a game)."""

    __slots__ = ()

    def error(self, message: str) -> ValueError:
        return InvalidStateError(message)


# --- codecs: a value's text form and binary form ----------------------------------------


class FieldCodec(Generic[T]):
    """How one kind of value is written: as text in the state string (no spaces) and as
    bytes in the state record. Subclasses implement all four."""

    def text(self, value: T) -> str:
        raise NotImplementedError

    def parse(self, text: str) -> T:
        """The value from its text; ``ValueError`` (or an ``EngineError``) if malformed."""
        raise NotImplementedError

    def write(self, value: T, out: bytearray) -> None:
        raise NotImplementedError

    def read(self, r: Reader) -> T:
        raise NotImplementedError


class Hex64(FieldCodec[int]):
    """An unsigned 64-bit integer: 16 hex digits; 8 bytes little-endian (a generator's state)."""

    def text(self, value: int) -> str:
        return f"{value:016x}"

    def parse(self, text: str) -> int:
        return int(text, 16)

    def write(self, value: int, out: bytearray) -> None:
        out += value.to_bytes(8, "little")

    def read(self, r: Reader) -> int:
        return int.from_bytes(r.take(8), "little")


class Signed(FieldCodec[int]):
    """Any integer: decimal; a zigzag varint."""

    def text(self, value: int) -> str:
        return str(value)

    def parse(self, text: str) -> int:
        return int(text)

    def write(self, value: int, out: bytearray) -> None:
        out += varint(zigzag(value))

    def read(self, r: Reader) -> int:
        return unzigzag(r.varint())


class Count(FieldCodec[int]):
    """An integer ≥ 0: decimal; a varint."""

    def text(self, value: int) -> str:
        return str(value)

    def parse(self, text: str) -> int:
        number = int(text)
        if number < 0:
            raise ValueError(f"{text!r} is not a count")
        return number

    def write(self, value: int, out: bytearray) -> None:
        out += varint(value)

    def read(self, r: Reader) -> int:
        return r.varint()


class Card(FieldCodec[int]):
    """One card: its two-character code (``7H``); one byte."""

    def text(self, value: int) -> str:
        return card_code(value)

    def parse(self, text: str) -> int:
        return parse_card(text)

    def write(self, value: int, out: bytearray) -> None:
        out.append(value)

    def read(self, r: Reader) -> int:
        card = r.byte()
        if card >= 52:
            raise InvalidStateError(f"{card} is not a card")
        return card


def _cards_text(pile: Pile) -> str:
    return "".join(map(card_code, pile)) or "-"


def _parse_cards(text: str) -> Pile:
    if text == "-":
        return ()
    if len(text) % 2:
        raise InvalidStateError(f"{text!r} is not a list of two-character cards")
    return tuple(parse_card(text[i : i + 2]) for i in range(0, len(text), 2))


def _read_cards(r: Reader) -> Pile:
    cards = tuple(r.take(r.varint()))
    if any(c >= 52 for c in cards):
        raise InvalidStateError("a pile holds a value that is not a card")
    return cards


class Cards(FieldCodec[Pile]):
    """A pile of cards, bottom first: ``7H8S`` (``-`` when empty); a length and a byte a card."""

    def text(self, value: Pile) -> str:
        return _cards_text(value)

    def parse(self, text: str) -> Pile:
        return _parse_cards(text)

    def write(self, value: Pile, out: bytearray) -> None:
        out += varint(len(value))
        out += bytes(value)

    def read(self, r: Reader) -> Pile:
        return _read_cards(r)


class Piles(FieldCodec[Row]):
    """The piles of one zone (foundations, a tableau): ``AH2H/-/AS`` (``/`` between piles,
    ``-`` for an empty pile); a count, then each pile as ``Cards``."""

    def text(self, value: Row) -> str:
        return "/".join(map(_cards_text, value))

    def parse(self, text: str) -> Row:
        return tuple(_parse_cards(p) for p in text.split("/"))

    def write(self, value: Row, out: bytearray) -> None:
        out += varint(len(value))
        for pile in value:
            out += varint(len(pile))
            out += bytes(pile)

    def read(self, r: Reader) -> Row:
        return tuple(_read_cards(r) for _ in range(r.varint()))


class Counts(FieldCodec[tuple[int, ...]]):
    """A count per pile (face-down cards under each tableau pile): ``0.1.2``; a count, then varints."""

    def text(self, value: tuple[int, ...]) -> str:
        return ".".join(map(str, value)) or "-"

    def parse(self, text: str) -> tuple[int, ...]:
        return () if text == "-" else tuple(Count().parse(n) for n in text.split("."))

    def write(self, value: tuple[int, ...], out: bytearray) -> None:
        out += varint(len(value))
        for n in value:
            out += varint(n)

    def read(self, r: Reader) -> tuple[int, ...]:
        return tuple(r.varint() for _ in range(r.varint()))


HEX64 = Hex64()
SIGNED = Signed()
COUNT = Count()
CARD = Card()
CARDS = Cards()
PILES = Piles()
COUNTS = Counts()


# --- a field -----------------------------------------------------------------------------


@mypyc_attr(native_class=False)  # mypyc: a generic frozen dataclass cannot be a native class
@dataclass(frozen=True)
class Field(Generic[T]):
    """One extra of a game's position, declared once by the game.

    ``name`` is the attribute of the state and the key in the state string
    (``name=<codec text>``); ``tag`` (1..127, unique within the game) marks it in the binary
    state record. A field is written only when its value differs from ``default``, except
    that ``text_at_default`` writes it in the state string always. A ``hidden`` field (a
    generator's state, which tells the next shuffle) is left out of what a player sees.
    ``show`` gives the field's line in the view (``Rules.summary``), or None for no line.
    """

    name: str
    default: T
    codec: FieldCodec[T]
    tag: int
    hidden: bool = False
    text_at_default: bool = False
    show: Callable[[T], str | None] | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.tag <= 127:
            raise ValueError(f"field {self.name}: a record tag is 1..127 (one byte)")
        if not self.name.isidentifier() or self.name in State._fields:
            raise ValueError(f"field {self.name!r}: a name that is not row, stock or a non-identifier")

    def get(self, state: State) -> T:
        """The field's value in ``state`` (its default for a state that does not carry it)."""
        return cast(T, getattr(state, self.name, self.default))

    def set(self, state: State, value: T) -> State:
        """``state`` with this field set; the state must be of a type that declares it."""
        # (Through Any: the state's type declares row and stock only, and compiled code checks
        # ``_fields`` against that declaration.)
        if self.name not in cast(Any, state)._fields:
            raise TypeError(f"{type(state).__name__} has no field {self.name!r}")
        return cast(State, cast(Any, state)._replace(**{self.name: value}))


# ``namedtuple`` through a plain callable: called directly, mypy (and so mypyc) takes the call for
# a class statement, and the compiled function would have no ``base`` to read at run time.
_namedtuple: Callable[..., type[tuple[Any, ...]]] = namedtuple
_STATE_TYPES: dict[tuple[tuple[str, Any], ...], type[State]] = {}
_DECLARED: dict[type[State], tuple[Field[Any], ...]] = {State: ()}


def fields_of(state: State) -> tuple[Field[Any], ...]:
    """The fields a position carries, as its game declared them (none for a plain ``State``)."""
    return _DECLARED.get(type(state), ())


def state_type(owner: str, fields: tuple[Field[Any], ...]) -> type[State]:
    """The state type for ``fields``: ``State`` itself when there are none, else a subclass
    with the fields after ``row`` and ``stock`` (one type per distinct set of fields)."""
    if not fields:
        return State
    names = [f.name for f in fields]
    tags = [f.tag for f in fields]
    if len(set(names)) != len(names) or len(set(tags)) != len(tags):
        raise ValueError(f"{owner}: field names and record tags must be unique: {names} {tags}")
    key = tuple((f.name, f.default) for f in fields)
    found = _STATE_TYPES.get(key)
    if found is None:
        name = f"{owner.removesuffix('Rules')}State"
        base = _namedtuple(name, ["row", "stock", *names], defaults=((), *(f.default for f in fields)))
        # The namedtuple's members on a subclass of State, so isinstance(s, State) holds and
        # row/stock are the same fast tuple getters.
        namespace = {k: v for k, v in vars(base).items() if k not in ("__dict__", "__weakref__")}
        found = _STATE_TYPES[key] = cast(type[State], type(name, (State,), namespace))
        _DECLARED[found] = fields
    return found
