"""Move text for people and chat bots, and the one- or two-line layout.

Canonical forms (docs/notation.md has the full grammar):

    8D>9D            STACK: the pile topped by 8D goes onto the pile topped by 9D
    deal             DEAL
    x7  x7-8  x6,8   REMOVE the cards at those 1-based positions
    redeal           REDEAL (French)
    claim 3-5 run 5>3  CLAIM: window of piles 3..5, combination, pile 5 onto pile 3
    resign           RESIGN (every game)

The parser also accepts positions for piles (``5>4``), ``on``/``to``/``->`` for
``>``, any card spelling ``parse_card`` reads, a card after ``x`` (``x8D``),
and a lone pile (``8D`` or ``5``) when exactly one STACK moves it.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Sequence

from .cards import card_text, parse_card
from .core import Rules, State
from .errors import EngineError, IllegalMoveError, InvalidMoveError
from .moves import (
    DEAL,
    REDEAL,
    RESIGN,
    Claim,
    Deal,
    Draw,
    Move,
    Redeal,
    Remove,
    Resign,
    Stack,
    Transfer,
    Zone,
)
from .tableau import TableauRules, face_up_count
from .tableau_notation import parse_tableau_move
from .words import said, why_illegal
from .zones import ZoneView, render_zones

COMBOS = ("pair", "three", "flush", "run", "straight-flush", "fifteen")
_COMBO_ALIASES = {
    "pair": "pair",
    "2kind": "pair",
    "three": "three",
    "trips": "three",
    "three-of-a-kind": "three",
    "3kind": "three",
    "flush": "flush",
    "suit": "flush",
    "three-of-a-suit": "flush",
    "run": "run",
    "sequence": "run",
    "straight": "run",
    "straight-flush": "straight-flush",
    "sflush": "straight-flush",
    "straightflush": "straight-flush",
    "fifteen": "fifteen",
    "15": "fifteen",
}


def format_positions(positions: Sequence[int]) -> str:
    """0-based positions → ``7``, ``7-8`` (a run) or ``6,8``, 1-based."""
    if len(positions) > 1 and all(b == a + 1 for a, b in zip(positions, positions[1:])):
        return f"{positions[0] + 1}-{positions[-1] + 1}"
    return ",".join(str(p + 1) for p in positions)


def move_text(state: State, move: Move, rules: Rules | None = None) -> str:
    """The canonical text of ``move`` in ``state`` (before it is played). A tableau game's
    transfers need the ``rules`` (see ``transfer_text``)."""
    if isinstance(move, Stack):
        return f"{_LETTER_TEXTS[state.row[move.src][-1]]}>{_LETTER_TEXTS[state.row[move.dst][-1]]}"
    if isinstance(move, Transfer):
        return transfer_text(
            state,
            move,
            rules.plain_count(state, move.src)
            if isinstance(rules, TableauRules)
            else face_up_count(state, move.src),
        )
    if isinstance(move, Draw):
        return "draw"
    if isinstance(move, Remove):
        if not state.row:  # Wish: the tops of two tableau piles
            return "x" + ",".join(str(p + 1) for p in move.positions)
        return "x" + format_positions(move.positions)
    if isinstance(move, Deal):
        return "deal"
    if isinstance(move, Redeal):
        return "redeal"
    if isinstance(move, Claim):
        return f"claim {move.first + 1}-{move.last + 1} {move.combo} {move.src + 1}>{move.dst + 1}"
    if isinstance(move, Resign):
        return "resign"
    raise TypeError(f"not a move: {move!r}")


def transfer_text(state: State, move: Transfer, plain: int) -> str:
    """``3>7`` (``plain`` cards: what the game moves by default, ``TableauRules.plain_count``),
    ``3>7 x2`` (another count), ``w>5``, ``5>f``, ``w>f``, ``f2>5``: piles 1-based, ``w`` the
    waste, ``f`` the foundations."""
    src_zone, dst_zone = move.src_zone, move.dst_zone
    if src_zone is Zone.WASTE:
        src = "w"
    elif src_zone is Zone.FOUNDATION:
        src = f"f{move.src + 1}"
    else:
        src = str(move.src + 1)
    if dst_zone is Zone.FOUNDATION:
        return src + ">f"
    text = f"{src}>{move.dst + 1}"
    if src_zone is Zone.TABLEAU and move.count != plain:
        text += f" x{move.count}"
    return text


def _pile_index(state: State, word: str, original: str) -> int:
    """A pile named by 1-based position or by its top card → 0-based position."""
    if word.isdigit():
        pos = int(word) - 1
        if not 0 <= pos < len(state.row):
            raise IllegalMoveError(
                f"{said(original)} is not legal: there is no pile {word}; there are {len(state.row)}"
            )
        return pos
    card = parse_card(word)
    found = [i for i, pile in enumerate(state.row) if pile[-1] == card]
    if not found:
        raise IllegalMoveError(
            f"{said(original)} is not legal: {card_text(card, True)} is not on top of any pile"
        )
    if len(found) > 1:
        raise IllegalMoveError(
            f"{said(original)} is not legal: {card_text(card, True)} tops several piles; name it by position"
        )
    return found[0]


_SEP = r"\s*(?:>|->|→|\bon\b|\bonto\b|\bto\b)\s*"
_STACK_RE = re.compile(rf"^(\S+?){_SEP}(\S+)$")
_REMOVE_RE = re.compile(r"^(?:x|remove\s+|discard\s+)\s*(.+)$")
_CLAIM_RE = re.compile(r"^(?:claim|c)\s+(\d+)\s*-\s*(\d+)\s+([a-z0-9-]+)\s+(\S+?)" + _SEP + r"(\S+)$")


def _parse(state: State, legal: Sequence[Move], text: str) -> Move:
    t = " ".join(text.strip().lower().replace("\ufe0f", "").split())
    if not t:
        raise InvalidMoveError("empty move")
    if t in ("deal", "d"):
        return DEAL
    if t == "redeal":
        return REDEAL
    if t == "resign":
        return RESIGN
    m = _CLAIM_RE.match(t)
    if m:
        combo = _COMBO_ALIASES.get(m.group(3))
        if combo is None:
            raise InvalidMoveError(
                f"{text!r}: unknown combination {m.group(3)!r}; one of {', '.join(COMBOS)}"
            )
        first, last = int(m.group(1)) - 1, int(m.group(2)) - 1
        src, dst = _pile_index(state, m.group(4), text), _pile_index(state, m.group(5), text)
        return Claim(first, last, combo, src, dst)
    m = _REMOVE_RE.match(t)
    if m:
        return Remove(_positions(state, m.group(1), text))
    m = _STACK_RE.match(t)
    if m:
        return Stack(_pile_index(state, m.group(1), text), _pile_index(state, m.group(2), text))
    if " " not in t:
        src = _pile_index(state, t, text)
        options = [mv for mv in legal if isinstance(mv, Stack) and mv.src == src]
        if len(options) == 1:
            return options[0]
        if not options:
            raise IllegalMoveError(f"{said(text)} is not legal: that pile cannot move now")
        raise IllegalMoveError(
            f"{said(text)} is not legal: that pile can move to more than one place; say where with >"
        )
    raise InvalidMoveError(f"{text!r} is not a move")


def _positions(state: State, spec: str, original: str) -> tuple[int, ...]:
    spec = spec.replace(" ", "")
    if re.fullmatch(r"[^,-]+-[^,-]+", spec):
        a, b = (_pile_index(state, w, original) for w in spec.split("-"))
        if b < a:
            raise InvalidMoveError(f"{original!r}: a range runs left to right")
        return tuple(range(a, b + 1))
    if re.fullmatch(r"[^,-]+(,[^,-]+)*", spec):
        return tuple(sorted(_pile_index(state, w, original) for w in spec.split(",")))
    raise InvalidMoveError(f"{original!r}: write positions as x7, x7-8 or x6,8")


def parse_move(rules: Rules, state: State, legal: Sequence[Move], text: str) -> Move:
    """The legal move ``text`` names. ``resign`` is RESIGN, which no position lists: whether
    it is allowed now is the game's to say (``Game.parse_move``).

    Raises:
        InvalidMoveError: the text is not a move in this notation.
        IllegalMoveError: it names a move that is not legal now (the message lists the legal ones).
    """
    legal_texts = [move_text(state, mv, rules) for mv in legal]
    try:
        if isinstance(rules, TableauRules):
            move = parse_tableau_move(rules, state, legal, text)
        else:
            move = _parse(state, legal, text)
    except IllegalMoveError as exc:
        raise IllegalMoveError(f"{exc}; legal now: {_listing(legal_texts)}", legal_texts) from None
    except EngineError as bad:  # (its own name: compiled code types a name by its first except)
        raise InvalidMoveError(f"{bad}; legal now: {_listing(legal_texts)}", legal_texts) from None
    if move not in legal and move is not RESIGN:
        raise illegal_move(rules, state, move, legal, legal_texts)
    return move


def illegal_move(
    rules: Rules, state: State, move: Move, legal: Sequence[Move], legal_texts: Sequence[str]
) -> IllegalMoveError:
    """The error for ``move``, not among ``legal``: ``<move> is not legal: <why>; legal now: …``,
    the why in the player's words (``words.why_illegal``)."""
    why = why_illegal(rules, state, move, legal)
    return IllegalMoveError(
        f"{_safe_text(rules, state, move)} is not legal: {why}; legal now: {_listing(legal_texts)}",
        legal_texts,
    )


