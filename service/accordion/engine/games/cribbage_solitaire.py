"""Cribbage Solitaire (Bill Beers): deal one by one, CLAIM cribbage combinations in new windows, reach 61.

Seed 000; docs/games.md, "Cribbage Solitaire". No options.

The row starts with one card; DEAL puts the next stock card at the right end and is legal
whenever the stock has cards (a claim is never compelled). A *window* is 2 or 3 adjacent
piles, scored by their top cards:

    pair 2 (2 cards, same rank)          three 6 (3, same rank)
    flush 3 (3, same suit)               run 3 (3 consecutive ranks, any order; A low, K high, no wrap)
    straight-flush 6 (run + same suit)   fifteen 2 (2 or 3 cards, values sum to 15; A = 1, J Q K = 10)

CLAIM ``claim 3-5 run 5>3`` = ``Claim(first=2, last=4, combo="run", src=4, dst=2)``: piles
``first..last`` are the window, ``src`` and ``dst`` are two distinct piles of it, ``src``
goes on top of ``dst`` (the gap closes) and the combination's points are added.

New windows (the lead's design). A pile is identified by (top card, height): piles only
grow, and a card on top only ever sits on taller and taller piles until it is covered for
good, so no pile ever has the identity of an earlier one; a pile made by a claim is new.
``State.marks = (row just before the latest DEAL, row just before the DEAL before it)``,
each a tuple of identities, ``((), ())`` at the start. A window is *new* when its identities
do not occur as consecutive piles in ``marks[0]``. Claimable: every combination of a new
window; and, as the seed's exception, a 2-pile window holding a pair that is not new but was
new before the latest DEAL (present in ``marks[0]``, absent from ``marks[1]``), as "pair"
only, until the next DEAL. DEAL sets ``marks = (row now, marks[0])``.

Readings of what the spec leaves open:

- A window holding several combinations offers each of them: a straight flush is also a
  flush and a run (the player picks; the straight flush scores most), three 5s are also a
  fifteen, 4-5-6 is a run and a fifteen. Each definition in the table is tested on its own.
- The two piles of a claim are any two of the window, adjacent or not, either on top:
  six choices in a 3-pile window, two in a 2-pile window.
- "Won the moment the score reaches 61 while the stock still holds a card": no move is legal
  after that (status WON). "When the last card has been dealt the game is over": no claim is
  legal once the stock is empty, not even one the last card revealed (the seed: 61 "before
  the entire pack has been fully dealt"); status LOST under 61. A hand-built position with an
  empty stock and 61 or more counts as WON.
- A position built without marks (``State.marks == ()``) reads as ``((), ())``: every window new.
- Legal moves come out by window (leftmost first pile, then 2 piles before 3), then
  combination in ``notation.COMBOS`` order, then (src, dst) in ascending order; DEAL last.
- Penalty: points short of 61; threshold met at 61 or more.
"""

from __future__ import annotations

from functools import cache
from itertools import permutations
from typing import Any, ClassVar, final

from ..cards import RANK, SUIT, card_code, parse_card
from ..core import Option, Rules, State, Status, Variant, register
from ..fields import SIGNED, Field, FieldCodec, Reader, unzigzag, varint, zigzag
from ..moves import DEAL, Claim, Deal, Move, MoveKind
from ..rng import SplitMix64
from ..search import NoSearch, Search
from ..words import card, no_pile

TARGET = 61
POINTS = {"pair": 2, "three": 6, "flush": 3, "run": 3, "straight-flush": 6, "fifteen": 2}
VALUE = tuple(min(r, 10) for r in RANK)

Identity = tuple[int, int]  # (top card, height)
Marks = tuple[tuple[Identity, ...], ...]


