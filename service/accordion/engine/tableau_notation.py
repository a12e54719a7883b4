"""Reading the moves of tableau games (docs/notation.md, "Tableau games").

    3>7  3>7 x4   tableau pile 3 onto pile 7: the game's plain count (``plain_count``: the whole
                  face-up part, or one card where cards move singly) when that is legal, else
                  the longest legal part; ``x4``: four cards
    w>5  w>f      the waste's top card onto pile 5 / onto the foundations
    5>f  f2>5     pile 5's top onto the foundations; foundation 2's top back onto pile 5
    7H>8S         piles named by face-up cards: 7H is the deepest card moved
    x3,5          Wish: remove the tops of piles 3 and 5 (``x7H,7S`` by cards)
    draw deal redeal resign

A card that is not face up is never looked up: naming a face-down card answers exactly as
naming a card that is not in the layout, so no reply tells where a hidden card lies.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .cards import card_text, parse_card
from .errors import IllegalMoveError, InvalidMoveError
from .fields import State
from .moves import DEAL, DRAW, REDEAL, RESIGN, Move, Remove, Transfer, Zone
from .tableau import DOWN, FOUNDATIONS, TABLEAU, WASTE, TableauRules
from .words import said

_SEP = r"\s*(?:>|->|→|\bon\b|\bonto\b|\bto\b)\s*"
_TRANSFER_RE = re.compile(rf"^(\S+?){_SEP}(\S+?)(?:\s*[x*]\s*(\d+))?$")
_REMOVE_RE = re.compile(r"^(?:x|remove\s+)\s*([^\s,&]+)\s*(?:,|&|\s)\s*([^\s,&]+)$")
_WORDS: dict[str, Move] = {"draw": DRAW, "deal": DEAL, "d": DEAL, "redeal": REDEAL, "resign": RESIGN}
_FOUNDATION_WORDS = ("f", "foundation", "foundations", "home")

# (zone, pile, count or None)
Place = tuple[Zone, int, int | None]


def parse_tableau_move(rules: TableauRules, state: State, legal: Sequence[Move], text: str) -> Move:
    """The move ``text`` names; a well-formed move that is not legal comes back as a value
    not in ``legal`` (the caller says so and lists the legal ones).

    Raises:
        InvalidMoveError: not a move in this notation.
        IllegalMoveError: it names a pile or card that is not there.
    """
    t = " ".join(text.strip().lower().replace("\ufe0f", "").split())
    if not t:
        raise InvalidMoveError("empty move")
    if t in _WORDS:
        return _WORDS[t]
    m = _REMOVE_RE.match(t)
    if m:
        a, b = (_top_pile(state, w, text) for w in m.groups())
        return Remove((min(a, b), max(a, b)))
    m = _TRANSFER_RE.match(t)
    if m:
        zone, src, count = _source(state, m.group(1), text)
        if m.group(3) is not None:
            count = int(m.group(3))
        dst_zone, dst = _destination(state, m.group(2), text)
        return _pick(rules, state, legal, zone, src, count, dst_zone, dst)
    if " " not in t:
        zone, src, count = _source(state, t, text)
        found = [
            mv
            for mv in legal
            if isinstance(mv, Transfer)
            and mv.src_zone is zone
            and mv.src == src
            and (count is None or mv.count == count)
        ]
        if len({(mv.dst_zone, mv.dst) for mv in found}) == 1:
            return _pick(rules, state, legal, zone, src, count, found[0].dst_zone, found[0].dst)
        if not found:
            raise IllegalMoveError(f"{said(text)} is not legal: that cannot move now")
        raise IllegalMoveError(
            f"{said(text)} is not legal: that can move to more than one place; say where with >"
        )
    raise InvalidMoveError(f"{text!r} is not a move; write e.g. 3>7, w>f, draw")


def _pick(
    rules: TableauRules,
    state: State,
    legal: Sequence[Move],
    zone: Zone,
    src: int,
    count: int | None,
    dst_zone: Zone,
    dst: int | None,
) -> Move:
    """The legal transfer meant: ``count`` cards, else the game's plain count, else the longest."""
    if dst_zone is Zone.FOUNDATION and dst is not None:
        dst = rules.listed_foundation(state, dst)
    found = [
        mv
        for mv in legal
        if isinstance(mv, Transfer)
        and mv.src_zone is zone
        and mv.src == src
        and mv.dst_zone is dst_zone
        and (dst is None or mv.dst == dst)
    ]
    if count is not None:
        found = [mv for mv in found if mv.count == count]
    if not found:  # not legal: a value the caller reports (why, and the legal moves)
        if count is None:  # what ``3>7`` means: the game's plain count (the caller says why it cannot go)
            count = (
                max(rules.plain_count(state, src), 1)
                if zone is Zone.TABLEAU and dst_zone is Zone.TABLEAU
                else 1
            )
        return Transfer(zone, src, dst_zone, -1 if dst is None else dst, count)
    whole = rules.plain_count(state, src) if zone is Zone.TABLEAU else 1
    for mv in found:
        if mv.count == whole:
            return mv
    return max(found, key=lambda mv: mv.count)