def _safe_text(rules: Rules, state: State, move: Move) -> str:
    """The move's notation, also for piles that are not there (a structured request's numbers)."""
    try:
        text = move_text(state, move, rules)
        return text if len(text) <= _ECHO else text[: _ECHO - 1] + "…"  # (a request's 104 positions)
    except IndexError:
        if isinstance(move, Stack):
            return f"{move.src + 1}>{move.dst + 1}"
        if isinstance(move, Transfer):
            return transfer_text(state, move, move.count)
        raise


_ECHO = 40  # the longest move text an error repeats


def _listing(texts: Sequence[str]) -> str:
    return ", ".join(texts) if texts else "nothing (the game is over)"


_SYMBOL_TEXTS = tuple(card_text(c, True) for c in range(52))
_LETTER_TEXTS = tuple(card_text(c, False) for c in range(52))


class _Tops(dict[tuple[int, ...], str]):
    """A pile's cell text without its number (``8♦``, ``K♣×3``), made on first use; emptied when full."""

    def __init__(self, texts: tuple[str, ...]) -> None:
        super().__init__()
        self.texts = texts

    def __missing__(self, pile: tuple[int, ...]) -> str:
        if len(self) >= 100_000:
            self.clear()
        text = self[pile] = f"{self.texts[pile[-1]]}×{len(pile)}" if len(pile) > 1 else self.texts[pile[-1]]
        return text


