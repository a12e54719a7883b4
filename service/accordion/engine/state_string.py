"""State strings: one position as compact text (variant and options, row, stock, declared fields).

``format_state`` writes it (with ``hide_stock``: the stock as its size, and no hidden field: what a
player may see, which no longer round-trips); ``parse_state`` reads a full one back. A game's
extra fields (``Rules.fields``) are written as ``name=text`` by their codecs when not at their
default. ``Game.state_string`` / ``Game.from_state_string`` are the usual way in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .cards import card_code, parse_card
from .core import OptionValue, Rules, State, Variant, find_variant, option_text
from .errors import EngineError, InvalidDealError, InvalidStateError

_CODES = tuple(card_code(c) for c in range(52))  # the two-character form of every card, by value


class _PileCodes(dict[tuple[int, ...], str]):
    """A pile's part of a state string, made on first use (state strings are written for every
    reply); emptied when full."""

    def __missing__(self, pile: tuple[int, ...]) -> str:
        if len(self) >= 100_000:
            self.clear()
        code = self[pile] = "".join([_CODES[c] for c in pile])
        return code


_PILE_CODES = _PileCodes()


def _cards_code(cards: Sequence[int]) -> str:
    codes = _CODES
    return "".join([codes[c] for c in cards]) or "-"


def _codes(text: str) -> list[int]:
    if text == "-":
        return []
    if len(text) % 2:
        raise InvalidStateError(f"{text!r} is not a list of two-character cards")
    return [parse_card(text[i : i + 2]) for i in range(0, len(text), 2)]


_DEFAULTS: dict[str, dict[str, OptionValue]] = {}


def _defaults(variant: Variant) -> dict[str, OptionValue]:
    """Each option's default, by variant id (``Variant.options`` builds new records each time)."""
    found = _DEFAULTS.get(variant.id)
    if found is None:
        found = _DEFAULTS[variant.id] = {o.name: o.default for o in variant.options}
    return found


def format_state(variant: Variant, rules: Rules, state: State, hide_stock: bool = False) -> str:
    defaults = _defaults(variant)
    opts = ",".join(f"{k}={option_text(v)}" for k, v in rules.values.items() if defaults.get(k) != v)
    head = f"{variant.id}({opts})" if opts else variant.id
    row = "/".join(map(_PILE_CODES.__getitem__, state.row)) or "-"
    stock = f"#{len(state.stock)}" if hide_stock else _cards_code(state.stock)
    parts = [head, row, stock]
    masked = rules.player_texts(state) if hide_stock else None
    for f in rules.fields:  # each declared extra, as name=text, when it is not its default
        if f.hidden and hide_stock:
            continue
        value = getattr(state, f.name, f.default)
        if value != f.default or f.text_at_default:
            text = masked.get(f.name) if masked else None
            parts.append(f"{f.name}={f.codec.text(value) if text is None else text}")
    return " ".join(parts)


def parse_state(text: str) -> tuple[Variant, Rules, State]:
    """Read a state string written by ``format_state``.

    Raises:
        InvalidStateError: malformed, or a position the rules do not allow.
    """
    try:
        head, row_text, stock_text, *extras = text.split()
        name, _, opts_text = head.partition("(")
        options = dict(kv.split("=", 1) for kv in opts_text.rstrip(")").split(",") if kv)
        variant = find_variant(name)
        rules = variant.make_rules(options)
        if stock_text.startswith("#"):
            raise InvalidStateError("a state string with a hidden stock cannot be loaded")
        row = tuple(tuple(_codes(p)) for p in row_text.split("/")) if row_text != "-" else ()
        if any(not p for p in row):
            raise InvalidStateError("empty pile")
        declared = {f.name: f for f in rules.fields}
        fields: dict[str, Any] = {}
        for kv in extras:
            key, value = kv.split("=", 1)
            field = declared.get(key)
            if field is None:
                raise InvalidStateError(f"unknown field {key!r}")
            fields[key] = field.codec.parse(value)
        state = rules.state(row, tuple(_codes(stock_text)), **fields)
    except EngineError as exc:
        if isinstance(exc, InvalidStateError):
            raise
        raise InvalidStateError(f"{text!r}: {exc}") from None
    except ValueError as bad:  # (its own name: compiled code types a name by its first except)
        raise InvalidStateError(f"{text!r} is not a state string: {bad}") from None
    cards = rules.cards_in(state)
    try:
        rules.check_state(state)
        if rules.discards:
            rules.check_cards(cards)
        else:
            rules.check_deal(cards)
    except InvalidDealError as bad_deal:
        raise InvalidStateError(f"{text!r}: {bad_deal}") from None
    return variant, rules, state