class MarksCodec(FieldCodec[Marks]):
    """The marks: rows of identities, ``;`` between rows, ``.`` between identities (``7H3``),
    ``-`` for an empty row; in the record a count of rows, then each row as a count and
    (card byte, zigzag height) pairs."""

    def text(self, value: Marks) -> str:
        return ";".join(".".join(f"{card_code(c)}{h}" for c, h in mark) or "-" for mark in value)

    def parse(self, text: str) -> Marks:
        return tuple(
            tuple((parse_card(e[:2]), int(e[2:])) for e in m.split(".")) if m != "-" else ()
            for m in text.split(";")
        )

    def write(self, value: Marks, out: bytearray) -> None:
        out += varint(len(value))
        for mark in value:
            out += varint(len(mark))
            for code, h in mark:
                out.append(code)
                out += varint(zigzag(h))

    def read(self, r: Reader) -> Marks:
        return tuple(
            tuple((r.byte(), unzigzag(r.varint())) for _ in range(r.varint())) for _ in range(r.varint())
        )


SCORE = Field("score", 0, SIGNED, tag=2, show=lambda n: f"score {n}")
# (row just before the latest DEAL, row just before the DEAL before it); () reads as ((), ()).
MARKS = Field("marks", (), MarksCodec(), tag=5)


COMBO_WORDS = {
    "pair": "a pair",
    "three": "three of a kind",
    "flush": "three of a suit",
    "run": "a run of three",
    "straight-flush": "a three-card straight flush",
    "fifteen": "fifteen",
}


def combos2(a: int, b: int) -> tuple[str, ...]:
    """The combinations two top cards hold (at most one: a pair never sums to 15)."""
    if RANK[a] == RANK[b]:
        return ("pair",)
    if VALUE[a] + VALUE[b] == 15:
        return ("fifteen",)
    return ()


@cache
def combos3(a: int, b: int, c: int) -> tuple[str, ...]:
    """The combinations three top cards hold, in ``notation.COMBOS`` order."""
    out: list[str] = []
    ra, rb, rc = sorted((RANK[a], RANK[b], RANK[c]))
    if ra == rc:
        out.append("three")
    flush = SUIT[a] == SUIT[b] == SUIT[c]
    run = rb == ra + 1 and rc == rb + 1
    if flush:
        out.append("flush")
    if run:
        out.append("run")
    if run and flush:
        out.append("straight-flush")
    if VALUE[a] + VALUE[b] + VALUE[c] == 15:
        out.append("fifteen")
    return tuple(out)


@cache
def claims(first: int, last: int, combo: str) -> tuple[Claim, ...]:
    """The shared CLAIMs of ``combo`` in window ``first..last``, by (src, dst)."""
    return tuple(Claim(first, last, combo, s, d) for s, d in sorted(permutations(range(first, last + 1), 2)))


def identities(state: State) -> tuple[Identity, ...]:
    """The row's piles as (top card, height)."""
    return tuple((p[-1], len(p)) for p in state.row)