def _number(word: str, size: int, what: str, original: str) -> int:
    pos = int(word) - 1
    if not 0 <= pos < size:
        raise IllegalMoveError(f"{said(original)} is not legal: there is no {what} {word}; there are {size}")
    return pos


def _source(state: State, word: str, original: str) -> Place:
    if word in ("w", "waste"):
        return Zone.WASTE, 0, None
    if re.fullmatch(r"f\d+", word):
        return Zone.FOUNDATION, _number(word[1:], len(FOUNDATIONS.get(state)), "foundation", original), None
    if word.isdigit():
        return Zone.TABLEAU, _number(word, len(TABLEAU.get(state)), "tableau pile", original), None
    card = parse_card(word)
    for i, (pile, down) in enumerate(zip(TABLEAU.get(state), DOWN.get(state))):
        for depth in range(down, len(pile)):
            if pile[depth] == card:
                return Zone.TABLEAU, i, len(pile) - depth
    waste = WASTE.get(state)
    if waste and waste[-1] == card:
        return Zone.WASTE, 0, None
    for i, pile in enumerate(FOUNDATIONS.get(state)):
        if pile and pile[-1] == card:
            return Zone.FOUNDATION, i, None
    raise IllegalMoveError(
        f"{said(original)} is not legal: {card_text(card, True)} is not a face-up card that can move"
    )


def _destination(state: State, word: str, original: str) -> tuple[Zone, int | None]:
    if word in _FOUNDATION_WORDS:
        return Zone.FOUNDATION, None
    if re.fullmatch(r"f\d+", word):
        return Zone.FOUNDATION, _number(word[1:], len(FOUNDATIONS.get(state)), "foundation", original)
    if word.isdigit():
        return Zone.TABLEAU, _number(word, len(TABLEAU.get(state)), "tableau pile", original)
    card = parse_card(word)
    for i, pile in enumerate(TABLEAU.get(state)):
        if pile and pile[-1] == card:
            return Zone.TABLEAU, i
    for i, pile in enumerate(FOUNDATIONS.get(state)):
        if pile and pile[-1] == card:
            return Zone.FOUNDATION, i
    raise IllegalMoveError(f"{said(original)} is not legal: {card_text(card, True)} is not on top of a pile")


def _top_pile(state: State, word: str, original: str) -> int:
    """A tableau pile named by number or by its (face-up) top card."""
    tableau = TABLEAU.get(state)
    if word.isdigit():
        return _number(word, len(tableau), "tableau pile", original)
    card = parse_card(word)
    for i, pile in enumerate(tableau):
        if pile and pile[-1] == card:
            return i
    raise IllegalMoveError(f"{said(original)} is not legal: {card_text(card, True)} is not on top of a pile")