_SYMBOL_TOPS, _LETTER_TOPS = _Tops(_SYMBOL_TEXTS), _Tops(_LETTER_TEXTS)
_NUMBERS = [f"{i}:" for i in range(1, 105)]  # cell prefixes, grown on demand


def render(
    rules: Rules,
    state: State,
    symbols: bool = True,
    width: int | None = None,
    zones: tuple[ZoneView, ...] | None = None,
) -> str:
    """The layout in one line (two when ``width`` is exceeded): numbered piles, sizes, stock.
    ``zones`` is ``rules.zones(state)`` when the caller has it already (``Game`` keeps it).

    ``1:8♦ 2:K♣×3 3:2♠ | stock 30``
    """
    # "8♦" / "K♣×3" per pile (cached by pile), numbered by one C-level map: the row is
    # rendered for every reply, so this is hot.
    if zones is None:
        zones = rules.zones(state)
    if zones:  # a tableau game: drawn from what the player sees, never from the position itself
        return render_zones(zones, _SYMBOL_TEXTS if symbols else _LETTER_TEXTS, rules.summary(state))
    tops = _SYMBOL_TOPS if symbols else _LETTER_TOPS
    if len(state.row) > len(_NUMBERS):
        _NUMBERS.extend(f"{i}:" for i in range(len(_NUMBERS) + 1, len(state.row) + 1))
    cells = list(map(operator.add, _NUMBERS, map(tops.__getitem__, state.row)))
    tail = []
    if (
        state.stock
        or rules.family == "cribbage"
        or "dealing" in rules.values
        and rules.values["dealing"] == "stock"
    ):
        tail.append(f"stock {len(state.stock)}")
    tail.extend(rules.summary(state))
    cells_text = " ".join(cells) if cells else "(empty row)"
    line = " | ".join([cells_text, *tail])
    if width is None or len(line) <= width or len(cells) < 2:
        return line
    half = (len(cells) + 1) // 2
    return " ".join(cells[:half]) + "\n" + " | ".join([" ".join(cells[half:]), *tail])