@final
class CribbageSolitaireRules(Rules):
    """Score cribbage combinations in new windows of the row as it is dealt."""

    family = "cribbage"
    options: ClassVar[tuple[Option, ...]] = ()
    move_kinds = (MoveKind.CLAIM, MoveKind.DEAL)
    fields: ClassVar[tuple[Field[Any], ...]] = (SCORE, MARKS)

    def start(self, cards: list[int], gen: SplitMix64) -> State:
        return self.state(((cards[0],),), tuple(cards[1:]), marks=((), ()))

    def score(self, state: State) -> int:
        return SCORE.get(state)

    def search(self, state: State) -> Search:
        return NoSearch(
            reason="the solver does not play Cribbage Solitaire (a score race dealt from a hidden stock)"
        )

    def legal_moves(self, state: State) -> tuple[Move, ...]:
        if SCORE.get(state) >= TARGET or not state.stock:
            return ()
        marks = MARKS.get(state)
        m0 = marks[0] if marks else ()
        m1 = marks[1] if len(marks) > 1 else ()
        old2 = set(zip(m0, m0[1:]))
        old3 = set(zip(m0, m0[1:], m0[2:]))
        older2: set[tuple[Identity, Identity]] | None = None
        ids = identities(state)
        n = len(ids)
        out: list[Move] = []
        extend = out.extend
        for i in range(n - 1):
            a, b = ids[i], ids[i + 1]
            if (a, b) not in old2:
                for combo in combos2(a[0], b[0]):
                    extend(claims(i, i + 1, combo))
            elif RANK[a[0]] == RANK[b[0]]:
                if older2 is None:
                    older2 = set(zip(m1, m1[1:]))
                if (a, b) not in older2:
                    extend(claims(i, i + 1, "pair"))
            if i + 2 < n:
                c = ids[i + 2]
                if (a, b, c) not in old3:
                    for combo in combos3(a[0], b[0], c[0]):
                        extend(claims(i, i + 2, combo))
        out.append(DEAL)
        return tuple(out)

    def explain(self, state: State, move: Move) -> str | None:
        if not isinstance(move, Claim):
            return None  # (DEAL is legal while the game goes on)
        row, first, last = state.row, move.first, move.last
        for p in (first, last, move.src, move.dst):
            if not 0 <= p < len(row):
                return no_pile(p + 1, len(row))
        if last - first not in (1, 2):
            return "a window is 2 or 3 piles side by side"
        if move.src == move.dst or not (first <= move.src <= last and first <= move.dst <= last):
            return (
                "the pile that moves and the pile it goes on must be two piles of the window "
                f"{first + 1}-{last + 1}"
            )
        tops = [p[-1] for p in row[first : last + 1]]
        held = combos2(tops[0], tops[1]) if len(tops) == 2 else combos3(tops[0], tops[1], tops[2])
        shown = " ".join(map(card, tops))
        if move.combo not in held:
            if move.combo not in ("pair", "fifteen") and len(tops) == 2:
                return f"{COMBO_WORDS[move.combo]} needs a window of 3 piles"
            if move.combo == "pair" and len(tops) == 3:
                return "a pair is claimed in a window of 2 piles"
            return f"{shown} {'is' if len(tops) == 2 else 'are'} not {COMBO_WORDS[move.combo]}"
        if move in self.legal_moves(state):
            return None
        if move.combo == "pair":
            return f"the pair {shown} is old: a pair scores only until the second deal after it appeared"
        return f"the window {shown} was there before the latest deal: only a new window scores"

    def apply(self, state: State, move: Move) -> State:
        if isinstance(move, Claim):
            row = list(state.row)
            row[move.dst] = row[move.dst] + row[move.src]
            del row[move.src]
            return self.state(
                tuple(row), state.stock, score=SCORE.get(state) + POINTS[move.combo], marks=MARKS.get(state)
            )
        if isinstance(move, Deal):
            marks = MARKS.get(state)
            m0 = marks[0] if marks else ()
            return self.state(
                state.row + ((state.stock[0],),),
                state.stock[1:],
                score=SCORE.get(state),
                marks=(identities(state), m0),
            )
        raise TypeError(f"{type(self).__name__} has no move {move!r}")

    def is_won(self, state: State) -> bool:
        return SCORE.get(state) >= TARGET

    def status(self, state: State, legal: tuple[Move, ...]) -> Status:
        if SCORE.get(state) >= TARGET:
            return Status.WON
        return Status.IN_PROGRESS if state.stock else Status.LOST

    def penalty(self, state: State) -> int:
        return max(0, TARGET - SCORE.get(state))

    def threshold_met(self, state: State) -> bool:
        return SCORE.get(state) >= TARGET

    def win_threshold(self) -> str:
        return f"{TARGET} points"


register(
    Variant(
        id="cribbage-solitaire",
        name="Cribbage Solitaire",
        rules=CribbageSolitaireRules,
        description="Deal one card at a time; claim pairs, threes, flushes, runs and fifteens among "
        "2 or 3 adjacent new piles, stacking two of them; reach 61 before the pack runs out.",
        aliases=("Cribbage Solitaire", "Beers Cribbage Solitaire"),
    )
)
