"""The ground every tableau game shares (spec: "The other games of seed 004").

A tableau game keeps ``State.row`` empty, so no row code path can show a card, and declares
its zones as fields: ``tableau`` (every pile bottom → top, face-down cards included),
``down`` (how many cards at the bottom of each tableau pile are face down), ``foundations``
and ``waste`` (top last); the stock is ``State.stock`` (``stock[0]`` is drawn next).

What a player may see is decided in one place, ``TableauRules.zones``: face-down cards are
counted, and named only in a game dealt ``open``. The player's state string and ``render``
are made from the same masking.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from .cards import DECK_SIZE, RANK, SUIT, card_code
from .core import Option, Rules
from .errors import InvalidStateError
from .fields import COUNTS, CARDS, PILES, Field, Pile, Row, State
from .moves import Transfer, Zone, transfer
from .search import NoSearch, Search
from .zones import PileView, ZoneView

TABLEAU: Field[Row] = Field("tableau", (), PILES, tag=10)
DOWN: Field[tuple[int, ...]] = Field("down", (), COUNTS, tag=11)
FOUNDATIONS: Field[Row] = Field("foundations", (), PILES, tag=12)
WASTE: Field[Pile] = Field("waste", (), CARDS, tag=13)
TABLEAU_FIELDS: tuple[Field[Any], ...] = (TABLEAU, DOWN, FOUNDATIONS, WASTE)

OPEN = Option("open", False, (False, True),
              "every card face up to the player, the stock's order included (the rules are unchanged)")

# RED[c]: the card is a heart or a diamond (suits ♠ ♥ ♦ ♣ are 0..3).
RED = tuple(SUIT[c] in (1, 2) for c in range(DECK_SIZE))
# BUILDS_ON[a][b]: a goes on b in a build down in alternating colours (6♥ on 7♣).
BUILDS_ON = tuple(
    tuple(RANK[a] + 1 == RANK[b] and RED[a] != RED[b] for b in range(DECK_SIZE)) for a in range(DECK_SIZE)
)
# ONTO_ALTERNATE[c]: the cards c goes on in a build down in alternating colours (two; none for a King).
ONTO_ALTERNATE = tuple(tuple(b for b in range(DECK_SIZE) if BUILDS_ON[a][b]) for a in range(DECK_SIZE))
# ONTO_ANY_SUIT[c]: the cards one rank higher than c, of any suit (none for a King).
ONTO_ANY_SUIT = tuple(tuple(b for b in range(DECK_SIZE) if RANK[b] == RANK[a] + 1) for a in range(DECK_SIZE))
HIDDEN_CODE = "??"  # a face-down card in the player's state string

# The shared transfers, by index, for the legal-move loops (``moves.transfer`` interns the same
# values; a list lookup is cheaper than its cached call): TABLEAU_TO_TABLEAU[i][j][count],
# TABLEAU_TO_FOUNDATION[i][f], WASTE_TO_TABLEAU[j], WASTE_TO_FOUNDATION[f], FOUNDATION_TO_TABLEAU[f][j].
_PILES, _FOUNDATIONS, _COUNTS = 10, 8, 14
TABLEAU_TO_TABLEAU = tuple(tuple(tuple(transfer(Zone.TABLEAU, i, Zone.TABLEAU, j, n) for n in range(_COUNTS))
                                 for j in range(_PILES)) for i in range(_PILES))
TABLEAU_TO_FOUNDATION = tuple(tuple(transfer(Zone.TABLEAU, i, Zone.FOUNDATION, f, 1) for f in range(_FOUNDATIONS))
                              for i in range(_PILES))
WASTE_TO_TABLEAU = tuple(transfer(Zone.WASTE, 0, Zone.TABLEAU, j, 1) for j in range(_PILES))
WASTE_TO_FOUNDATION = tuple(transfer(Zone.WASTE, 0, Zone.FOUNDATION, f, 1) for f in range(_FOUNDATIONS))
FOUNDATION_TO_TABLEAU = tuple(tuple(transfer(Zone.FOUNDATION, f, Zone.TABLEAU, j, 1) for j in range(_PILES))
                              for f in range(_FOUNDATIONS))


def tableau_to_tableau(src: int, dst: int, count: int) -> Transfer:
    """The shared transfer of ``count`` cards between tableau piles (from the table when it holds it)."""
    if src < _PILES and dst < _PILES and count < _COUNTS:
        return TABLEAU_TO_TABLEAU[src][dst][count]
    return transfer(Zone.TABLEAU, src, Zone.TABLEAU, dst, count)


def turned_up(pile: Pile, down: int) -> int:
    """The face-down count of ``pile`` after a move: a face-down top card turns face up."""
    return down - 1 if down and down >= len(pile) else down


def face_up_count(state: State, pile: int) -> int:
    """How many face-up cards tableau pile ``pile`` holds (0 for a pile that is not there)."""
    tableau, down = TABLEAU.get(state), DOWN.get(state)
    return len(tableau[pile]) - down[pile] if 0 <= pile < len(tableau) else 0


class TableauRules(Rules):
    """Base of the tableau games. A game sets its options (with ``OPEN`` where it has face-down
    cards), ``deck_copies``/``deck``, deals in ``start`` (through ``layout``) and writes its
    moves; this base gives the zones, the masking, the penalty and the state checks."""

    family: ClassVar[str] = "tableau"
    fields: ClassVar[tuple[Field[Any], ...]] = TABLEAU_FIELDS

    open: bool

    def __init__(self, values: Mapping[str, Any]) -> None:
        super().__init__(values)
        self.open = bool(values.get("open", False))

    # --- building positions ---------------------------------------------------------
    def layout(self, tableau: Row, down: tuple[int, ...], stock: Pile = (), foundations: int = 4,
               **extras: Any) -> State:
        """A first position: these tableau piles, ``foundations`` empty foundations, no waste."""
        return self.state((), stock, tableau=tableau, down=down, foundations=((),) * foundations,
                          waste=(), **extras)

    def cards_in(self, state: State) -> list[int]:
        cards = [c for pile in TABLEAU.get(state) for c in pile]
        cards += [c for pile in FOUNDATIONS.get(state) for c in pile]
        cards += WASTE.get(state)
        cards += state.stock
        return cards

    def check_state(self, state: State) -> None:
        tableau, down = TABLEAU.get(state), DOWN.get(state)
        if state.row:
            raise InvalidStateError("a tableau game has no row")
        if len(down) != len(tableau):
            raise InvalidStateError(f"down counts {len(down)} piles; the tableau has {len(tableau)}")
        for i, (pile, n) in enumerate(zip(tableau, down)):
            if n > len(pile) or (pile and n == len(pile)):
                raise InvalidStateError(f"tableau pile {i + 1}: its top card must be face up")

    # --- what the player sees -------------------------------------------------------
    def zones(self, state: State) -> tuple[ZoneView, ...]:
        shown = self.open
        tableau = tuple(
            PileView(pile[n:], n, pile[:n] if shown else ())
            for pile, n in zip(TABLEAU.get(state), DOWN.get(state))
        )
        out = [ZoneView(Zone.TABLEAU, tableau),
               ZoneView(Zone.FOUNDATION, tuple(PileView(p) for p in FOUNDATIONS.get(state)))]
        if self.has_stock():
            stock = state.stock
            out.append(ZoneView(Zone.STOCK, (PileView((), len(stock), stock if shown else ()),)))
        if self.has_waste():
            out.append(ZoneView(Zone.WASTE, (PileView(WASTE.get(state)),)))
        return tuple(out)

    def has_stock(self) -> bool:
        """Whether the game has a stock to show."""
        return True

    def has_waste(self) -> bool:
        """Whether the game has a waste to show (Spider deals its stock onto the tableau)."""
        return self.has_stock()

    def hides_anything(self, state: State) -> bool:
        return not self.open and (bool(state.stock) or any(DOWN.get(state)))

    def dealt_open(self, state: State) -> tuple[Rules, State] | None:
        # ``open`` changes only what the player is shown: the same values with it set make the
        # same deal from a seed (``start`` never reads it), so the position stays as it is.
        if OPEN not in self.options:
            return None
        return self.opened(), state

    def player_texts(self, state: State) -> Mapping[str, str]:
        if self.open or not any(DOWN.get(state)):
            return {}
        piles = [HIDDEN_CODE * n + "".join(map(card_code, pile[n:])) or "-"
                 for pile, n in zip(TABLEAU.get(state), DOWN.get(state))]
        return {TABLEAU.name: "/".join(piles)}

    # --- outcome ----------------------------------------------------------------------
    def on_foundations(self, state: State) -> int:
        return sum(map(len, FOUNDATIONS.get(state)))

    def penalty(self, state: State) -> int:
        """Cards not on the foundations."""
        return len(self.deck()) - self.on_foundations(state)

    def is_won(self, state: State) -> bool:
        return self.penalty(state) == 0

    def win_threshold(self) -> str:
        return f"all {len(self.deck())} cards on the foundations"

    def plain_count(self, state: State, pile: int) -> int:
        """How many cards ``3>7`` moves from tableau pile ``pile`` when that is legal (the
        notation writes a count only for others): the whole face-up part here; games whose
        cards move singly say 1."""
        return face_up_count(state, pile)

    # --- moving cards -------------------------------------------------------------------
    def apply_transfer(self, state: State, move: Transfer, **extras: Any) -> State:
        """The position after ``move`` (legal, not checked), a face-down card left on top of
        its pile turned up, with ``extras`` (other declared fields) set too."""
        tableau, down = TABLEAU.get(state), DOWN.get(state)
        foundations, waste = FOUNDATIONS.get(state), WASTE.get(state)
        zone, src, count = move.src_zone, move.src, move.count
        if zone is Zone.TABLEAU:
            pile = tableau[src]
            cards = pile[-count:]
            rest = pile[:-count]
            tableau = (*tableau[:src], rest, *tableau[src + 1:])
            n = down[src]
            if n and n >= len(rest):
                down = (*down[:src], n - 1, *down[src + 1:])
        elif zone is Zone.WASTE:
            cards = waste[-1:]
            waste = waste[:-1]
        else:
            cards = foundations[src][-1:]
            foundations = (*foundations[:src], foundations[src][:-1], *foundations[src + 1:])
        dst = move.dst
        if move.dst_zone is Zone.TABLEAU:
            tableau = (*tableau[:dst], tableau[dst] + cards, *tableau[dst + 1:])
        else:
            foundations = (*foundations[:dst], foundations[dst] + cards, *foundations[dst + 1:])
        replace: Any = state._replace
        result: State = replace(tableau=tableau, down=down, foundations=foundations, waste=waste, **extras)
        return result

    def search(self, state: State) -> Search:
        return NoSearch(reason="this tableau game declares no search")

    # --- sampled worlds (a Hint on a hidden position: solver/sampling.py) -------------------
    def seen_stock(self, state: State) -> bool:
        """Whether the player has seen every card of the stock, in its order, though the view
        shows it face down (a game whose stock is a waste turned over, which the view showed
        whole: Klondike after a REDEAL). A player who remembers knows it; a Hint may use it."""
        return False

    def with_hidden(self, state: State, cards: Sequence[int], stock: bool = True) -> State:
        """The same position with ``cards`` in its hidden places, in this order: the face-down
        cards of each tableau pile (pile by pile, bottom to top), then (with ``stock``) the
        stock in drawing order. Everything the player sees stays as it is; the cards that lay
        there are dropped, so the result depends on ``state``'s hidden cards in nothing."""
        tableau, down = TABLEAU.get(state), DOWN.get(state)
        places = sum(down) + (len(state.stock) if stock else 0)
        if len(cards) != places:
            raise ValueError(f"{len(cards)} cards for {places} hidden places")
        piles: list[Pile] = []
        k = 0
        for pile, n in zip(tableau, down):
            piles.append(tuple(cards[k:k + n]) + pile[n:])
            k += n
        replace: Any = state._replace
        result: State = replace(tableau=tuple(piles), stock=tuple(cards[k:]) if stock else state.stock)
        return result

    def opened(self) -> TableauRules:
        """The same rules dealt ``open``: the game a whole deal is decided in (``dealt_open``) and
        a sampled world (``with_hidden``) is solved in."""
        return type(self)({**self.values, OPEN.name: True})
